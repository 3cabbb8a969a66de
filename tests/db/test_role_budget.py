"""The database's budget per role (db/roles.sql): a connection limit and a temp_file_limit.

The anonymous API's role, holding every connection its budget allows, leaves the staff API (started
afterwards, so every connection it uses is a new one) and the worker's role working; a sort that
spills beyond its role's temp_file_limit is refused by the server with a clear error.
"""

from __future__ import annotations

import os
from contextlib import ExitStack

import psycopg
import pytest
from fundament.fleet.v1 import fleet_pb2

from tests.fixtures.fleet_api import ROLE as STAFF_ROLE
from tests.fixtures.fleet_api import serving_fleet
from tests.fixtures.postgres import TestDatabase

PUBLIC_ROLE = "fun_platform_public_api"
WORKER_ROLE = "fun_cluster_worker"
SPILL_REFUSED = r"temporary file size exceeds \"temp_file_limit\" \(32768kB\)"
SERVICE_ROLES = (PUBLIC_ROLE, STAFF_ROLE, WORKER_ROLE)


def budgets(database: TestDatabase) -> dict[str, tuple[int, list[str]]]:
    with database.admin() as admin:
        rows = admin.execute(
            "SELECT r.rolname, r.rolconnlimit, coalesce(s.setconfig, '{}')"
            " FROM pg_catalog.pg_roles r LEFT JOIN pg_catalog.pg_db_role_setting s"
            " ON s.setrole = r.oid AND s.setdatabase = 0 WHERE r.rolname = ANY(%s)",
            [list(SERVICE_ROLES)],
        ).fetchall()
    return {str(name): (int(str(limit)), [str(item) for item in config]) for name, limit, config in rows}  # type: ignore[attr-defined]


def test_every_service_role_has_a_connection_limit_and_a_temp_file_limit(database: TestDatabase) -> None:
    found = budgets(database)
    assert set(found) == set(SERVICE_ROLES)
    with database.admin() as admin:
        max_connections = int(str(admin.execute("SHOW max_connections").fetchone()[0]))  # type: ignore[index]
    for role, (limit, config) in found.items():
        assert limit > 0, role
        assert any(item.startswith("temp_file_limit=") for item in config), (role, config)
    # The budgets together fit the server, so none of them can starve the others.
    assert sum(limit for limit, _ in found.values()) < max_connections


@pytest.mark.skipif(
    bool(os.environ.get("TEST_DATABASE_URL")),
    reason="exhausting a role's budget on a shared server (TEST_DATABASE_URL) would starve the other workers",
)
async def test_the_anonymous_role_at_its_budget_leaves_the_staff_api_and_the_worker_working(
    fleet_database: TestDatabase,
) -> None:
    limit = budgets(fleet_database)[PUBLIC_ROLE][0]
    # The limit is the server's, across databases: other tests on this worker may hold connections of the
    # role too (a served public API kept for its module). So connections are taken until the server
    # refuses one, which must come at the budget at the latest.
    with ExitStack() as held:
        taken = 0
        while True:
            try:
                held.enter_context(psycopg.connect(fleet_database.dsn(PUBLIC_ROLE)))
            except psycopg.OperationalError as refused:
                assert "too many connections for role" in str(refused)
                break
            taken += 1
            assert taken <= limit, f"more than the role's {limit} connections were accepted"
        assert taken > 0
        async with serving_fleet(fleet_database.dsn(STAFF_ROLE)) as (_, clients):
            summary = await clients.call("grpc", "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest())
            assert summary.clusters > 0
        with psycopg.connect(fleet_database.dsn(WORKER_ROLE)) as worker:
            clusters = worker.execute("SELECT count(*) FROM tenant.clusters").fetchone()
            assert clusters is not None and clusters[0] > 0


def test_a_sort_that_spills_past_the_budget_is_refused_with_a_clear_error(database: TestDatabase) -> None:
    with (
        psycopg.connect(database.dsn(PUBLIC_ROLE)) as conn,
        pytest.raises(psycopg.errors.ConfigurationLimitExceeded, match=SPILL_REFUSED),
    ):
        # Millions of rows sorted in 4 MB of work_mem spill far beyond the public role's 32 MB.
        conn.execute("SELECT g FROM generate_series(1, 5000000) g ORDER BY g DESC LIMIT 1")
    # A role may not lift its own limit (a superuser's setting).
    with psycopg.connect(database.dsn(PUBLIC_ROLE)) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SET temp_file_limit = -1")
