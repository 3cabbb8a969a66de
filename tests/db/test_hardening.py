"""The database boundary against a hostile process holding one of our roles.

Each property is checked for every service role from the catalog, and tried in practice:
- only the worker can take the reconcile lock, and no other role can keep a pass from running;
- only the worker may create temporary tables; no service role may create large objects;
- no service role reads per-table statistics, sizes or pg_class's row counts but the two that read
  every row anyway (the staff API and the worker); advisory locks are nobody's;
- the worker updates only the columns it moves, and a resolved finding or a destroyed ledger row is
  never updated again, whoever tries.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg import errors

from collector.reconcile import store as reconcile_store
from tests.db.test_privileges import ADMIN_API, FUNDAMENT_API, PUBLIC_API, SERVICE_ROLES, WORKER
from tests.fixtures.postgres import TestDatabase

OTHER_ROLES = (PUBLIC_API, ADMIN_API, FUNDAMENT_API)
# Everything a session could try to hold the reconcile lock's row or table with.
LOCK_ATTEMPTS = (
    "UPDATE tenant.worker_locks SET last_taken = now() WHERE name = 'reconcile'",
    "SELECT 1 FROM tenant.worker_locks WHERE name = 'reconcile' FOR UPDATE",
    "SELECT 1 FROM tenant.worker_locks WHERE name = 'reconcile' FOR NO KEY UPDATE",
    "SELECT 1 FROM tenant.worker_locks WHERE name = 'reconcile' FOR SHARE",
    "SELECT 1 FROM tenant.worker_locks WHERE name = 'reconcile' FOR KEY SHARE",
    "LOCK TABLE tenant.worker_locks IN SHARE MODE",
    "LOCK TABLE tenant.worker_locks IN ACCESS EXCLUSIVE MODE",
    "SELECT pg_advisory_xact_lock(hashtext('fleet-inventory.reconcile'))",
)
# The columns the worker's statements set, per table; nothing else may change after INSERT.
WORKER_UPDATE_COLUMNS = {
    "cluster_snapshots": {
        "observed",
        "nodes",
        "ready_nodes",
        "pods",
        "allocatable_pods",
        "cpu_allocatable_millicores",
        "memory_allocatable_bytes",
        "source",
        "last_error",
        "last_error_at",
    },
    "node_pool_snapshots": {"cluster_id", "observed", "nodes", "ready_nodes"},
    "namespace_snapshots": {"cluster_id", "observed", "pods", "unread_reason", "unread_at"},
    "worker_heartbeats": {"last_completed", "interval_seconds", "details"},
    "gardener_shoots": {
        "name",
        "namespace",
        "cluster_label",
        "organization_label",
        "cluster_id",
        "organization_id",
        "kubernetes_version",
        "region",
        "created",
        "last_seen",
        "deleted",
    },
    "drift_findings": {"cluster_id", "shoot_uid", "organization_id", "details", "last_detected", "resolved"},
    "infrastructure_resources": {"resource_id", "last_seen", "destroyed", "destroyed_reason", "details"},
    "worker_locks": {"last_taken"},
}
LARGE_OBJECT_CREATORS = ("lo_create", "lo_creat", "lo_from_bytea", "lo_import")
SIZE_FUNCTIONS = ("pg_relation_size", "pg_total_relation_size", "pg_table_size", "pg_indexes_size")
ROW_COUNT_COLUMNS = ("reltuples", "relpages", "relallvisible")


def _scalar(conn: psycopg.Connection[tuple[object, ...]], query: str, params: list[object]) -> object:
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


@contextmanager
def session(database: TestDatabase, role: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    with psycopg.connect(database.dsn(role), autocommit=True) as conn:
        conn.execute("SET lock_timeout = '5s'")
        yield conn


# --- the reconcile lock ---------------------------------------------------------------------------


@pytest.mark.parametrize("role", OTHER_ROLES)
def test_no_other_role_can_take_or_hold_the_reconcile_lock(database: TestDatabase, role: str) -> None:
    with session(database, role) as conn:
        for attempt in LOCK_ATTEMPTS:
            with pytest.raises(errors.InsufficientPrivilege), conn.transaction():
                conn.execute(attempt)


@pytest.mark.parametrize("role", OTHER_ROLES)
async def test_reconcile_takes_its_lock_while_another_role_holds_what_it_can(database: TestDatabase, role: str) -> None:
    """The other role holds every lock it is allowed on the table; the real pass still gets the row."""
    with session(database, role) as other:
        other.execute("BEGIN")
        if role == ADMIN_API:
            other.execute("LOCK TABLE tenant.worker_locks IN ACCESS SHARE MODE")
            other.execute("SELECT * FROM tenant.worker_locks")
        async with await psycopg.AsyncConnection.connect(database.dsn(WORKER)) as worker:
            await worker.execute("SET lock_timeout = '5s'")
            async with worker.transaction():
                await reconcile_store.lock_pass(worker)
        other.execute("ROLLBACK")


async def test_the_reconcile_lock_does_serialise_two_worker_passes(database: TestDatabase) -> None:
    """The control: a worker session holding the row keeps another pass waiting (here: past its timeout)."""
    async with (
        await psycopg.AsyncConnection.connect(database.dsn(WORKER)) as first,
        await psycopg.AsyncConnection.connect(database.dsn(WORKER)) as second,
        first.transaction(),
    ):
        await reconcile_store.lock_pass(first)
        await second.execute("SET lock_timeout = '200ms'")
        with pytest.raises(errors.LockNotAvailable):
            async with second.transaction():
                await reconcile_store.lock_pass(second)


# --- temporary tables, large objects, advisory locks ------------------------------------------------


def test_only_the_worker_may_create_temporary_tables(database: TestDatabase) -> None:
    with database.admin() as conn:
        may = {
            role
            for role in (*SERVICE_ROLES, "public")
            if _scalar(conn, "SELECT has_database_privilege(%s, current_database(), 'TEMPORARY')", [role])
        }
    assert may == {WORKER}
    for role in OTHER_ROLES:
        with session(database, role) as conn, pytest.raises(errors.InsufficientPrivilege):
            conn.execute("CREATE TEMPORARY TABLE t (x int)")
    with session(database, WORKER) as conn:
        conn.execute("CREATE TEMPORARY TABLE t (x int)")


def _names(names: tuple[str, ...]) -> str:
    """A constant list of function names as SQL literals (never user input)."""
    return ", ".join(f"'{name}'" for name in names)


def catalog_functions(conn: psycopg.Connection[tuple[object, ...]], where: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT p.oid::regprocedure::text, p.oid::int FROM pg_catalog.pg_proc AS p "
        f"WHERE p.pronamespace = 'pg_catalog'::regnamespace AND ({where})"
    ).fetchall()
    return {str(name): int(str(oid)) for name, oid in rows}


def callers(conn: psycopg.Connection[tuple[object, ...]], functions: dict[str, int]) -> dict[str, set[str]]:
    """Per function, the service roles (and PUBLIC) that may execute it."""
    found: dict[str, set[str]] = {}
    for name, oid in functions.items():
        for role in (*SERVICE_ROLES, "public"):
            if _scalar(conn, "SELECT has_function_privilege(%s, %s::oid, 'EXECUTE')", [role, oid]):
                found.setdefault(name, set()).add(role)
    return found


def test_no_service_role_may_create_large_objects_or_take_advisory_locks(database: TestDatabase) -> None:
    with database.admin() as conn:
        creators = catalog_functions(conn, f"p.proname IN ({_names(LARGE_OBJECT_CREATORS)})")
        locks = catalog_functions(conn, r"p.proname LIKE 'pg\_advisory\_%' OR p.proname LIKE 'pg\_try\_advisory\_%'")
        assert len(creators) >= len(LARGE_OBJECT_CREATORS) and len(locks) >= 10
        assert callers(conn, creators | locks) == {}
    for role in SERVICE_ROLES:
        with session(database, role) as conn:
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute("SELECT lo_create(0)")
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute("SELECT lo_from_bytea(0, 'x')")
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute("SELECT pg_try_advisory_lock(1)")


# --- statistics ------------------------------------------------------------------------------------


def test_only_the_roles_that_read_every_row_read_statistics_sizes_and_row_counts(database: TestDatabase) -> None:
    with database.admin() as conn:
        statistics = catalog_functions(
            conn,
            r"(p.proname LIKE 'pg\_stat\_get\_%' AND p.pronargs = 1 AND p.proargtypes[0] = 'oid'::regtype) "
            f"OR p.proname IN ({_names(SIZE_FUNCTIONS)})",
        )
        assert len(statistics) > 30
        assert callers(conn, statistics) == {name: {ADMIN_API, WORKER} for name in statistics}
        readers = {
            (role, column)
            for role in (*SERVICE_ROLES, "public")
            for column in ROW_COUNT_COLUMNS
            if _scalar(conn, "SELECT has_column_privilege(%s, 'pg_catalog.pg_class', %s, 'SELECT')", [role, column])
        }
        assert readers == {(role, column) for role in (ADMIN_API, WORKER) for column in ROW_COUNT_COLUMNS}
        # Every other column of pg_class stays readable: tools and drivers look up names and kinds.
        assert _scalar(conn, "SELECT has_column_privilege('public', 'pg_catalog.pg_class', 'relname', 'SELECT')", [])


def test_the_anonymous_role_learns_no_row_count_of_a_tenant_table(seeded_database: TestDatabase) -> None:
    with seeded_database.admin() as conn:
        conn.execute("ANALYZE")
        assert (
            _scalar(conn, "SELECT reltuples > 0 FROM pg_class WHERE oid = 'tenant.organizations'::regclass", []) is True
        )
    denied = (
        "SELECT reltuples FROM pg_catalog.pg_class WHERE relname = 'organizations'",
        "SELECT relpages FROM pg_catalog.pg_class WHERE relname = 'organizations'",
        "SELECT * FROM pg_catalog.pg_class",
        "SELECT n_live_tup FROM pg_catalog.pg_stat_user_tables",
        "SELECT n_tup_ins FROM pg_catalog.pg_stat_all_tables",
        "SELECT heap_blks_read FROM pg_catalog.pg_statio_user_tables",
        "SELECT idx_scan FROM pg_catalog.pg_stat_user_indexes",
        "SELECT tup_inserted FROM pg_catalog.pg_stat_database",
        "SELECT pg_relation_size('tenant.organizations')",
        "SELECT pg_stat_get_live_tuples('tenant.organizations'::regclass)",
    )
    for role in (PUBLIC_API, FUNDAMENT_API):
        with session(seeded_database, role) as conn:
            for query in denied:
                with pytest.raises(errors.InsufficientPrivilege):
                    conn.execute(query)
            # pg_stats shows no tenant column to these roles (no SELECT, or row security on the table).
            assert _scalar(conn, "SELECT count(*) FROM pg_catalog.pg_stats WHERE schemaname = 'tenant'", []) == 0
            # What stays: the names and kinds of relations, as in every PostgreSQL database.
            assert _scalar(conn, "SELECT count(*) FROM pg_catalog.pg_class WHERE relname = 'organizations'", []) == 1


# --- the worker's updates ----------------------------------------------------------------------------

FUNDAMENT_WORKER_WRITES = {"clusters", "cluster_outbox"}


def test_the_worker_may_update_exactly_the_columns_it_moves(database: TestDatabase) -> None:
    with database.admin() as conn:
        rows = conn.execute(
            "SELECT c.relname, a.attname, has_table_privilege(%s, c.oid, 'UPDATE'), "
            "has_column_privilege(%s, c.oid, a.attnum, 'UPDATE') "
            "FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_attribute AS a ON a.attrelid = c.oid "
            "WHERE c.relnamespace = 'tenant'::regnamespace AND c.relkind IN ('r', 'p') "
            "AND a.attnum > 0 AND NOT a.attisdropped",
            [WORKER, WORKER],
        ).fetchall()
    # Fundament grants its cluster-worker role (which fleet inventory's worker shares) UPDATE on its
    # own clusters and outbox; fleet inventory adds no write to Fundament's tables.
    rows = [row for row in rows if row[0] not in FUNDAMENT_WORKER_WRITES]
    assert {str(table) for table, _, whole_table, _ in rows if whole_table} == set()
    updatable: dict[str, set[str]] = {}
    for table, column, _, column_update in rows:
        if column_update:
            updatable.setdefault(str(table), set()).add(str(column))
    assert updatable == WORKER_UPDATE_COLUMNS


def _closed_rows(database: TestDatabase) -> tuple[uuid.UUID, uuid.UUID]:
    """A resolved finding and a destroyed ledger row, written as superuser."""
    with database.admin() as conn:
        cluster = _scalar(conn, "SELECT id FROM tenant.clusters LIMIT 1", [])
        finding = _scalar(
            conn,
            "INSERT INTO tenant.drift_findings (kind, subject, first_detected, last_detected, resolved) "
            "VALUES ('orphan_shoot', 'gone', now() - interval '2 hours', now() - interval '1 hour', now()) "
            "RETURNING id",
            [],
        )
        resource = _scalar(
            conn,
            "INSERT INTO tenant.infrastructure_resources "
            "(cluster_id, resource_type, name, billable, created, last_seen, destroyed, destroyed_reason) "
            "VALUES (%s, 'kubernetes.node', 'n1', true, now() - interval '2 hours', now(), now(), 'not_found') "
            "RETURNING id",
            [cluster],
        )
    assert isinstance(finding, uuid.UUID) and isinstance(resource, uuid.UUID)
    return finding, resource


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE tenant.drift_findings SET first_detected = now()",
        "UPDATE tenant.drift_findings SET kind = 'missing_shoot'",
        "UPDATE tenant.drift_findings SET id = gen_random_uuid()",
        "UPDATE tenant.infrastructure_resources SET created = now()",
        "UPDATE tenant.infrastructure_resources SET name = 'other'",
        "UPDATE tenant.gardener_shoots SET first_seen = now()",
        "UPDATE tenant.worker_heartbeats SET first_completed = now()",
        "UPDATE tenant.cluster_snapshots SET cluster_id = cluster_id",
    ],
)
def test_the_worker_cannot_rewrite_ids_or_created_times(seeded_database: TestDatabase, statement: str) -> None:
    with session(seeded_database, WORKER) as conn, pytest.raises(errors.InsufficientPrivilege):
        conn.execute(statement)


@pytest.mark.parametrize("role", [WORKER, "postgres"])
@pytest.mark.parametrize(
    ("statement", "column"),
    [
        ("UPDATE tenant.drift_findings SET resolved = NULL WHERE id = %(finding)s", "resolved"),
        ("UPDATE tenant.drift_findings SET last_detected = now() WHERE id = %(finding)s", "resolved"),
        ("UPDATE tenant.infrastructure_resources SET destroyed = NULL WHERE id = %(resource)s", "destroyed"),
        ("UPDATE tenant.infrastructure_resources SET last_seen = now() WHERE id = %(resource)s", "destroyed"),
    ],
)
def test_a_resolved_finding_or_destroyed_resource_is_never_rewritten(
    seeded_database: TestDatabase, role: str, statement: str, column: str
) -> None:
    finding, resource = _closed_rows(seeded_database)
    dsn = seeded_database.dsn(role) if role != "postgres" else seeded_database.dsn()
    with (
        psycopg.connect(dsn, autocommit=True) as conn,
        pytest.raises(errors.RestrictViolation, match=f"is {column} and is never rewritten"),
    ):
        conn.execute(statement, {"finding": finding, "resource": resource})


def test_open_findings_and_active_resources_still_move(seeded_database: TestDatabase) -> None:
    """The control: the same updates on rows that are not closed work as the worker's statements need."""
    with seeded_database.admin() as conn:
        cluster = _scalar(conn, "SELECT id FROM tenant.clusters LIMIT 1", [])
        conn.execute(
            "INSERT INTO tenant.infrastructure_resources "
            "(cluster_id, resource_type, name, billable, created, last_seen) "
            "VALUES (%s, 'kubernetes.node', 'open-1', true, now(), now())",
            [cluster],
        )
        conn.execute(
            "INSERT INTO tenant.drift_findings (kind, subject, first_detected, last_detected) "
            "VALUES ('orphan_shoot', 'open-1', now(), now())"
        )
    with session(seeded_database, WORKER) as conn:
        moved = conn.execute(
            "UPDATE tenant.infrastructure_resources SET last_seen = now(), destroyed = now(), "
            "destroyed_reason = 'not_found' WHERE name = 'open-1'"
        )
        assert moved.rowcount == 1
        moved = conn.execute(
            "UPDATE tenant.drift_findings SET last_detected = now(), resolved = now() WHERE subject = 'open-1'"
        )
        assert moved.rowcount == 1
