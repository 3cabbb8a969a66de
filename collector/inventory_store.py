"""The inventory's database side: one typed function per block of `inventory.sql`.

Functions take the caller's connection and never open a transaction of their own (STYLE 9): the
loop reads the shoot first, then opens ONE transaction around `store_reading`, so a cluster's
snapshots and ledger change together or not at all. `record_failure` runs on its own afterwards.
Everything runs as `fun_cluster_worker`, which may insert and update but never delete.
"""

from __future__ import annotations

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

from collector.gardener import MockShootRow
from collector.ledger import ActiveRow, Discovered, LedgerCounts, TypeCounts, listed_types, plan
from collector.shoot import Reading
from services.common.db import Query, load_queries
from services.common.naming import worker_name

_QUERIES = load_queries(Path(__file__).with_name("inventory.sql"))

Conn = psycopg.AsyncConnection[Any]


def _q(name: str) -> Query:
    return _QUERIES[name]


@dataclass(frozen=True, slots=True)
class ClusterRow:
    """A cluster to collect."""

    id: UUID
    name: str
    organization_id: UUID
    organization_name: str

    def __str__(self) -> str:
        return f"{self.organization_name}/{self.name}"


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


@dataclass(frozen=True, slots=True)
class MockPoolRow:
    name: str
    machine_type: str
    autoscale_min: int


async def ready_clusters(conn: Conn) -> list[ClusterRow]:
    """Every ready cluster, the longest-waiting first."""
    async with conn.cursor(row_factory=class_row(ClusterRow)) as cur:
        await cur.execute(_q("ready_clusters").sql)
        return await cur.fetchall()


async def find_clusters(conn: Conn, ref: str) -> list[FoundCluster]:
    """Live tenant clusters whose id, name or `organization/name` is `ref`."""
    async with conn.cursor(row_factory=class_row(FoundCluster)) as cur:
        await cur.execute(_q("find_clusters").sql, {"ref": ref.strip()})
        return await cur.fetchall()


async def live_namespaces(conn: Conn, cluster_id: UUID) -> list[NamedRow]:
    async with conn.cursor(row_factory=class_row(NamedRow)) as cur:
        await cur.execute(_q("live_namespaces").sql, {"cluster_id": cluster_id})
        return await cur.fetchall()


async def store_reading(conn: Conn, cluster_id: UUID, reading: Reading, *, observed: datetime) -> LedgerCounts:
    """Write a cluster's snapshots and reconcile its ledger (call inside the collection's transaction)."""
    await conn.execute(
        _q("store_cluster_snapshot").sql,
        {
            "cluster_id": cluster_id,
            "observed": observed,
            "nodes": reading.nodes,
            "ready_nodes": reading.ready_nodes,
            "pods": reading.pods,
            "allocatable_pods": reading.allocatable_pods,
            "cpu_allocatable_millicores": reading.cpu_allocatable_millicores,
            "memory_allocatable_bytes": reading.memory_allocatable_bytes,
        },
    )
    async with conn.cursor(row_factory=class_row(NamedRow)) as cur:
        await cur.execute(_q("live_node_pools").sql, {"cluster_id": cluster_id})
        pools = await cur.fetchall()
    pool_counts = [reading.pool_nodes.get(worker_name(pool.name), (0, 0)) for pool in pools]
    if pools:
        await conn.execute(
            _q("store_node_pool_snapshots").sql,
            {
                "cluster_id": cluster_id,
                "observed": observed,
                "node_pool_ids": [pool.id for pool in pools],
                "nodes": [counts[0] for counts in pool_counts],
                "ready_nodes": [counts[1] for counts in pool_counts],
            },
        )
    namespaces = await live_namespaces(conn, cluster_id)
    if namespaces:
        # A namespace the cluster does not have (yet) runs no pods: that is an observation too.
        await conn.execute(
            _q("store_namespace_snapshots").sql,
            {
                "cluster_id": cluster_id,
                "observed": observed,
                "namespace_ids": [ns.id for ns in namespaces],
                "pods": [reading.namespace_pods.get(ns.id, 0) for ns in namespaces],
            },
        )
    return await store_ledger(conn, cluster_id, reading.ledger, observed=observed)


