"""The one database read behind the overview cache: `tenant.platform_overview()`, as the public role.

The single-flight cache (`services/common/singleflight.py`) decides when to read and bounds the read
with its deadline; this module only reads, converts and counts. One `async with pool.connection()`
block is the whole transaction.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from fundament.overview.v1 import overview_pb2

from common.clock import utc_now
from services.overview import convert, queries
from services.overview.metrics import DATABASE_READ_DURATION, DATABASE_READS

if TYPE_CHECKING:
    from psycopg_pool import AsyncConnectionPool


class OverviewReader:
    """Reads the whole public overview from the database once per call."""

    def __init__(self, pool: AsyncConnectionPool, *, now: Callable[[], datetime] = utc_now) -> None:
        self._pool = pool
        self._now = now

    async def read(self) -> overview_pb2.GetPlatformOverviewResponse:
        """The overview as the database has it now; raises whatever the pool or the query raised."""
        read_at = self._now()
        started = time.perf_counter()
        outcome = "error"
        try:
            async with self._pool.connection() as conn:
                rows = await queries.platform_overview(conn)
            outcome = "ok"
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            DATABASE_READS.labels(outcome).inc()
            DATABASE_READ_DURATION.observe(time.perf_counter() - started)
        return convert.overview_response(rows, read_at)
