"""The staff API's queries of GetFleetSummary (summary.sql): the totals the inventory loop recorded
after its latest round, or the listing added up now, with the loops' freshness.

Which of the two answers is `is_recent`'s decision: recorded totals stand for now only while no
snapshot they add up could have turned stale since.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any

import psycopg

from services.fleet.queries.base import fetch_all, load
from services.fleet.queries.clusters import STALE_INTERVALS

QUERIES = load("summary.sql")


@dataclass(frozen=True, slots=True)
class FleetTotalsRow:
    organizations: int
    organizations_listed: int
    clusters: int
    projects: int
    namespaces: int
    clusters_ready: int
    nodes: int
    ready_nodes: int
    pods: int
    allocatable_pods: int
    cpu_allocatable_millicores: int
    memory_allocatable_bytes: int
    clusters_stale: int


async def fleet_totals(conn: psycopg.AsyncConnection[Any], *, now: datetime) -> FleetTotalsRow:
    """Platform-wide totals, with staleness judged at `now`."""
    rows = await fetch_all(conn, QUERIES["fleet_totals"].sql, FleetTotalsRow, {"now": now})
    return rows[0]


@dataclass(frozen=True, slots=True)
class RecordedTotalsRow(FleetTotalsRow):
    """The fleet-wide row of the latest inventory round in the history: every figure of the summary
    (FleetTotalsRow's), when it was recorded, and the counts by status and finding kind."""

    at: datetime
    clusters_by_status: dict[str, int]
    open_findings_by_kind: dict[str, int]

    def totals(self) -> FleetTotalsRow:
        return FleetTotalsRow(**{f.name: getattr(self, f.name) for f in fields(FleetTotalsRow)})


async def latest_fleet_totals(conn: psycopg.AsyncConnection[Any]) -> RecordedTotalsRow | None:
    """The totals of the latest recorded inventory round; None when none was recorded."""
    rows = await fetch_all(conn, QUERIES["latest_fleet_totals"].sql, RecordedTotalsRow, {})
    return rows[0] if rows else None


@dataclass(frozen=True, slots=True)
class StatusInputsRow:
    sync_status: str | None
    shoot_status: str | None
    shoot_operation: str | None
    ever_completed: bool
    clusters: int


async def fleet_status_inputs(conn: psycopg.AsyncConnection[Any]) -> list[StatusInputsRow]:
    """Live clusters grouped by the inputs of their status."""
    return await fetch_all(conn, QUERIES["fleet_status_inputs"].sql, StatusInputsRow, {})


@dataclass(frozen=True, slots=True)
class KindCountRow:
    kind: str
    findings: int


async def open_findings_by_kind(conn: psycopg.AsyncConnection[Any]) -> list[KindCountRow]:
    """Open findings per kind."""
    return await fetch_all(conn, QUERIES["open_findings_by_kind"].sql, KindCountRow, {})


@dataclass(frozen=True, slots=True)
class LoopRow:
    loop: str
    last_completed: datetime
    interval_seconds: int
    shards: int
    shards_reporting: int


async def loop_freshness(conn: psycopg.AsyncConnection[Any]) -> list[LoopRow]:
    """Each worker loop's last pass and interval."""
    return await fetch_all(conn, QUERIES["loop_freshness"].sql, LoopRow, {})


@dataclass(frozen=True, slots=True)
class StandbyRow:
    standby: bool
    lag_milliseconds: int | None
    last_replayed: datetime | None


async def standby_replay(conn: psycopg.AsyncConnection[Any]) -> StandbyRow | None:
    """How far the standby this session reads trails its primary; None on a primary."""
    rows = await fetch_all(conn, QUERIES["standby_replay"].sql, StandbyRow, {})
    return rows[0] if rows and rows[0].standby else None


def is_recent(recorded: datetime, loops: Sequence[LoopRow], now: datetime) -> bool:
    """Whether totals recorded at `recorded` may stand for now: within three inventory intervals, the
    age at which a snapshot turns stale (a stopped collector's last totals are not shown as current)."""
    interval = next((loop.interval_seconds for loop in loops if loop.loop == "inventory"), None)
    if interval is None:
        return False
    return timedelta(0) <= now - recorded <= timedelta(seconds=STALE_INTERVALS * interval)
