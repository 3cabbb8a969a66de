"""The staff API's queries of drift findings (findings.sql): ListDriftFindings' pages, one cluster's
open and resolved findings for GetCluster, and ListFindingHistory's pages of findings grouped by kind
and subject."""

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


# After any entry of the history walk: every real (opened_last, kind, subject) sorts below it.
AFTER_EVERY_TIME = "infinity"


@dataclass(frozen=True, slots=True)
class HistoryFilters:
    """ListFindingHistory's filters, normalized; None means "no filter"."""

    kind: str | None = None
    organization_id: UUID | None = None
    cluster_id: UUID | None = None
    open_only: bool = False


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One finding over all its occurrences (the group_* and count fields) and its latest occurrence."""

    as_of: datetime
    opened_last: datetime
    group_first_detected: datetime
    group_last_detected: datetime
    opened: int
    resolutions: int
    open_seconds: int
    is_open: bool
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

    @property
    def latest(self) -> FindingRow:
        return FindingRow(
            id=self.id,
            kind=self.kind,
            subject=self.subject,
            cluster_id=self.cluster_id,
            cluster_name=self.cluster_name,
            organization_id=self.organization_id,
            organization_name=self.organization_name,
            shoot_uid=self.shoot_uid,
            shoot_name=self.shoot_name,
            shoot_namespace=self.shoot_namespace,
            details=self.details,
            first_detected=self.first_detected,
            last_detected=self.last_detected,
            resolved=self.resolved,
        )


# (as_of, opened_last, kind, subject): as_of is the walk's, the same in every token of one walk.
HistoryKey = tuple[datetime, datetime, str, str]


async def list_finding_history(
    conn: psycopg.AsyncConnection[Any],
    *,
    filters: HistoryFilters,
    after: HistoryKey | None,
    now: datetime,
    limit: int,
) -> list[HistoryRow]:
    """Findings grouped by kind and subject after `after`, as of its walk's start (`now` on a first page)."""
    as_of = after[0] if after else now
    after_opened: datetime | str = after[1] if after else AFTER_EVERY_TIME
    params = {
        "kind": filters.kind,
        "organization_id": filters.organization_id,
        "cluster_id": filters.cluster_id,
        "open_only": filters.open_only,
        "as_of": as_of,
        "now": now,
        "after_opened": after_opened,
        "after_kind": after[2] if after else "",
        "after_subject": after[3] if after else "",
        "limit": limit,
    }
    return await fetch_all(conn, QUERIES["list_finding_history"].sql, HistoryRow, params)
