"""The inventory's database side: one typed function per block of `store.sql`.

Functions take the caller's connection and never open a transaction of their own: the loop reads
the shoot first, then opens ONE transaction around `store_reading`, so no transaction waits on an
API server and a cluster's snapshots and ledger change together or not at all. `record_failure`
runs on its own afterwards. Everything runs as `fun_cluster_worker`, which may insert and update but
never delete.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row, tuple_row
from psycopg.types.json import Jsonb

from collector.inventory.ledger import ActiveRow, LedgerCounts, LedgerPlan, TypeCounts, listed_types, plan
from collector.inventory.namespaces import NamespaceRow, count_namespaces
from collector.inventory.pools import map_pools
from collector.inventory.reading import ClusterRow, Reading
from common.database import load_queries

logger = logging.getLogger(__name__)

_QUERIES = load_queries(Path(__file__).with_name("store.sql"))

DATABASE_ERRORS: tuple[type[Exception], ...] = (psycopg.Error, OSError)
"""What a store call raises when the database fails (the loop records them as reason `database`)."""

Conn = psycopg.AsyncConnection[Any]


def connection_lost(conn: Conn, error: Exception) -> bool:
    """Whether `error` came from `conn` itself having died (its backend ended, the network broke),
    rather than from the database refusing a statement."""
    return isinstance(error, psycopg.OperationalError) and conn.broken


@dataclass(frozen=True, slots=True)
class FoundCluster:
    """A cluster `collect --cluster` matched, with whether it may be collected."""

    id: UUID
    name: str
    organization_id: UUID
    organization_name: str
    ready: bool
    shoot_status: str | None

    def row(self) -> ClusterRow:
        return ClusterRow(self.id, self.name, self.organization_id, self.organization_name)


@dataclass(frozen=True, slots=True)
class NamedRow:
    id: UUID
    name: str


async def ready_clusters(conn: Conn) -> list[ClusterRow]:
    """Every ready cluster, the longest-waiting first."""
    async with conn.cursor(row_factory=class_row(ClusterRow)) as cur:
        await cur.execute(_QUERIES["ready_clusters"].sql)
        return await cur.fetchall()


async def find_clusters(conn: Conn, ref: str) -> list[FoundCluster]:
    """Live tenant clusters whose id, name or `organization/name` is `ref`."""
    async with conn.cursor(row_factory=class_row(FoundCluster)) as cur:
        await cur.execute(_QUERIES["find_clusters"].sql, {"ref": ref.strip()})
        return await cur.fetchall()


@dataclass(frozen=True, slots=True)
class LayoutRow:
    """One row of `cluster_layout`: a live node pool, a live namespace or an active ledger row."""

    kind: str
    id: UUID
    name: str
    resource_type: str | None
    namespace: str | None
    resource_id: str | None
    project_name: str | None
    project_id: UUID | None


@dataclass(frozen=True, slots=True)
class Layout:
    """What the database knows of a cluster when a collection stores it."""

    pools: list[NamedRow]
    namespaces: list[NamespaceRow]
    active: list[ActiveRow]


async def cluster_layout(conn: Conn, cluster_id: UUID, resource_types: Sequence[str]) -> Layout:
    """The cluster's live node pools and namespaces and its active ledger rows of the given types (one query)."""
    async with conn.cursor(row_factory=class_row(LayoutRow)) as cur:
        await cur.execute(
            _QUERIES["cluster_layout"].sql, {"cluster_id": cluster_id, "resource_types": list(resource_types)}
        )
        rows = await cur.fetchall()
    layout = Layout([], [], [])
    for row in rows:
        if row.kind == "pool":
            layout.pools.append(NamedRow(row.id, row.name))
        elif row.kind == "namespace":
            layout.namespaces.append(NamespaceRow(row.id, row.name, row.project_name or "", row.project_id or row.id))
        else:
            layout.active.append(
                ActiveRow(row.id, row.resource_type or "", row.namespace or "", row.name, row.resource_id)
            )
    return layout


@dataclass(frozen=True, slots=True)
class Stored:
    """What `store_reading` wrote: the ledger's changes, and the namespaces it could not read."""

    ledger: LedgerCounts
    unread_namespaces: dict[UUID, str]
    """Namespace id -> why its count could not be told (collector/inventory/namespaces.py); its row was kept."""


async def lock_cluster(conn: Conn, cluster_id: UUID) -> None:
    """Take the cluster's write lock, its snapshot row, for the rest of the transaction (store.sql)."""
    await conn.execute(_QUERIES["lock_cluster"].sql, {"cluster_id": cluster_id})


