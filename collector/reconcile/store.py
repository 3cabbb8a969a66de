"""The reconcile pass's database side: one typed function per block of `store.sql`.

Each function takes the caller's connection and never opens a transaction of its own: the loop
(loop.py) opens exactly one around a whole pass, after the garden was listed completely, so
the mirror, the findings and the heartbeat change together or not at all. Rows go in by COPY into
temporary tables and every step is one set-based statement over them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson
import psycopg
from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb

from collector.reconcile import ledger_rows
from collector.reconcile.drift import Finding, JsonValue
from collector.reconcile.ledger_rows import LedgerRows
from collector.reconcile.observed import ClusterFacts, ShootObservation
from collector.reconcile.projects import OrganizationFacts
from common.database import Query, load_queries

_QUERIES = load_queries(Path(__file__).with_name("store.sql"))


@dataclass(frozen=True, slots=True)
class ShootChanges:
    """What storing one listing did to the mirror."""

    new: int
    refreshed: int
    gone: int


@dataclass(frozen=True, slots=True)
class FindingChanges:
    """What storing one pass's findings did, per kind."""

    opened: Mapping[str, int]
    still_open: Mapping[str, int]
    resolved: Mapping[str, int]


async def _scalar(conn: psycopg.AsyncConnection[Any], query: Query, params: Mapping[str, object]) -> int:
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query.sql, params)
        row = await cur.fetchone()
    return int(row[0]) if row else 0


async def _per_kind(conn: psycopg.AsyncConnection[Any], query: Query, params: Mapping[str, object]) -> dict[str, int]:
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query.sql, params)
        return {str(kind): int(count) for kind, count in await cur.fetchall()}


async def lock_pass(conn: psycopg.AsyncConnection[Any]) -> None:
    """Wait until no other pass holds the reconcile lock; it is released when the transaction ends."""
    cur = await conn.execute(_QUERIES["lock_pass"].sql)
    if await cur.fetchone() is None:
        raise RuntimeError("tenant.worker_locks has no 'reconcile' row: run fleet db migrate")


async def stage_shoots(conn: psycopg.AsyncConnection[Any], shoots: Iterable[ShootObservation]) -> None:
    """Copy the listed shoots into this transaction's temporary table."""
    await conn.execute(_QUERIES["create_listed_stage"].sql)
    async with conn.cursor() as cur, cur.copy(_QUERIES["copy_listed"].sql) as copy:
        for s in shoots:
            await copy.write_row(
                (
                    s.uid,
                    s.name,
                    s.namespace,
                    s.cluster_label,
                    s.organization_label,
                    s.cluster_id,
                    s.organization_id,
                    s.kubernetes_version,
                    s.region,
                    s.created,
                )
            )
    await conn.execute(_QUERIES["analyze_listed"].sql)


async def read_clusters(conn: psycopg.AsyncConnection[Any]) -> dict[UUID, ClusterFacts]:
    """Every live cluster and every deleted one a staged shoot names, by id (call after `stage_shoots`)."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(_QUERIES["read_clusters"].sql)
        rows = await cur.fetchall()
    return {row[0]: ClusterFacts(*row) for row in rows}


async def read_garden_organizations(conn: psycopg.AsyncConnection[Any]) -> list[OrganizationFacts]:
    """Every live, non-system organization (whose Gardener project may hold unlabeled shoots)."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(_QUERIES["read_garden_organizations"].sql)
        rows = await cur.fetchall()
    return [OrganizationFacts(id=row[0], name=row[1]) for row in rows]


async def store_shoots(conn: psycopg.AsyncConnection[Any], *, now: datetime) -> ShootChanges:
    """Mirror the staged listing into tenant.gardener_shoots: refresh, insert, soft-delete the rest."""
    params = {"now": now}
    refreshed = await _scalar(conn, _QUERIES["refresh_known_shoots"], params)
    new = await _scalar(conn, _QUERIES["insert_new_shoots"], params)
    gone = await _scalar(conn, _QUERIES["soft_delete_unlisted_shoots"], params)
    return ShootChanges(new=new, refreshed=refreshed, gone=gone)


