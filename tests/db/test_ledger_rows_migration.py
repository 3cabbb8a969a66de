"""Migration 0002 corrects the ledger rows reconcile had closed at the time of its pass.

A database at version 1 holds rows closed the old way: `destroyed` months after the cluster's shoot
had left the garden. Migrating to version 2 moves each such row's `destroyed` back to the first
evidence that it was gone (when the mirror saw the shoot go, else the cluster's or organization's
deletion), never before `last_seen`, never later than it was, and leaves every other row alone.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid4

import psycopg
import pytest

from db.migrate import apply_platform_model, migrate
from tests.fixtures.postgres import TestDatabase

T0 = datetime(2025, 1, 10, tzinfo=UTC)
PASS = datetime(2026, 11, 30, tzinfo=UTC)  # the reconcile pass that closed everything, much later


@pytest.fixture
def at_version_1(empty_database: TestDatabase) -> TestDatabase:
    assert apply_platform_model(empty_database.dsn()) is True
    assert migrate(empty_database.dsn(), target=1) == [1]
    return empty_database


def _organization(conn: psycopg.Connection[tuple[object, ...]], name: str, deleted: datetime | None) -> UUID:
    org = uuid4()
    conn.execute(
        "INSERT INTO tenant.organizations (id, name, alias, created, deleted) VALUES (%s, %s, %s, %s, %s)",
        (org, name, name, T0 - timedelta(days=100), deleted),
    )
    return org


def _cluster(conn: psycopg.Connection[tuple[object, ...]], org: UUID, name: str, deleted: datetime | None) -> UUID:
    cluster = uuid4()
    conn.execute(
        "INSERT INTO tenant.clusters (id, organization_id, name, region, kubernetes_version, created, deleted)"
        " VALUES (%s, %s, %s, 'local', '1.31', %s, %s)",
        (cluster, org, name, T0 - timedelta(days=90), deleted),
    )
    return cluster


def _row(
    conn: psycopg.Connection[tuple[object, ...]],
    cluster: UUID,
    name: str,
    *,
    last_seen: datetime,
    destroyed: datetime | None,
    reason: str | None,
) -> UUID:
    row = uuid4()
    conn.execute(
        "INSERT INTO tenant.infrastructure_resources (id, cluster_id, resource_type, name, billable, created,"
        " last_seen, destroyed, destroyed_reason) VALUES (%s, %s, 'kubernetes.node', %s, true, %s, %s, %s, %s)",
        (row, cluster, name, T0 - timedelta(days=80), last_seen, destroyed, reason),
    )
    return row


def _shoot_gone(conn: psycopg.Connection[tuple[object, ...]], cluster: UUID, org: UUID, gone: datetime) -> None:
    conn.execute(
        "INSERT INTO tenant.gardener_shoots (uid, name, namespace, cluster_label, cluster_id, organization_id,"
        " kubernetes_version, region, created, first_seen, last_seen, deleted)"
        " VALUES (%s, 'shoot', 'garden-x', %s, %s, %s, '1.31', 'local', %s, %s, %s, %s)",
        (uuid4(), str(cluster), cluster, org, T0 - timedelta(days=90), T0 - timedelta(days=60), gone, gone),
    )


def test_rows_closed_at_the_pass_move_back_to_when_their_shoot_was_gone(at_version_1: TestDatabase) -> None:
    with at_version_1.admin() as conn:
        org = _organization(conn, "acme", None)
        gone_org = _organization(conn, "gone", T0 + timedelta(days=20))
        # A cluster whose shoot the mirror saw go on T0, deleted later still; closed at PASS.
        mirrored = _cluster(conn, org, "mirrored", T0 + timedelta(days=5))
        _shoot_gone(conn, mirrored, org, T0)
        on_mirror = _row(
            conn, mirrored, "a", last_seen=T0 - timedelta(minutes=10), destroyed=PASS, reason="cluster_deleted"
        )
        # A row the inventory saw after the shoot went (a late collection): never before last_seen.
        seen_late = _row(
            conn, mirrored, "b", last_seen=T0 + timedelta(hours=1), destroyed=PASS, reason="cluster_deleted"
        )
        # No shoot ever mirrored: the cluster's deletion, and the organization's for its reason.
        unmirrored = _cluster(conn, org, "unmirrored", T0 + timedelta(days=7))
        on_deletion = _row(conn, unmirrored, "c", last_seen=T0, destroyed=PASS, reason="cluster_deleted")
        of_org = _cluster(conn, gone_org, "of-org", None)
        on_org = _row(conn, of_org, "d", last_seen=T0, destroyed=PASS, reason="organization_deleted")
        # Rows the inventory closed, and open rows, are not reconcile's: left alone.
        not_found = _row(conn, mirrored, "e", last_seen=T0 - timedelta(days=3), destroyed=PASS, reason="not_found")
        live = _cluster(conn, org, "live", None)
        still_open = _row(conn, live, "f", last_seen=PASS, destroyed=None, reason=None)
        # Already closed earlier than the evidence: a correction never moves a row later.
        early = _row(conn, unmirrored, "g", last_seen=T0, destroyed=T0 + timedelta(days=1), reason="cluster_deleted")

    assert migrate(at_version_1.dsn(), target=2) == [2]

    with at_version_1.admin() as conn:
        rows: dict[object, object] = {
            row[0]: row[1] for row in conn.execute("SELECT id, destroyed FROM tenant.infrastructure_resources")
        }
        assert rows[on_mirror] == T0
        assert rows[seen_late] == T0 + timedelta(hours=1)
        assert rows[on_deletion] == T0 + timedelta(days=7)
        assert rows[on_org] == T0 + timedelta(days=20)
        assert rows[not_found] == PASS
        assert rows[still_open] is None
        assert rows[early] == T0 + timedelta(days=1)
        # History is protected again once the migration is done.
        with pytest.raises(psycopg.errors.RestrictViolation):
            conn.execute("UPDATE tenant.infrastructure_resources SET destroyed = %s WHERE id = %s", (PASS, on_mirror))
