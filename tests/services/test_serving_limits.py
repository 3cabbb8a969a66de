"""The bounds of both ports against a real server over real sockets, each with its control case.

HTTP/1.1: a request head must be complete within HTTP_HEAD_TIMEOUT_SECONDS (a slowloris client that
trickles a header byte at a time is answered 408 and cut off) and its body within HTTP_BODY_TIMEOUT_SECONDS
(likewise for a body trickled a byte at a time), an idle keep-alive connection is
closed after HTTP_IDLE_TIMEOUT_SECONDS, and requests beyond HTTP_MAX_CONNECTIONS are answered 503. gRPC:
the server announces GRPC_MAX_CONCURRENT_STREAMS in its HTTP/2 SETTINGS and answers calls beyond
GRPC_MAX_CONCURRENT_RPCS with RESOURCE_EXHAUSTED.

No test measures time: the timeouts are short, and each test only asserts what happened in the
order it happened (cut off before the head was ever finished, closed while the client sat idle).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import replace

import grpc
import h2.config
import h2.connection
import h2.events
import pytest
from fundament.overview.v1 import overview_pb2
from fundament.overview.v1.overview_connect import OverviewServiceASGIApplication
from fundament.overview.v1.overview_pb2_grpc import OverviewServiceStub
from prometheus_client import REGISTRY

from common.health import Readiness
from common.http_limits import HttpLimits
from services.common.serving.api_server import ApiServer
from services.common.serving.grpc_bridge import grpc_generic_handler
from services.common.serving.http_app import http_app
from services.common.serving.request_stack import ConnectStackInterceptor, RequestStack
from services.common.settings import GrpcLimits, HttpSettings
from tests.fixtures.waiting import eventually_async
from tests.services.test_serving import PATH, SERVICE, ProbeService

HEAD_TIMEOUT = 0.5
BODY_TIMEOUT = 0.5
IDLE_TIMEOUT = 1
MAX_CONNECTIONS = 4
# How long a test waits for something the server must do well within it.
PATIENCE = 30.0
# /livez answers with a content-length, so a test can read exactly one answer off a connection.
GET = b"GET /livez HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"
# Any other path is refused over the connection limit.
READYZ = b"GET /readyz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"

SETTINGS = HttpSettings(
    host="127.0.0.1",
    http_port=0,
    grpc_port=0,
    origins=(),
    limits=HttpLimits(
        head_timeout_seconds=HEAD_TIMEOUT,
        body_timeout_seconds=BODY_TIMEOUT,
        idle_timeout_seconds=IDLE_TIMEOUT,
        max_connections=MAX_CONNECTIONS,
    ),
    grpc_limits=GrpcLimits(max_concurrent_streams=7, max_concurrent_rpcs=2),
)


@contextlib.asynccontextmanager
async def serving(service: ProbeService, settings: HttpSettings = SETTINGS) -> AsyncIterator[ApiServer]:
    stack = RequestStack()
    connect = OverviewServiceASGIApplication(service, interceptors=[ConnectStackInterceptor(stack)])

    async def ready() -> bool:
        return True

    readiness = Readiness(ready)
    app = http_app(connect, connect.path, readiness, origins=(), allow_credentials=False)
    server = ApiServer(settings, app, [grpc_generic_handler(service, SERVICE, stack)], [SERVICE.full_name], readiness)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with serving(ProbeService()) as running:
        yield running


def closed_by_head_timeout() -> float:
    return closed_by("head_timeout")


def closed_by(reason: str) -> float:
    return REGISTRY.get_sample_value("fleet_http_connections_closed_total", {"reason": reason}) or 0.0


async def read_until_closed(reader: asyncio.StreamReader) -> bytes:
    return await asyncio.wait_for(reader.read(), timeout=PATIENCE)


async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, byte: bytes) -> tuple[int, bytes]:
    """Send `byte` every tenth of a second (well inside the idle timeout) until the server closes the
    connection or PATIENCE runs out; returns how many were sent and what the server answered."""
    sent, received = 0, b""
    while not reader.at_eof() and sent < PATIENCE * 10:
        try:
            writer.write(byte)
            await writer.drain()
        except ConnectionError:
            break
        sent += 1
        with contextlib.suppress(TimeoutError):
            received += await asyncio.wait_for(reader.read(1 << 16), timeout=0.1)
    return sent, received


async def test_a_client_that_never_finishes_its_head_is_cut_off(server: ApiServer) -> None:
    before = closed_by_head_timeout()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
    writer.write(f"GET {PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ".encode())
    sent, _ = await trickle(reader, writer, b"a")
    assert reader.at_eof() or writer.is_closing(), "the server never cut the slow head off"
    assert sent < PATIENCE * 10
    assert closed_by_head_timeout() == before + 1
    writer.close()


async def test_a_client_that_never_finishes_its_body_is_answered_408_and_cut_off(server: ApiServer) -> None:
    before = closed_by("body_timeout")
    reader, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
    head = f"POST {PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 4096\r\n\r\n"
    writer.write(head.encode())
    sent, received = await trickle(reader, writer, b" ")
    assert reader.at_eof() or writer.is_closing(), "the server never cut the slow body off"
    assert sent < PATIENCE * 10
    assert received.startswith(b"HTTP/1.1 408 ")
    assert closed_by("body_timeout") == before + 1
    writer.close()


async def test_a_body_sent_in_time_is_served() -> None:
    """The control: a body sent in two parts, both well within the body timeout, is answered."""
    async with serving(ProbeService()) as running:
        reader, writer = await asyncio.open_connection("127.0.0.1", running.http_port)
        body = b"{}"
        head = (
            f"POST {PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
        )
        writer.write(head.encode() + body[:1])
        await writer.drain()
        await asyncio.sleep(BODY_TIMEOUT / 5)
        writer.write(body[1:])
        answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=PATIENCE)
        assert answer.startswith(b"HTTP/1.1 200 "), answer
        writer.close()


async def test_the_answer_to_a_head_too_slow_is_408(server: ApiServer) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
    writer.write(b"GET / HTTP/1.1\r\nhost: 1")
    answer = await read_until_closed(reader)
    assert answer.startswith(b"HTTP/1.1 408 ")
    writer.close()


async def test_a_head_in_time_is_served_and_the_next_one_too(server: ApiServer) -> None:
    """The control: two requests on one connection, each head complete in time, are both answered."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
    for _ in range(2):
        writer.write(GET)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=PATIENCE)
        assert head.startswith(b"HTTP/1.1 200 ")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.startswith(b"content-length"))
        await asyncio.wait_for(reader.readexactly(length), timeout=PATIENCE)
    writer.close()


