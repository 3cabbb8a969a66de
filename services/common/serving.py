"""Serving one service implementation over Connect and gRPC from one process, with one request stack.

    Connect (uvicorn, HTTP/1.1)  ─┐                        ┌─> the service class (one per API)
                                  ├─> RequestStack.run() ──┤
    gRPC (grpc.aio, HTTP/2)     ──┘                        └─  request id → log + metrics → errors → auth

Both paths build a connectrpc `RequestContext` and hand it to the same `RequestStack`, so request ids,
logging, metrics, error mapping and authentication behave identically on both protocols by
construction (connectrpc's own interceptors never run on the grpc.aio path, see the toolchain notes).
The gRPC side is derived from the generated descriptors: every method of the service, plus server
reflection and grpc.health.v1, with no list kept by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import re
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import grpc
import uvicorn
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import Headers, RequestContext
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp

from services.common.errors import map_errors
from services.common.logs import request_id_var
from services.common.metrics import RPC_DURATION, RPC_REQUESTS
from services.common.settings import HttpSettings

logger = logging.getLogger(__name__)

RES = TypeVar("RES")

# Connect spells it CANCELED, gRPC CANCELLED; every other name matches.
_GRPC_CODE = {code: getattr(grpc.StatusCode, "CANCELLED" if code is Code.CANCELED else code.name) for code in Code}
_IDEMPOTENCY = {
    0: IdempotencyLevel.UNKNOWN,
    1: IdempotencyLevel.NO_SIDE_EFFECTS,
    2: IdempotencyLevel.IDEMPOTENT,
}
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

# The headers a browser may send to a Connect endpoint (Connect protocol plus our own).
CONNECT_REQUEST_HEADERS = (
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "x-user-agent",
    "x-request-id",
)
CONNECT_EXPOSED_HEADERS = ("grpc-status", "grpc-message", "grpc-status-details-bin", "x-request-id", "cache-control")


def new_request_id() -> str:
    """32 random hex digits, like a UUID's. A request id must be unique, not unpredictable, so the
    process's Mersenne Twister serves (about 5x cheaper per call than `uuid4()`'s system call)."""
    return f"{random.getrandbits(128):032x}"


# The metric children of each method, protocol and code, looked up once instead of on every call
# (`labels()` validates and locks each time). The keys are bounded: methods x protocols x codes.
@functools.cache
def _requests_counter(service: str, method: str, protocol: str, code: str) -> Counter:
    return RPC_REQUESTS.labels(service, method, protocol, code)


@functools.cache
def _duration_histogram(service: str, method: str, protocol: str) -> Histogram:
    return RPC_DURATION.labels(service, method, protocol)


class Authenticator(Protocol):
    """Checks a call's credential; returns the caller's subject or raises `Unauthenticated`."""

    def __call__(self, headers: Headers) -> str: ...


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True)
class RequestStack:
    """The layers every RPC passes on either protocol, outermost first.

    1. request id: taken from `x-request-id` when well-formed, else made; echoed in the response;
    2. logging and metrics: one log line and one counter increment per call, with code and duration;
    3. error mapping: `map_errors()`, so every failure leaves as a proper status;
    4. authentication: `authenticate` (when set) runs before the service, so a bad credential
       never reaches the database;
    5. the service method.
    """

    authenticate: Authenticator | None = None
    success_log_level: int = logging.INFO
    """Level of the one log line of a call that ended OK (failures are always logged at INFO). An API
    that answers many identical cached calls may lower it to DEBUG: its metrics still count every call."""

    async def run(self, ctx: RequestContext[Any, Any], protocol: str, call: Callable[[], Awaitable[RES]]) -> RES:
        method = ctx.method
        incoming = ctx.request_headers.get("x-request-id", "")
        request_id = incoming if _REQUEST_ID.match(incoming) else new_request_id()
        token = request_id_var.set(request_id)
        ctx.response_headers["x-request-id"] = request_id
        started = time.perf_counter()
        subject: str | None = None
        # What a call that never reaches a status counts as: cancelled by its client's deadline or a
        # disconnect (CancelledError passes map_errors untouched, being no Exception).
        code_name = Code.CANCELED.value
        try:
            with map_errors(f"{method.service_name}/{method.name}"):
                if self.authenticate is not None:
                    subject = self.authenticate(ctx.request_headers)
                response = await call()
            code_name = "ok"
            return response
        except ConnectError as e:
            code_name = e.code.value
            raise
        finally:
            elapsed = time.perf_counter() - started
            _requests_counter(method.service_name, method.name, protocol, code_name).inc()
            _duration_histogram(method.service_name, method.name, protocol).observe(elapsed)
            level = self.success_log_level if code_name == "ok" else logging.INFO
            if logger.isEnabledFor(level):
                self._log(level, ctx, protocol=protocol, code_name=code_name, elapsed=elapsed, subject=subject)
            request_id_var.reset(token)

    @staticmethod
    def _log(
        level: int,
        ctx: RequestContext[Any, Any],
        *,
        protocol: str,
        code_name: str,
        elapsed: float,
        subject: str | None,
    ) -> None:
        method = ctx.method
        logger.log(
            level,
            "rpc %s/%s %s",
            method.service_name,
            method.name,
            code_name,
            extra={
                "procedure": f"/{method.service_name}/{method.name}",
                "protocol": protocol,
                "code": code_name,
                "duration_ms": round(elapsed * 1000, 2),
                "subject": subject,
                "peer": ctx.client_address,
                "http_method": ctx.http_method,
            },
        )


class ConnectStackInterceptor:
    """Puts the request stack in front of every Connect unary call."""

    def __init__(self, stack: RequestStack) -> None:
        self._stack = stack

    async def intercept_unary(
        self,
        call_next: Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]],
        request: Any,
        ctx: RequestContext[Any, Any],
        /,
    ) -> Any:
        content_type = ctx.request_headers.get("content-type", "")
        protocol = "grpc-web" if content_type.startswith("application/grpc-web") else "connect"
        return await self._stack.run(ctx, protocol, lambda: call_next(request, ctx))


def grpc_generic_handler(
    impl: object, service: ServiceDescriptor, stack: RequestStack, *, headers_as_trailers: bool = False
) -> grpc.GenericRpcHandler:
    """A grpc.aio handler serving every unary method of `service` from `impl` through `stack`.

    Response headers (`ctx.response_headers`) reach gRPC clients as initial metadata, or as trailing
    metadata with `headers_as_trailers`. The choice is about cost: grpc.aio sends custom initial
    metadata in a batch of its own before the response (one more trip through gRPC core per call),
    while trailing metadata rides in the response's final batch.
    """
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for md in service.methods:
        if md.client_streaming or md.server_streaming:
            raise NotImplementedError(f"streaming method {md.full_name} is not supported")
        request_class = message_factory.GetMessageClass(md.input_type)
        response_class = message_factory.GetMessageClass(md.output_type)
        info: MethodInfo[Any, Any] = MethodInfo(
            name=md.name,
            service_name=service.full_name,
            input=request_class,
            output=response_class,
            idempotency_level=_IDEMPOTENCY[md.GetOptions().idempotency_level],
            stream_type=StreamType.UNARY,
        )
        function = getattr(impl, _snake(md.name))
        handlers[md.name] = grpc.unary_unary_rpc_method_handler(
            _grpc_unary(function, info, stack, headers_as_trailers=headers_as_trailers),
            request_deserializer=request_class.FromString,
            response_serializer=response_class.SerializeToString,
        )
    return grpc.method_handlers_generic_handler(service.full_name, handlers)


def _grpc_unary(
    function: Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]],
    info: MethodInfo[Any, Any],
    stack: RequestStack,
    *,
    headers_as_trailers: bool = False,
) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]:
    async def handle(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        remaining = context.time_remaining()
        metadata = context.invocation_metadata() or ()
        ctx: RequestContext[Any, Any] = RequestContext(
            method=info,
            http_method="POST",
            request_headers=Headers([(k, str(v)) for k, v in metadata if not k.endswith("-bin")]),
            timeout_ms=None if remaining is None else int(remaining * 1000),
            client_address=context.peer(),
        )
        try:
            response = await stack.run(ctx, "grpc", lambda: function(request, ctx))
        except ConnectError as e:
            await context.abort(_GRPC_CODE[e.code], e.message, trailing_metadata=tuple(_metadata(ctx.response_headers)))
        if headers_as_trailers:
            context.set_trailing_metadata(tuple(_metadata(ctx.response_headers)))
        else:
            await context.send_initial_metadata(tuple(_metadata(ctx.response_headers)))
        return response

    return handle


def _metadata(headers: Headers) -> Iterator[tuple[str, str]]:
    for key, value in headers.allitems():
        yield key.lower(), value


@dataclass
class Readiness:
    """What /readyz and grpc.health.v1 report: ready once `check` succeeded once (then it stays ready)."""

    check: Callable[[], Awaitable[bool]]
    ready: bool = False

    async def __call__(self) -> bool:
        if not self.ready:
            try:
                self.ready = await self.check()
            except Exception:  # a readiness probe answers "not yet", it never raises
                logger.debug("readiness check failed", exc_info=True)
                self.ready = False
        return self.ready


def operations_routes(readiness: Readiness) -> list[BaseRoute]:
    """/livez, /readyz and /metrics: outside the request stack and CORS, never authenticated."""

    async def livez(_: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(_: Request) -> Response:
        if await readiness():
            return PlainTextResponse("ready\n")
        return PlainTextResponse("not ready\n", status_code=503)

    async def metrics(_: Request) -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return [Route("/livez", livez), Route("/readyz", readyz), Route("/metrics", metrics)]


def http_app(
    connect_app: ASGIApp,
    mount_path: str,
    readiness: Readiness,
    *,
    origins: Sequence[str],
    allow_credentials: bool,
    extra_request_headers: Sequence[str] = (),
) -> Starlette:
    """The HTTP port: the Connect app under its service path behind CORS, plus the operations routes."""
    cors = Middleware(
        CORSMiddleware,
        allow_origins=list(origins),
        allow_methods=["GET", "POST"],
        allow_headers=[*CONNECT_REQUEST_HEADERS, *extra_request_headers],
        expose_headers=list(CONNECT_EXPOSED_HEADERS),
        allow_credentials=allow_credentials,
        max_age=7200,
    )
    routes: list[BaseRoute] = [*operations_routes(readiness), Mount(mount_path, app=connect_app)]
    return Starlette(routes=routes, middleware=[cors])


class QuietServer(uvicorn.Server):
    """uvicorn without its own signal handling: the process (`ApiServer`, a worker, the demo) owns SIGTERM/SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class ApiServer:
    """Both ports of one API in the running event loop. Port 0 picks a free port (tests)."""

    settings: HttpSettings
    asgi: ASGIApp
    grpc_handlers: Sequence[grpc.GenericRpcHandler]
    service_names: Sequence[str]
    readiness: Readiness
    grpc_options: Sequence[tuple[str, int]] = ()
    """Channel arguments of the gRPC server, e.g. ("grpc.max_metadata_size", 32768)."""
    http_port: int = field(init=False, default=0)
    grpc_port: int = field(init=False, default=0)
    _grpc: grpc.aio.Server | None = field(init=False, default=None)
    _web: QuietServer | None = field(init=False, default=None)
    _web_task: asyncio.Task[None] | None = field(init=False, default=None)
    _health: HealthServicer | None = field(init=False, default=None)
    _health_task: asyncio.Task[None] | None = field(init=False, default=None)

    async def start(self) -> None:
        server = grpc.aio.server(options=tuple(self.grpc_options))
        server.add_generic_rpc_handlers(tuple(self.grpc_handlers))
        self._health = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        reflection.enable_server_reflection(
            (*self.service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
            server,
        )
        self.grpc_port = server.add_insecure_port(f"{self.settings.host}:{self.settings.grpc_port}")
        await server.start()
        self._grpc = server
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        self._health_task = asyncio.create_task(self._follow_readiness())

        # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY on accepted connections only when the listening
        # socket says its protocol is TCP (proto 0 does not count), and without it Nagle plus delayed ACKs
        # add about 40 ms to every HTTP/1.1 response.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.settings.host, self.settings.http_port))
        self.http_port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.asgi, lifespan="off", log_config=None, access_log=False, timeout_graceful_shutdown=5
        )
        self._web = QuietServer(config)
        self._web_task = asyncio.create_task(self._web.serve(sockets=[sock]))
        while not self._web.started:
            if self._web_task.done():
                await self._web_task  # raises what stopped it
                raise RuntimeError("the HTTP server stopped during start-up")
            await asyncio.sleep(0.01)
        logger.info(
            "listening",
            extra={"http": f"{self.settings.host}:{self.http_port}", "grpc": f"{self.settings.host}:{self.grpc_port}"},
        )

    async def _set_health(self, status: health_pb2.HealthCheckResponse.ServingStatus.ValueType) -> None:
        assert self._health is not None
        for name in ("", *self.service_names):
            await self._health.set(name, status)

    async def _follow_readiness(self) -> None:
        while not await self.readiness():  # noqa: ASYNC110 - readiness is a probe to poll, not an event
            await asyncio.sleep(0.5)
        await self._set_health(health_pb2.HealthCheckResponse.SERVING)

    async def stop(self) -> None:
        """Stop taking calls and give in-flight ones `shutdown_grace_seconds` to finish."""
        if self._health_task is not None:
            self._health_task.cancel()
        if self._web is not None and self._web_task is not None:
            self._web.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await self._web_task
        if self._grpc is not None:
            await self._grpc.stop(grace=self.settings.shutdown_grace_seconds)
        logger.info("stopped")

    async def run_until_signal(self) -> None:
        """Serve until SIGTERM or SIGINT, then shut down gracefully."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await self.start()
        try:
            await stop.wait()
        finally:
            await self.stop()
