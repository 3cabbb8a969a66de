"""Both ports of one API in the running event loop: Connect and operations on HTTP_PORT, gRPC on GRPC_PORT."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from starlette.types import ASGIApp

from common.errors import PortUnavailable
from common.health import HttpServer, ReadinessProbe, bind_tcp
from services.common.serving.reflection import enable_reflection
from services.common.settings import GrpcLimits, HttpSettings

logger = logging.getLogger(__name__)


def grpc_limit_options(limits: GrpcLimits, grace_seconds: float) -> tuple[tuple[str, int], ...]:
    """gRPC core's channel arguments for `limits`.

    Keepalive pings are left to gRPC core's server defaults, which already enforce them: a client
    pinging more often than every 5 minutes without calls gets GOAWAY after two strikes.
    """
    return (
        ("grpc.max_concurrent_streams", limits.max_concurrent_streams),
        ("grpc.max_connection_idle_ms", limits.max_connection_idle_seconds * 1000),
        ("grpc.max_connection_age_ms", limits.max_connection_age_seconds * 1000),
        ("grpc.max_connection_age_grace_ms", int(grace_seconds * 1000)),
    )


@dataclass
class ApiServer:
    """Both ports of one API in the running event loop. Port 0 picks a free port (tests).

    SHUTDOWN_GRACE_SECONDS (`settings.shutdown_grace_seconds`) bounds how long in-flight calls may finish
    after `stop()` on both protocols; both ports drain at the same time.
    """

    settings: HttpSettings
    asgi: ASGIApp
    grpc_handlers: Sequence[grpc.GenericRpcHandler]
    service_names: Sequence[str]
    readiness: ReadinessProbe
    grpc_options: Sequence[tuple[str, int]] = ()
    """Channel arguments of the gRPC server, e.g. ("grpc.max_metadata_size", 32768)."""
    http_port: int = field(init=False, default=0)
    grpc_port: int = field(init=False, default=0)
    _grpc: grpc.aio.Server | None = field(init=False, default=None)
    _web: HttpServer | None = field(init=False, default=None)
    _health: HealthServicer | None = field(init=False, default=None)
    _health_task: asyncio.Task[None] | None = field(init=False, default=None)

    async def start(self) -> None:
        """Listen on both ports, or on neither: raises `PortUnavailable` naming the port that failed."""
        limits = self.settings.grpc_limits
        host = self.settings.host
        server = grpc.aio.server(
            options=(*grpc_limit_options(limits, self.settings.shutdown_grace_seconds), *self.grpc_options),
            maximum_concurrent_rpcs=limits.max_concurrent_rpcs,
        )
        server.add_generic_rpc_handlers(tuple(self.grpc_handlers))
        self._health = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        enable_reflection(server, (*self.service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name))
        # The plain socket first: it can be closed again if gRPC then cannot bind.
        try:
            sock = bind_tcp(host, self.settings.http_port)
        except OSError as e:
            raise PortUnavailable(f"HTTP_PORT {host}:{self.settings.http_port}: cannot listen ({e.strerror})") from None
        try:
            self.grpc_port = server.add_insecure_port(f"{host}:{self.settings.grpc_port}")
        except RuntimeError as e:  # gRPC core says only that it failed to bind
            sock.close()
            raise PortUnavailable(f"GRPC_PORT {host}:{self.settings.grpc_port}: cannot listen ({e})") from None
        await server.start()
        self._grpc = server
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        self._health_task = asyncio.create_task(self._follow_readiness())

        web = HttpServer(
            self.asgi,
            sock,
            name="HTTP",
            graceful_seconds=self.settings.shutdown_grace_seconds,
            limits=self.settings.limits,
        )
        self.http_port = web.port
        await web.start()
        self._web = web
        logger.info("listening", extra={"http": f"{host}:{self.http_port}", "grpc": f"{host}:{self.grpc_port}"})

    async def _set_health(self, status: health_pb2.HealthCheckResponse.ServingStatus.ValueType) -> None:
        assert self._health is not None
        for name in ("", *self.service_names):
            await self._health.set(name, status)

    async def _follow_readiness(self) -> None:
        """gRPC health follows the probe both ways (an API's readiness can be lost, see services/common/startup.py)."""
        serving = False
        while True:
            ready = (await self.readiness.status()).ready
            if ready != serving:
                serving = ready
                status = health_pb2.HealthCheckResponse.SERVING if ready else health_pb2.HealthCheckResponse.NOT_SERVING
                await self._set_health(status)
            # Polled: the APIs' probe only reads the state its own background check keeps, no query.
            await asyncio.sleep(0.5)

    async def stop(self) -> None:
        """Stop taking calls and give in-flight ones `shutdown_grace_seconds` to finish, on both ports."""
        if self._health_task is not None:
            self._health_task.cancel()
        stopping: list[Awaitable[object]] = []
        if self._web is not None:
            stopping.append(self._web.stop())
        if self._grpc is not None:
            stopping.append(self._grpc.stop(grace=self.settings.shutdown_grace_seconds))
        await asyncio.gather(*stopping)
        logger.info("stopped")
