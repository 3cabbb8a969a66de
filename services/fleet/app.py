"""Assembling `platform-admin-api`: one pool, one service, DCIM authentication, served on both ports.

    pool ─> FleetApi ─> RequestStack (request id → log + metrics → errors → DCIM auth)
                         ├─ Connect + CORS for the DCIM origins, with credentials; /livez /readyz /metrics (HTTP_PORT)
                         └─ gRPC: FleetService, reflection, grpc.health.v1 (GRPC_PORT)

Only what is particular to the staff API lives here (DCIM tokens, signed page tokens, the summary
cache, the gRPC metadata limit, `Cache-Control: private, no-store` on every answer);
`services.common.serving.process` assembles the rest exactly as for the public API. `main.py` (the
process) and the tests (in-process, port 0, a clock and token rules they choose) both use
`running_fleet_api()`, so what is tested is what runs.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime

from psycopg_pool import AsyncConnectionPool

from common.clock import utc_now
from services.common.auth import DcimAuthenticator, DcimTokenRules, DcimTokenValidator
from services.common.paging import PageTokens
from services.common.role_check import RoleNeeds
from services.common.serving.api_server import ApiServer
from services.common.serving.process import ApiParts, ApiShape, serving_api
from services.common.serving.request_stack import RequestStack
from services.fleet.queries import SQL_FILES
from services.fleet.service import SERVICE, FleetApi, connect_app
from services.fleet.settings import FleetSettings

APPLICATION_NAME = "platform-admin-api"

SHAPE = ApiShape(
    application_name=APPLICATION_NAME,
    service=SERVICE,
    # Ready only while the role may read every relation and execute every function its queries name.
    role_needs=RoleNeeds.of_queries(SQL_FILES),
    # Browsers send the dcim_auth cookie (credentials); scripts send the DCIM token as a header.
    allow_credentials=True,
    extra_request_headers=("authorization",),
    # gRPC core refuses metadata over 8 KiB itself (RESOURCE_EXHAUSTED) unless told otherwise; with
    # room above the auth check's own 8 KiB credential limit, an oversized token is UNAUTHENTICATED on
    # both protocols. Anything beyond 32 KiB of metadata is still refused by gRPC core.
    grpc_options=(("grpc.max_metadata_size", 32 * 1024), ("grpc.absolute_max_metadata_size", 64 * 1024)),
)

# Staff data behind a credential: no shared or browser cache may keep any answer, GET or not.
RESPONSE_HEADERS = (("cache-control", "private, no-store"),)


@dataclass(frozen=True)
class RunningFleetApi:
    """The parts of a running `platform-admin-api`, for `main.py` and the tests."""

    settings: FleetSettings
    pool: AsyncConnectionPool
    service: FleetApi
    server: ApiServer


def fleet_parts(
    settings: FleetSettings,
    pool: AsyncConnectionPool,
    rules: DcimTokenRules,
    clock: Callable[[], datetime],
    monotonic: Callable[[], float] = time.monotonic,
) -> ApiParts[FleetApi]:
    """The service over `pool`, behind a stack where every FleetService method needs a DCIM token."""
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
    stack = RequestStack(authenticate=DcimAuthenticator(DcimTokenValidator(rules)), response_headers=RESPONSE_HEADERS)
    return ApiParts(service, connect_app(service, stack), stack, service.close)


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
    token_rules = rules or settings.auth.token_rules()

    def build(pool: AsyncConnectionPool) -> ApiParts[FleetApi]:
        return fleet_parts(settings, pool, token_rules, clock, monotonic)

    async with serving_api(SHAPE, settings.http, settings.database, build) as served:
        yield RunningFleetApi(settings, served.pool, served.parts.implementation, served.server)
