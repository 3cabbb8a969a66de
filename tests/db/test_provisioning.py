"""The sync state as Fundament records it, read back through tenant.fleet_sync_state.

Fundament keeps a cluster's sync state in its own columns and outbox; fleet inventory's view reads it in
FUN-23's vocabulary. Every shoot status, operation and sync status written by the stand-in's writer
(db/provisioning.py, as Fundament's provisioning side writes) reads back as it was written, and what
Fundament's own poller writes (its messages, its unknown operations) reads as the view documents.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid4

import psycopg
import pytest

from common import clusterstatus
from db import provisioning
from fleet_description.model import SyncSpec
from tests.fixtures.postgres import PgServer, TestDatabase, cloned

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
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
SYNC_STATUSES = ("pending", "retrying", "completed", "failed")
OPERATIONS = (None, "create", "reconcile", "delete", "migrate", "restore")


def new_cluster(conn: psycopg.Connection[tuple[object, ...]]) -> UUID:
    organization, cluster = uuid4(), uuid4()
    conn.execute(
        "INSERT INTO tenant.organizations (id, name, alias) VALUES (%s, %s, 'Org')",
        (organization, f"org-{organization.hex[:10]}"),
    )
    conn.execute(
        "INSERT INTO tenant.clusters (id, organization_id, name, region, kubernetes_version, created)"
        " VALUES (%s, %s, 'c', 'eu-west-1', '1.31.2', %s)",
        (cluster, organization, T0 - timedelta(days=30)),
    )
    return cluster


def read_back(conn: psycopg.Connection[tuple[object, ...]], cluster: UUID) -> tuple[object, ...]:
    row = conn.execute(
        "SELECT sync_status, sync_attempts, sync_error, sync_updated, first_completed, shoot_status,"
        " shoot_operation, shoot_status_changed, ready_since FROM tenant.fleet_sync_state WHERE cluster_id = %s",
        (cluster,),
    ).fetchone()
    assert row is not None
    return row


def expected_operation(shoot_status: str, operation: str | None) -> str | None:
    if shoot_status == "progressing":
        return operation
    return "delete" if shoot_status in ("deleting", "deleted") else None


CASES = [
    (status, sync, operation, ever)
    for status, sync, operation, ever in itertools.product(SHOOT_STATUSES, SYNC_STATUSES, OPERATIONS, (False, True))
    # A completed latest sync has completed once; a missing shoot is one that existed after a sync.
    if not (sync == "completed" and not ever)
    and not (status == "missing" and not ever)
    and (operation is None or status == "progressing")
]


@pytest.fixture(scope="module")
def states_database(pg_server: PgServer, pg_template: str) -> Iterator[TestDatabase]:
    """One database for the hundreds of state cases: each writes an organization and a cluster of its own."""
    with cloned(pg_server, pg_template) as db:
        yield db


@pytest.mark.parametrize(("shoot_status", "sync_status", "operation", "ever"), CASES)
def test_every_state_reads_back_as_written(
    states_database: TestDatabase, shoot_status: str, sync_status: str, operation: str | None, ever: bool
) -> None:
    spec = SyncSpec(
        sync_status=sync_status,
        shoot_status=shoot_status,
        shoot_operation=operation,
        first_completed=T0 - timedelta(days=2) if ever else None,
        sync_updated=T0 - timedelta(hours=1),
        shoot_status_changed=T0 - timedelta(hours=3),
        sync_attempts=2,
        sync_error="apply failed" if sync_status in ("retrying", "failed") else None,
        shoot_message="Waiting for the workers",
    )
    with states_database.admin() as conn:
        cluster = new_cluster(conn)
        provisioning.write_sync_state(conn, cluster, spec)
        got = read_back(conn, cluster)
    ready = shoot_status in ("ready", "unhealthy")
    assert got == (
        sync_status,
        2,
        spec.sync_error,
        spec.sync_updated,
        spec.first_completed,
        shoot_status,
        expected_operation(shoot_status, operation),
        spec.shoot_status_changed,
        spec.shoot_status_changed if ready else None,
    )


def test_fundaments_own_messages_read_as_documented(database: TestDatabase) -> None:
    """What Fundament's poller writes: its messages, in its words (reference: its producer rules)."""
    cases = [
        ("progressing", "Shoot is being created", "progressing", "create"),
        ("progressing", "Reconcile: Waiting for the control plane", "progressing", "reconcile"),
        ("progressing", "Rotate: something new", "progressing", None),
        ("ready", "Shoot is ready", "ready", None),
        ("ready", provisioning.UNHEALTHY_MESSAGE, "unhealthy", None),
        ("pending", provisioning.NOT_FOUND_MESSAGE, "pending", None),  # never completed: no shoot yet
        ("deleting", "Shoot is being deleted", "deleting", "delete"),
    ]
    with database.admin() as conn:
        for status, message, want_status, want_operation in cases:
            cluster = new_cluster(conn)
            conn.execute(
                "UPDATE tenant.clusters SET shoot_status = %s, shoot_status_message = %s, shoot_status_updated = %s"
                " WHERE id = %s",
                (status, message, T0, cluster),
            )
            got = read_back(conn, cluster)
            assert (got[5], got[6]) == (want_status, want_operation), message


