"""The serving skeleton: one implementation reached over Connect POST, Connect GET, gRPC and CORS.

A small probe service counts its calls, so each protocol is shown to reach the very same code
through the same request stack (request id, error mapping, authentication).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import httpx
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import Headers, RequestContext
from fundament.overview.v1 import overview_pb2
from fundament.overview.v1.overview_connect import OverviewService, OverviewServiceASGIApplication
from fundament.overview.v1.overview_pb2_grpc import OverviewServiceStub
from grpc_reflection.v1alpha import reflection_pb2

from common.health import Readiness
from services.common.errors import InvalidArgument, Unauthenticated
from services.common.serving.api_server import ApiServer
from services.common.serving.grpc_bridge import grpc_generic_handler
from services.common.serving.http_app import http_app
from services.common.serving.request_stack import ConnectStackInterceptor, RequestStack
from services.common.settings import HttpSettings
from tests.fixtures.waiting import eventually_async

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"
SERVICE = overview_pb2.DESCRIPTOR.services_by_name["OverviewService"]


@dataclass
class ProbeService(OverviewService):
    calls: list[str] = field(default_factory=list)
    fail_with: Exception | None = None
    delay_seconds: float = 0.0

    async def get_platform_overview(
        self,
        request: overview_pb2.GetPlatformOverviewRequest,
        ctx: RequestContext[overview_pb2.GetPlatformOverviewRequest, overview_pb2.GetPlatformOverviewResponse],
    ) -> overview_pb2.GetPlatformOverviewResponse:
        self.calls.append(ctx.http_method)
        if self.delay_seconds:
            await asyncio.sleep(self.delay_seconds)
        if self.fail_with is not None:
            raise self.fail_with
        ctx.response_headers["cache-control"] = "public, max-age=7"
        return overview_pb2.GetPlatformOverviewResponse(
            organizations=[overview_pb2.OrganizationOverview(name="acme", alias="Acme", clusters=2)],
            totals=overview_pb2.OverviewTotals(organizations=1, clusters=2),
        )


def deny_token_secret(headers: Headers) -> str:
    if headers.get("authorization") == "Bearer nope":
        raise Unauthenticated("bad credential")
    return "anonymous"


@dataclass
class Running:
    service: ProbeService
    server: ApiServer

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.server.http_port}"

    @property
    def grpc_target(self) -> str:
        return f"127.0.0.1:{self.server.grpc_port}"


def probe_server(service: ProbeService, *, shutdown_grace_seconds: float = 5.0) -> ApiServer:
    stack = RequestStack(authenticate=deny_token_secret)
    connect = OverviewServiceASGIApplication(service, interceptors=[ConnectStackInterceptor(stack)])

    async def ready() -> bool:
        return True

    readiness = Readiness(ready)
    settings = HttpSettings(
        host="127.0.0.1",
        http_port=0,
        grpc_port=0,
        origins=("https://console.example",),
        shutdown_grace_seconds=shutdown_grace_seconds,
    )
    app = http_app(connect, connect.path, readiness, origins=settings.origins, allow_credentials=False)
    return ApiServer(settings, app, [grpc_generic_handler(service, SERVICE, stack)], [SERVICE.full_name], readiness)


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    service = ProbeService()
    server = probe_server(service)
    await server.start()
    try:
        yield Running(service, server)
    finally:
        await server.stop()


PATH = "/fundament.overview.v1.OverviewService/GetPlatformOverview"


async def test_connect_post_and_get_reach_the_same_handler(running: Running) -> None:
    async with httpx.AsyncClient(base_url=running.http) as client:
        post = await client.post(PATH, content=b"{}", headers={"content-type": "application/json"})
        get = await client.get(PATH, params={"encoding": "json", "message": "{}"})
    assert post.status_code == 200 and get.status_code == 200
    assert post.json()["organizations"][0]["name"] == "acme"
    assert get.json() == post.json()
    assert get.headers["cache-control"] == "public, max-age=7"
    assert post.headers["x-request-id"] != get.headers["x-request-id"]
    assert all(re.fullmatch("[0-9a-f]{32}", r.headers["x-request-id"]) for r in (post, get))
    assert running.service.calls == ["POST", "GET"]


async def test_grpc_reaches_the_same_handler_with_metadata(running: Running) -> None:
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        stub = OverviewServiceStub(channel)
        call = stub.GetPlatformOverview(overview_pb2.GetPlatformOverviewRequest(), metadata=[("x-request-id", "abc-1")])
        response = await call
        initial = dict(await call.initial_metadata())
    assert response.totals.clusters == 2
    assert initial["cache-control"] == "public, max-age=7"
    assert initial["x-request-id"] == "abc-1"
    assert running.service.calls == ["POST"]


@pytest.mark.parametrize(
    ("error", "connect_status", "grpc_code"),
    [
        (InvalidArgument("page_size must not be negative"), 400, grpc.StatusCode.INVALID_ARGUMENT),
        (ConnectError(Code.NOT_FOUND, "no such thing"), 404, grpc.StatusCode.NOT_FOUND),
        (RuntimeError("SELECT secret FROM somewhere"), 500, grpc.StatusCode.INTERNAL),
    ],
    ids=["fleet-error", "connect-error", "unexpected-error-hides-details"],
)
async def test_errors_map_identically_on_both_protocols(
    running: Running, error: Exception, connect_status: int, grpc_code: grpc.StatusCode
) -> None:
    running.service.fail_with = error
    async with httpx.AsyncClient(base_url=running.http) as client:
        post = await client.post(PATH, content=b"{}", headers={"content-type": "application/json"})
    assert post.status_code == connect_status
    assert "SELECT" not in post.text
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        stub = OverviewServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.GetPlatformOverview(overview_pb2.GetPlatformOverviewRequest())
    assert caught.value.code() == grpc_code
    assert "SELECT" not in (caught.value.details() or "")


async def test_authentication_runs_before_the_service_on_both_protocols(running: Running) -> None:
    async with httpx.AsyncClient(base_url=running.http) as client:
        post = await client.post(
            PATH, content=b"{}", headers={"content-type": "application/json", "authorization": "Bearer nope"}
        )
    assert post.status_code == 401
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        stub = OverviewServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.GetPlatformOverview(
                overview_pb2.GetPlatformOverviewRequest(), metadata=[("authorization", "Bearer nope")]
            )
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert running.service.calls == []


async def test_cors_preflight_allows_only_the_configured_origin(running: Running) -> None:
    async with httpx.AsyncClient(base_url=running.http) as client:
        allowed = await client.options(
            PATH,
            headers={
                "origin": "https://console.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type,connect-protocol-version",
            },
        )
        denied = await client.options(
            PATH, headers={"origin": "https://evil.example", "access-control-request-method": "POST"}
        )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://console.example"
    assert "access-control-allow-credentials" not in allowed.headers
    assert denied.status_code == 400
    assert "access-control-allow-origin" not in denied.headers


async def test_operations_endpoints_and_grpc_health(running: Running) -> None:
    async with httpx.AsyncClient(base_url=running.http) as client:
        assert (await client.get("/livez")).status_code == 200
        assert (await client.get("/readyz")).status_code == 200
        metrics = await client.get("/metrics")
    assert "fleet_rpc_requests_total" in metrics.text


async def run_tool(*args: str) -> tuple[int, str, str]:
    """Run a command without blocking the event loop that serves the API under test."""
    process = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    return process.returncode or 0, stdout.decode(), stderr.decode()


async def test_reflection_lists_every_method_and_health_with_buf_curl(running: Running) -> None:
    buf = str(BIN / "buf")
    grpc_flags = ("--protocol", "grpc", "--http2-prior-knowledge")
    rc, out, err = await run_tool(buf, "curl", *grpc_flags, "--list-methods", f"http://{running.grpc_target}")
    assert rc == 0, err
    assert "fundament.overview.v1.OverviewService/GetPlatformOverview" in out.split()
    rc, out, err = await run_tool(
        buf, "curl", *grpc_flags, "-d", "{}", f"http://{running.grpc_target}/grpc.health.v1.Health/Check"
    )
    assert rc == 0, err
    assert json.loads(out)["status"] == "SERVING"


@pytest.mark.parametrize("protocol", ["grpc-v1", "grpc-v1alpha"])
async def test_buf_curl_reflects_over_both_reflection_protocols(running: Running, protocol: str) -> None:
    buf = str(BIN / "buf")
    rc, out, err = await run_tool(
        buf,
        "curl",
        "--protocol",
        "grpc",
        "--http2-prior-knowledge",
        "--reflect-protocol",
        protocol,
        "-d",
        "{}",
        f"http://{running.grpc_target}/fundament.overview.v1.OverviewService/GetPlatformOverview",
    )
    assert rc == 0, err
    assert "organizations" in json.loads(out)


async def test_grpcurl_finds_both_reflection_services_and_calls_v1_itself(running: Running) -> None:
    grpcurl = str(BIN / "grpcurl")
    rc, out, err = await run_tool(grpcurl, "-plaintext", running.grpc_target, "list")
    assert rc == 0, err
    assert {"grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"} <= set(out.split())
    rc, out, err = await run_tool(
        grpcurl, "-plaintext", running.grpc_target, "describe", "grpc.reflection.v1.ServerReflection"
    )
    assert rc == 0, err
    assert "rpc ServerReflectionInfo" in out
    # The v1 method answered directly (not through grpcurl's fallback to v1alpha).
    rc, out, err = await run_tool(
        grpcurl,
        "-plaintext",
        "-d",
        '{"list_services": "*"}',
        running.grpc_target,
        "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    )
    assert rc == 0, err
    names = {s["name"] for s in json.loads(out)["list_services_response"]["service"]}
    assert "fundament.overview.v1.OverviewService" in names


async def test_a_raw_v1_reflection_call_answers_with_the_service_file(running: Running) -> None:
    """The v1 path on the wire, read with the v1alpha classes (the same bytes), without any tool."""
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        call = channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        request = reflection_pb2.ServerReflectionRequest(file_containing_symbol="fundament.overview.v1.OverviewService")
        answers = [answer async for answer in call(iter([request]), timeout=10)]
    (answer,) = answers
    assert answer.file_descriptor_response.file_descriptor_proto


async def _calls_in_flight_during_stop(delay_seconds: float, grace_seconds: float) -> tuple[object, object]:
    """Start one slow call on each protocol, stop the server while both run; what each call ended with."""
    service = ProbeService(delay_seconds=delay_seconds)
    server = probe_server(service, shutdown_grace_seconds=grace_seconds)
    await server.start()
    async with (
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=60) as client,
        grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel,
    ):
        connect_call = asyncio.create_task(
            client.post(PATH, content=b"{}", headers={"content-type": "application/json"})
        )
        stub = OverviewServiceStub(channel)

        async def grpc_overview() -> object:
            return await stub.GetPlatformOverview(overview_pb2.GetPlatformOverviewRequest(), timeout=60)

        grpc_call = asyncio.create_task(grpc_overview())
        await eventually_async(lambda: len(service.calls) >= 2, "both calls reaching the service")
        # A bound on the test itself, not a figure: stop() must end on its own once the grace is over.
        await asyncio.wait_for(server.stop(), timeout=30)
        results = await asyncio.gather(connect_call, grpc_call, return_exceptions=True)
    return results[0], results[1]


# uvicorn's own default grace is 5 s: a call of 6 s under a grace of 10, and one of 3 s under a grace
# of 0.5, show that SHUTDOWN_GRACE_SECONDS (not a fixed figure) bounds the HTTP port as it does gRPC.


@pytest.mark.slow
async def test_shutdown_grace_lets_calls_in_flight_finish_on_both_protocols() -> None:
    connect_result, grpc_result = await _calls_in_flight_during_stop(delay_seconds=6, grace_seconds=10)
    assert isinstance(connect_result, httpx.Response) and connect_result.status_code == 200
    assert isinstance(grpc_result, overview_pb2.GetPlatformOverviewResponse) and grpc_result.totals.clusters == 2


async def test_shutdown_grace_ends_calls_that_outlast_it_on_both_protocols() -> None:
    connect_result, grpc_result = await _calls_in_flight_during_stop(delay_seconds=3, grace_seconds=0.5)
    # Cut at the grace: Connect answers `canceled` (HTTP 499) when it still can, else the connection drops.
    cut = isinstance(connect_result, httpx.HTTPError) or (
        isinstance(connect_result, httpx.Response)
        and connect_result.status_code == 499
        and connect_result.json()["code"] == "canceled"
    )
    assert cut, connect_result
    assert isinstance(grpc_result, grpc.aio.AioRpcError), grpc_result
