"""The staff API's queries of the ledger (ledger.sql): ListInfrastructureResources' pages, and one
cluster's active rows per type for GetCluster."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from services.fleet.queries.base import BEFORE_ANY_TEXT, NIL_UUID, fetch_all, load

QUERIES = load("ledger.sql")


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
    pool_machine_type: str | None = None
    """A gardener.workerpool row's machine type, minimum and maximum; None for every other type."""
    pool_minimum: int | None = None
    pool_maximum: int | None = None


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
    return await fetch_all(conn, QUERIES["list_infrastructure_resources"].sql, ResourceRow, params)


@dataclass(frozen=True, slots=True)
class LedgerCountRow:
    resource_type: str
    active: int
    active_billable: int


async def cluster_ledger_counts(conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID) -> list[LedgerCountRow]:
    """Active ledger rows of a cluster per resource type."""
    return await fetch_all(conn, QUERIES["cluster_ledger_counts"].sql, LedgerCountRow, {"cluster_id": cluster_id})
