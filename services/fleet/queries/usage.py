"""The staff API's queries of ListUsage (usage.sql): a page of usage groups, then their steps.

A group is an aggregate key (an organization, a cluster, or nothing: the platform) and a resource
type. The request comes checked (services/fleet/parse/requests.py bounds the window, the step and
the page's points), so one call adds up at most that many steps whatever the caller asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any
from uuid import UUID

import psycopg

from services.fleet.queries.base import BEFORE_ANY_TEXT, NIL_UUID, fetch_all, load

QUERIES = load("usage.sql")
_MICROSECOND = timedelta(microseconds=1)


class UsageAggregate(StrEnum):
    """What a usage answer adds the ledger up by (always split by resource type as well)."""

    ORGANIZATION = "organization"
    CLUSTER = "cluster"
    RESOURCE_TYPE = "resource_type"


@dataclass(frozen=True, slots=True)
class UsageFilters:
    """ListUsage's window, steps, aggregate and filters, checked; None means "no filter".

    Every field binds the page tokens (services/common/paging.py), so a token of one window, step or
    aggregate is refused by another. `step_starts` is derived from the others and not a filter value.
    """

    start: datetime
    end: datetime
    step_seconds: int  # 0: one step spanning the window
    aggregate: UsageAggregate
    organization_id: UUID | None = None
    cluster_id: UUID | None = None
    resource_type: str | None = None
    include_non_billable: bool = False

    def bound(self) -> UsageTokenFilters:
        """What the page tokens are bound to: every field, the times as ISO text."""
        return UsageTokenFilters(
            self.start.isoformat(),
            self.end.isoformat(),
            self.step_seconds,
            self.aggregate.value,
            None if self.organization_id is None else str(self.organization_id),
            None if self.cluster_id is None else str(self.cluster_id),
            self.resource_type,
            self.include_non_billable,
        )

    @property
    def step_microseconds(self) -> int:
        """The step in microseconds; one step spanning the window when step_seconds is 0."""
        if self.step_seconds == 0:
            return (self.end - self.start) // _MICROSECOND
        return self.step_seconds * 1_000_000

    @property
    def step_starts(self) -> list[datetime]:
        """The start of every step: start, start + step, ... before end (one step when step is 0)."""
        if self.step_seconds == 0:
            return [self.start]
        step = timedelta(seconds=self.step_seconds)
        starts: list[datetime] = []
        at = self.start
        while at < self.end:
            starts.append(at)
            at += step
        return starts


@dataclass(frozen=True, slots=True)
class UsageTokenFilters:
    """UsageFilters as the page tokens bind them (services/common/paging.py takes no times)."""

    start: str
    end: str
    step_seconds: int
    aggregate: str
    organization_id: str | None
    cluster_id: str | None
    resource_type: str | None
    include_non_billable: bool


@dataclass(frozen=True, slots=True)
class UsageGroupRow:
    organization_id: UUID | None
    organization_name: str | None
    cluster_id: UUID | None
    cluster_name: str | None
    resource_type: str


@dataclass(frozen=True, slots=True)
class UsageStepRow:
    ordinal: int  # the group's position in the page, from 1
    step: int  # the step's position in the window, from 0
    lower_seconds: Decimal
    upper_seconds: Decimal
    peak: int


# The keyset of each aggregate: (organization name, organization id, type), (organization name,
# cluster name, cluster id, type), (type).
OrganizationKey = tuple[str, UUID, str]
ClusterKey = tuple[str, str, UUID, str]
TypeKey = tuple[str]
UsageKey = OrganizationKey | ClusterKey | TypeKey

_GROUP_BLOCKS = {
    UsageAggregate.ORGANIZATION: "usage_groups_by_organization",
    UsageAggregate.CLUSTER: "usage_groups_by_cluster",
    UsageAggregate.RESOURCE_TYPE: "usage_groups_by_resource_type",
}


def _window_params(filters: UsageFilters, now: datetime) -> dict[str, object]:
    return {
        "start": filters.start,
        "end": filters.end,
        "now": now,
        "organization_id": filters.organization_id,
        "cluster_id": filters.cluster_id,
        "resource_type": filters.resource_type,
        "include_non_billable": filters.include_non_billable,
    }


def _after_params(aggregate: UsageAggregate, after: tuple[Any, ...] | None) -> dict[str, object]:
    """The keyset parameters of the aggregate's block; the sentinel key sorts before every group."""
    organization_name, organization_id, cluster_name, cluster_id, resource_type = (
        BEFORE_ANY_TEXT,
        NIL_UUID,
        BEFORE_ANY_TEXT,
        NIL_UUID,
        BEFORE_ANY_TEXT,
    )
    if after is not None:
        if aggregate is UsageAggregate.ORGANIZATION:
            organization_name, organization_id, resource_type = after
        elif aggregate is UsageAggregate.CLUSTER:
            organization_name, cluster_name, cluster_id, resource_type = after
        else:
            (resource_type,) = after
    return {
        "after_organization_name": organization_name,
        "after_organization_id": organization_id,
        "after_cluster_name": cluster_name,
        "after_cluster_id": cluster_id,
        "after_resource_type": resource_type,
    }


async def usage_groups(
    conn: psycopg.AsyncConnection[Any],
    *,
    filters: UsageFilters,
    now: datetime,
    after: tuple[Any, ...] | None,
    limit: int,
) -> list[UsageGroupRow]:
    """The groups with rows present in the window after `after`, in the aggregate's key order."""
    params = {**_window_params(filters, now), **_after_params(filters.aggregate, after), "limit": limit}
    return await fetch_all(conn, QUERIES[_GROUP_BLOCKS[filters.aggregate]].sql, UsageGroupRow, params)


async def usage_steps(
    conn: psycopg.AsyncConnection[Any],
    *,
    filters: UsageFilters,
    now: datetime,
    groups: Sequence[UsageGroupRow],
) -> list[UsageStepRow]:
    """Every step of every group of `groups`, by (ordinal, step)."""
    if not groups:
        return []
    params = {
        **_window_params(filters, now),
        "aggregate": filters.aggregate.value,
        "organization_ids": [g.organization_id for g in groups],
        "cluster_ids": [g.cluster_id for g in groups],
        "resource_types": [g.resource_type for g in groups],
        "steps": len(filters.step_starts),
        "step_us": filters.step_microseconds,
        "window_us": (filters.end - filters.start) // _MICROSECOND,
    }
    return await fetch_all(conn, QUERIES["usage_steps"].sql, UsageStepRow, params)
