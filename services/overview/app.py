"""Assembling `platform-public-api`: one pool, one cache, one service, served on both ports.

    pool ─> OverviewReader ─> SingleFlightCache ─> OverviewApi ─┬─ Connect, CORS, /livez /readyz /metrics (HTTP_PORT)
                                                                └─ gRPC, reflection, health (GRPC_PORT)

`running_overview()` owns the lifecycle in order: open the pool, check the schema, start serving;
and in reverse on the way out. `main.py` (the process) and the tests (in-process, port 0, a clock
they control) both use it, so what is tested is what runs.
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

from services.common.db import make_pool
from services.common.serving import ApiServer, RequestStack, grpc_generic_handler, http_app
from services.common.singleflight import Outcome, SingleFlightCache
from services.common.startup import check_schema_at_start, schema_readiness
from services.overview.metrics import CACHE_LOOKUPS
from services.overview.reader import OverviewReader, utc_now
from services.overview.service import SERVICE, OverviewApi, connect_app
from services.overview.settings import APPLICATION_NAME, OverviewSettings

logger = logging.getLogger(__name__)

FAILURE_MESSAGE = "the platform overview is unavailable right now, try again later"

# Browsers may send these besides the Connect headers. `authorization` is allowed so a console that
# attaches its token to every call still gets through; the service never looks at it.
EXTRA_REQUEST_HEADERS = ("authorization",)


@dataclass(frozen=True)
class RunningOverview:
    """The parts of a running `platform-public-api`, for `main.py` and the tests."""

    settings: OverviewSettings
    pool: AsyncConnectionPool
    cache: SingleFlightCache[overview_pb2.GetPlatformOverviewResponse]
    server: ApiServer


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
    # The pool gives up a failed reconnection at once instead of backing off in the background for
    # minutes: the next caller's read then connects afresh, so a restarted database is used at once.
    pool = make_pool(settings.database, application_name=APPLICATION_NAME, reconnect_timeout_seconds=0.0)
    await pool.open(wait=False)
    try:
        await check_schema_at_start(pool)
        reader = OverviewReader(pool, now=now)
        cache = SingleFlightCache(
            reader.read,
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
        connect = connect_app(api, stack)
        readiness = schema_readiness(pool)
        asgi = http_app(
            connect,
            connect.path,
            readiness,
            origins=settings.http.origins,
            allow_credentials=False,
            extra_request_headers=EXTRA_REQUEST_HEADERS,
        )
        # gRPC clients get Cache-Control and x-request-id as trailing metadata, in the response's own
        # batch: as initial metadata grpc.aio would send a batch of its own first, which profiled at
        # about 100 µs per call, a third of what a cached call costs (docs/public-api.md).
        grpc_handler = grpc_generic_handler(api, SERVICE, stack, headers_as_trailers=True)
        server = ApiServer(settings.http, asgi, [grpc_handler], [SERVICE.full_name], readiness)
        await server.start()
        try:
            yield RunningOverview(settings, pool, cache, server)
        finally:
            await server.stop()
            await cache.close()
    finally:
        await pool.close()
