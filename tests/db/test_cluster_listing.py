"""tenant.cluster_listing: the row per cluster that ListClusters pages and GetFleetSummary
adds up, tenant.organization_totals that ListOrganizations reads, and tenant.cluster_search that its
query matches, kept by triggers whoever writes the sources.

Each test compares the whole listing with what a direct reading of the sources says (written here
independently of the migration), after writes made as the roles that make them in production: the
worker's snapshots as fun_cluster_worker, the provisioning side's sync states, and the tenant model's
changes (renames, soft deletes, new namespaces) as the owner of the data. The summary is compared
with a direct count of the million-row tables it no longer reads.
"""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from common.organizations import SYSTEM_ORGANIZATION_ID
from db import provisioning
from services.fleet.queries import summary
from tests.fixtures.fleet_api import write_observations
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.waiting import eventually

WORKER = "fun_cluster_worker"
ADMIN_API = "fun_platform_admin_api"
NOW = datetime(2026, 6, 1, tzinfo=UTC)

# What each listing column says, read straight from the sources.
DIRECT = """
SELECT c.id, c.organization_id, c.name, o.name, o.alias, c.region, c.deleted IS NOT NULL,
       c.deleted IS NULL AND o.deleted IS NULL,
       s.sync_status, s.shoot_status, s.shoot_operation, s.first_completed IS NOT NULL,
       tenant.cluster_status(c.deleted IS NOT NULL, s.sync_status, s.shoot_status, s.shoot_operation,
                             s.first_completed IS NOT NULL),
       coalesce(c.deleted IS NULL AND o.deleted IS NULL AND s.shoot_status IN ('ready', 'unhealthy'), false),
       s.ready_since, snap.observed, coalesce(snap.nodes, 0), coalesce(snap.ready_nodes, 0),
       coalesce(snap.pods, 0), s.shoot_status_changed,
       (SELECT count(*) FROM tenant.projects AS p WHERE p.cluster_id = c.id AND p.deleted IS NULL),
       (SELECT count(*) FROM tenant.projects AS p JOIN tenant.namespaces AS n ON n.project_id = p.id
        WHERE p.cluster_id = c.id AND p.deleted IS NULL AND n.deleted IS NULL)
FROM tenant.clusters AS c
JOIN tenant.organizations AS o ON o.id = c.organization_id
LEFT JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id
LEFT JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = c.id
WHERE c.organization_id <> %(system)s
ORDER BY c.id
"""
LISTED = """
SELECT id, organization_id, name, organization_name, organization_alias, region, cluster_deleted, live,
       sync_status, shoot_status, shoot_operation, ever_completed, status, ready, ready_since,
       nullif(observed, '-infinity'), nodes, ready_nodes, pods, nullif(status_since, '-infinity'),
       projects, namespaces
FROM tenant.cluster_listing
ORDER BY id
"""
# The summary's totals the way they used to be counted: every namespace joined to its ancestors.
COUNTED = """
SELECT (SELECT count(*) FROM tenant.clusters AS c JOIN tenant.organizations AS o ON o.id = c.organization_id
        WHERE c.deleted IS NULL AND o.deleted IS NULL AND o.id <> %(system)s),
       (SELECT count(*) FROM tenant.projects AS p JOIN tenant.clusters AS c ON c.id = p.cluster_id
        JOIN tenant.organizations AS o ON o.id = c.organization_id
        WHERE p.deleted IS NULL AND c.deleted IS NULL AND o.deleted IS NULL AND o.id <> %(system)s),
       (SELECT count(*) FROM tenant.namespaces AS n JOIN tenant.projects AS p ON p.id = n.project_id
        JOIN tenant.clusters AS c ON c.id = p.cluster_id JOIN tenant.organizations AS o ON o.id = c.organization_id
        WHERE n.deleted IS NULL AND p.deleted IS NULL AND c.deleted IS NULL AND o.deleted IS NULL
          AND o.id <> %(system)s),
       (SELECT coalesce(sum(snap.pods), 0) FROM tenant.clusters AS c
        JOIN tenant.organizations AS o ON o.id = c.organization_id
        JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id
        JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = c.id
        WHERE c.deleted IS NULL AND o.deleted IS NULL AND o.id <> %(system)s
          AND s.shoot_status IN ('ready', 'unhealthy'))
"""


