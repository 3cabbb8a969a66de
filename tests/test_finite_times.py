"""The provisioning side's times are finite (migration 0017): 'infinity' is refused where it is written.

Neither psycopg nor a protobuf Timestamp can carry an infinite time, so one written into a provisioning
table would break every later staff read of its row; the constraint refuses the write instead, for
every writer, and a database that already holds one is refused by the migration, unchanged.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors, sql

from db.migrate import applied_versions, migrate
from tests.fixtures.postgres import TestDatabase

# Every time column of the provisioning tables.
COLUMNS = [
    ("organizations", "created"),
    ("organizations", "deleted"),
    ("projects", "created"),
    ("projects", "deleted"),
    ("clusters", "created"),
    ("clusters", "deleted"),
    ("node_pools", "created"),
    ("node_pools", "deleted"),
    ("namespaces", "created"),
    ("namespaces", "deleted"),
    ("cluster_sync_state", "sync_updated"),
    ("cluster_sync_state", "first_completed"),
    ("cluster_sync_state", "shoot_status_changed"),
]
# cluster_sync_state.ready_since is not written directly: its trigger derives it from shoot_status_changed.
# The key column of each table that is not `id`.
KEY = {"cluster_sync_state": "cluster_id"}


def one_row(conn: psycopg.Connection[tuple[object, ...]], table: str) -> object:
    """A live row (a deleted one would trip `deleted >= created` first)."""
    key = KEY.get(table, "id")
    live = sql.SQL("true" if table in KEY else "deleted IS NULL")
    row = conn.execute(
        sql.SQL("SELECT {} FROM {} WHERE {} ORDER BY 1 LIMIT 1").format(
            sql.Identifier(key), sql.Identifier("tenant", table), live
        )
    ).fetchone()
    assert row is not None, f"the seed has no {table}"
    return row[0]


@pytest.mark.parametrize("value", ["infinity", "-infinity"])
@pytest.mark.parametrize(("table", "column"), COLUMNS, ids=[f"{t}.{c}" for t, c in COLUMNS])
def test_an_infinite_time_is_refused_and_the_row_kept(
    seeded_database: TestDatabase, table: str, column: str, value: str
) -> None:
    key = KEY.get(table, "id")
    select = sql.SQL("SELECT * FROM {} WHERE {} = %s").format(sql.Identifier("tenant", table), sql.Identifier(key))
    with seeded_database.admin() as conn:
        row_id = one_row(conn, table)
        before = conn.execute(select, [row_id]).fetchone()
        with pytest.raises(errors.CheckViolation) as refused:
            conn.execute(
                sql.SQL("UPDATE {} SET {} = %s::timestamptz WHERE {} = %s").format(
                    sql.Identifier("tenant", table), sql.Identifier(column), sql.Identifier(key)
                ),
                [value, row_id],
            )
        conn.rollback()
        # A deleted of -infinity is before created: the older `deleted >= created` refuses it first
        # (PostgreSQL tests a table's CHECKs in name order).
        older = column == "deleted" and value == "-infinity"
        assert refused.value.diag.constraint_name == f"{table}_ck_{'deleted' if older else 'finite_times'}"
        assert conn.execute(select, [row_id]).fetchone() == before


def test_a_finite_time_far_off_is_still_taken(seeded_database: TestDatabase) -> None:
    # Only infinity is refused: a time near the end of a protobuf Timestamp's range is a time.
    with seeded_database.admin() as conn:
        row_id = one_row(conn, "organizations")
        conn.execute("UPDATE tenant.organizations SET deleted = '9999-12-31 23:59:59Z' WHERE id = %s", [row_id])
        row = conn.execute("SELECT extract(year FROM deleted) FROM tenant.organizations WHERE id = %s", [row_id])
        assert row.fetchone() == (9999,)


def test_the_migration_refuses_a_database_already_holding_one(empty_database: TestDatabase) -> None:
    migrate(empty_database.dsn(), target=16)
    with psycopg.connect(empty_database.dsn()) as conn:
        conn.execute(
            "INSERT INTO tenant.organizations (name, alias, created) VALUES ('forever', 'Forever', '-infinity')"
        )
    with pytest.raises(errors.CheckViolation) as refused:
        migrate(empty_database.dsn())
    assert refused.value.diag.constraint_name == "organizations_ck_finite_times"
    with psycopg.connect(empty_database.dsn()) as conn:
        assert max(applied_versions(conn)) == 16
        row = conn.execute("SELECT count(*) FROM tenant.organizations WHERE created = '-infinity'").fetchone()
        assert row == (1,)
        # Once the row holds a real time, the same migration applies.
        conn.execute("UPDATE tenant.organizations SET created = now() WHERE name = 'forever'")
    assert migrate(empty_database.dsn()) == [17]
