"""The fleet history (trends): after each full round the inventory loop records the fleet's totals.

One fleet-wide row per round and, in the first round of each hour, one row per live organization and
one fleet-wide (`history.sql`); then rows past their retention are pruned. Only shard 0 records, so a
sharded collector writes each round's totals once. A failure is logged by the caller and never stops
the loop: the history is a view of the fleet, not part of collecting it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from common.database import load_queries

QUERIES = load_queries(Path(__file__).with_name("history.sql"))


async def record_round(
    conn: psycopg.AsyncConnection[Any], *, at: datetime, round_retention: timedelta, hour_retention: timedelta
) -> tuple[int, int]:
    """Record the totals at `at` and prune by age; returns (rows written, rows pruned). Commits."""
    async with conn.transaction(), conn.cursor() as cur:
        await cur.execute(QUERIES["record_fleet_history"].sql, {"at": at})
        written = await cur.fetchone()
        await cur.execute(
            QUERIES["prune_fleet_history"].sql,
            {"round_before": at - round_retention, "hour_before": at - hour_retention},
        )
        pruned = await cur.fetchone()
    return int(written[0]) if written else 0, int(pruned[0]) if pruned else 0


async def round_clusters_stale(conn: psycopg.AsyncConnection[Any], *, at: datetime) -> int | None:
    """The stale clusters the fleet-wide row of the round at `at` holds; None without that row."""
    async with conn.cursor() as cur:
        await cur.execute(QUERIES["round_clusters_stale"].sql, {"at": at})
        row = await cur.fetchone()
    return None if row is None or row[0] is None else int(row[0])
