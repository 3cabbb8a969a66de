"""The staff API's query of GetFleetTrends (trends.sql): points of the fleet history over a range.

Which history answers: one organization's hourly rows, or the fleet's per-round rows for steps under
an hour and its hourly rows otherwise. The range comes checked (services/fleet/parse/requests.py
bounds it to a number of steps), so an answer is at most that many points whatever the caller asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import orjson
import psycopg
from psycopg.rows import class_row
from psycopg.types.json import set_json_loads

from services.fleet.queries.base import NIL_UUID, load

QUERIES = load("trends.sql")
# Steps under this many seconds read the fleet's per-round rows; an organization has hourly ones only.
HOUR_SECONDS = 3600


@dataclass(frozen=True, slots=True)
class TrendRange:
    """GetFleetTrends' range, step and organization (None: the fleet), checked."""

    start: datetime
    end: datetime
    step_seconds: int
    organization_id: UUID | None

    @property
    def resolution(self) -> str:
        fine = self.organization_id is None and self.step_seconds < HOUR_SECONDS
        return "round" if fine else "hour"


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


async def fleet_trends(conn: psycopg.AsyncConnection[Any], wanted: TrendRange) -> list[TrendRow]:
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
