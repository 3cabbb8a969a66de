"""The staff API's queries of clusters (clusters.sql): ListClusters' pages in each order, GetCluster's
one cluster with its node pools, projects and namespaces, and the inventory clock staleness is judged by."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, LiteralString
from uuid import UUID

import psycopg

from services.fleet.queries.base import fetch_all, load, order_params, ordered

QUERIES = load("clusters.sql")

# A ready cluster's snapshot is stale once older than this many inventory intervals.
STALE_INTERVALS = 3


@dataclass(frozen=True, slots=True)
class ClusterRow:
    """A row of tenant.staff_clusters: a cluster with everything its status, staleness, summary and
    sync state derive from."""

    id: UUID
    name: str
    organization_id: UUID
    organization_name: str
    organization_alias: str
    organization_deleted: bool
    region: str
    kubernetes_version: str
    observed_kubernetes_version: str | None
    created: datetime
    deleted: datetime | None
    sync_status: str | None
    shoot_status: str | None
    shoot_operation: str | None
    first_completed: datetime | None
    shoot_status_changed: datetime | None
    collected: bool
    observed: datetime | None
    nodes: int | None
    ready_nodes: int | None
    pods: int | None
    allocatable_pods: int | None
    cpu_allocatable_millicores: int | None
    memory_allocatable_bytes: int | None
    last_error: str | None
    last_error_at: datetime | None
    open_drift_findings: int
    inventory_interval_seconds: int | None
    inventory_since: datetime | None
    sync_attempts: int | None
    sync_error: str | None
    sync_updated: datetime | None
    shoot_message: str | None
    ready_since: datetime | None
    """When the shoot entered the ready set (ready or unhealthy); None outside it."""
    snapshot_source: str | None
    """What the snapshot was read from: apiserver, prometheus, mock; None before it was recorded."""


class ClusterOrder(StrEnum):
    """ListClusters' sort keys; each ends in (name, id)."""

    NAME = "name"
    ORGANIZATION = "organization"
    PODS = "pods"
    NODES = "nodes"
    OBSERVED = "observed"
    STATUS_SINCE = "status_since"


@dataclass(frozen=True, slots=True)
class ClusterFilters:
    """ListClusters' filters, query patterns (services/fleet/parse/search.py) and order, normalized; None
    means "no filter". A page token is bound to every field."""

    organization_id: UUID | None = None
    statuses: tuple[str, ...] | None = None
    needs_attention: bool = False
    stale: bool = False
    region: str | None = None
    include_deleted: bool = False
    either_pattern: str | None = None
    cluster_pattern: str | None = None
    organization_pattern: str | None = None
    order: ClusterOrder = ClusterOrder.NAME
    descending: bool = False


_CLUSTER_STATEMENTS = {
    (order, descending): ordered(QUERIES["list_clusters"], f"clusters_by_{order.value}_{direction}")
    for order in ClusterOrder
    for descending, direction in ((False, "asc"), (True, "desc"))
}


@dataclass(frozen=True, slots=True)
class InventoryClock:
    """The inventory loop's interval and first completed pass (its heartbeat); None before it ran."""

    interval_seconds: int | None = None
    first_completed: datetime | None = None


async def inventory_clock(conn: psycopg.AsyncConnection[Any]) -> InventoryClock:
    """What staleness is judged by (ListClusters reads it only for its stale filter)."""
    rows = await fetch_all(conn, QUERIES["inventory_clock"].sql, InventoryClock, {})
    return rows[0] if rows else InventoryClock()


def _word_start(pattern: str | None) -> str | None:
    # A prefix pattern ('ab%') of the query matches the first name of a key as it is, and any later
    # one after the line feed that separates them; a substring finds all by itself.
    return None if pattern is None or pattern.startswith("%") else "%\n" + pattern


def _trigram_form(pattern: str | None) -> str | None:
    # The form the trigram indexes hold a key in: '-' read as the letter 'z'.
    return None if pattern is None else pattern.replace("-", "z")


def stale_bound(now: datetime, clock: InventoryClock) -> datetime | None:
    """Every stale snapshot was observed before this (three intervals before `now`); None: none is."""
    if clock.interval_seconds is None:
        return None
    return now - timedelta(seconds=STALE_INTERVALS * clock.interval_seconds)


def cluster_page_query(
    filters: ClusterFilters,
    *,
    now: datetime,
    after: tuple[Any, ...] | None,
    limit: int,
    clock: InventoryClock = InventoryClock(),
    observed_at_most: datetime | None = None,
    observed_after: datetime | None = None,
) -> tuple[LiteralString, dict[str, object]]:
    """The statement and parameters of one ListClusters page (tests EXPLAIN them as they run); `clock`
    matters only to the stale filter."""
    params = {
        "organization_id": filters.organization_id,
        "statuses": list(filters.statuses) if filters.statuses is not None else None,
        "needs_attention": filters.needs_attention,
        "stale": filters.stale,
        "region": filters.region,
        "include_deleted": filters.include_deleted,
        "either": filters.either_pattern,
        "either_word": _word_start(filters.either_pattern),
        "either_trigrams": _trigram_form(filters.either_pattern),
        "either_word_trigrams": _trigram_form(_word_start(filters.either_pattern)),
        "cluster_pattern": filters.cluster_pattern,
        "cluster_trigrams": _trigram_form(filters.cluster_pattern),
        "organization_pattern": filters.organization_pattern,
        "organization_word": _word_start(filters.organization_pattern),
        "organization_trigrams": _trigram_form(filters.organization_pattern),
        "organization_word_trigrams": _trigram_form(_word_start(filters.organization_pattern)),
        "stale_before": stale_bound(now, clock),
        "inventory_interval_seconds": clock.interval_seconds,
        "inventory_since": clock.first_completed,
        "now": now,
        "limit": limit,
        "observed_at_most": observed_at_most,
        "observed_after": observed_after,
        **order_params(after),
    }
    return _CLUSTER_STATEMENTS[(filters.order, filters.descending)], params


