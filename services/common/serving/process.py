"""The one way an API process is assembled and run; each API's `app.py` and `main.py` add only what differs.

    pool ─> build(pool) ─> ApiParts (implementation, its Connect app, its request stack)
                             ├─ HTTP_PORT: Connect behind CORS, /livez /readyz /metrics
                             └─ GRPC_PORT: every method of the descriptor, reflection, grpc.health.v1

`serving_api()` owns the lifecycle in order: open the pool, check the schema and the API's role (and
keep checking them, `services.common.startup`), build the API, start both ports; and in reverse on
the way out. `api_main()` is the body of each console script: settings from the environment (exit 2
when unusable), logging, serving until SIGTERM or SIGINT (exit 0), and exit 1 when the database's
schema is older than this release needs.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from google.protobuf.descriptor import ServiceDescriptor
from psycopg_pool import AsyncConnectionPool
from starlette.types import ASGIApp

from common import tracing
from common.database import make_pool
from common.errors import PortUnavailable, SchemaTooOld
from common.logs import configure_logging
from common.settings import DatabaseSettings, LogSettings, SettingsError
from common.signals import stop_event
from services.common.malloc_tuning import malloc_settings_from_env, tune_malloc
from services.common.role_check import RoleNeeds
from services.common.serving.api_server import ApiServer
from services.common.serving.grpc_bridge import grpc_generic_handler
from services.common.serving.http_app import http_app
from services.common.serving.request_stack import RequestStack
from services.common.settings import HttpSettings
from services.common.startup import DatabaseReadiness

logger = logging.getLogger(__name__)

IMPL = TypeVar("IMPL")
SETTINGS = TypeVar("SETTINGS", bound="ApiSettings")


class ConnectApp(Protocol):
    """A generated Connect ASGI application: served under its own service path."""

    @property
    def path(self) -> str: ...

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None: ...


class ApiSettings(Protocol):
    """The settings groups every API has."""

    @property
    def http(self) -> HttpSettings: ...

    @property
    def database(self) -> DatabaseSettings: ...

    @property
    def logging(self) -> LogSettings: ...


@dataclass(frozen=True)
class ApiShape:
    """What is fixed about one API: its name, its descriptor and how its ports treat browsers and gRPC."""

    application_name: str
    """The pool's `application_name` (what `pg_stat_activity` shows)."""
    service: ServiceDescriptor
    role_needs: RoleNeeds
    """What the API's database role must (and may) do; readiness proves it."""
    allow_credentials: bool
    """Whether CORS lets browsers send credentials (the staff API's cookie)."""
    extra_request_headers: Sequence[str] = ()
    grpc_options: Sequence[tuple[str, int]] = ()
    headers_as_trailers: bool = False
    """Send response headers to gRPC clients as trailing metadata (see `grpc_generic_handler`)."""
    remember_last: bool = False
    """The service answers one cached message object: gRPC encodes it once (see `grpc_generic_handler`)."""


@dataclass(frozen=True)
class ApiParts(Generic[IMPL]):
    """What an API builds over the process's pool: the one implementation both protocols call."""

    implementation: IMPL
    connect: ConnectApp
    stack: RequestStack
    close: Callable[[], Awaitable[None]]
    """Releases what the implementation holds (caches, background reads); runs after the ports stop."""


@dataclass(frozen=True)
class ServedApi(Generic[IMPL]):
    """A running API: its pool, its parts and its ports."""

    pool: AsyncConnectionPool
    parts: ApiParts[IMPL]
    server: ApiServer
    readiness: DatabaseReadiness


@asynccontextmanager
async def serving_api(
    shape: ApiShape,
    http: HttpSettings,
    database: DatabaseSettings,
    build: Callable[[AsyncConnectionPool], ApiParts[IMPL]],
) -> AsyncIterator[ServedApi[IMPL]]:
    """Serve until the block ends; raises `SchemaTooOld` before serving when the schema is too old."""
    # The pool gives up a failed reconnection at once instead of backing off in the background for
    # minutes: the next caller's request then connects afresh, so a restarted database is used at once.
    pool = make_pool(database, application_name=shape.application_name, reconnect_timeout_seconds=0.0)
    await pool.open(wait=False)
    readiness = DatabaseReadiness(pool, shape.role_needs)
    try:
        await readiness.start()
        parts = build(pool)
        try:
            connect: ASGIApp = parts.connect
            asgi = http_app(
                connect,
                parts.connect.path,
                readiness,
                origins=http.origins,
                allow_credentials=shape.allow_credentials,
                extra_request_headers=shape.extra_request_headers,
                methods=[method.name for method in shape.service.methods],
            )
            grpc_handler = grpc_generic_handler(
                parts.implementation,
                shape.service,
                parts.stack,
                headers_as_trailers=shape.headers_as_trailers,
                remember_last=shape.remember_last,
            )
            server = ApiServer(
                http, asgi, [grpc_handler], [shape.service.full_name], readiness, grpc_options=shape.grpc_options
            )
            await server.start()
            try:
                yield ServedApi(pool, parts, server, readiness)
            finally:
                # No check runs while calls drain: the verdict stays as it was.
                await readiness.stop()
                await server.stop()
        finally:
            await parts.close()
    finally:
        await readiness.stop()
        await pool.close()


async def serve_until_signal(running: AbstractAsyncContextManager[object]) -> int:
    """Serve `running` until SIGTERM or SIGINT; the exit code (1: the schema is too old)."""
    stop = stop_event()
    try:
        async with running:
            await stop.wait()
            logger.info("stopping on signal")
    except (SchemaTooOld, PortUnavailable) as e:
        logger.error("refusing to start", extra={"error": str(e)})
        return 1
    return 0


def api_main(
    argv: list[str] | None,
    *,
    prog: str,
    description: str,
    epilog: str,
    settings_from_env: Callable[[Mapping[str, str]], SETTINGS],
    running: Callable[[SETTINGS], AbstractAsyncContextManager[object]],
) -> int:
    """The body of an API's console script; returns its exit code."""
    parser = argparse.ArgumentParser(
        prog=prog, description=description, epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--log-text", action="store_true", help="plain text logs instead of JSON (for a terminal)")
    args = parser.parse_args(argv)
    try:
        settings = settings_from_env(os.environ)
        malloc = malloc_settings_from_env(os.environ)
        tracing.configured(os.environ)
    except SettingsError as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 2
    # Before the gRPC server starts its threads: see services/common/malloc_tuning.py.
    tune_malloc(malloc)
    configure_logging(settings.logging.level, json=settings.logging.json and not args.log_text)
    # psycopg's pool logs every connection request at INFO; its warnings (lost connections) are enough.
    logging.getLogger("psycopg.pool").setLevel(max(logging.WARNING, logging.getLogger().level))
    # Before the pool opens, so its connections trace their statements; flushed on the way out.
    stop_tracing = tracing.start(os.environ, service_name=prog)
    try:
        return asyncio.run(serve_until_signal(running(settings)))
    finally:
        if stop_tracing is not None:
            stop_tracing()
