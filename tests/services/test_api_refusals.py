"""Requests the Connect library cannot handle are refused cleanly, counted and logged once; strict enums.

Against the staff API served in this process over real sockets: a header value that is not UTF-8 is
400, gRPC framing over HTTP/1.1 is 415 (both without a credential, before anything reads the body);
unknown enum names and numbers are INVALID_ARGUMENT over Connect JSON, Connect binary and gRPC.
"""

from __future__ import annotations

import asyncio
import json
import logging

import grpc
import pytest
from fundament.fleet.v1 import fleet_pb2
from prometheus_client import REGISTRY

from tests.fixtures.fleet_api import CallFailed, FleetApiUnderTest, auth_headers

SERVICE = "fundament.fleet.v1.FleetService"
LIST_CLUSTERS = f"/{SERVICE}/ListClusters"


def requests_counted(method: str, protocol: str, code: str, service: str = SERVICE) -> float:
    labels = {"service": service, "method": method, "protocol": protocol, "code": code}
    return REGISTRY.get_sample_value("fleet_rpc_requests_total", labels) or 0.0


async def raw_http(port: int, head: bytes, body: bytes = b"") -> tuple[int, bytes]:
    """Send one HTTP/1.1 request as raw bytes; the status code and the body of the answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head + b"\r\n" + body)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=30)
    finally:
        writer.close()
    status_line, _, rest = answer.partition(b"\r\n")
    _, _, payload = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), payload


def request_head(path: str, *headers: bytes, length: int = 2) -> bytes:
    lines = [f"POST {path} HTTP/1.1".encode(), b"host: 127.0.0.1", f"content-length: {length}".encode(), *headers]
    return b"\r\n".join(lines) + b"\r\n"


@pytest.mark.parametrize("header", [b"x-anything: caf\xe9", b"authorization: Bearer \xff\xfe", b"content-type: \xc3"])
async def test_a_header_that_is_not_utf8_is_400_counted_and_logged_once(
    shared_fleet_api: FleetApiUnderTest, header: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    before = requests_counted("ListClusters", "connect", "invalid_argument")
    with caplog.at_level(logging.INFO, logger="services.common.serving.refusals"):
        status, body = await raw_http(
            shared_fleet_api.clients.http_port, request_head(LIST_CLUSTERS, b"content-type: application/json", header)
        )
    assert status == 400
    assert json.loads(body) == {"code": "invalid_argument", "message": "a header value is not UTF-8"}
    assert requests_counted("ListClusters", "connect", "invalid_argument") == before + 1
    refusals = [r for r in caplog.records if r.name == "services.common.serving.refusals"]
    assert len(refusals) == 1 and refusals[0].levelno == logging.INFO


async def test_an_unknown_path_is_counted_as_unknown(shared_fleet_api: FleetApiUnderTest) -> None:
    before = requests_counted("unknown", "connect", "invalid_argument", service="unknown")
    status, _ = await raw_http(shared_fleet_api.clients.http_port, request_head("/no/such/Method", b"x-a: \xff"))
    assert status == 400
    assert requests_counted("unknown", "connect", "invalid_argument", service="unknown") == before + 1


@pytest.mark.parametrize("content_type", [b"application/grpc", b"application/grpc+proto", b"Application/GRPC; x=1"])
async def test_grpc_framing_over_http1_is_415(shared_fleet_api: FleetApiUnderTest, content_type: bytes) -> None:
    before = requests_counted("ListClusters", "grpc-http1", "unimplemented")
    frame = b"\x00\x00\x00\x00\x00"
    head = request_head(LIST_CLUSTERS, b"content-type: " + content_type, b"te: trailers", length=len(frame))
    status, body = await raw_http(shared_fleet_api.clients.http_port, head, frame)
    assert status == 415
    assert json.loads(body)["code"] == "unimplemented"
    assert requests_counted("ListClusters", "grpc-http1", "unimplemented") == before + 1


async def test_grpc_web_still_reaches_the_service(shared_fleet_api: FleetApiUnderTest) -> None:
    """gRPC-Web is HTTP/1.1 and served; only gRPC's own framing is refused."""
    message = fleet_pb2.GetFleetSummaryRequest().SerializeToString()
    frame = b"\x00" + len(message).to_bytes(4, "big") + message
    response = await shared_fleet_api.clients.http.post(
        f"/{SERVICE}/GetFleetSummary",
        content=frame,
        headers={"content-type": "application/grpc-web+proto", **dict(auth_headers())},
    )
    assert response.status_code == 200
    assert response.headers.get("grpc-status") in (None, "0")


@pytest.mark.parametrize(
    ("method", "body"),
    [
        ("ListClusters", {"statuses": ["NOT_A_STATUS"]}),
        ("ListClusters", {"statuses": ["CLUSTER_STATUS_READY", "NOT_A_STATUS"]}),
        ("ListDriftFindings", {"kind": "NOT_A_KIND"}),
        ("ListClusters", {"statuses": [999]}),
        ("ListDriftFindings", {"kind": 999}),
        ("ListClusters", {"noSuchField": 1}),
    ],
)
async def test_unknown_enum_names_and_numbers_in_connect_json_are_invalid_argument(
    shared_fleet_api: FleetApiUnderTest, method: str, body: dict[str, object]
) -> None:
    response = await shared_fleet_api.clients.http.post(
        f"/{SERVICE}/{method}",
        content=json.dumps(body),
        headers={"content-type": "application/json", **dict(auth_headers())},
    )
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "invalid_argument"


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
@pytest.mark.parametrize(
    ("method", "request_message"),
    [
        ("ListClusters", fleet_pb2.ListClustersRequest(statuses=[999])),  # type: ignore[list-item]
        ("ListClusters", fleet_pb2.ListClustersRequest(statuses=[1, 999])),  # type: ignore[list-item]
        ("ListDriftFindings", fleet_pb2.ListDriftFindingsRequest(kind=999)),  # type: ignore[arg-type]
    ],
)
async def test_unknown_enum_numbers_in_binary_are_invalid_argument(
    shared_fleet_api: FleetApiUnderTest, protocol: str, method: str, request_message: object
) -> None:
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call(protocol, method, request_message)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_argument"
    assert "999" in caught.value.message


async def test_grpc_port_refuses_unknown_enum_numbers_sent_as_raw_bytes(shared_fleet_api: FleetApiUnderTest) -> None:
    """Field 40 (statuses), packed, value 999: built by hand, so no client-side enum check can interfere."""
    raw = b"\xc2\x02\x02\xe7\x07"
    async with grpc.aio.insecure_channel(shared_fleet_api.clients.grpc_target) as channel:
        call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(LIST_CLUSTERS)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(raw, metadata=tuple(auth_headers()), timeout=30)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
