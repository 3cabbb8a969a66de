"""The migration runner: in order, each once, under a lock, safe twice and from two migrators at once.

Each test starts from a database of its own holding only the platform model (the stand-in for
Fundament's tables, not the migrated template), and compares what it ends with to the template through
a fingerprint of the catalog: tables, columns, constraints, indexes, policies, functions and every
grant. Tests that need more than the baseline add migrations to a copy of the migrations folder.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

import db.migrate
from common.database import SCHEMA_VERSION, require_schema
from common.errors import SchemaTooOld
from db.migrate import MigrationError, apply_platform_model, apply_roles, available, latest_version, migrate
from tests.fixtures.postgres import PgServer, TestDatabase

T = TypeVar("T")

FINGERPRINT = (
    """SELECT c.relname, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull,
              pg_catalog.pg_get_expr(d.adbin, d.adrelid)
       FROM pg_catalog.pg_attribute AS a JOIN pg_catalog.pg_class AS c ON c.oid = a.attrelid
       LEFT JOIN pg_catalog.pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       WHERE c.relnamespace IN ('tenant'::regnamespace, 'fleet_meta'::regnamespace) AND a.attnum > 0
       ORDER BY 1, 2""",
    """SELECT conrelid::regclass::text, conname, pg_catalog.pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint
       WHERE connamespace = 'tenant'::regnamespace ORDER BY 1, 2""",
    "SELECT indexname, indexdef FROM pg_catalog.pg_indexes WHERE schemaname IN ('tenant', 'fleet_meta') ORDER BY 1",
    """SELECT tablename, policyname, roles::text, cmd, qual, with_check FROM pg_catalog.pg_policies
       WHERE schemaname = 'tenant' ORDER BY 1, 2""",
    """SELECT p.oid::regprocedure::text, pg_catalog.pg_get_functiondef(p.oid), p.proacl::text,
              p.proowner::regrole::text
       FROM pg_catalog.pg_proc AS p WHERE p.pronamespace = 'tenant'::regnamespace ORDER BY 1""",
    """SELECT c.relname, c.relacl::text, c.relowner::regrole::text, c.relrowsecurity FROM pg_catalog.pg_class AS c
       WHERE c.relnamespace IN ('tenant'::regnamespace, 'fleet_meta'::regnamespace) ORDER BY 1""",
    """SELECT nspname, nspacl::text, obj_description(oid, 'pg_namespace') FROM pg_catalog.pg_namespace
       WHERE nspname IN ('tenant', 'fleet_meta', 'fleet_ext') ORDER BY 1""",
    "SELECT version, name, checksum FROM fleet_meta.schema_migrations ORDER BY version",
    "SELECT id, name, alias, listed_publicly, deleted FROM tenant.organizations ORDER BY id",
)


def fingerprint(dsn: str) -> list[list[tuple[object, ...]]]:
    with psycopg.connect(dsn) as conn:
        return [conn.execute(query).fetchall() for query in FINGERPRINT]


def at_once(count: int, work: Callable[[], T]) -> list[T]:
    """Run `work` in `count` threads released together; re-raise the first failure."""
    barrier = threading.Barrier(count)
    results: list[T] = []
    failures: list[BaseException] = []

    def run() -> None:
        barrier.wait(timeout=30)
        try:
            results.append(work())
        except BaseException as e:  # handed to the test thread below
            failures.append(e)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    if failures:
        raise failures[0]
    assert len(results) == count
    return results


@pytest.fixture
def platform_database(empty_database: TestDatabase) -> TestDatabase:
    """A database holding the platform model only: what fleet inventory's migrations apply onto."""
    assert apply_platform_model(empty_database.dsn()) is True
    return empty_database


