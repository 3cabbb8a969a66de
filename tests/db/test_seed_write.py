"""Writing a fleet: what the database holds afterwards is exactly the fleet, and a second write is refused."""

from __future__ import annotations

import dataclasses
import uuid

import psycopg
import pytest
from psycopg import sql

from common.clusterstatus import cluster_status
from common.organizations import SYSTEM_ORGANIZATION_ID
from db.seed import write
from db.seed.write import SeedError, write_fleet, write_parts
from fleet_description.generate import generate, iter_parts
from fleet_description.model import Fleet
from tests.fixtures.postgres import TestDatabase


def table_counts(conn: psycopg.Connection[tuple[object, ...]]) -> dict[str, int]:
    counts = {}
    for table in (
        "organizations",
        "clusters",
        "node_pools",
        "projects",
        "namespaces",
        "infrastructure_resources",
    ):
        row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier("tenant", table))).fetchone()
        assert row is not None
        counts[table] = int(str(row[0]))
    # A sync state is Fundament's shoot columns (the outbox always has the cluster's first row).
    row = conn.execute("SELECT count(*) FROM tenant.fleet_sync_state WHERE shoot_status IS NOT NULL").fetchone()
    assert row is not None
    counts["sync_states"] = int(str(row[0]))
    return counts


def fleet_counts(fleet: Fleet) -> dict[str, int]:
    return {
        "organizations": len(fleet.organizations) + 1,  # plus the system organization of the migrations
        "clusters": len(fleet.clusters),
        "sync_states": sum(1 for c in fleet.clusters if c.sync is not None),
        "node_pools": len(fleet.node_pools),
        "projects": len(fleet.projects),
        "namespaces": len(fleet.namespaces),
        "infrastructure_resources": len(fleet.resources),
    }


def test_database_counts_equal_the_fleet(database: TestDatabase) -> None:
    fleet = generate("demo", 5)
    with psycopg.connect(database.dsn()) as conn:
        written = write_fleet(conn, fleet)
    with database.admin() as conn:
        counts = table_counts(conn)
    assert counts == fleet_counts(fleet)
    assert written.namespaces == len(fleet.namespaces)


def test_streamed_write_in_small_batches_equals_the_whole_fleet(database: TestDatabase) -> None:
    with psycopg.connect(database.dsn()) as conn:
        write_parts(conn, iter_parts("test", 9), batch_organizations=2)
    with database.admin() as conn:
        counts = table_counts(conn)
        deleted = conn.execute("SELECT count(*) FROM tenant.namespaces WHERE deleted IS NOT NULL").fetchone()
    fleet = generate("test", 9)
    assert counts == fleet_counts(fleet)
    assert deleted is not None and deleted[0] == sum(1 for n in fleet.namespaces if n.deleted is not None)


def test_a_second_write_is_refused_and_changes_nothing(seeded_database: TestDatabase, seed_fleet: Fleet) -> None:
    with psycopg.connect(seeded_database.dsn()) as conn, pytest.raises(SeedError, match="already holds"):
        write_fleet(conn, generate("test", 99))
    with seeded_database.admin() as conn:
        assert table_counts(conn) == fleet_counts(seed_fleet)


def test_seeded_statuses_in_sql_match_the_fleet(seeded_database: TestDatabase, seed_fleet: Fleet) -> None:
    with psycopg.connect(seeded_database.dsn("fun_platform_admin_api")) as conn:
        rows = conn.execute(
            """
            SELECT tenant.clusters.id::text,
                   tenant.cluster_status(tenant.clusters.deleted IS NOT NULL, tenant.fleet_sync_state.sync_status,
                       tenant.fleet_sync_state.shoot_status, tenant.fleet_sync_state.shoot_operation,
                       tenant.fleet_sync_state.first_completed IS NOT NULL)
            FROM tenant.clusters
            LEFT JOIN tenant.fleet_sync_state ON tenant.fleet_sync_state.cluster_id = tenant.clusters.id
            """
        ).fetchall()
    in_sql: dict[object, object] = dict(rows)
    expected: dict[object, object] = {}
    for c in seed_fleet.clusters:
        s = c.sync
        expected[str(c.id)] = cluster_status(
            deleted=c.deleted is not None,
            sync_status=s.sync_status if s else None,
            shoot_status=s.shoot_status if s else None,
            shoot_operation=s.shoot_operation if s else None,
            ever_completed=bool(s and s.first_completed),
        ).value
    assert in_sql == expected


def test_the_listing_of_a_seeded_fleet_is_what_its_triggers_keep_and_they_are_on_again(
    database: TestDatabase,
) -> None:
    # The seed refreshes the listing once at the end instead of through its per-row triggers: refreshing
    # every cluster again changes nothing, and the triggers are enabled once the write is done. A cluster
    # without projects (just ordered) gets its row too, though no project's trigger names it.
    generated = generate("test", 9)
    bare = next(c for c in generated.clusters if c.organization_id != SYSTEM_ORGANIZATION_ID)
    bare = dataclasses.replace(bare, id=uuid.uuid4(), name="just-ordered")
    fleet = dataclasses.replace(generated, clusters=(*generated.clusters, bare))
    with psycopg.connect(database.dsn()) as conn:
        write_fleet(conn, fleet)
    listing = "SELECT l::text FROM tenant.cluster_listing AS l ORDER BY l.id"
    totals = "SELECT t::text FROM tenant.organization_totals AS t ORDER BY t.organization_id"
    with database.admin() as conn:
        written = (conn.execute(listing).fetchall(), conn.execute(totals).fetchall())
        conn.execute("SELECT tenant.refresh_cluster_listing(ARRAY(SELECT c.id FROM tenant.clusters AS c))")
        refreshed = (conn.execute(listing).fetchall(), conn.execute(totals).fetchall())
        states = conn.execute(
            "SELECT t.tgrelid::regclass::text, t.tgname, t.tgenabled FROM pg_catalog.pg_trigger AS t"
            " WHERE t.tgname LIKE 'fleet_cluster_listing_%%' AND t.tgrelid::regclass::text = ANY (%s)",
            [["tenant.clusters", "tenant.cluster_outbox"]],
        ).fetchall()
    # Every cluster but the system organization's has its row.
    assert len(written[0]) == sum(1 for c in fleet.clusters if c.organization_id != SYSTEM_ORGANIZATION_ID)
    assert written == refreshed
    assert any(str(bare.id) in str(row[0]) for row in written[0])
    assert len(states) == len(write.PER_ROW_LISTING_TRIGGERS)
    assert {state for _, _, state in states} == {"O"}, states
