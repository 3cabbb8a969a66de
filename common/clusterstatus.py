"""The one definition of a cluster's status, readiness and staleness.

The staff API derives what it shows from the cluster row, its `tenant.cluster_sync_state` row and
the inventory loop's heartbeat with these pure functions. Where SQL must filter, page or count by the
same rules, it calls the twins in `db/migrations/0001_baseline.sql` (`tenant.cluster_status`,
`tenant.cluster_needs_attention`, `tenant.cluster_is_updating`, `tenant.cluster_is_ready`,
`tenant.snapshot_is_stale`); a test enumerates every combination of inputs and proves both agree.
Status values are the lowercase member names, exactly what the SQL twin returns, so a status read
from SQL is `ClusterStatus(value)`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from uuid import UUID

from common.organizations import SYSTEM_ORGANIZATION_ID

SYNC_STATUSES = ("pending", "retrying", "completed", "failed")
SHOOT_STATUSES = (
    "pending",
    "progressing",
    "ready",
    "unhealthy",
    "error",
    "missing",
    "hibernating",
    "hibernated",
    "deleting",
    "deleted",
)
SHOOT_OPERATIONS = ("create", "reconcile", "delete", "migrate", "restore")

# Snapshots older than this many inventory intervals are stale (docs/architecture.md,
# 'Staleness is measured in inventory intervals').
STALE_AFTER_INTERVALS = 3


class ClusterStatus(StrEnum):
    """What the console shows; member names match the `fleet.v1.ClusterStatus` suffixes."""

    PROVISIONING = "provisioning"
    STARTING = "starting"
    RUNNING = "running"
    UPGRADING = "upgrading"
    UNHEALTHY = "unhealthy"
    ERROR = "error"
    LOST = "lost"
    STOPPING = "stopping"
    STOPPED = "stopped"
    DELETING = "deleting"
    DELETED = "deleted"


NEEDS_ATTENTION = frozenset({ClusterStatus.UNHEALTHY, ClusterStatus.ERROR, ClusterStatus.LOST})
UPDATING = frozenset({ClusterStatus.STARTING, ClusterStatus.UPGRADING})
READY_SHOOT_STATUSES = frozenset({"ready", "unhealthy"})


def _check(name: str, value: str | None, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        raise ValueError(f"{name}={value!r}: expected one of {', '.join(allowed)}")


def cluster_status(  # noqa: PLR0911 - one return per rule reads best
    *,
    deleted: bool,
    sync_status: str | None,
    shoot_status: str | None,
    shoot_operation: str | None,
    ever_completed: bool,
) -> ClusterStatus:
    """The status of one cluster; the first rule that matches wins (docs/architecture.md,
    'Status is computed, in Python and SQL').

    `sync_status` is None when the cluster has no sync state row; `ever_completed` is whether a sync
    of it ever completed (`first_completed` is set). Raises ValueError for a value outside the
    schema's CHECK constraints.
    """
    _check("sync_status", sync_status, SYNC_STATUSES)
    _check("shoot_status", shoot_status, SHOOT_STATUSES)
    _check("shoot_operation", shoot_operation, SHOOT_OPERATIONS)
    if deleted:
        return ClusterStatus.DELETED if shoot_status == "deleted" else ClusterStatus.DELETING
    if sync_status is None:
        return ClusterStatus.PROVISIONING
    if shoot_status == "error" or sync_status == "failed":
        return ClusterStatus.ERROR
    if shoot_status == "missing" and ever_completed:
        return ClusterStatus.LOST
    if shoot_status == "hibernating":
        return ClusterStatus.STOPPING
    if shoot_status == "hibernated":
        return ClusterStatus.STOPPED
    if shoot_status == "progressing":
        if not ever_completed or shoot_operation == "create":
            return ClusterStatus.STARTING
        return ClusterStatus.UPGRADING
    if shoot_status == "unhealthy":
        return ClusterStatus.UNHEALTHY
    if shoot_status == "ready":
        if ever_completed and sync_status in ("pending", "retrying"):
            return ClusterStatus.UPGRADING
        return ClusterStatus.RUNNING
    return ClusterStatus.PROVISIONING


def needs_attention(status: ClusterStatus) -> bool:
    """UNHEALTHY, ERROR or LOST: a filter and a count in the staff view."""
    return status in NEEDS_ATTENTION


def is_updating(status: ClusterStatus) -> bool:
    """STARTING or UPGRADING."""
    return status in UPDATING


def is_ready(
    *, cluster_deleted: bool, organization_deleted: bool, organization_id: UUID, shoot_status: str | None
) -> bool:
    """Whether the collector reads this cluster: live, of a live non-system organization, shoot ready or unhealthy."""
    _check("shoot_status", shoot_status, SHOOT_STATUSES)
    return (
        not cluster_deleted
        and not organization_deleted
        and organization_id != SYSTEM_ORGANIZATION_ID
        and shoot_status in READY_SHOOT_STATUSES
    )


def is_stale(
    *,
    ready: bool,
    observed: datetime | None,
    ready_since: datetime | None,
    interval_seconds: int | None,
    collector_since: datetime | None,
    now: datetime,
) -> bool:
    """Whether a cluster's snapshot is stale at `now`.

    Only a ready cluster can be stale, and only once the inventory loop has recorded its interval
    (`interval_seconds`, from `worker_heartbeats`); before the collector ever ran nothing is stale. A
    cluster ready (`ready_since`: when its shoot entered the ready set, `cluster_sync_state.ready_since`;
    a ready -> unhealthy flip does not move it) for less than three intervals is not stale yet.
    Otherwise the snapshot is stale when `observed` is more than three intervals old. A ready cluster
    never collected at all (`observed` None) is stale once the collector has been running
    (`collector_since`, its first completed pass) for three intervals: it had three chances.
    Raises ValueError for a non-positive interval or a naive datetime.
    """
    for name, value in (("observed", observed), ("ready_since", ready_since), ("collector_since", collector_since)):
        if value is not None and value.tzinfo is None:
            raise ValueError(f"{name} must be timezone-aware")
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    if interval_seconds is not None and interval_seconds <= 0:
        raise ValueError(f"interval_seconds={interval_seconds}: must be positive")
    if not ready or interval_seconds is None:
        return False
    # Timedeltas compare exactly to the microsecond, as the SQL twin's epoch arithmetic does.
    limit = timedelta(seconds=STALE_AFTER_INTERVALS * interval_seconds)
    if ready_since is not None and now - ready_since < limit:
        return False
    if observed is None:
        return collector_since is None or now - collector_since >= limit
    return now - observed > limit