@pytest.fixture
def more_migrations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the migrations with two more after the last (each adds a table), used in its place."""
    copy = tmp_path / "migrations"
    shutil.copytree(db.migrate.MIGRATIONS_DIR, copy)
    for version in (latest_version() + 1, latest_version() + 2):
        (copy / f"{version:04d}_extra_{version}.sql").write_text(
            f"-- A migration of this test only.\nCREATE TABLE tenant.extra_{version} (id integer PRIMARY KEY);\n"
        )
    monkeypatch.setattr(db.migrate, "MIGRATIONS_DIR", copy)
    return copy


def test_without_the_platform_model_nothing_is_applied(empty_database: TestDatabase) -> None:
    with pytest.raises(MigrationError, match="platform model fleet inventory applies onto is incomplete"):
        migrate(empty_database.dsn())
    with psycopg.connect(empty_database.dsn()) as conn:
        assert db.migrate.applied_versions(conn) == {}


def test_the_platform_model_is_built_once(platform_database: TestDatabase) -> None:
    assert apply_platform_model(platform_database.dsn()) is False


def test_migrating_applies_every_file_once_and_matches_the_template(
    platform_database: TestDatabase, database: TestDatabase
) -> None:
    assert migrate(platform_database.dsn()) == [m.version for m in available()]
    assert fingerprint(platform_database.dsn()) == fingerprint(database.dsn())


def test_migrating_twice_changes_nothing(platform_database: TestDatabase) -> None:
    migrate(platform_database.dsn())
    first = fingerprint(platform_database.dsn())
    assert migrate(platform_database.dsn()) == []
    assert fingerprint(platform_database.dsn()) == first


def test_two_migrators_at_once_leave_one_consistent_schema(
    platform_database: TestDatabase, database: TestDatabase
) -> None:
    applied = at_once(2, lambda: migrate(platform_database.dsn()))
    # One migrator did all the work, the other waited on the lock and found nothing left to do.
    assert sorted(applied, key=len) == [[], [m.version for m in available()]]
    assert fingerprint(platform_database.dsn()) == fingerprint(database.dsn())


def test_roles_twice_and_at_once(pg_server: PgServer) -> None:
    def roles() -> None:
        with psycopg.connect(pg_server.dsn("postgres"), autocommit=True) as conn:
            apply_roles(conn)

    at_once(3, roles)
    roles()
    with psycopg.connect(pg_server.dsn("postgres")) as conn:
        row = conn.execute("SELECT count(*) FROM pg_catalog.pg_roles WHERE rolname LIKE 'fun\\_%'").fetchone()
    assert row is not None and row[0] >= 5


def test_a_target_stops_early_and_the_rest_follows_later(
    platform_database: TestDatabase, more_migrations: Path
) -> None:
    last = latest_version()
    assert migrate(platform_database.dsn(), target=last - 1) == list(range(1, last))
    with psycopg.connect(platform_database.dsn()) as conn:
        row = conn.execute("SELECT obj_description('fleet_meta'::regnamespace, 'pg_namespace')").fetchone()
    assert row is not None and str(row[0]).endswith(f"schema version {last - 1}")
    assert migrate(platform_database.dsn()) == [last]


@pytest.fixture
def first_applied(platform_database: TestDatabase, more_migrations: Path) -> Path:
    """Migration 0001 applied from a copy of the migrations; the copy's 0001 file, to edit."""
    migrate(platform_database.dsn(), target=1)
    return sorted(more_migrations.glob("0001_*.sql"))[0]


def test_an_applied_migration_that_changed_is_refused(platform_database: TestDatabase, first_applied: Path) -> None:
    first = first_applied
    first.write_text(first.read_text() + "\nSELECT 1; -- a statement added after it was applied\n")
    with pytest.raises(MigrationError, match=r"0001_baseline\.sql changed after it was applied"):
        migrate(platform_database.dsn())


def test_a_reworded_comment_is_no_change(platform_database: TestDatabase, first_applied: Path) -> None:
    first = first_applied
    first.write_text("-- a comment reworded after it was applied\n\n" + first.read_text() + "\n    -- and one more\n")
    assert migrate(platform_database.dsn()) == list(range(2, latest_version() + 1))


@pytest.mark.parametrize(
    ("name", "message"),
    [("9999_gap.sql", "expected version"), ("7_bad.sql", "named NNNN_name.sql")],
    ids=["gap", "bad-name"],
)
def test_misnamed_or_missing_files_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, message: str
) -> None:
    copy = tmp_path / "migrations"
    shutil.copytree(db.migrate.MIGRATIONS_DIR, copy)
    (copy / name).write_text("SELECT 1;\n")
    monkeypatch.setattr(db.migrate, "MIGRATIONS_DIR", copy)
    with pytest.raises(MigrationError, match=message):
        available()


async def test_services_refuse_an_older_schema_with_a_clear_message(
    platform_database: TestDatabase, more_migrations: Path
) -> None:
    migrate(platform_database.dsn(), target=SCHEMA_VERSION)
    dsn = platform_database.dsn("fun_platform_public_api")
    async with AsyncConnectionPool(dsn, min_size=1, open=False) as pool:
        assert await require_schema(pool) == SCHEMA_VERSION
        # A release that needs the next migration refuses this database until it is applied.
        with pytest.raises(SchemaTooOld, match=rf"version {SCHEMA_VERSION}, this release needs {SCHEMA_VERSION + 1}"):
            await require_schema(pool, needed=SCHEMA_VERSION + 1)
    migrate(platform_database.dsn())
    async with AsyncConnectionPool(dsn, min_size=1, open=False) as pool:
        assert await require_schema(pool, needed=SCHEMA_VERSION + 1) == latest_version()