async def store_reading(conn: Conn, cluster_id: UUID, reading: Reading, *, observed: datetime) -> Stored:
    """Write a cluster's snapshots and reconcile its ledger (call inside the collection's transaction).

    One query reads what the database knows of the cluster; every write then goes out in one
    pipeline, so a collection costs the database a handful of round trips whatever its size.
    """
    # The snapshot first: its upsert is the cluster's write lock (store.sql, store_cluster_snapshot).
    await conn.execute(
        _QUERIES["store_cluster_snapshot"].sql,
        {
            "cluster_id": cluster_id,
            "observed": observed,
            "nodes": reading.nodes,
            "ready_nodes": reading.ready_nodes,
            "pods": reading.pods,
            "allocatable_pods": reading.allocatable_pods,
            "cpu_allocatable_millicores": reading.cpu_allocatable_millicores,
            "memory_allocatable_bytes": reading.memory_allocatable_bytes,
            "source": reading.source,
        },
    )
    layout = await cluster_layout(conn, cluster_id, listed_types(reading.ledger))
    changes = plan(reading.ledger, layout.active)
    async with conn.pipeline():
        # Nodes that cannot be told apart by pool say nothing about any pool: those keep their counts.
        pools = map_pools(layout.pools if reading.pools_known else [], reading.pool_nodes)
        for pool_id, reason in pools.unmapped.items():
            # The other pools and the cluster are stored; these keep their last counts and age.
            logger.warning(
                "node pool not counted",
                extra={"cluster_id": str(cluster_id), "node_pool_id": str(pool_id), "reason": reason},
            )
        if pools.counts:
            await conn.execute(
                _QUERIES["store_node_pool_snapshots"].sql,
                {
                    "cluster_id": cluster_id,
                    "observed": observed,
                    "node_pool_ids": list(pools.counts),
                    "nodes": [counts[0] for counts in pools.counts.values()],
                    "ready_nodes": [counts[1] for counts in pools.counts.values()],
                },
            )
        # Only a certain match is stored: an unread namespace keeps its count and `observed`, marked why.
        namespaces = count_namespaces(reading, layout.namespaces)
        if namespaces.pods:
            await conn.execute(
                _QUERIES["store_namespace_snapshots"].sql,
                {
                    "cluster_id": cluster_id,
                    "observed": observed,
                    "namespace_ids": list(namespaces.pods),
                    "pods": list(namespaces.pods.values()),
                },
            )
        if namespaces.unread:
            await conn.execute(
                _QUERIES["mark_namespaces_unread"].sql,
                {
                    "observed": observed,
                    "namespace_ids": list(namespaces.unread),
                    "reasons": list(namespaces.unread.values()),
                },
            )
        pending = await _write_ledger(conn, cluster_id, changes, observed)
    return Stored(await pending.counts(), namespaces.unread)


async def store_ledger(conn: Conn, cluster_id: UUID, results: Mapping[str, Any], *, observed: datetime) -> LedgerCounts:
    """Reconcile the cluster's active ledger rows with what the sources found (the ledger alone)."""
    await lock_cluster(conn, cluster_id)
    types = listed_types(results)
    active = (await cluster_layout(conn, cluster_id, types)).active if types else []
    async with conn.pipeline():
        pending = await _write_ledger(conn, cluster_id, plan(results, active), observed)
    return await pending.counts()


@dataclass
class _PendingLedger:
    """Ledger writes sent in a pipeline; their counts are read once it was synced."""

    changes: LedgerPlan
    created: psycopg.AsyncCursor[tuple[Any, ...]] | None
    destroyed: psycopg.AsyncCursor[tuple[Any, ...]] | None

    async def counts(self) -> LedgerCounts:
        created = await _types_of(self.created)
        destroyed = await _types_of(self.destroyed)
        return LedgerCounts(
            by_type={
                resource_type: TypeCounts(
                    found=found, created=created[resource_type], destroyed=destroyed[resource_type]
                )
                for resource_type, found in self.changes.found.items()
            },
            unlisted=self.changes.unlisted,
        )


async def _types_of(cursor: psycopg.AsyncCursor[tuple[Any, ...]] | None) -> Counter[str]:
    """One resource type per changed row (RETURNING), counted per type."""
    if cursor is None:
        return Counter()
    async with cursor:
        return Counter(str(row[0]) for row in await cursor.fetchall())


async def _write_ledger(conn: Conn, cluster_id: UUID, changes: LedgerPlan, observed: datetime) -> _PendingLedger:
    """Send the plan's writes (inside a pipeline); statements with nothing to do are not sent."""
    created = destroyed = None
    if changes.create:
        created = conn.cursor(row_factory=tuple_row)
        await created.execute(
            _QUERIES["create_resources"].sql,
            {
                "cluster_id": cluster_id,
                "observed": observed,
                "resource_types": [d.resource_type for d in changes.create],
                "resource_ids": [d.resource_id for d in changes.create],
                "names": [d.name for d in changes.create],
                "namespaces": [d.namespace for d in changes.create],
                "billable": [d.billable for d in changes.create],
            },
        )
    if changes.destroy:
        destroyed = conn.cursor(row_factory=tuple_row)
        await destroyed.execute(_QUERIES["destroy_resources"].sql, {"ids": list(changes.destroy), "observed": observed})
    if changes.change_id:
        await conn.execute(
            _QUERIES["change_resource_ids"].sql,
            {
                "ids": [row_id for row_id, _ in changes.change_id],
                "resource_ids": [resource_id for _, resource_id in changes.change_id],
                "observed": observed,
            },
        )
    if changes.touch:
        await conn.execute(_QUERIES["touch_resources"].sql, {"ids": list(changes.touch), "observed": observed})
    return _PendingLedger(changes, created, destroyed)


async def record_failure(conn: Conn, cluster_id: UUID, *, error: str, at: datetime) -> None:
    """Record why the latest collection failed; the last good numbers and `observed` stay (its upsert
    takes the cluster's write lock, as a store does)."""
    await conn.execute(_QUERIES["record_failure"].sql, {"cluster_id": cluster_id, "error": error, "at": at})


async def skewed_status_times(conn: Conn) -> int:
    """Live clusters whose status time lies in the future of the database's clock."""
    async with conn.cursor() as cur:
        await cur.execute(_QUERIES["skewed_status_times"].sql)
        row = await cur.fetchone()
    return int(row[0]) if row else 0


async def record_heartbeat(
    conn: Conn, *, at: datetime, interval_seconds: int, shard: str, details: Mapping[str, object]
) -> None:
    """Record that this shard (`i/N`) of the inventory loop queued a round now, and its interval."""
    await conn.execute(
        _QUERIES["record_heartbeat"].sql,
        {"at": at, "interval_seconds": interval_seconds, "shard": shard, "details": Jsonb(dict(details))},
    )
