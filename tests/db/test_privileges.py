"""The privilege matrix of the database roles, checked against the catalog and by trying as each role.

Tables and functions are discovered from the catalog (every schema but PostgreSQL's own), so a table
or function added by a later migration is covered without touching this file: it must then fit the
matrix below or this test fails.

Fundament's tables come with Fundament's own grants (its cluster-worker role, which fleet inventory's
worker shares, may update clusters and write the outbox). Those are measured on a database holding only
the platform model and taken as given; what fleet inventory adds on top of them is what this matrix
holds to account.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors, sql

from db.migrate import apply_platform_model
from tests.fixtures.postgres import PgServer, TestDatabase, drop_database

HEARTBEAT = (
    "INSERT INTO tenant.worker_heartbeats (loop, last_completed, interval_seconds) VALUES ('inventory', now(), 60)"
)
PUBLIC_API = "fun_platform_public_api"
ADMIN_API = "fun_platform_admin_api"
WORKER = "fun_cluster_worker"
FUNDAMENT_API = "fun_fundament_api"
SERVICE_ROLES = (PUBLIC_API, ADMIN_API, WORKER, FUNDAMENT_API)

# The tables the collector and reconcile write (SELECT, INSERT, UPDATE; never DELETE).
WORKER_TABLES = {
    "tenant.cluster_snapshots",
    "tenant.node_pool_snapshots",
    "tenant.namespace_snapshots",
    "tenant.worker_heartbeats",
    "tenant.gardener_shoots",
    "tenant.drift_findings",
    "tenant.infrastructure_resources",
}
# The row the reconcile pass locks (only the worker may UPDATE it, so only the worker can lock it).
LOCK_TABLE = "tenant.worker_locks"
# What the collector only appends to (SELECT, INSERT): the fleet history; its pruning is a function.
WORKER_APPEND_ONLY_TABLES = {"tenant.fleet_history"}
# What the collector reads but only the database writes (triggers, as the owner): the cluster listing.
WORKER_READ_TABLES = {"tenant.cluster_listing"}
# What the staff API reads of Fundament's tables (the sync state's view reads the outbox), and the views
# of ours over them.
MODEL_TABLES = {
    "tenant.organizations",
    "tenant.clusters",
    "tenant.node_pools",
    "tenant.projects",
    "tenant.namespaces",
}
MODEL_VIEWS = {"tenant.fleet_sync_state", "tenant.worker_loops"}
# Fundament's tables without row security (its own choice: only service roles reach them).
FUNDAMENT_WITHOUT_ROW_SECURITY = {"cluster_outbox"}
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")
USER_SCHEMAS = "nspname NOT IN ('pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg\\_%'"


def relations(conn: psycopg.Connection[tuple[object, ...]]) -> dict[str, int]:
    """Every table, view, sequence and foreign table outside PostgreSQL's own schemas: name -> oid."""
    rows = conn.execute(
        "SELECT n.nspname || '.' || c.relname, c.oid::int FROM pg_catalog.pg_class AS c "
        "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
        f"WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND {USER_SCHEMAS}"
    ).fetchall()
    return {str(name): int(str(oid)) for name, oid in rows}


def functions(conn: psycopg.Connection[tuple[object, ...]]) -> dict[str, int]:
    rows = conn.execute(
        "SELECT p.oid::regprocedure::text, p.oid::int FROM pg_catalog.pg_proc AS p "
        f"JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace WHERE {USER_SCHEMAS} "
        # An extension's own functions (pg_trgm's, in schema fleet_ext) are PostgreSQL's, not ours:
        # test_extension_schema_is_closed_to_every_service_role covers them.
        "AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend AS d "
        "WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')"
    ).fetchall()
    return {str(name): int(str(oid)) for name, oid in rows}


def granted(conn: psycopg.Connection[tuple[object, ...]], role: str, oid: int) -> set[str]:
    """Privileges `role` holds on relation `oid`, on the table or on any column of it."""
    held = set()
    for privilege in PRIVILEGES:
        row = conn.execute("SELECT pg_catalog.has_table_privilege(%s, %s::oid, %s)", [role, oid, privilege]).fetchone()
        if row and row[0]:
            held.add(privilege)
    for privilege in ("SELECT", "INSERT", "UPDATE", "REFERENCES"):
        row = conn.execute(
            "SELECT pg_catalog.has_any_column_privilege(%s, %s::oid, %s)", [role, oid, privilege]
        ).fetchone()
        if row and row[0]:
            held.add(privilege)
    return held


