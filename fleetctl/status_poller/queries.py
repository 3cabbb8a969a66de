"""Typed wrappers of `fleetctl/status_poller/queries.sql`: one async function per named query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row

from common.database import load_queries
from db.provisioning import shoot_columns

QUERIES = load_queries(Path(__file__).with_name("queries.sql"))
DatabaseError = psycopg.Error


async def connect(dsn: str) -> psycopg.AsyncConnection[Any]:
    """A connection of the poller's own (it runs once a round; no pool needed)."""
    return await psycopg.AsyncConnection.connect(dsn, application_name="fleet-status-poller")


@dataclass(frozen=True, slots=True)
class ClusterStatusRow:
    cluster_id: UUID
    deleted: bool
    has_state: bool
    ever_completed: bool
    shoot_status: str | None
    shoot_operation: str | None
    shoot_message: str | None
    recorded_status: str | None  # Fundament's own columns, as its poller wrote them
    recorded_message: str | None


@dataclass(frozen=True, slots=True)
class StatusWrite:
    cluster_id: UUID
    shoot_status: str
    shoot_operation: str | None
    shoot_message: str
    insert: bool  # the cluster has no shoot status yet
    sync_status: str = "pending"  # only for a first status: the sync that made the shoot
    first_completed: datetime | None = None  # only for a first status


async def clusters_with_status(conn: psycopg.AsyncConnection[Any]) -> list[ClusterStatusRow]:
    async with conn.cursor(row_factory=class_row(ClusterStatusRow)) as cur:
        await cur.execute(QUERIES["clusters_with_status"].sql)
        return await cur.fetchall()


async def write_statuses(conn: psycopg.AsyncConnection[Any], writes: list[StatusWrite], *, now: datetime) -> None:
    """Each write in Fundament's columns; a cluster's first status also records the sync behind it."""
    updates = []
    for w in writes:
        columns = shoot_columns(w.shoot_status, w.shoot_operation, w.shoot_message)
        updates.append(
            {"cluster_id": w.cluster_id, "shoot_status": columns.status, "shoot_message": columns.message, "now": now}
        )
    syncs = [{"cluster_id": w.cluster_id, "sync_status": w.sync_status, "now": now} for w in writes if w.insert]
    async with conn.cursor() as cur:
        if syncs:
            await cur.executemany(QUERIES["record_sync"].sql, syncs)
        if updates:
            await cur.executemany(QUERIES["update_shoot_status"].sql, updates)