# Each organization's totals over its live clusters, read straight from the sources (organizations
# without a row in organization_totals count as all zeros).
DIRECT_TOTALS = """
SELECT o.id, count(c.id),
       coalesce(sum((SELECT count(*) FROM tenant.projects AS p WHERE p.cluster_id = c.id AND p.deleted IS NULL)), 0),
       coalesce(sum((SELECT count(*) FROM tenant.projects AS p JOIN tenant.namespaces AS n ON n.project_id = p.id
                     WHERE p.cluster_id = c.id AND p.deleted IS NULL AND n.deleted IS NULL)), 0),
       coalesce(sum(snap.ready_nodes) FILTER (WHERE o.deleted IS NULL AND s.shoot_status IN ('ready', 'unhealthy')), 0),
       coalesce(sum(snap.pods) FILTER (WHERE o.deleted IS NULL AND s.shoot_status IN ('ready', 'unhealthy')), 0),
       count(c.id) FILTER (WHERE tenant.cluster_needs_attention(tenant.cluster_status(
           false, s.sync_status, s.shoot_status, s.shoot_operation, s.first_completed IS NOT NULL)))
FROM tenant.organizations AS o
LEFT JOIN tenant.clusters AS c ON c.organization_id = o.id AND c.deleted IS NULL
LEFT JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id
LEFT JOIN tenant.cluster_snapshots AS snap ON snap.cluster_id = c.id
WHERE o.id <> %(system)s
GROUP BY o.id
ORDER BY o.id
"""
TOTALS = """
SELECT o.id, coalesce(t.clusters, 0), coalesce(t.projects, 0), coalesce(t.namespaces, 0),
       coalesce(t.ready_nodes, 0), coalesce(t.pods, 0), coalesce(t.clusters_needing_attention, 0)
FROM tenant.organizations AS o
LEFT JOIN tenant.organization_totals AS t ON t.organization_id = o.id
WHERE o.id <> %(system)s
ORDER BY o.id
"""

# The names ListClusters' query matches, straight from the sources and as kept.
DIRECT_SEARCH = """
SELECT c.id, lower(c.name), lower(o.name) || E'\\n' || lower(o.alias),
       lower(c.name) || E'\\n' || lower(o.name) || E'\\n' || lower(o.alias)
FROM tenant.clusters AS c
JOIN tenant.organizations AS o ON o.id = c.organization_id
WHERE c.organization_id <> %(system)s
ORDER BY c.id
"""
SEARCH = "SELECT id, cluster_key, organization_key, search_key FROM tenant.cluster_search ORDER BY id"


