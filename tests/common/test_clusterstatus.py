"""The cluster status rules of common/clusterstatus.py as plain functions, without any I/O.

Each row of the design's table is a case with a readable id; the SQL twin is held to the same rule
over every input combination in test_clusterstatus_sql.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest
from fundament.fleet.v1 import fleet_pb2

from common.clusterstatus import ClusterStatus, cluster_status, is_ready, is_stale, is_updating, needs_attention
from common.organizations import SYSTEM_ORGANIZATION_ID

S = ClusterStatus

# (id, deleted, sync_status, shoot_status, shoot_operation, ever_completed, expected)
TABLE = [
    ("1-deleted-shoot-deleted", True, "completed", "deleted", "delete", True, S.DELETED),
    ("1-deleted-shoot-deleting", True, "completed", "deleting", "delete", True, S.DELETING),
    ("1-deleted-no-sync-row", True, None, None, None, False, S.DELETING),
    ("1-deleted-wins-over-error", True, "failed", "error", None, True, S.DELETING),
    ("2-no-sync-row", False, None, None, None, False, S.PROVISIONING),
    ("3-shoot-error", False, "completed", "error", "reconcile", True, S.ERROR),
    ("3-sync-failed", False, "failed", "ready", "reconcile", True, S.ERROR),
    ("3-sync-failed-before-missing", False, "failed", "missing", None, True, S.ERROR),
    ("4-missing-after-a-completed-sync", False, "completed", "missing", None, True, S.LOST),
    ("4-missing-never-completed-is-9", False, "pending", "missing", None, False, S.PROVISIONING),
    ("5-hibernating", False, "completed", "hibernating", "reconcile", True, S.STOPPING),
    ("5-hibernated", False, "completed", "hibernated", "reconcile", True, S.STOPPED),
    ("6-progressing-never-completed", False, "pending", "progressing", "reconcile", False, S.STARTING),
    ("6-progressing-create", False, "completed", "progressing", "create", True, S.STARTING),
    ("6-progressing-reconcile-after-completed", False, "completed", "progressing", "reconcile", True, S.UPGRADING),
    ("6-progressing-no-operation-after-completed", False, "retrying", "progressing", None, True, S.UPGRADING),
    ("7-unhealthy", False, "completed", "unhealthy", "reconcile", True, S.UNHEALTHY),
    ("8-ready-sync-pending-after-completed", False, "pending", "ready", "reconcile", True, S.UPGRADING),
    ("8-ready-sync-retrying-after-completed", False, "retrying", "ready", "reconcile", True, S.UPGRADING),
    ("8-ready-sync-completed", False, "completed", "ready", "reconcile", True, S.RUNNING),
    ("8-ready-sync-pending-never-completed", False, "pending", "ready", "create", False, S.RUNNING),
    ("9-shoot-pending", False, "pending", "pending", "create", False, S.PROVISIONING),
    ("9-live-cluster-shoot-deleting", False, "completed", "deleting", "delete", True, S.PROVISIONING),
    ("9-live-cluster-shoot-deleted", False, "completed", "deleted", None, True, S.PROVISIONING),
]


@pytest.mark.parametrize(
    ("deleted", "sync_status", "shoot_status", "shoot_operation", "ever_completed", "expected"),
    [row[1:] for row in TABLE],
    ids=[row[0] for row in TABLE],
)
def test_status_follows_the_design_table(
    deleted: bool,
    sync_status: str | None,
    shoot_status: str | None,
    shoot_operation: str | None,
    ever_completed: bool,
    expected: ClusterStatus,
) -> None:
    got = cluster_status(
        deleted=deleted,
        sync_status=sync_status,
        shoot_status=shoot_status,
        shoot_operation=shoot_operation,
        ever_completed=ever_completed,
    )
    assert got is expected


def test_every_status_is_reachable_through_the_table() -> None:
    assert {row[-1] for row in TABLE} == set(ClusterStatus)


def test_member_names_match_the_proto_enum() -> None:
    proto = {
        name.removeprefix("CLUSTER_STATUS_")
        for name in fleet_pb2.ClusterStatus.keys()  # noqa: SIM118 - protobuf enums have keys(), not iteration
        if name != "CLUSTER_STATUS_UNSPECIFIED"
    }
    assert {member.name for member in ClusterStatus} == proto


@pytest.mark.parametrize(
    ("field", "value"),
    [("sync_status", "done"), ("shoot_status", "Ready"), ("shoot_operation", "upgrade")],
    ids=["bad-sync-status", "bad-shoot-status", "bad-shoot-operation"],
)
def test_values_outside_the_schema_are_refused(field: str, value: str) -> None:
    inputs: dict[str, str | None] = {"sync_status": "completed", "shoot_status": "ready", "shoot_operation": None}
    inputs[field] = value
    with pytest.raises(ValueError, match=field):
        cluster_status(deleted=False, ever_completed=True, **inputs)


def test_attention_and_updating_sets() -> None:
    assert {s for s in ClusterStatus if needs_attention(s)} == {S.UNHEALTHY, S.ERROR, S.LOST}
    assert {s for s in ClusterStatus if is_updating(s)} == {S.STARTING, S.UPGRADING}


TENANT = UUID("11111111-1111-1111-1111-111111111111")


@pytest.mark.parametrize(
    ("cluster_deleted", "organization_deleted", "organization_id", "shoot_status", "expected"),
    [
        (False, False, TENANT, "ready", True),
        (False, False, TENANT, "unhealthy", True),
        (False, False, TENANT, "progressing", False),
        (False, False, TENANT, None, False),
        (True, False, TENANT, "ready", False),
        (False, True, TENANT, "ready", False),
        (False, False, SYSTEM_ORGANIZATION_ID, "ready", False),
    ],
    ids=["ready", "unhealthy", "progressing", "no-sync", "cluster-deleted", "organization-deleted", "system"],
)
def test_ready(
    cluster_deleted: bool, organization_deleted: bool, organization_id: UUID, shoot_status: str | None, expected: bool
) -> None:
    got = is_ready(
        cluster_deleted=cluster_deleted,
        organization_deleted=organization_deleted,
        organization_id=organization_id,
        shoot_status=shoot_status,
    )
    assert got is expected


NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
INTERVAL = 60
LIMIT = timedelta(seconds=3 * INTERVAL)
TICK = timedelta(microseconds=1)
LONG_AGO = NOW - timedelta(days=30)


@pytest.mark.parametrize(
    ("ready", "observed", "ready_since", "interval", "collector_since", "expected"),
    [
        (True, NOW - LIMIT - TICK, LONG_AGO, INTERVAL, LONG_AGO, True),
        (True, NOW - LIMIT, LONG_AGO, INTERVAL, LONG_AGO, False),
        (True, NOW - timedelta(seconds=5), LONG_AGO, INTERVAL, LONG_AGO, False),
        (False, NOW - timedelta(days=1), LONG_AGO, INTERVAL, LONG_AGO, False),
        (True, NOW - timedelta(days=1), LONG_AGO, None, None, False),
        (True, NOW - timedelta(days=1), NOW - LIMIT + TICK, INTERVAL, LONG_AGO, False),
        (True, NOW - timedelta(days=1), NOW - LIMIT, INTERVAL, LONG_AGO, True),
        (True, NOW - timedelta(days=1), None, INTERVAL, LONG_AGO, True),
        (True, None, LONG_AGO, INTERVAL, LONG_AGO, True),
        (True, None, LONG_AGO, INTERVAL, NOW - LIMIT + TICK, False),
        (True, None, LONG_AGO, INTERVAL, NOW - LIMIT, True),
        (True, None, NOW - timedelta(seconds=1), INTERVAL, LONG_AGO, False),
        (True, None, LONG_AGO, None, None, False),
    ],
    ids=[
        "older-than-three-intervals",
        "exactly-three-intervals-is-not-older",
        "fresh",
        "not-ready",
        "collector-never-ran",
        "ready-for-less-than-three-intervals",
        "ready-for-exactly-three-intervals",
        "ready-since-unknown",
        "never-collected-collector-running-long",
        "never-collected-collector-just-started",
        "never-collected-collector-running-three-intervals",
        "never-collected-just-ready",
        "never-collected-collector-never-ran",
    ],
)
def test_staleness(
    ready: bool,
    observed: datetime | None,
    ready_since: datetime | None,
    interval: int | None,
    collector_since: datetime | None,
    expected: bool,
) -> None:
    got = is_stale(
        ready=ready,
        observed=observed,
        ready_since=ready_since,
        interval_seconds=interval,
        collector_since=collector_since,
        now=NOW,
    )
    assert got is expected


NAIVE = datetime(2026, 1, 1)  # noqa: DTZ001 - deliberately naive, to be refused


def test_staleness_refuses_naive_times_and_bad_intervals() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        is_stale(
            ready=True,
            observed=NAIVE,
            ready_since=None,
            interval_seconds=60,
            collector_since=None,
            now=NOW,
        )
    with pytest.raises(ValueError, match="interval_seconds"):
        is_stale(ready=True, observed=None, ready_since=None, interval_seconds=0, collector_since=None, now=NOW)