async def close_ledger_of_gone_clusters(conn: psycopg.AsyncConnection[Any], *, now: datetime) -> dict[str, int]:
    """Destroy the active ledger rows of deleted clusters (or of deleted organizations) whose shoot the
    staged listing no longer has; rows closed per reason (call after `stage_shoots`)."""
    return await _per_kind(conn, _QUERIES["close_ledger_of_gone_clusters"], {"now": now})


@dataclass(frozen=True, slots=True)
class GardenerLedgerChanges:
    """What storing one listing's gardener.* rows did, per resource type."""

    created: Mapping[str, int]
    destroyed: Mapping[str, int]
    changed: Mapping[str, int]


async def store_gardener_ledger(
    conn: psycopg.AsyncConnection[Any], implied: LedgerRows, *, now: datetime
) -> GardenerLedgerChanges:
    """Compare the rows the listed shoots imply with the active gardener.* rows: close what is gone,
    follow what changed, touch what is still there, create what is new (call after `stage_shoots` and
    `close_ledger_of_gone_clusters`)."""
    await conn.execute(_QUERIES["create_gardener_ledger_stage"].sql)
    await conn.execute(_QUERIES["create_gardener_ledger_listed_stage"].sql)
    async with conn.cursor() as cur:
        async with cur.copy(_QUERIES["copy_gardener_ledger"].sql) as copy:
            for row in implied.rows:
                details = None if row.details is None else _details_json(row.details)
                await copy.write_row(
                    (row.cluster_id, row.resource_type, row.name, row.resource_id, row.billable, details)
                )
        async with cur.copy(_QUERIES["copy_gardener_ledger_listed"].sql) as copy:
            for listed in implied.listed:
                await copy.write_row(listed)
    await conn.execute(_QUERIES["analyze_gardener_ledger"].sql)
    await conn.execute(_QUERIES["analyze_gardener_ledger_listed"].sql)
    params = {"now": now}
    destroyed = await _per_kind(conn, _QUERIES["close_gardener_rows"], {**params, "types": list(ledger_rows.TYPES)})
    changed = await _per_kind(conn, _QUERIES["change_gardener_details"], params)
    await _scalar(conn, _QUERIES["touch_gardener_rows"], params)
    created = await _per_kind(conn, _QUERIES["insert_gardener_rows"], params)
    return GardenerLedgerChanges(created=created, destroyed=destroyed, changed=changed)


def _details_json(details: Mapping[str, JsonValue]) -> str:
    return orjson.dumps(details, option=orjson.OPT_SORT_KEYS).decode()


async def store_findings(
    conn: psycopg.AsyncConnection[Any],
    findings: Sequence[Finding],
    *,
    now: datetime,
    not_evaluated: Sequence[str] = (),
) -> FindingChanges:
    """Resolve what is no longer seen, move what is seen again, open what is new (call after `store_shoots`).

    The open findings of a kind in `not_evaluated` (a rule whose input could not be read this pass)
    are left exactly as they are: not seeing them means nothing, so they are not resolved.
    """
    await conn.execute(_QUERIES["create_findings_stage"].sql)
    async with conn.cursor() as cur, cur.copy(_QUERIES["copy_findings"].sql) as copy:
        for f in findings:
            await copy.write_row(
                (f.kind, f.subject, f.cluster_id, f.shoot_uid, f.organization_id, _details_json(f.details))
            )
    params = {"now": now}
    resolved = await _per_kind(
        conn, _QUERIES["resolve_unseen_findings"], {**params, "not_evaluated": list(not_evaluated)}
    )
    still_open = await _per_kind(conn, _QUERIES["move_seen_findings"], params)
    opened = await _per_kind(conn, _QUERIES["open_new_findings"], params)
    return FindingChanges(opened=opened, still_open=still_open, resolved=resolved)


async def record_heartbeat(
    conn: psycopg.AsyncConnection[Any], *, now: datetime, interval_seconds: int, details: Mapping[str, JsonValue]
) -> None:
    """Record that reconcile completed a pass now, and at what interval it runs."""
    await conn.execute(
        _QUERIES["record_heartbeat"].sql,
        {"now": now, "interval_seconds": interval_seconds, "details": Jsonb(dict(details))},
    )


async def count_open_findings(conn: psycopg.AsyncConnection[Any]) -> Counter[str]:
    """Open findings per kind."""
    return Counter(await _per_kind(conn, _QUERIES["count_open_findings"], {}))
