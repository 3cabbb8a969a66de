"""The query of GetFleetTrends over the fleet history (trends.sql), typed like queries.py's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

import orjson
import psycopg
from psycopg.rows import class_row
from psycopg.types.json import set_json_loads

from common.database import load_queries

if TYPE_CHECKING:
    from services.fleet.trends import TrendRequest

QUERIES = load_queries(Path(__file__).with_name("trends.sql"))
NIL_UUID = UUID(int=0)


@dataclass(frozen=True, slots=True)
class TrendRow:
    at: datetime
    clusters: int
    clusters_by_status: dict[str, int]
    nodes: int
    ready_nodes: int
    pods: int
    cpu_allocatable_millicores: int
    memory_allocatable_bytes: int
    open_findings_by_kind: dict[str, int]


async def fleet_trends(conn: psycopg.AsyncConnection[Any], wanted: TrendRequest) -> list[TrendRow]:
    """The last recording of each step of the range, oldest first."""
    params = {
        "resolution": wanted.resolution,
        "organization_id": wanted.organization_id or NIL_UUID,
        "start": wanted.start,
        "end": wanted.end,
        "step_seconds": wanted.step_seconds,
    }
    async with conn.cursor(row_factory=class_row(TrendRow)) as cur:
        # Two JSON objects per point, up to 2,000 points: orjson parses them several times faster.
        set_json_loads(orjson.loads, cur)
        await cur.execute(QUERIES["fleet_trends"].sql, params, prepare=False)
        return await cur.fetchall()
