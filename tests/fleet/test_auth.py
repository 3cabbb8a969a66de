"""DCIM authentication of platform-admin-api on both protocols.

Every bad credential of the table in tests/services/test_auth.py is UNAUTHENTICATED over gRPC and Connect,
and none of them makes the service ask its pool for a connection; the valid token is accepted from
the Authorization header and from the dcim_auth cookie, on every FleetService method. Health,
reflection and metrics need no token. CORS allows credentials for the DCIM origins only.
"""

from __future__ import annotations

import logging

import grpc
import pytest
from fundament.fleet.v1 import fleet_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.fixtures.credentials import BAD_CREDENTIALS, BAD_IDS, BadCredential
from tests.fixtures.fleet_api import (
    DCIM_ORIGIN,
    EMPTY_LIST_REQUESTS,
    STAFF,
    CallFailed,
    FleetApiUnderTest,
    staff_token,
)

PROTOCOLS = ("grpc", "connect")
SUMMARY = fleet_pb2.GetFleetSummaryRequest()
EVERY_METHOD = {**EMPTY_LIST_REQUESTS, "GetFleetSummary": SUMMARY, "GetCluster": fleet_pb2.GetClusterRequest()}


def pool_requests(api: FleetApiUnderTest) -> int:
    """How many times the service asked its pool for a connection (psycopg_pool's own counter)."""
    return int(api.running.pool.get_stats().get("requests_num", 0))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("case", BAD_CREDENTIALS, ids=BAD_IDS)
async def test_bad_credential_is_unauthenticated_and_never_reaches_the_database(
    shared_fleet_api: FleetApiUnderTest, case: BadCredential, protocol: str
) -> None:
    before = pool_requests(shared_fleet_api)
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call(protocol, "GetFleetSummary", SUMMARY, case.headers())
    assert caught.value.code == "unauthenticated", caught.value.message
    assert case.breaks in caught.value.message
    assert pool_requests(shared_fleet_api) == before


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("method", sorted(EVERY_METHOD))
async def test_every_method_needs_a_credential(shared_fleet_api: FleetApiUnderTest, protocol: str, method: str) -> None:
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call(protocol, method, EVERY_METHOD[method], headers=[])
    assert caught.value.code == "unauthenticated"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_valid_token_in_the_header_is_accepted_and_reads_the_database(
    shared_fleet_api: FleetApiUnderTest, protocol: str
) -> None:
    before = pool_requests(shared_fleet_api)
    response = await shared_fleet_api.call(
        protocol, "GetFleetSummary", SUMMARY, [("authorization", f"Bearer {staff_token()}")]
    )
    assert response.organizations > 0
    assert pool_requests(shared_fleet_api) == before + 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_valid_token_in_the_dcim_auth_cookie_is_accepted(
    shared_fleet_api: FleetApiUnderTest, protocol: str
) -> None:
    headers = [("cookie", f"theme=dark; dcim_auth={staff_token()}")]
    response = await shared_fleet_api.call(protocol, "ListOrganizations", fleet_pb2.ListOrganizationsRequest(), headers)
    assert len(response.organizations) > 0


async def test_cookie_reaches_the_service_from_a_browser_style_get(shared_fleet_api: FleetApiUnderTest) -> None:
    response = await shared_fleet_api.clients.http.get(
        "/fundament.fleet.v1.FleetService/GetFleetSummary",
        params={"connect": "v1", "encoding": "json", "message": "{}"},
        headers={"cookie": f"dcim_auth={staff_token()}", "origin": DCIM_ORIGIN},
    )
    assert response.status_code == 200, response.text
    assert response.headers["access-control-allow-origin"] == DCIM_ORIGIN
    assert response.headers["access-control-allow-credentials"] == "true"
    assert response.headers["cache-control"] == "private, no-store"
    assert int(response.json()["organizations"]) > 0


async def test_two_authorization_headers_over_raw_http_are_refused(shared_fleet_api: FleetApiUnderTest) -> None:
    token = staff_token()
    response = await shared_fleet_api.clients.http.post(
        "/fundament.fleet.v1.FleetService/GetFleetSummary",
        content=b"{}",
        headers=[
            ("content-type", "application/json"),
            ("authorization", f"Bearer {token}"),
            ("authorization", f"Bearer {token}"),
        ],
    )
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"


async def test_the_subject_is_logged_with_each_request(
    shared_fleet_api: FleetApiUnderTest, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="services.common.serving"):
        await shared_fleet_api.call("grpc", "GetFleetSummary", SUMMARY)
        with pytest.raises(CallFailed):
            await shared_fleet_api.call("connect", "GetFleetSummary", SUMMARY, headers=[])
    rpc_lines = [r for r in caplog.records if r.getMessage().startswith("rpc fundament.fleet.v1.FleetService/")]
    assert [(getattr(r, "subject", None), getattr(r, "code", None)) for r in rpc_lines] == [
        (str(STAFF), "ok"),
        (None, "unauthenticated"),
    ]
    assert all(staff_token()[:20] not in r.getMessage() for r in caplog.records)


async def test_health_and_operations_endpoints_need_no_token(shared_fleet_api: FleetApiUnderTest) -> None:
    stub = health_pb2_grpc.HealthStub(shared_fleet_api.clients.channel)
    for service in ("", "fundament.fleet.v1.FleetService"):
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    http = shared_fleet_api.clients.http
    assert (await http.get("/livez")).status_code == 200
    assert (await http.get("/readyz")).status_code == 200
    metrics = await http.get("/metrics")
    assert 'service="fundament.fleet.v1.FleetService"' in metrics.text


async def test_cors_allows_credentials_for_the_dcim_origin_only(shared_fleet_api: FleetApiUnderTest) -> None:
    path = "/fundament.fleet.v1.FleetService/ListClusters"
    http = shared_fleet_api.clients.http
    allowed = await http.options(
        path,
        headers={
            "origin": DCIM_ORIGIN,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization,content-type,connect-protocol-version",
        },
    )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == DCIM_ORIGIN
    assert allowed.headers["access-control-allow-credentials"] == "true"
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    denied = await http.options(
        path, headers={"origin": "https://evil.example", "access-control-request-method": "POST"}
    )
    assert denied.status_code == 400
    assert "access-control-allow-origin" not in denied.headers


async def test_grpc_status_of_a_bad_token_is_unauthenticated_not_internal(shared_fleet_api: FleetApiUnderTest) -> None:
    # The grpcio stub directly: the code is the gRPC one, not a mapping done by our helper.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await shared_fleet_api.clients.stub.GetFleetSummary(SUMMARY, metadata=(("authorization", "Bearer x.y.z"),))
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
