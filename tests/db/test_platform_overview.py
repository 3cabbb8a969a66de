"""tenant.platform_overview(): what the anonymous public API may know, and nothing more.

A small hand-built platform gives exact expectations for each rule (listed, live at every level,
system left out); the seeded `test` fleet is checked against an independent count in Python; and a
tenant role's functions and operators are shown unable to hijack the SECURITY DEFINER function.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from uuid import UUID, uuid4

import psycopg
import pytest
from psycopg import errors

from common.organizations import SYSTEM_ORGANIZATION_ID
from fleet_description.model import Fleet
from tests.fixtures.postgres import TestDatabase

PUBLIC_API = "fun_platform_public_api"
DELETED = datetime(2025, 12, 1, tzinfo=UTC)

Row = tuple[str, str, int, int, int]


class Platform:
    """Arranges organizations, clusters, projects and namespaces as a superuser."""

    def __init__(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        self.conn = conn

    def organization(self, name: str, *, listed: bool, deleted: bool = False) -> UUID:
        org_id = uuid4()
        self.conn.execute(
            "INSERT INTO tenant.organizations (id, name, alias, listed_publicly, created, deleted) "
            "VALUES (%s, %s, %s, %s, '2025-01-01', %s)",
            [org_id, name, name.title(), listed, DELETED if deleted else None],
        )
        return org_id

    def cluster(self, organization_id: UUID, name: str, *, deleted: bool = False) -> UUID:
        cluster_id = uuid4()
        self.conn.execute(
            "INSERT INTO tenant.clusters (id, organization_id, name, region, kubernetes_version, created, deleted) "
            "VALUES (%s, %s, %s, 'eu-west-1', '1.31.4', '2025-01-01', %s)",
            [cluster_id, organization_id, name, DELETED if deleted else None],
        )
        return cluster_id

    def project(self, cluster_id: UUID, name: str, *, deleted: bool = False) -> UUID:
        project_id = uuid4()
        self.conn.execute(
            "INSERT INTO tenant.projects (id, cluster_id, name, alias, created, deleted) "
            "VALUES (%s, %s, %s, %s, '2025-01-01', %s)",
            [project_id, cluster_id, name, name.title(), DELETED if deleted else None],
        )
        return project_id

    def namespace(self, project_id: UUID, name: str, *, deleted: bool = False) -> None:
        self.conn.execute(
            "INSERT INTO tenant.namespaces (project_id, name, created, deleted) VALUES (%s, %s, '2025-01-01', %s)",
            [project_id, name, DELETED if deleted else None],
        )


def overview(db: TestDatabase) -> list[Row]:
    with psycopg.connect(db.dsn(PUBLIC_API)) as conn:
        rows = conn.execute("SELECT name, alias, clusters, projects, namespaces FROM tenant.platform_overview()")
        return [(str(a), str(b), int(str(c)), int(str(d)), int(str(e))) for a, b, c, d, e in rows.fetchall()]


@pytest.fixture
def platform(database: TestDatabase) -> TestDatabase:
    """acme (listed) with every kind of deleted row, beta (unlisted), gone (listed, deleted), empty, system."""
    with database.admin() as conn:
        p = Platform(conn)
        acme = p.organization("acme", listed=True)
        live = p.cluster(acme, "live")
        kept = p.project(live, "kept")
        p.namespace(kept, "one")
        p.namespace(kept, "two")
        p.namespace(kept, "removed", deleted=True)
        dropped = p.project(live, "dropped", deleted=True)
        p.namespace(dropped, "left-behind")  # live namespace under a deleted project
        gone_cluster = p.cluster(acme, "gone", deleted=True)
        orphaned = p.project(gone_cluster, "orphaned")  # live project under a deleted cluster
        p.namespace(orphaned, "orphaned-ns")
        p.cluster(acme, "bare")
        beta = p.organization("beta", listed=False)
        beta_project = p.project(p.cluster(beta, "hidden"), "hidden")
        p.namespace(beta_project, "hidden")
        gone = p.organization("gone", listed=True, deleted=True)
        gone_project = p.project(p.cluster(gone, "still-here"), "still-here")
        p.namespace(gone_project, "still-here")
        p.organization("empty", listed=True)
        system_project = p.project(p.cluster(SYSTEM_ORGANIZATION_ID, "platform"), "platform")
        p.namespace(system_project, "platform")
    return database


def test_counts_along_the_chain_with_every_level_live(platform: TestDatabase) -> None:
    assert overview(platform) == [("acme", "Acme", 2, 1, 2), ("empty", "Empty", 0, 0, 0)]


def test_unlisted_deleted_and_system_organizations_are_absent_and_not_in_the_totals(platform: TestDatabase) -> None:
    rows = overview(platform)
    assert {row[0] for row in rows}.isdisjoint({"beta", "gone", "system"})
    totals = (sum(r[2] for r in rows), sum(r[3] for r in rows), sum(r[4] for r in rows))
    assert totals == (2, 1, 2)


def test_listing_an_organization_adds_it(platform: TestDatabase) -> None:
    with platform.admin() as conn:
        conn.execute("UPDATE tenant.organizations SET listed_publicly = true WHERE name = 'beta'")
    assert ("beta", "Beta", 1, 1, 1) in overview(platform)


@pytest.mark.parametrize(
    ("statement", "acme"),
    [
        ("UPDATE tenant.namespaces SET deleted = now() WHERE name = 'one'", ("acme", "Acme", 2, 1, 1)),
        ("UPDATE tenant.namespaces SET deleted = NULL WHERE name = 'removed'", ("acme", "Acme", 2, 1, 3)),
        # Leaves first, as Fundament's delete-order triggers require.
        (
            "UPDATE tenant.namespaces SET deleted = now() WHERE deleted IS NULL AND project_id IN"
            " (SELECT id FROM tenant.projects WHERE name = 'kept');"
            " UPDATE tenant.projects SET deleted = now() WHERE name = 'kept'",
            ("acme", "Acme", 2, 0, 0),
        ),
        ("UPDATE tenant.projects SET deleted = NULL WHERE name = 'dropped'", ("acme", "Acme", 2, 2, 3)),
        (
            "UPDATE tenant.namespaces SET deleted = now() WHERE deleted IS NULL AND project_id IN"
            " (SELECT p.id FROM tenant.projects AS p JOIN tenant.clusters AS c ON c.id = p.cluster_id"
            " WHERE c.name = 'live');"
            " UPDATE tenant.projects SET deleted = now() WHERE deleted IS NULL AND cluster_id IN"
            " (SELECT id FROM tenant.clusters WHERE name = 'live');"
            " UPDATE tenant.clusters SET deleted = now() WHERE name = 'live'",
            ("acme", "Acme", 1, 0, 0),
        ),
        ("UPDATE tenant.clusters SET deleted = NULL WHERE name = 'gone'", ("acme", "Acme", 3, 2, 3)),
        (
            "UPDATE tenant.organizations SET name = 'acme-renamed', alias = 'Re' WHERE name = 'acme'",
            ("acme-renamed", "Re", 2, 1, 2),
        ),
    ],
    ids=[
        "namespace deleted",
        "namespace back",
        "project deleted",
        "project back",
        "cluster deleted",
        "cluster back",
        "organization renamed",
    ],
)
def test_every_later_write_is_in_the_next_answer(platform: TestDatabase, statement: str, acme: Row) -> None:
    # The counts come from totals the writes keep: each kind of write moves them.
    with platform.admin() as conn:
        conn.execute(statement)
    assert overview(platform) == sorted([acme, ("empty", "Empty", 0, 0, 0)])


def test_the_system_organization_cannot_even_be_listed(platform: TestDatabase) -> None:
    with platform.admin() as conn, pytest.raises(errors.CheckViolation):
        conn.execute("UPDATE tenant.organizations SET listed_publicly = true WHERE id = %s", [SYSTEM_ORGANIZATION_ID])


def test_output_carries_no_id(platform: TestDatabase) -> None:
    with psycopg.connect(platform.dsn(PUBLIC_API)) as conn:
        cur = conn.execute("SELECT * FROM tenant.platform_overview()")
        assert cur.description is not None
        assert [column.name for column in cur.description] == ["name", "alias", "clusters", "projects", "namespaces"]
        types = conn.execute(
            "SELECT array_agg(t::regtype::text ORDER BY ordinality) FROM pg_catalog.pg_proc, "
            "unnest(proallargtypes) WITH ORDINALITY AS t WHERE oid = 'tenant.platform_overview()'::regprocedure"
        ).fetchone()
    assert types == (["text", "text", "bigint", "bigint", "bigint"],)


def test_function_is_a_pinned_security_definer_owned_by_fun_owner(database: TestDatabase) -> None:
    with database.admin() as conn:
        row = conn.execute(
            "SELECT prosecdef, provolatile, proowner::regrole::text, proconfig FROM pg_catalog.pg_proc "
            "WHERE oid = 'tenant.platform_overview()'::regprocedure"
        ).fetchone()
    assert row == (True, "s", "fun_owner", ["search_path=pg_catalog, pg_temp"])


def test_seeded_fleet_matches_an_independent_count(seeded_database: TestDatabase, seed_fleet: Fleet) -> None:
    orgs = {o.id: o for o in seed_fleet.organizations if o.listed_publicly and o.deleted is None}
    clusters = {c.id: c for c in seed_fleet.clusters if c.deleted is None and c.organization_id in orgs}
    projects = {p.id: p for p in seed_fleet.projects if p.deleted is None and p.cluster_id in clusters}
    cluster_count = Counter(c.organization_id for c in clusters.values())
    project_count = Counter(clusters[p.cluster_id].organization_id for p in projects.values())
    namespace_count = Counter(
        clusters[projects[n.project_id].cluster_id].organization_id
        for n in seed_fleet.namespaces
        if n.deleted is None and n.project_id in projects
    )
    expected = sorted(
        (o.name, o.alias, cluster_count[o.id], project_count[o.id], namespace_count[o.id]) for o in orgs.values()
    )
    assert overview(seeded_database) == expected
    assert len(expected) >= 2


def test_a_tenant_roles_objects_cannot_shadow_anything_it_calls(platform: TestDatabase) -> None:
    """search_path is pinned: operators and functions a tenant role creates are never resolved inside.

    The control at the end removes the pin and shows the very same shadows do take over, so this test
    would fail if the function relied on the caller's search_path.
    """
    before = overview(platform)
    with platform.admin() as conn:
        conn.execute("CREATE SCHEMA shadow AUTHORIZATION fun_fundament_api")
    with psycopg.connect(platform.dsn("fun_fundament_api"), autocommit=True) as conn:
        conn.execute("GRANT USAGE ON SCHEMA shadow TO PUBLIC")
        conn.execute(
            "CREATE FUNCTION shadow.hijack(uuid, uuid) RETURNS boolean LANGUAGE plpgsql "
            "AS $$ BEGIN RAISE EXCEPTION 'shadowed'; END $$"
        )
        conn.execute("CREATE OPERATOR shadow.= (LEFTARG = uuid, RIGHTARG = uuid, FUNCTION = shadow.hijack)")
        conn.execute("CREATE OPERATOR shadow.<> (LEFTARG = uuid, RIGHTARG = uuid, FUNCTION = shadow.hijack)")
        conn.execute(
            "CREATE FUNCTION shadow.system_organization_id() RETURNS uuid LANGUAGE plpgsql "
            "AS $$ BEGIN RAISE EXCEPTION 'shadowed'; END $$"
        )
        conn.execute("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA shadow TO PUBLIC")

    def call_with_shadows_first() -> list[tuple[object, ...]]:
        with psycopg.connect(platform.dsn(PUBLIC_API)) as conn:
            conn.execute("SET search_path = shadow, pg_catalog, public")
            query = "SELECT name, alias, clusters, projects, namespaces FROM tenant.platform_overview()"
            return conn.execute(query).fetchall()

    assert call_with_shadows_first() == before
    with platform.admin() as conn:
        conn.execute("ALTER FUNCTION tenant.platform_overview() RESET search_path")
    with pytest.raises(errors.RaiseException, match="shadowed"):
        call_with_shadows_first()
