"""Assembling `platform-admin-api`: one pool, one service, DCIM authentication, served on both ports.

    pool ─> FleetApi ─> RequestStack (request id → log + metrics → errors → DCIM auth)
                         ├─ Connect + CORS for the DCIM origins, with credentials; /livez /readyz /metrics (HTTP_PORT)
                         └─ gRPC: FleetService, reflection, grpc.health.v1 (GRPC_PORT)

`running_fleet_api()` owns the lifecycle in order: open the pool, check the schema, start serving;
and in reverse on the way out. `main.py` (the process) and the tests (in-process, port 0, a clock and
token rules they choose) both use it, so what is tested is what runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from psycopg_pool import AsyncConnectionPool

from services.common.auth import DcimAuthenticator, DcimTokenRules, DcimTokenValidator
from services.common.db import make_pool
from services.common.paging import PageTokens
from services.common.serving import ApiServer, RequestStack, grpc_generic_handler, http_app
from services.common.startup import check_schema_at_start, schema_readiness
from services.fleet.service import SERVICE, FleetApi, connect_app
from services.fleet.settings import FleetSettings

logger = logging.getLogger(__name__)

APPLICATION_NAME = "platform-admin-api"
# Scripts send the DCIM token as a header; browsers send the dcim_auth cookie (credentials).
EXTRA_REQUEST_HEADERS = ("authorization",)
# gRPC core refuses metadata over 8 KiB itself (RESOURCE_EXHAUSTED) unless told otherwise; with room
# above the auth check's own 8 KiB credential limit, an oversized token is UNAUTHENTICATED on both
# protocols (DESIGN.md §6). Anything beyond 32 KiB of metadata is still refused by gRPC core.
GRPC_OPTIONS = (("grpc.max_metadata_size", 32 * 1024), ("grpc.absolute_max_metadata_size", 64 * 1024))


@dataclass(frozen=True)
class RunningFleetApi:
    """The parts of a running `platform-admin-api`, for `main.py` and the tests."""

    settings: FleetSettings
    pool: AsyncConnectionPool
    service: FleetApi
    server: ApiServer


def utc_now() -> datetime:
    return datetime.now(UTC)


def build_server(
    settings: FleetSettings,
    pool: AsyncConnectionPool,
    rules: DcimTokenRules,
    clock: Callable[[], datetime],
    monotonic: Callable[[], float] = time.monotonic,
) -> tuple[FleetApi, ApiServer]:
    """The service and both its ports over `pool`; every FleetService method needs a DCIM token."""
    # Page tokens are signed with a key derived from the JWT secret, so every replica accepts every
    # replica's tokens without another secret to distribute.
    service = FleetApi(
        pool,
        PageTokens.derived_from(rules.secret),
        clock,
        summary_cache_seconds=settings.summary.cache_seconds,
        summary_read_timeout_seconds=settings.summary.read_timeout_seconds,
        monotonic=monotonic,
    )
    stack = RequestStack(authenticate=DcimAuthenticator(DcimTokenValidator(rules)))
    connect = connect_app(service, stack)
    readiness = schema_readiness(pool)
    asgi = http_app(
        connect,
        connect.path,
        readiness,
        origins=settings.http.origins,
        allow_credentials=True,
        extra_request_headers=EXTRA_REQUEST_HEADERS,
    )
    server = ApiServer(
        settings.http,
        asgi,
        [grpc_generic_handler(service, SERVICE, stack)],
        [SERVICE.full_name],
        readiness,
        grpc_options=GRPC_OPTIONS,
    )
    return service, server


@asynccontextmanager
async def running_fleet_api(
    settings: FleetSettings,
    *,
    rules: DcimTokenRules | None = None,
    clock: Callable[[], datetime] = utc_now,
    monotonic: Callable[[], float] = time.monotonic,
) -> AsyncIterator[RunningFleetApi]:
    """Serve until the block ends; raises `SchemaTooOld` before serving when the schema is too old.

    `rules` defaults to the production token rules of `settings` (tests may pass others); `clock` is
    the wall clock answers are judged by, `monotonic` the one the summary cache ages by.
    """
    # The pool gives up a failed reconnection at once instead of backing off in the background for
    # minutes: the next caller's request then connects afresh, so a restarted database is used at once.
    pool = make_pool(settings.database, application_name=APPLICATION_NAME, reconnect_timeout_seconds=0.0)
    await pool.open(wait=False)
    try:
        await check_schema_at_start(pool)
        service, server = build_server(settings, pool, rules or settings.auth.token_rules(), clock, monotonic)
        await server.start()
        try:
            yield RunningFleetApi(settings, pool, service, server)
        finally:
            await server.stop()
            await service.close()
    finally:
        await pool.close()
