"""Typed functions for the named blocks of `queries.sql`, the only SQL `platform-admin-api` runs.

Each function takes a connection (the caller owns the transaction scope) and keyword arguments and
returns frozen rows. Statements run unprepared (`prepare=False`): their optional filters are
`(%(x)s IS NULL OR ...)`, and only a plan made for the actual values drops the unused ones and picks
the index that serves the used ones. A generic prepared plan would keep every branch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any, LiteralString, NamedTuple, TypeVar
from uuid import UUID

import psycopg
from psycopg.rows import RowMaker, class_row
from psycopg.types.numeric import Int8BinaryLoader

from common.database import load_queries

QUERIES = load_queries(Path(__file__).with_name("queries.sql"))
# The keyset condition and ORDER BY of each sort order of the two sortable lists (see orders.sql).
ORDERS = load_queries(Path(__file__).with_name("orders.sql"))
KEYSET_LINE = "-- keyset --"
ORDER_LINE = "-- order --"

# Sentinel keys that sort before every row: the first page is "after" them (see queries.sql).
NIL_UUID = UUID(int=0)
BEFORE_ANY_TEXT = ""
BEFORE_ANY_TIME = "-infinity"
# How a missing time sorts in an order by it: '-infinity' in SQL, this in a page token.
NEVER = datetime.min.replace(tzinfo=UTC)
# The zero of a timestamptz's binary form (OrganizationRow's times count from it).
POSTGRES_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
# A ready cluster's snapshot is stale once older than this many inventory intervals (migration 0004).
STALE_INTERVALS = 3

R = TypeVar("R")


async def _all(conn: psycopg.AsyncConnection[Any], name: str, row: type[R], params: Mapping[str, object]) -> list[R]:
    async with conn.cursor(row_factory=class_row(row)) as cur:
        await cur.execute(QUERIES[name].sql, params, prepare=False)
        return await cur.fetchall()


def _ordered(list_name: str, order_block: str) -> LiteralString:
    """A list's block with the keyset condition and ORDER BY of one order in place of its keyset line,
    and that ORDER BY again in place of its order line when it has one (ListClusters sorts the page it
    chose once more after reading its rows)."""
    template = QUERIES[list_name].sql
    if KEYSET_LINE not in template:
        raise ValueError(f"{list_name} has no keyset line")
    block = ORDERS[order_block].sql
    order_by = [line for line in block.splitlines() if line.startswith("ORDER BY ")]
    if len(order_by) != 1:
        raise ValueError(f"{order_block} has no single ORDER BY line")
    return template.replace(KEYSET_LINE, block).replace(ORDER_LINE, order_by[0])


def _sql_time(value: datetime) -> datetime | str:
    return BEFORE_ANY_TIME if value == NEVER else value


def _order_params(after: tuple[Any, ...] | None) -> dict[str, object]:
    """The keyset parameters of an order block: (value, name, id) or (name, id); first_page without one."""
    if after is None:
        return {"first_page": True, "after_value": None, "after_name": None, "after_id": None}
    *value, name, id_ = after
    after_value = value[0] if value else None
    if isinstance(after_value, datetime):
        after_value = _sql_time(after_value)
    return {"first_page": False, "after_value": after_value, "after_name": name, "after_id": id_}


async def _ordered_all(
    conn: psycopg.AsyncConnection[Any], statement: LiteralString, row: type[R], params: Mapping[str, object]
) -> list[R]:
    async with conn.cursor(row_factory=class_row(row)) as cur:
        await cur.execute(statement, params, prepare=False)
        return await cur.fetchall()


async def begin_consistent_read(conn: psycopg.AsyncConnection[Any]) -> None:
    """Make the rest of the transaction one read-only snapshot (call before any other query)."""
    await conn.execute(QUERIES["begin_consistent_read"].sql, prepare=False)


class OrganizationRow(NamedTuple):
    """An organization as ListOrganizations sends it, in the forms a page of up to 500 is cheapest to
    read and convert in: the id as its canonical text (queries.sql casts it) and the times as integer
    microseconds since 2000-01-01 UTC, PostgreSQL's epoch (a timestamptz's binary form is that int8,
    and `_organization_rows` loads it as one), so no UUID and datetime objects are built per row only
    to be turned back into text and integers; and a named tuple, made from psycopg's tuple of the
    values in one C call (a frozen dataclass's __init__ costs 1.3 us for twelve fields). `uuid` and
    `created` give the typed values, for the page key (one row a page)."""

    id: str
    name: str
    alias: str
    listed_publicly: bool
    created_micros: int
    deleted_micros: int | None
    clusters: int
    projects: int
    namespaces: int
    ready_nodes: int
    pods: int
    clusters_needing_attention: int

    @property
    def uuid(self) -> UUID:
        return UUID(self.id)

    @property
    def created(self) -> datetime:
        return from_postgres_micros(self.created_micros)


def from_postgres_micros(micros: int) -> datetime:
    """The aware datetime `micros` microseconds after 2000-01-01 UTC (PostgreSQL's epoch)."""
    return POSTGRES_EPOCH + timedelta(microseconds=micros)


class OrganizationOrder(StrEnum):
    """ListOrganizations' sort keys; each ends in (name, id)."""

    NAME = "name"
    ALIAS = "alias"
    CREATED = "created"


@dataclass(frozen=True, slots=True)
class OrganizationFilters:
    """ListOrganizations' query and order, normalized (a page token is bound to all of them)."""

    pattern: str | None = None
    order: OrganizationOrder = OrganizationOrder.NAME
    descending: bool = False


_ORGANIZATION_STATEMENTS = {
    (order, descending): _ordered("list_organizations", f"organizations_by_{order.value}_{direction}")
    for order in OrganizationOrder
    for descending, direction in ((False, "asc"), (True, "desc"))
}


def organization_page_statement(filters: OrganizationFilters) -> LiteralString:
    """ListOrganizations' statement for the order and direction of `filters`."""
    return _ORGANIZATION_STATEMENTS[(filters.order, filters.descending)]


async def list_organizations(
    conn: psycopg.AsyncConnection[Any],
    *,
    filters: OrganizationFilters = OrganizationFilters(),
    after: tuple[Any, ...] | None,
    limit: int,
) -> list[OrganizationRow]:
    """Organizations matching `filters` in their order after `after` (the order's key), at most `limit`."""
    params = {"pattern": filters.pattern, "organization_id": None, "limit": limit, **_order_params(after)}
    return await _organization_rows(conn, organization_page_statement(filters), params)


async def get_organization(conn: psycopg.AsyncConnection[Any], *, organization_id: UUID) -> OrganizationRow | None:
    """One organization (live or deleted) but the system one; None when there is none (the list's block)."""
    params = {"pattern": None, "organization_id": organization_id, "limit": 1, **_order_params(None)}
    rows = await _organization_rows(conn, _ORGANIZATION_STATEMENTS[(OrganizationOrder.NAME, False)], params)
    return rows[0] if rows else None


def _organization_row(cursor: psycopg.AsyncCursor[Any]) -> RowMaker[OrganizationRow]:
    # Each row is psycopg's tuple of its values made an OrganizationRow by position (the block's
    # columns are its fields in order, a test checks), in one C call: args_row would add two Python
    # calls per row, its own and the named tuple's __new__, for up to 500 rows a page.
    return partial(tuple.__new__, OrganizationRow)


async def _organization_rows(
    conn: psycopg.AsyncConnection[Any], statement: LiteralString, params: Mapping[str, object]
) -> list[OrganizationRow]:
    # Binary results, with the times loaded as the int8 they are on the wire.
    async with conn.cursor(row_factory=_organization_row, binary=True) as cur:
        cur.adapters.register_loader("timestamptz", Int8BinaryLoader)
        await cur.execute(statement, params, prepare=False)
        return await cur.fetchall()


@dataclass(frozen=True, slots=True)
class ListingChangeRow:
    id: UUID
    listed_publicly: bool
    previously_listed: bool
    changed_by: str
    reason: str
    changed: datetime


async def organization_listing_changes(
    conn: psycopg.AsyncConnection[Any], *, organization_id: UUID, limit: int
) -> list[ListingChangeRow]:
    """An organization's listing changes, newest first, at most `limit`."""
    return await _all(
        conn, "organization_listing_changes", ListingChangeRow, {"organization_id": organization_id, "limit": limit}
    )


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
    """When the shoot entered the ready set (ready or unhealthy); None outside it (migration 0007)."""
    snapshot_source: str | None
    """What the snapshot was read from: apiserver, prometheus, mock; None before it was recorded (migration 0012)."""


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
    """ListClusters' filters, query patterns (services/fleet/search.py) and order, normalized; None
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
    (order, descending): _ordered("list_clusters", f"clusters_by_{order.value}_{direction}")
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
    rows = await _all(conn, "inventory_clock", InventoryClock, {})
    return rows[0] if rows else InventoryClock()


def _word_start(pattern: str | None) -> str | None:
    # A prefix pattern ('ab%') of the query matches the first name of a key as it is, and any later
    # one after the line feed that separates them (migration 0012); a substring finds all by itself.
    return None if pattern is None or pattern.startswith("%") else "%\n" + pattern


def _trigram_form(pattern: str | None) -> str | None:
    # The form the trigram indexes hold a key in (migration 0012): '-' read as the letter 'z'.
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
        **_order_params(after),
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
    return await _ordered_all(conn, statement, ClusterRow, params)


async def get_cluster(conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID) -> ClusterRow | None:
    """One cluster (live or deleted) of any organization but the system one; None when there is none."""
    rows = await _all(conn, "get_cluster", ClusterRow, {"cluster_id": cluster_id})
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
    return await _all(conn, "cluster_node_pools", NodePoolRow, {"cluster_id": cluster_id})


@dataclass(frozen=True, slots=True)
class ProjectRow:
    id: UUID
    name: str
    alias: str
    namespaces: int


async def cluster_projects(conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID) -> list[ProjectRow]:
    """Live projects of a cluster by name, with their live namespace counts."""
    return await _all(conn, "cluster_projects", ProjectRow, {"cluster_id": cluster_id})


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
    return await _all(conn, "cluster_namespaces", NamespaceRow, {"cluster_id": cluster_id})


@dataclass(frozen=True, slots=True)
class FindingRow:
    id: UUID
    kind: str
    subject: str
    cluster_id: UUID | None
    cluster_name: str | None
    organization_id: UUID | None
    organization_name: str | None
    shoot_uid: UUID | None
    shoot_name: str | None
    shoot_namespace: str | None
    details: dict[str, Any]
    first_detected: datetime
    last_detected: datetime
    resolved: datetime | None


@dataclass(frozen=True, slots=True)
class LedgerCountRow:
    resource_type: str
    active: int
    active_billable: int


async def cluster_ledger_counts(conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID) -> list[LedgerCountRow]:
    """Active ledger rows of a cluster per resource type."""
    return await _all(conn, "cluster_ledger_counts", LedgerCountRow, {"cluster_id": cluster_id})


@dataclass(frozen=True, slots=True)
class FindingFilters:
    """ListDriftFindings' filters, normalized; None means "no filter"."""

    kind: str | None = None
    organization_id: UUID | None = None
    cluster_id: UUID | None = None
    include_resolved: bool = False


async def list_drift_findings(
    conn: psycopg.AsyncConnection[Any],
    *,
    filters: FindingFilters,
    after: tuple[datetime, UUID] | None,
    limit: int | None,
) -> list[FindingRow]:
    """Findings (open, or all with include_resolved) matching `filters` after `after` = (first_detected, id).

    At most `limit` rows (None: all).
    """
    first_detected: datetime | str
    first_detected, id_ = after or (BEFORE_ANY_TIME, NIL_UUID)
    params = {
        "kind": filters.kind,
        "organization_id": filters.organization_id,
        "cluster_id": filters.cluster_id,
        "include_resolved": filters.include_resolved,
        "after_first_detected": first_detected,
        "after_id": id_,
        "limit": limit,
    }
    return await _all(conn, "list_drift_findings", FindingRow, params)


async def cluster_open_findings(conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID) -> list[FindingRow]:
    """Every open drift finding about one cluster, by first_detected (the list's block, unpaged)."""
    return await list_drift_findings(conn, filters=FindingFilters(cluster_id=cluster_id), after=None, limit=None)


async def cluster_resolved_findings(
    conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID, limit: int
) -> list[FindingRow]:
    """One cluster's resolved findings, newest resolved first, at most `limit`."""
    return await _all(conn, "cluster_resolved_findings", FindingRow, {"cluster_id": cluster_id, "limit": limit})


@dataclass(frozen=True, slots=True)
class ResourceRow:
    id: UUID
    cluster_id: UUID
    cluster_name: str
    organization_name: str
    resource_type: str
    resource_id: str | None
    name: str
    namespace: str
    billable: bool
    created: datetime
    last_seen: datetime
    destroyed: datetime | None
    destroyed_reason: str | None


@dataclass(frozen=True, slots=True)
class ResourceFilters:
    """ListInfrastructureResources' filters, normalized; None means "no filter"."""

    cluster_id: UUID | None = None
    resource_type: str | None = None
    billable: bool | None = None
    include_destroyed: bool = False


ResourceKey = tuple[UUID, str, str, str, UUID]


async def list_infrastructure_resources(
    conn: psycopg.AsyncConnection[Any],
    *,
    filters: ResourceFilters,
    after: ResourceKey | None,
    limit: int,
) -> list[ResourceRow]:
    """Ledger rows matching `filters` after `after` = (cluster_id, type, namespace, name, id)."""
    cluster_id, resource_type, namespace, name, id_ = after or (
        NIL_UUID,
        BEFORE_ANY_TEXT,
        BEFORE_ANY_TEXT,
        BEFORE_ANY_TEXT,
        NIL_UUID,
    )
    params = {
        "cluster_id": filters.cluster_id,
        "resource_type": filters.resource_type,
        "billable": filters.billable,
        "include_destroyed": filters.include_destroyed,
        "after_cluster_id": cluster_id,
        "after_resource_type": resource_type,
        "after_namespace": namespace,
        "after_name": name,
        "after_id": id_,
        "limit": limit,
    }
    return await _all(conn, "list_infrastructure_resources", ResourceRow, params)


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
    rows = await _all(conn, "fleet_totals", FleetTotalsRow, {"now": now})
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
    rows = await _all(conn, "latest_fleet_totals", RecordedTotalsRow, {})
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
    return await _all(conn, "fleet_status_inputs", StatusInputsRow, {})


@dataclass(frozen=True, slots=True)
class KindCountRow:
    kind: str
    findings: int


async def open_findings_by_kind(conn: psycopg.AsyncConnection[Any]) -> list[KindCountRow]:
    """Open findings per kind."""
    return await _all(conn, "open_findings_by_kind", KindCountRow, {})


@dataclass(frozen=True, slots=True)
class LoopRow:
    loop: str
    last_completed: datetime
    interval_seconds: int


async def loop_freshness(conn: psycopg.AsyncConnection[Any]) -> list[LoopRow]:
    """Each worker loop's last pass and interval."""
    return await _all(conn, "loop_freshness", LoopRow, {})


@dataclass(frozen=True, slots=True)
class NamespaceMatchRow:
    id: UUID
    name: str
    project_id: UUID
    project_name: str
    cluster_id: UUID
    cluster_name: str
    organization_id: UUID
    organization_name: str
    organization_alias: str


@dataclass(frozen=True, slots=True)
class NamespaceSearch:
    """SearchNamespaces' patterns (services/fleet/search.py, NamespacePatterns); a page token is bound
    to them."""

    name: str
    name_start: str | None = None
    project: str | None = None
    project_names: str | None = None


async def search_namespaces(
    conn: psycopg.AsyncConnection[Any], *, search: NamespaceSearch, after: tuple[str, UUID] | None, limit: int
) -> list[NamespaceMatchRow]:
    """Live namespaces whose name or Kubernetes name matches, by (name, id), after `after`, at most `limit`."""
    statement, params = namespace_search_query(search, after=after, limit=limit)
    async with conn.cursor(row_factory=class_row(NamespaceMatchRow)) as cur:
        await cur.execute(statement, params, prepare=False)
        return await cur.fetchall()


def namespace_search_query(
    search: NamespaceSearch, *, after: tuple[str, UUID] | None, limit: int
) -> tuple[LiteralString, dict[str, object]]:
    """The statement and parameters of one SearchNamespaces page (tests EXPLAIN them as they run)."""
    name, id_ = after or (BEFORE_ANY_TEXT, NIL_UUID)
    params: dict[str, object] = {
        "pattern": search.name,
        "name_start": search.name_start,
        "project_pattern": search.project,
        "project_names": search.project_names,
        "after_name": name,
        "after_id": id_,
        "limit": limit,
    }
    return QUERIES["search_namespaces"].sql, params


def query_names() -> Sequence[str]:
    """Every named block (a test prepares each one against the migrated schema)."""
    return tuple(QUERIES)
