"""platform-admin-api when the database is down, slow or restarted: UNAVAILABLE, never a 500.

A database nobody listens on, a query held up by a lock past the statement timeout, and server-side
connections killed under the running service. Authentication still runs first: a bad credential is
UNAUTHENTICATED even while the database is down.
"""

from __future__ import annotations

import socket

import pytest
from fundament.fleet.v1 import fleet_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.fixtures.fleet_api import ROLE, CallFailed, FleetApiUnderTest, serving_fleet, staff_token
from tests.fixtures.postgres import TestDatabase

UNAVAILABLE_MESSAGE = "the database is unavailable, try again later"
SUMMARY = fleet_pb2.GetFleetSummaryRequest()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
async def test_unreachable_database_is_unavailable_and_not_ready(protocol: str) -> None:
    dsn = f"postgresql://{ROLE}@127.0.0.1:{closed_port()}/fleet"
    async with serving_fleet(dsn, DATABASE_CONNECT_TIMEOUT_SECONDS="0.3") as (_, clients):
        with pytest.raises(CallFailed) as caught:
            await clients.call(protocol, "GetFleetSummary", SUMMARY)
        assert caught.value.code == "unavailable"
        assert caught.value.message == UNAVAILABLE_MESSAGE
        with pytest.raises(CallFailed) as refused:
            await clients.call(protocol, "GetFleetSummary", SUMMARY, headers=[("authorization", "Bearer x")])
        assert refused.value.code == "unauthenticated"
        readyz = await clients.http.get("/readyz")
        assert readyz.status_code == 503
        health = health_pb2_grpc.HealthStub(clients.channel)
        reply = await health.Check(health_pb2.HealthCheckRequest(service="fundament.fleet.v1.FleetService"))
        assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING
        assert (await clients.http.get("/livez")).status_code == 200


async def test_query_held_past_the_statement_timeout_is_unavailable(fleet_database: TestDatabase) -> None:
    async with serving_fleet(fleet_database.dsn(ROLE), DATABASE_STATEMENT_TIMEOUT_MS="300") as (_, clients):
        with fleet_database.admin() as conn, conn.transaction():
            conn.execute("LOCK TABLE tenant.clusters IN ACCESS EXCLUSIVE MODE")
            for protocol in ("grpc", "connect"):
                with pytest.raises(CallFailed) as caught:
                    await clients.call(protocol, "ListClusters", fleet_pb2.ListClustersRequest(page_size=5))
                assert caught.value.code == "unavailable"
                assert caught.value.message == UNAVAILABLE_MESSAGE
        # The lock is gone: the same service answers again.
        response = await clients.call("grpc", "ListClusters", fleet_pb2.ListClustersRequest(page_size=5))
        assert len(response.clusters) == 5


async def test_service_recovers_when_its_connections_are_killed(fleet_api: FleetApiUnderTest) -> None:
    first = await fleet_api.call("grpc", "GetFleetSummary", SUMMARY)
    with fleet_api.database.admin() as conn:
        killed = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = 'platform-admin-api' AND datname = current_database()"
        ).fetchone()
    assert killed is not None and int(str(killed[0])) >= 1
    # The pool checks a connection before lending it, so the next call gets a fresh one.
    again = await fleet_api.call("connect", "GetFleetSummary", SUMMARY)
    assert again.clusters == first.clusters


async def test_unavailable_over_raw_connect_is_http_503_with_no_detail(fleet_api: FleetApiUnderTest) -> None:
    dsn = f"postgresql://{ROLE}@127.0.0.1:{closed_port()}/fleet"
    async with serving_fleet(dsn, DATABASE_CONNECT_TIMEOUT_SECONDS="0.3") as (_, clients):
        response = await clients.http.post(
            "/fundament.fleet.v1.FleetService/ListOrganizations",
            content=b"{}",
            headers={"content-type": "application/json", "authorization": f"Bearer {staff_token()}"},
        )
    assert response.status_code == 503
    assert response.json() == {"code": "unavailable", "message": UNAVAILABLE_MESSAGE}