def test_not_found_after_a_completed_sync_is_missing_and_lost(database: TestDatabase) -> None:
    with database.admin() as conn:
        cluster = new_cluster(conn)
        provisioning.record_sync(conn, cluster, "completed", at=T0 - timedelta(days=1))
        provisioning.record_shoot_status(conn, cluster, "ready", at=T0 - timedelta(days=1))
        conn.execute(
            "UPDATE tenant.clusters SET shoot_status = 'pending', shoot_status_message = %s WHERE id = %s",
            (provisioning.NOT_FOUND_MESSAGE, cluster),
        )
        row = conn.execute("SELECT status FROM tenant.cluster_listing WHERE id = %s", (cluster,)).fetchone()
    assert row == (clusterstatus.ClusterStatus.LOST.value,)


def test_a_node_pool_sync_is_the_clusters_latest_sync_as_in_fundament(database: TestDatabase) -> None:
    """Fundament copies a node pool's outbox status onto its cluster too (a documented pitfall)."""
    with database.admin() as conn:
        cluster = new_cluster(conn)
        provisioning.record_sync(conn, cluster, "completed", at=T0 - timedelta(days=1))
        provisioning.record_shoot_status(conn, cluster, "ready", at=T0 - timedelta(days=1))
        assert read_back(conn, cluster)[0] == "completed"
        conn.execute(
            "INSERT INTO tenant.node_pools (cluster_id, name, machine_type, autoscale_min, autoscale_max)"
            " VALUES (%s, 'extra', 'm5.large', 1, 3)",
            (cluster,),
        )
        got = read_back(conn, cluster)
        status = conn.execute("SELECT status FROM tenant.cluster_listing WHERE id = %s", (cluster,)).fetchone()
    assert got[0] == "pending"
    assert status == (clusterstatus.ClusterStatus.UPGRADING.value,)


def test_a_status_time_in_the_future_counts_as_now(database: TestDatabase) -> None:
    """Another writer's clock running ahead must not lengthen the staleness grace."""
    with database.admin() as conn:
        cluster = new_cluster(conn)
        provisioning.record_sync(conn, cluster, "completed", at=T0)
        ahead = datetime.now(UTC) + timedelta(days=3)
        provisioning.record_shoot_status(conn, cluster, "ready", at=ahead)
        changed, ready_since, now = conn.execute(
            "SELECT shoot_status_changed, ready_since, now() FROM tenant.fleet_sync_state WHERE cluster_id = %s",
            (cluster,),
        ).fetchone() or (None, None, None)
        skewed = conn.execute("SELECT tenant.skewed_status_times()").fetchone()
    assert changed == ready_since == now
    assert skewed == (1,)