async def store_ledger(conn: Conn, cluster_id: UUID, results: Mapping[str, Any], *, observed: datetime) -> LedgerCounts:
    """Reconcile the cluster's active ledger rows with what the sources found (DESIGN.md §8)."""
    types = listed_types(results)
    active: list[ActiveRow] = []
    if types:
        async with conn.cursor(row_factory=class_row(ActiveRow)) as cur:
            await cur.execute(_q("active_resources").sql, {"cluster_id": cluster_id, "resource_types": list(types)})
            active = await cur.fetchall()
    changes = plan(results, active)
    created = await _create(conn, cluster_id, changes.create, observed)
    destroyed = await _returning_types(
        conn, _q("destroy_resources"), {"ids": list(changes.destroy), "observed": observed}, bool(changes.destroy)
    )
    if changes.change_id:
        await conn.execute(
            _q("change_resource_ids").sql,
            {
                "ids": [row_id for row_id, _ in changes.change_id],
                "resource_ids": [resource_id for _, resource_id in changes.change_id],
                "observed": observed,
            },
        )
    if changes.touch:
        await conn.execute(_q("touch_resources").sql, {"ids": list(changes.touch), "observed": observed})
    return LedgerCounts(
        by_type={
            resource_type: TypeCounts(found=found, created=created[resource_type], destroyed=destroyed[resource_type])
            for resource_type, found in changes.found.items()
        },
        unlisted=changes.unlisted,
    )


async def _create(conn: Conn, cluster_id: UUID, create: Sequence[Discovered], observed: datetime) -> Counter[str]:
    return await _returning_types(
        conn,
        _q("create_resources"),
        {
            "cluster_id": cluster_id,
            "observed": observed,
            "resource_types": [d.resource_type for d in create],
            "resource_ids": [d.resource_id for d in create],
            "names": [d.name for d in create],
            "namespaces": [d.namespace for d in create],
            "billable": [d.billable for d in create],
        },
        bool(create),
    )


async def _returning_types(conn: Conn, query: Query, params: Mapping[str, object], needed: bool) -> Counter[str]:
    """Run a statement that returns one resource type per changed row; count them per type."""
    if not needed:
        return Counter()
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(query.sql, params)
        return Counter(str(row[0]) for row in await cur.fetchall())


async def record_failure(conn: Conn, cluster_id: UUID, *, error: str, at: datetime) -> None:
    """Record why the latest collection failed; the last good numbers and `observed` stay."""
    await conn.execute(_q("record_failure").sql, {"cluster_id": cluster_id, "error": error, "at": at})


async def record_heartbeat(conn: Conn, *, at: datetime, interval_seconds: int, details: Mapping[str, object]) -> None:
    """Record that the inventory loop queued a round now, and its interval."""
    await conn.execute(
        _q("record_heartbeat").sql, {"at": at, "interval_seconds": interval_seconds, "details": Jsonb(dict(details))}
    )


async def mock_shoots(conn: Conn) -> list[MockShootRow]:
    """Every live cluster of a live tenant organization, as the mock garden describes it."""
    async with conn.cursor(row_factory=class_row(MockShootRow)) as cur:
        await cur.execute(_q("mock_shoots").sql)
        return await cur.fetchall()


async def mock_node_pools(conn: Conn, cluster_id: UUID) -> list[MockPoolRow]:
    """The cluster's live node pools with their autoscaler minimum (GARDENER_MODE=mock)."""
    async with conn.cursor(row_factory=class_row(MockPoolRow)) as cur:
        await cur.execute(_q("mock_node_pools").sql, {"cluster_id": cluster_id})
        return await cur.fetchall()
