"""Assembling `platform-public-api`: one pool, one cache, one service, served on both ports.

    pool ─> OverviewReader ─> SingleFlightCache ─> OverviewApi ─┬─ Connect, CORS, /livez /readyz /metrics (HTTP_PORT)
                                                                └─ gRPC, reflection, health (GRPC_PORT)

Only what is particular to the overview lives here (the cache, its counter, anonymous calls logged at
DEBUG when they succeed); `services.common.serving.process` assembles the rest exactly as for the staff
API. `main.py` (the process) and the tests (in-process, port 0, a clock they control) both use
`running_overview()`, so what is tested is what runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime

from fundament.overview.v1 import overview_pb2
from psycopg_pool import AsyncConnectionPool

from common.clock import utc_now
from services.common.role_check import RoleNeeds
from services.common.serving.api_server import ApiServer
from services.common.serving.process import ApiParts, ApiShape, serving_api
from services.common.serving.request_stack import RequestStack
from services.common.singleflight import Outcome, SingleFlightCache
from services.common.startup import DatabaseReadiness
from services.overview import queries
from services.overview.metrics import CACHE_LOOKUPS
from services.overview.reader import OverviewReader
from services.overview.service import SERVICE, OverviewApi, connect_app
from services.overview.settings import APPLICATION_NAME, OverviewSettings

logger = logging.getLogger(__name__)

FAILURE_MESSAGE = "the platform overview is unavailable right now, try again later"

SHAPE = ApiShape(
    application_name=APPLICATION_NAME,
    service=SERVICE,
    # Ready only while the role may execute what queries.sql calls (tenant.platform_overview()) and
    # nothing else: no relation outside PostgreSQL's own schemas, no other function of ours.
    role_needs=RoleNeeds.of_queries([queries.PATH], nothing_else=True),
    # Anonymous: browsers send no credentials.
    allow_credentials=False,
    # `authorization` is allowed so a console that attaches its token to every call still gets
    # through; the service never looks at it.
    extra_request_headers=("authorization",),
    # gRPC clients get Cache-Control and x-request-id as trailing metadata, in the response's own
    # batch: as initial metadata grpc.aio would send a batch of its own first, a noticeable share of
    # what a cached call costs (docs/public-api.md).
    headers_as_trailers=True,
    # Every call answers the one cached message object: encoded once per read, not once per call.
    remember_last=True,
)


@dataclass(frozen=True)
class RunningOverview:
    """The parts of a running `platform-public-api`, for `main.py` and the tests."""

    settings: OverviewSettings
    pool: AsyncConnectionPool
    cache: SingleFlightCache[overview_pb2.GetPlatformOverviewResponse]
    server: ApiServer
    readiness: DatabaseReadiness


# One counter child per result, looked up once rather than on every call.
_LOOKUPS = {outcome: CACHE_LOOKUPS.labels(outcome.value) for outcome in Outcome}


def _count_lookup(outcome: Outcome) -> None:
    _LOOKUPS[outcome].inc()


@asynccontextmanager
async def running_overview(
    settings: OverviewSettings,
    *,
    clock: Callable[[], float] = time.monotonic,
    now: Callable[[], datetime] = utc_now,
) -> AsyncIterator[RunningOverview]:
    """Serve until the block ends; raises `SchemaTooOld` before serving when the schema is too old."""

    def build(pool: AsyncConnectionPool) -> ApiParts[OverviewApi]:
        cache = SingleFlightCache(
            OverviewReader(pool, now=now).read,
            ttl_seconds=settings.cache.ttl_seconds,
            read_timeout_seconds=settings.cache.read_timeout_seconds,
            clock=clock,
            on_lookup=_count_lookup,
            failure_message=FAILURE_MESSAGE,
        )
        api = OverviewApi(cache)
        # No authenticator: the overview is anonymous. Successful calls are all alike (one cached answer),
        # so their log line is DEBUG; failures are logged at INFO and every call is counted in /metrics.
        stack = RequestStack(success_log_level=logging.DEBUG)
        return ApiParts(api, connect_app(api, stack), stack, cache.close)

    async with serving_api(SHAPE, settings.http, settings.database, build) as served:
        yield RunningOverview(settings, served.pool, served.parts.implementation.cache, served.server, served.readiness)