def executable(conn: psycopg.Connection[tuple[object, ...]], role: str) -> set[str]:
    found = set()
    for name, oid in functions(conn).items():
        row = conn.execute("SELECT pg_catalog.has_function_privilege(%s, %s::oid, 'EXECUTE')", [role, oid]).fetchone()
        if row and row[0]:
            found.add(name)
    return found


@pytest.fixture(scope="module")
def fundament_grants(pg_server: PgServer) -> Iterator[tuple[set[str], set[str], dict[str, dict[str, set[str]]]]]:
    """On a database holding only the platform model: its relations, its functions, each role's grants."""
    database = TestDatabase(pg_server, f"fleet_fundament_{os.getpid()}")
    with psycopg.connect(pg_server.dsn("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database.name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database.name)))
    try:
        apply_platform_model(database.dsn())
        with database.admin() as conn:
            found = relations(conn)
            grants = {role: {name: granted(conn, role, oid) for name, oid in found.items()} for role in SERVICE_ROLES}
            yield set(found), set(functions(conn)), grants
    finally:
        drop_database(database)


def ours(held: dict[str, set[str]], fundaments: dict[str, set[str]]) -> dict[str, set[str]]:
    """The privileges beyond Fundament's own, per relation (none left: not listed)."""
    return {name: p - fundaments.get(name, set()) for name, p in held.items() if p - fundaments.get(name, set())}


def test_the_catalog_holds_every_table_this_matrix_names(database: TestDatabase) -> None:
    with database.admin() as conn:
        found = set(relations(conn))
    assert found >= WORKER_TABLES | MODEL_TABLES | MODEL_VIEWS | {LOCK_TABLE}
    assert "fleet_meta.schema_migrations" in found


def test_public_api_can_touch_no_relation_at_all(database: TestDatabase) -> None:
    with database.admin() as conn:
        everything = relations(conn)
        leaks = {name: granted(conn, PUBLIC_API, oid) for name, oid in everything.items()}
    assert {name: held for name, held in leaks.items() if held} == {}
    with psycopg.connect(database.dsn(PUBLIC_API), autocommit=True) as conn:
        for name in everything:
            schema, table = name.split(".")
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute(sql.SQL("SELECT 1 FROM {} LIMIT 1").format(sql.Identifier(schema, table)))


def test_public_api_can_call_platform_overview_and_nothing_else(
    database: TestDatabase, fundament_grants: tuple[set[str], set[str], dict[str, dict[str, set[str]]]]
) -> None:
    _, fundament_functions, _ = fundament_grants
    with database.admin() as conn:
        callable_functions = executable(conn, PUBLIC_API) - fundament_functions
    # Of ours, only the one; Fundament's functions keep PostgreSQL's default EXECUTE for PUBLIC (its
    # triggers and session helpers, none of which reads a row for the caller).
    assert callable_functions == {"tenant.platform_overview()"}
    with psycopg.connect(database.dsn(PUBLIC_API)) as conn:
        assert conn.execute("SELECT * FROM tenant.platform_overview()").fetchall() == []
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("SELECT tenant.system_organization_id()")


def test_fundament_api_may_not_call_platform_overview(database: TestDatabase) -> None:
    with database.admin() as conn:
        assert "tenant.platform_overview()" not in executable(conn, FUNDAMENT_API)
    with (
        psycopg.connect(database.dsn(FUNDAMENT_API)) as conn,
        pytest.raises(errors.InsufficientPrivilege, match="permission denied for function platform_overview"),
    ):
        conn.execute("SELECT * FROM tenant.platform_overview()")


def test_only_the_public_api_may_call_platform_overview(database: TestDatabase) -> None:
    with database.admin() as conn:
        callers = {
            role for role in (*SERVICE_ROLES, "public") if "tenant.platform_overview()" in executable(conn, role)
        }
    assert callers == {PUBLIC_API}


def test_admin_api_reads_every_table_of_ours_and_the_model_and_writes_nothing(
    database: TestDatabase, fundament_grants: tuple[set[str], set[str], dict[str, dict[str, set[str]]]]
) -> None:
    fundament_relations, _, _ = fundament_grants
    with database.admin() as conn:
        everything = relations(conn)
        held = {name: granted(conn, ADMIN_API, oid) for name, oid in everything.items()}
    tenant_tables_of_ours = {name for name in everything if name.startswith("tenant.")} - fundament_relations
    readable = {name for name, privileges in held.items() if "SELECT" in privileges}
    assert readable == tenant_tables_of_ours | MODEL_TABLES | {"tenant.cluster_outbox"}
    assert {name: p - {"SELECT"} for name, p in held.items() if p - {"SELECT"}} == {}


def test_worker_writes_only_its_tables_and_deletes_nothing(
    database: TestDatabase, fundament_grants: tuple[set[str], set[str], dict[str, dict[str, set[str]]]]
) -> None:
    _, _, fundaments = fundament_grants
    with database.admin() as conn:
        everything = relations(conn)
        held = {name: granted(conn, WORKER, oid) for name, oid in everything.items()}
    expected = {name: {"SELECT", "INSERT", "UPDATE"} for name in WORKER_TABLES}
    expected |= {name: {"SELECT", "INSERT"} for name in WORKER_APPEND_ONLY_TABLES}
    expected |= {name: {"SELECT"} for name in MODEL_VIEWS | WORKER_READ_TABLES}
    expected[LOCK_TABLE] = {"SELECT", "UPDATE"}
    assert ours(held, fundaments[WORKER]) == expected
    assert not any("DELETE" in p or "TRUNCATE" in p for p in held.values())


def test_fundament_api_gains_nothing_of_ours(
    database: TestDatabase, fundament_grants: tuple[set[str], set[str], dict[str, dict[str, set[str]]]]
) -> None:
    _, _, fundaments = fundament_grants
    with database.admin() as conn:
        everything = relations(conn)
        held = {name: granted(conn, FUNDAMENT_API, oid) for name, oid in everything.items()}
    assert ours(held, fundaments[FUNDAMENT_API]) == {}


def row_security_problems(conn: psycopg.Connection[tuple[object, ...]]) -> list[str]:
    """Tenant tables without row security, without a policy, or with a role that has grants but no policy."""
    tables = conn.execute(
        "SELECT c.oid::int, c.relname, c.relrowsecurity FROM pg_catalog.pg_class AS c "
        "WHERE c.relnamespace = 'tenant'::regnamespace AND c.relkind IN ('r', 'p')"
    ).fetchall()
    problems = []
    for oid, name, row_security in tables:
        if name in FUNDAMENT_WITHOUT_ROW_SECURITY:
            continue
        if not row_security:
            problems.append(f"{name}: row level security is off")
        policies = conn.execute(
            "SELECT r.rolname FROM pg_catalog.pg_policy AS p, unnest(p.polroles) AS role_oid "
            "JOIN pg_catalog.pg_roles AS r ON r.oid = role_oid WHERE p.polrelid = %s::oid",
            [oid],
        ).fetchall()
        roles_with_policy = [str(role) for (role,) in policies]
        if len(roles_with_policy) != len(set(roles_with_policy)):
            problems.append(f"{name}: more than one policy for a role: {sorted(roles_with_policy)}")
        for role in SERVICE_ROLES:
            if granted(conn, role, int(str(oid))) and role not in roles_with_policy:
                problems.append(f"{name}: {role} has grants but no policy")
        if "public" in roles_with_policy or not roles_with_policy:
            problems.append(f"{name}: policies {roles_with_policy}")
    return problems


def test_every_tenant_table_has_row_security_and_a_policy_per_role_that_may_use_it(database: TestDatabase) -> None:
    with database.admin() as conn:
        assert row_security_problems(conn) == []


def test_a_table_added_later_is_covered_by_these_checks(database: TestDatabase) -> None:
    """The matrix is discovered, not listed: a careless new table and grant are caught."""
    with database.admin() as conn:
        conn.execute("CREATE TABLE tenant.careless (id int)")
        conn.execute("GRANT SELECT ON tenant.careless TO fun_platform_public_api, fun_cluster_worker")
        assert "tenant.careless" in relations(conn)
        assert granted(conn, PUBLIC_API, relations(conn)["tenant.careless"]) == {"SELECT"}
        problems = row_security_problems(conn)
    assert "careless: row level security is off" in problems
    assert "careless: fun_platform_public_api has grants but no policy" in problems


def test_service_roles_have_no_special_powers_and_none_can_become_the_owner(database: TestDatabase) -> None:
    with database.admin() as conn:
        rows = conn.execute(
            "SELECT rolname, rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolcanlogin "
            "FROM pg_catalog.pg_roles WHERE rolname = ANY(%s)",
            [[*SERVICE_ROLES, "fun_owner"]],
        ).fetchall()
        owner_members = conn.execute(
            "SELECT m.rolname FROM pg_catalog.pg_auth_members AS a JOIN pg_catalog.pg_roles AS m ON m.oid = a.member "
            "WHERE a.roleid = 'fun_owner'::regrole"
        ).fetchall()
    by_name = {str(row[0]): row[1:] for row in rows}
    for role in SERVICE_ROLES:
        assert by_name[role] == (False, False, False, False, True), role
    assert by_name["fun_owner"] == (False, False, False, False, False)
    assert owner_members == []


def test_writes_are_refused_in_practice(seeded_database: TestDatabase) -> None:
    with psycopg.connect(seeded_database.dsn(ADMIN_API), autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM tenant.clusters").fetchone() != (0,)
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("UPDATE tenant.clusters SET region = 'x'")
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute(HEARTBEAT)
    with psycopg.connect(seeded_database.dsn(WORKER), autocommit=True) as conn:
        conn.execute(HEARTBEAT)
        conn.execute("UPDATE tenant.worker_heartbeats SET interval_seconds = 120")
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("DELETE FROM tenant.worker_heartbeats")
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("UPDATE tenant.projects SET name = 'x'")
        with pytest.raises(errors.ObjectNotInPrerequisiteState):
            conn.execute("UPDATE tenant.fleet_sync_state SET sync_status = 'failed'")


def test_fundament_api_sees_only_the_organization_it_acts_for(seeded_database: TestDatabase) -> None:
    with seeded_database.admin() as conn:
        row = conn.execute(
            "SELECT organization_id, count(*) FROM tenant.clusters "
            "GROUP BY organization_id ORDER BY count(*) DESC, organization_id LIMIT 1"
        ).fetchone()
        assert row is not None
        org_id, clusters = row
        namespaces = conn.execute(
            "SELECT count(*) FROM tenant.namespaces JOIN tenant.projects ON tenant.projects.id = project_id "
            "JOIN tenant.clusters ON tenant.clusters.id = tenant.projects.cluster_id WHERE organization_id = %s",
            [org_id],
        ).fetchone()
    with psycopg.connect(seeded_database.dsn(FUNDAMENT_API), autocommit=True) as conn:
        # Unscoped: nothing at all.
        assert conn.execute("SELECT count(*) FROM tenant.clusters").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM tenant.organizations").fetchone() == (0,)
        conn.execute("SELECT pg_catalog.set_config('app.current_organization_id', %s, false)", [str(org_id)])
        assert conn.execute("SELECT count(*) FROM tenant.organizations").fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM tenant.clusters").fetchone() == (clusters,)
        assert conn.execute("SELECT count(DISTINCT organization_id) FROM tenant.clusters").fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM tenant.namespaces").fetchone() == namespaces
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("SELECT count(*) FROM tenant.cluster_snapshots")


def test_extension_schema_is_closed_to_every_service_role(database: TestDatabase) -> None:
    """pg_trgm serves the search indexes only: its schema is usable by no service role, so none can
    call its functions, and it is the only extension besides PostgreSQL's own plpgsql."""
    with database.admin() as conn:
        extensions = conn.execute(
            "SELECT e.extname, n.nspname FROM pg_catalog.pg_extension AS e "
            "JOIN pg_catalog.pg_namespace AS n ON n.oid = e.extnamespace ORDER BY 1"
        ).fetchall()
        usable = {
            role
            for role in SERVICE_ROLES
            if conn.execute("SELECT pg_catalog.has_schema_privilege(%s, 'fleet_ext', 'USAGE')", [role]).fetchone()
            == (True,)
        }
    assert extensions == [("pg_trgm", "fleet_ext"), ("plpgsql", "pg_catalog")]
    assert usable == set()
    with psycopg.connect(database.dsn(ADMIN_API)) as conn, pytest.raises(errors.InsufficientPrivilege):
        conn.execute("SELECT fleet_ext.similarity('a', 'b')")