async def list_clusters(
    conn: psycopg.AsyncConnection[Any],
    *,
    filters: ClusterFilters,
    now: datetime,
    after: tuple[Any, ...] | None,
    limit: int,
) -> list[ClusterRow]:
    """Clusters matching `filters` in their order after `after` (the order's key), at most `limit`."""
    clock = await inventory_clock(conn) if filters.stale else InventoryClock()
    statement, params = cluster_page_query(filters, now=now, after=after, limit=limit, clock=clock)
    return await fetch_all(conn, statement, ClusterRow, params)


@dataclass(frozen=True, slots=True)
class WalkRow:
    """A row of a walk by snapshot time: the walk's start (`as_of`), its phase (0: snapshots taken up to
    then, newest first; 1: snapshots taken since, oldest first) and the cluster."""

    as_of: datetime
    phase: int
    row: ClusterRow


# (as_of, phase, observed, name, id): the key of a walk by snapshot time, newest first.
WalkKey = tuple[datetime, int, datetime, str, UUID]


async def walk_by_observed(
    conn: psycopg.AsyncConnection[Any],
    *,
    filters: ClusterFilters,
    now: datetime,
    after: WalkKey | None,
    limit: int,
) -> list[WalkRow]:
    """ListClusters by snapshot time, newest first, as one consistent walk (docs/architecture.md,
    'A walk by snapshot time').

    A refreshed snapshot jumps to the front of this order, past a cursor that has moved on, so a plain
    keyset walk would skip it. This walk pins its first page's time `as_of`: it first lists the
    snapshots taken up to then, newest first (their keys do not change), then those taken since,
    oldest first (a snapshot refreshed again moves further ahead of the cursor, never behind it).
    Every cluster is listed at least once; one refreshed after it was listed comes again in the
    second part (the page shows each cluster once).
    """
    as_of = after[0] if after else now
    clock = await inventory_clock(conn) if filters.stale else InventoryClock()
    found: list[WalkRow] = []
    if after is None or after[1] == 0:
        statement, params = cluster_page_query(
            filters, now=now, after=after[2:] if after else None, limit=limit, clock=clock, observed_at_most=as_of
        )
        found = [WalkRow(as_of, 0, row) for row in await fetch_all(conn, statement, ClusterRow, params)]
        if len(found) >= limit:
            return found
        after = None
    rising = replace(filters, descending=False)
    statement, params = cluster_page_query(
        rising,
        now=now,
        after=after[2:] if after else None,
        limit=limit - len(found),
        clock=clock,
        observed_after=as_of,
    )
    return found + [WalkRow(as_of, 1, row) for row in await fetch_all(conn, statement, ClusterRow, params)]


async def get_cluster(conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID) -> ClusterRow | None:
    """One cluster (live or deleted) of any organization but the system one; None when there is none."""
    rows = await fetch_all(conn, QUERIES["get_cluster"].sql, ClusterRow, {"cluster_id": cluster_id})
    return rows[0] if rows else None


@dataclass(frozen=True, slots=True)
class NodePoolRow:
    id: UUID
    name: str
    machine_type: str
    autoscale_min: int
    autoscale_max: int
    observed: datetime | None
    nodes: int | None
    ready_nodes: int | None


async def cluster_node_pools(conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID) -> list[NodePoolRow]:
    """Live node pools of a cluster by name, with snapshots."""
    return await fetch_all(conn, QUERIES["cluster_node_pools"].sql, NodePoolRow, {"cluster_id": cluster_id})


@dataclass(frozen=True, slots=True)
class ProjectRow:
    id: UUID
    name: str
    alias: str
    namespaces: int


async def cluster_projects(conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID) -> list[ProjectRow]:
    """Live projects of a cluster by name, with their live namespace counts."""
    return await fetch_all(conn, QUERIES["cluster_projects"].sql, ProjectRow, {"cluster_id": cluster_id})


@dataclass(frozen=True, slots=True)
class NamespaceRow:
    id: UUID
    name: str
    project_id: UUID
    project_name: str
    observed: datetime | None
    pods: int | None


async def cluster_namespaces(conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID) -> list[NamespaceRow]:
    """Live namespaces of live projects of a cluster, by project name then name, with pod counts."""
    return await fetch_all(conn, QUERIES["cluster_namespaces"].sql, NamespaceRow, {"cluster_id": cluster_id})
