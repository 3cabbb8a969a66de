"""The operations port every long-running process serves, and the one way to serve an ASGI app.

    /livez    the process runs (never touches the database); with a `Liveness`, also that its loop
              made progress lately (the worker: a beat within three intervals), else 503
    /readyz   a `ReadinessProbe`: 200 "ready", or 503 "not ready" with the probe's reason when it has one
              (`Readiness`: ready once its check succeeded once, then it stays ready)
    /metrics  Prometheus text format of the default registry, and of the registries the process adds
              (a worker adds its mode's own metrics: collector/main.py)

The APIs mount these routes next to their Connect app on HTTP_PORT; the worker serves them alone on
HEALTH_PORT; the demo's page server uses `HttpServer` for its pages. All of them run uvicorn inside
an event loop the process owns (`QuietServer`), so the process, not uvicorn, handles SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from common.http_limits import HttpLimits, uvicorn_limits

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReadyState:
    """One answer of a readiness probe: ready, or not and (when the probe knows) why."""

    ready: bool
    reason: str = ""
    """Why not, in plain words for /readyz and the log; empty when ready or unknown."""

    def readyz_body(self) -> str:
        if self.ready:
            return "ready\n"
        return f"not ready: {self.reason}\n" if self.reason else "not ready\n"


class ReadinessProbe(Protocol):
    """What /readyz (and the APIs' grpc.health.v1) report."""

    async def status(self) -> ReadyState: ...


@dataclass
class Readiness:
    """A `ReadinessProbe` that is ready once `check` succeeded once, then stays ready (the worker's)."""

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

    async def status(self) -> ReadyState:
        return ReadyState(await self())


class LivenessProbe(Protocol):
    """What /livez asks: whether the process still makes progress, and if not, for how long not."""

    @property
    def stall_after_seconds(self) -> float: ...

    @property
    def silent_seconds(self) -> float: ...

    def alive(self) -> bool: ...


class Liveness:
    """Whether a periodic loop still makes progress: it `beat()`s as it works; alive while the last
    beat is at most `stall_after_seconds` old (measured on the monotonic clock)."""

    def __init__(self, stall_after_seconds: float, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        if stall_after_seconds <= 0:
            raise ValueError(f"stall_after_seconds={stall_after_seconds}: must be positive")
        self.stall_after_seconds = stall_after_seconds
        self._monotonic = monotonic
        self._last = monotonic()

    def beat(self) -> None:
        self._last = self._monotonic()

    @property
    def silent_seconds(self) -> float:
        """Seconds since the last beat."""
        return self._monotonic() - self._last

    def alive(self) -> bool:
        return self.silent_seconds <= self.stall_after_seconds


def operations_routes(
    readiness: ReadinessProbe,
    liveness: LivenessProbe | None = None,
    *,
    registries: Sequence[CollectorRegistry] = (REGISTRY,),
) -> list[BaseRoute]:
    """/livez, /readyz and /metrics: outside any request stack and CORS, never authenticated.

    /metrics serves `registries` one after the other; no metric may be in two of them.
    """

    async def livez(_: Request) -> Response:
        if liveness is not None and not liveness.alive():
            silent = f"{liveness.silent_seconds:.0f}"
            return PlainTextResponse(
                f"stalled: no progress for {silent} s (limit {liveness.stall_after_seconds:g} s)\n", status_code=503
            )
        return PlainTextResponse("ok\n")

    async def readyz(_: Request) -> Response:
        state = await readiness.status()
        return PlainTextResponse(state.readyz_body(), status_code=200 if state.ready else 503)

    async def metrics(_: Request) -> Response:
        return Response(b"".join(generate_latest(r) for r in registries), media_type=CONTENT_TYPE_LATEST)

    return [Route("/livez", livez), Route("/readyz", readyz), Route("/metrics", metrics)]


class QuietServer(uvicorn.Server):
    """uvicorn without its own signal handling: the process owns SIGTERM and SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind_tcp(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket on `host:port` (port 0: a free one).

    IPPROTO_TCP is spelled out: asyncio sets TCP_NODELAY on accepted connections only when the
    listening socket says its protocol is TCP (proto 0 does not count), and without it Nagle plus
    delayed ACKs add about 40 ms to every small HTTP/1.1 response.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


class HttpServer:
    """One ASGI app served by uvicorn in the running event loop, on a socket of its own."""

    def __init__(
        self,
        app: ASGIApp,
        sock: socket.socket,
        *,
        name: str,
        graceful_seconds: float = 5.0,
        limits: HttpLimits | None = None,
    ) -> None:
        self._app = app
        self._limits = limits or HttpLimits()
        self._sock = sock
        self._name = name
        self._graceful_seconds = graceful_seconds
        self._server: QuietServer | None = None
        self._task: asyncio.Task[None] | None = None
        self.host, self.port = sock.getsockname()[:2]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        """Serve; returns once uvicorn accepts connections, raises what stopped it if it could not start."""
        config = uvicorn.Config(
            self._app,
            lifespan="off",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=math.ceil(self._graceful_seconds),
            **uvicorn_limits(self._limits),
        )
        self._server = QuietServer(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[self._sock]))
        # uvicorn offers no start-up event; `started` flips once it accepts connections.
        while not self._server.started:
            if self._task.done():
                self._sock.close()
                await self._task
                raise RuntimeError(f"the {self._name} server stopped during start-up")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        """Stop accepting, let open requests finish (up to the grace), close the socket."""
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._sock.close()


# The worker's operations port serves the kubelet's probes and Prometheus' scrapes, a handful at once;
# anything beyond this is a flood, answered 503 except /livez (common/http_limits.py, the reserved slot).
OPERATIONS_MAX_CONNECTIONS = 64


def health_server(
    readiness: ReadinessProbe,
    host: str,
    port: int,
    *,
    liveness: LivenessProbe | None = None,
    registries: Sequence[CollectorRegistry] = (REGISTRY,),
) -> HttpServer:
    """The worker's operations port: /livez, /readyz and /metrics alone."""
    routes = operations_routes(readiness, liveness, registries=registries)
    limits = HttpLimits(max_connections=OPERATIONS_MAX_CONNECTIONS)
    return HttpServer(Starlette(routes=routes), bind_tcp(host, port), name="health", limits=limits)
