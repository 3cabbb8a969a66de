"""The staff API's queries of drift findings (findings.sql): ListDriftFindings' pages, and one
cluster's open and resolved findings for GetCluster."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from services.fleet.queries.base import BEFORE_ANY_TIME, NIL_UUID, fetch_all, load

QUERIES = load("findings.sql")


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
    return await fetch_all(conn, QUERIES["list_drift_findings"].sql, FindingRow, params)


async def cluster_open_findings(conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID) -> list[FindingRow]:
    """Every open drift finding about one cluster, by first_detected (the list's block, unpaged)."""
    return await list_drift_findings(conn, filters=FindingFilters(cluster_id=cluster_id), after=None, limit=None)


async def cluster_resolved_findings(
    conn: psycopg.AsyncConnection[Any], *, cluster_id: UUID, limit: int
) -> list[FindingRow]:
    """One cluster's resolved findings, newest resolved first, at most `limit`."""
    return await fetch_all(
        conn, QUERIES["cluster_resolved_findings"].sql, FindingRow, {"cluster_id": cluster_id, "limit": limit}
    )
