"""The provisioning side's times lie within the years 1 to 9999 (CHECK constraints on its tables).

psycopg's datetime and a protobuf Timestamp hold only those years, while PostgreSQL takes 'infinity',
'-infinity' and times from 4713 BC to 294276 AD: one of those in a provisioning table would break every
later staff read of its row. The constraint refuses the write instead, for every writer.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors, sql

from tests.fixtures.postgres import PgServer, TestDatabase, clone_database, drop_database

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
# cluster_sync_state.ready_since: an UPDATE cannot set it (its trigger derives it from
# shoot_status_changed); an INSERT can, and is tested on its own below.
# Each table's key, and which of its rows to write to: a live one, since a deleted row would trip
# `deleted >= created` first.
ROWS = {
    "organizations": ("id", "deleted IS NULL"),
    "projects": ("id", "deleted IS NULL"),
    "clusters": ("id", "deleted IS NULL"),
    "node_pools": ("id", "deleted IS NULL"),
    "namespaces": ("id", "deleted IS NULL"),
    "cluster_sync_state": ("cluster_id", "true"),
}


def one_row(conn: psycopg.Connection[tuple[object, ...]], table: str) -> object:
    """The key of one row of `table` the tests may write to."""
    key, which = ROWS[table]
    row = conn.execute(
        sql.SQL("SELECT {} FROM {} WHERE {} ORDER BY 1 LIMIT 1").format(
            sql.Identifier(key), sql.Identifier("tenant", table), sql.SQL(which)
        )
    ).fetchone()
    assert row is not None, f"the seed has no {table}"
    return row[0]


@pytest.fixture(scope="module")
def refusing_database(pg_server: PgServer, pg_seeded_template: str) -> Iterator[TestDatabase]:
    """One seeded database for every refused write: each test checks that its row is left as it was."""
    db = clone_database(pg_server, pg_seeded_template)
    try:
        yield db
    finally:
        drop_database(db)


# Too late, or before the year 1 (and so before any row's created).
LATE = ["infinity", "10000-01-01 00:00:00+00"]
EARLY = ["-infinity", "4713-01-01 00:00:00+00 BC", "0001-01-01 00:00:00+00 BC"]


@pytest.mark.parametrize("value", LATE + EARLY)
@pytest.mark.parametrize(("table", "column"), COLUMNS, ids=[f"{t}.{c}" for t, c in COLUMNS])
def test_a_time_out_of_range_is_refused_and_the_row_kept(
    refusing_database: TestDatabase, table: str, column: str, value: str
) -> None:
    key = ROWS[table][0]
    select = sql.SQL("SELECT * FROM {} WHERE {} = %s").format(sql.Identifier("tenant", table), sql.Identifier(key))
    with refusing_database.admin() as conn:
        row_id = one_row(conn, table)
        before = conn.execute(select, [row_id]).fetchone()
        with pytest.raises(errors.CheckViolation) as refused:
            conn.execute(
                sql.SQL("UPDATE {} SET {} = %s::timestamptz WHERE {} = %s").format(
                    sql.Identifier("tenant", table), sql.Identifier(column), sql.Identifier(key)
                ),
                [value, row_id],
            )
        # An early deleted is before created: the older `deleted >= created` refuses it first
        # (PostgreSQL tests a table's CHECKs in name order).
        older = column == "deleted" and value in EARLY
        assert refused.value.diag.constraint_name == f"{table}_ck_{'deleted' if older else 'times_in_range'}"
        assert conn.execute(select, [row_id]).fetchone() == before


def test_the_ends_of_the_range_are_still_taken(seeded_database: TestDatabase) -> None:
    with seeded_database.admin() as conn:
        row_id = one_row(conn, "organizations")
        conn.execute(
            "UPDATE tenant.organizations SET created = '0001-01-01 00:00:00Z', deleted = '9999-12-31 23:59:59.999999Z'"
            " WHERE id = %s",
            [row_id],
        )
        row = conn.execute(
            "SELECT extract(year FROM created AT TIME ZONE 'UTC'), extract(year FROM deleted AT TIME ZONE 'UTC')"
            " FROM tenant.organizations WHERE id = %s",
            [row_id],
        )
        assert row.fetchone() == (1, 9999)


@pytest.mark.parametrize("value", ["infinity", "10000-01-01 00:00:00+00"])
def test_a_ready_since_inserted_out_of_range_is_refused(refusing_database: TestDatabase, value: str) -> None:
    # The trigger keeps a ready_since the writer inserts for a ready cluster: the cluster's sync state
    # is written anew (in one transaction, which the refusal rolls back).
    with refusing_database.admin() as conn:
        cluster_id = one_row(conn, "cluster_sync_state")
        select = "SELECT * FROM tenant.cluster_sync_state WHERE cluster_id = %s"
        before = conn.execute(select, [cluster_id]).fetchone()
        with pytest.raises(errors.CheckViolation) as refused, conn.transaction():
            conn.execute("DELETE FROM tenant.cluster_sync_state WHERE cluster_id = %s", [cluster_id])
            conn.execute(
                "INSERT INTO tenant.cluster_sync_state (cluster_id, sync_status, first_completed, shoot_status,"
                " ready_since) VALUES (%s, 'completed', now(), 'ready', %s::timestamptz)",
                [cluster_id, value],
            )
        assert refused.value.diag.constraint_name == "cluster_sync_state_ck_times_in_range"
        assert conn.execute(select, [cluster_id]).fetchone() == before