def _direct(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    return conn.execute(DIRECT, {"system": SYSTEM_ORGANIZATION_ID}).fetchall()


def _listed(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    return conn.execute(LISTED).fetchall()


def _assert_listing_agrees(db: TestDatabase) -> None:
    with db.admin() as conn:
        direct, listed = _direct(conn), _listed(conn)
        direct_totals = conn.execute(DIRECT_TOTALS, {"system": SYSTEM_ORGANIZATION_ID}).fetchall()
        totals = conn.execute(TOTALS, {"system": SYSTEM_ORGANIZATION_ID}).fetchall()
        direct_search = conn.execute(DIRECT_SEARCH, {"system": SYSTEM_ORGANIZATION_ID}).fetchall()
        search = conn.execute(SEARCH).fetchall()
    assert listed == direct
    assert totals == direct_totals
    assert search == direct_search


@pytest.fixture
def world(seeded_database: TestDatabase, seed_fleet: Any) -> TestDatabase:
    with seeded_database.admin() as conn:
        write_observations(conn, seed_fleet)
    return seeded_database


def _a_cluster(conn: psycopg.Connection[Any], *, shoot_status: str = "ready") -> uuid.UUID:
    row = conn.execute(
        "SELECT c.id FROM tenant.clusters AS c JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id"
        " JOIN tenant.organizations AS o ON o.id = c.organization_id"
        " WHERE c.deleted IS NULL AND o.deleted IS NULL AND o.id <> %s AND s.shoot_status = %s ORDER BY c.id LIMIT 1",
        [SYSTEM_ORGANIZATION_ID, shoot_status],
    ).fetchone()
    assert row is not None
    return uuid.UUID(str(row[0]))


def test_the_seeded_fleet_is_listed_as_its_sources_say(world: TestDatabase) -> None:
    with world.admin() as conn:
        listed = _listed(conn)
        system = conn.execute(
            "SELECT count(*) FROM tenant.cluster_listing AS l JOIN tenant.clusters AS c ON c.id = l.id"
            " WHERE c.organization_id = %s",
            [SYSTEM_ORGANIZATION_ID],
        ).fetchone()
    assert len(listed) > 20
    assert system == (0,)
    _assert_listing_agrees(world)


def test_a_snapshot_the_worker_writes_moves_the_listing(world: TestDatabase) -> None:
    with world.admin() as conn:
        cluster = _a_cluster(conn)
    with psycopg.connect(world.dsn(WORKER)) as conn:
        conn.execute(
            "INSERT INTO tenant.cluster_snapshots AS cs (cluster_id, observed, nodes, ready_nodes, pods,"
            " allocatable_pods, cpu_allocatable_millicores, memory_allocatable_bytes)"
            " VALUES (%s, %s, 41, 40, 4321, 4400, 1000, 1000)"
            " ON CONFLICT (cluster_id) DO UPDATE SET observed = EXCLUDED.observed, nodes = EXCLUDED.nodes,"
            " ready_nodes = EXCLUDED.ready_nodes, pods = EXCLUDED.pods",
            [cluster, NOW],
        )
    with world.admin() as conn:
        row = conn.execute("SELECT pods, nodes, observed FROM tenant.cluster_listing WHERE id = %s", [cluster])
        assert row.fetchone() == (4321, 41, NOW)
    _assert_listing_agrees(world)


# Fundament deletes leaves first (its delete-order triggers refuse anything else).
DELETE_NAMESPACES = (
    "UPDATE tenant.namespaces SET deleted = now() WHERE deleted IS NULL AND project_id IN"
    " (SELECT id FROM tenant.projects WHERE cluster_id = %(cluster)s)"
)
DELETE_PROJECTS = "UPDATE tenant.projects SET deleted = now() WHERE deleted IS NULL AND cluster_id = %(cluster)s"


@pytest.mark.parametrize(
    "statements",
    [
        ("UPDATE tenant.organizations SET name = 'renamed-org', alias = 'Renamed' WHERE id = %(organization)s",),
        ("UPDATE tenant.organizations SET deleted = now() WHERE id = %(organization)s",),
        ("UPDATE tenant.clusters SET name = 'renamed', region = 'moon-1' WHERE id = %(cluster)s",),
        (DELETE_NAMESPACES, DELETE_PROJECTS, "UPDATE tenant.clusters SET deleted = now() WHERE id = %(cluster)s"),
        (DELETE_NAMESPACES, DELETE_PROJECTS),
        (DELETE_NAMESPACES,),
        (
            "INSERT INTO tenant.namespaces (project_id, name) SELECT id, 'added-' || name FROM tenant.projects"
            " WHERE cluster_id = %(cluster)s AND deleted IS NULL",
        ),
        ("INSERT INTO tenant.projects (cluster_id, name, alias) VALUES (%(cluster)s, 'added', 'Added')",),
        # What Fundament's status poller writes for an unhealthy shoot, and for a vanished one.
        (
            "UPDATE tenant.clusters SET shoot_status_message = 'Shoot reconciled but not all conditions healthy'"
            " WHERE id = %(cluster)s",
        ),
        (
            "UPDATE tenant.clusters SET shoot_status = 'pending', shoot_status_message = 'Shoot not found in Gardener'"
            " WHERE id = %(cluster)s",
            "INSERT INTO tenant.cluster_outbox (cluster_id, event, source, status, retries)"
            " VALUES (%(cluster)s, 'reconcile', 'reconcile', 'failed', 10)",
        ),
    ],
    ids=lambda statements: " ".join(statements[-1].split()[:4]) + f" ({len(statements)})",
)
def test_every_write_to_a_source_is_listed(world: TestDatabase, statements: tuple[str, ...]) -> None:
    with world.admin() as conn:
        cluster = _a_cluster(conn)
        organization = conn.execute("SELECT organization_id FROM tenant.clusters WHERE id = %s", [cluster])
        row = organization.fetchone()
        assert row is not None
        before = _listed(conn)
        for statement in statements:
            conn.execute(statement, {"cluster": cluster, "organization": row[0]})
        conn.commit()
        assert _listed(conn) != before
    _assert_listing_agrees(world)


def test_a_new_cluster_is_listed_when_its_rows_arrive(world: TestDatabase) -> None:
    with world.admin() as conn:
        organization = conn.execute(
            "SELECT id FROM tenant.organizations WHERE deleted IS NULL AND id <> %s LIMIT 1", [SYSTEM_ORGANIZATION_ID]
        ).fetchone()
        assert organization is not None
        created = conn.execute(
            "INSERT INTO tenant.clusters (organization_id, name, region, kubernetes_version)"
            " VALUES (%s, 'brand-new', 'eu-west-1', '1.33.1') RETURNING id",
            [organization[0]],
        ).fetchone()
        assert created is not None
        conn.commit()
        status = conn.execute("SELECT status FROM tenant.cluster_listing WHERE id = %s", [created[0]]).fetchone()
        assert status == ("provisioning",)
        provisioning.record_sync(conn, str(created[0]), "completed", at=NOW)
        provisioning.record_shoot_status(conn, str(created[0]), "ready", at=NOW)
        conn.commit()
        status = conn.execute("SELECT status FROM tenant.cluster_listing WHERE id = %s", [created[0]]).fetchone()
        assert status == ("running",)
    _assert_listing_agrees(world)


def test_two_writers_of_one_cluster_leave_both_writes_listed(world: TestDatabase) -> None:
    """The worker's snapshot and the provisioning side's sync state, committed in turn by two open
    transactions: the second waits for the first and lists what both wrote, never the first's
    values taken back."""
    with world.admin() as conn:
        cluster = _a_cluster(conn)
    with psycopg.connect(world.dsn(WORKER)) as snapshot_writer, world.admin() as sync_writer:
        snapshot_writer.execute(
            "UPDATE tenant.cluster_snapshots SET pods = 9999, observed = %s WHERE cluster_id = %s", [NOW, cluster]
        )
        done = threading.Event()

        def write_sync_state() -> None:
            provisioning.record_shoot_status(sync_writer, cluster, "unhealthy", at=NOW)
            sync_writer.commit()
            done.set()

        thread = threading.Thread(target=write_sync_state)
        thread.start()
        with world.admin() as watcher:
            # The sync writer's refresh waits for the snapshot writer's lock on the listing row.

            def waiting() -> tuple[object, ...] | None:
                row = watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE wait_event_type = 'Lock' AND datname = current_database()"
                ).fetchone()
                return row if row and row[0] else None

            assert eventually(waiting, "the sync writer waiting on the listing row's lock") == (1,)
        assert not done.is_set()
        snapshot_writer.commit()
        thread.join()
    with world.admin() as conn:
        row = conn.execute("SELECT pods, status FROM tenant.cluster_listing WHERE id = %s", [cluster]).fetchone()
    assert row == (9999, "unhealthy")
    _assert_listing_agrees(world)


def test_the_summary_totals_agree_with_a_direct_count(world: TestDatabase) -> None:
    with world.admin() as conn:
        cluster = _a_cluster(conn)
        # Dead ancestors of every kind: a deleted project with live namespaces, a deleted cluster with
        # live projects (hand edits: Fundament's delete-order triggers refuse both, so they are off for
        # them), a deleted organization.
        conn.execute("ALTER TABLE tenant.projects DISABLE TRIGGER projects_tr_verify_deleted")
        conn.execute("ALTER TABLE tenant.clusters DISABLE TRIGGER clusters_tr_verify_deleted")
        conn.execute(
            "UPDATE tenant.projects SET deleted = now() WHERE id IN"
            " (SELECT id FROM tenant.projects WHERE cluster_id = %s LIMIT 1)",
            [cluster],
        )
        conn.execute(
            "UPDATE tenant.clusters SET deleted = now() WHERE id IN"
            " (SELECT id FROM tenant.clusters WHERE deleted IS NULL AND id <> %s ORDER BY id LIMIT 1)",
            [cluster],
        )
        conn.execute("ALTER TABLE tenant.projects ENABLE TRIGGER projects_tr_verify_deleted")
        conn.execute("ALTER TABLE tenant.clusters ENABLE TRIGGER clusters_tr_verify_deleted")
        conn.execute(
            "UPDATE tenant.organizations SET deleted = now() WHERE id IN"
            " (SELECT id FROM tenant.organizations WHERE deleted IS NULL AND id <> %s ORDER BY id DESC LIMIT 1)",
            [SYSTEM_ORGANIZATION_ID],
        )
        conn.commit()
        counted = conn.execute(COUNTED, {"system": SYSTEM_ORGANIZATION_ID}).fetchone()
    with psycopg.connect(world.dsn(ADMIN_API)) as conn, conn.cursor() as cur:
        cur.execute(summary.QUERIES["fleet_totals"].sql, {"now": NOW})
        row = cur.fetchone()
        assert row is not None and cur.description is not None
        totals: dict[str, Any] = dict(zip([column.name for column in cur.description], row, strict=True))
    assert counted is not None
    assert (totals["clusters"], totals["projects"], totals["namespaces"], totals["pods"]) == tuple(counted)
    assert totals["namespaces"] > 0