async def test_an_idle_keep_alive_connection_is_closed(server: ApiServer) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
    writer.write(GET)
    rest = await read_until_closed(reader)  # the answer, then the close while the client sits idle
    assert rest.startswith(b"HTTP/1.1 200 ")
    assert reader.at_eof()
    writer.close()


async def test_requests_over_the_connection_limit_are_503_but_liveness_is_served(server: ApiServer) -> None:
    idle = [await asyncio.open_connection("127.0.0.1", server.http_port) for _ in range(MAX_CONNECTIONS)]
    reader, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
    writer.write(READYZ)
    status = await asyncio.wait_for(reader.readline(), timeout=PATIENCE)
    assert status.startswith(b"HTTP/1.1 503 ")
    writer.close()
    # The reserved slot: the liveness probe is answered over the limit.
    reader, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
    writer.write(GET)
    status = await asyncio.wait_for(reader.readline(), timeout=PATIENCE)
    assert status.startswith(b"HTTP/1.1 200 ")
    writer.close()
    for _, held in idle:
        held.close()
    # The control: once they are gone (here cut off by the head timeout at the latest), it is served.

    async def served() -> bool:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
        writer.write(READYZ)
        status = await asyncio.wait_for(reader.readline(), timeout=PATIENCE)
        writer.close()
        return status.startswith(b"HTTP/1.1 200 ")

    await eventually_async(served, "a request served once the held connections are gone", within=PATIENCE, every=0.1)


async def test_grpc_announces_its_stream_limit(server: ApiServer) -> None:
    with socket.create_connection(("127.0.0.1", server.grpc_port), timeout=PATIENCE) as sock:
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())
        announced: dict[int, int] = {}
        while not announced:
            data = sock.recv(65536)
            assert data, "the server closed before its SETTINGS"
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RemoteSettingsChanged):
                    announced = {int(k): v.new_value for k, v in event.changed_settings.items()}
    assert announced[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] == 7


async def test_grpc_calls_over_the_limit_are_resource_exhausted() -> None:
    service = ProbeService(delay_seconds=1.0)
    async with serving(service) as running, grpc.aio.insecure_channel(f"127.0.0.1:{running.grpc_port}") as channel:
        stub = OverviewServiceStub(channel)
        calls = [
            stub.GetPlatformOverview(overview_pb2.GetPlatformOverviewRequest(), timeout=PATIENCE) for _ in range(6)
        ]
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
    refused = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
    assert {o.code() for o in refused} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
    assert len(refused) == 4
    assert len(service.calls) == 2


async def test_grpc_serves_every_call_within_the_limit() -> None:
    """The control: with room for all of them, the same calls all succeed."""
    service = ProbeService(delay_seconds=1.0)
    roomy = replace(SETTINGS, grpc_limits=GrpcLimits(max_concurrent_rpcs=6))
    async with serving(service, roomy) as running, grpc.aio.insecure_channel(f"127.0.0.1:{running.grpc_port}") as ch:
        stub = OverviewServiceStub(ch)
        calls = [
            stub.GetPlatformOverview(overview_pb2.GetPlatformOverviewRequest(), timeout=PATIENCE) for _ in range(6)
        ]
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
    assert not [o for o in outcomes if isinstance(o, Exception)]
