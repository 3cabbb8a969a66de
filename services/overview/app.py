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

from services.common.db import SCHEMA_VERSION, make_pool, require_schema
from services.common.errors import Unavailable
from services.common.serving import ApiServer, Readiness, RequestStack, grpc_generic_handler, http_app
from services.overview.cache import Outcome, SingleFlightCache
from services.overview.metrics import CACHE_LOOKUPS
from services.overview.reader import OverviewReader, utc_now
from services.overview.service import SERVICE, OverviewApi, connect_app
from services.overview.settings import APPLICATION_NAME, OverviewSettings

logger = logging.getLogger(__name__)

FAILURE_MESSAGE = "the platform overview is unavailable right now, try again later"

# Browsers may send these besides the Connect headers. `authorization` is allowed so a console that
# attaches its token to every call still gets through; the service never looks at it.
EXTRA_REQUEST_HEADERS = ("authorization",)


class SchemaTooOld(RuntimeError):
    """The database answered, with a schema older than this release needs: refuse to start."""


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


async def _check_schema_at_start(pool: AsyncConnectionPool) -> None:
    """Raise `SchemaTooOld` if the database answers with an old schema; an unreachable one only delays readiness."""
    try:
        version = await require_schema(pool, SCHEMA_VERSION)
    except Unavailable as e:
        raise SchemaTooOld(e.message) from e
    except Exception as e:  # unreachable or refusing: serve anyway, /readyz says "not ready" until it answers
        logger.warning("database not reachable at start", extra={"cause": type(e).__name__, "error": str(e)[:300]})
        return
    logger.info("database schema checked", extra={"schema_version": version})


def _readiness(pool: AsyncConnectionPool) -> Readiness:
    """Ready once the database answered once with a schema new enough (then it stays ready)."""

    async def database_answered() -> bool:
        try:
            await require_schema(pool, SCHEMA_VERSION)
        except Unavailable as e:
            logger.error("database schema too old", extra={"error": e.message})
            return False
        return True

    return Readiness(database_answered)


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
        await _check_schema_at_start(pool)
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
        readiness = _readiness(pool)
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
