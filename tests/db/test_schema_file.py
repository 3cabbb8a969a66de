"""db/schema.sql is what the platform model's stand-in and the migrations make, exactly.

The file is pg_dump's view of the migrated template database in db/schema_dump.py's form. pg_dump
prints a schema in its own version's words, so the comparison needs the PostgreSQL major version the
file was generated with (the embedded server's); against another server (TEST_DATABASE_URL) it skips.
"""

from __future__ import annotations

import difflib

import pytest

from db.embedded import client_binary
from db.schema_dump import SCHEMA_FILE, render, server_major_version
from tests.fixtures.postgres import PROJECT, TestDatabase

GENERATED_WITH = 18


def test_schema_sql_is_current(database: TestDatabase) -> None:
    major = server_major_version(database.dsn())
    if major != GENERATED_WITH:
        pytest.skip(f"db/schema.sql is PostgreSQL {GENERATED_WITH}'s dump; this server is {major}")
    current = render(database.dsn(), client_binary(PROJECT, "pg_dump"))
    committed = SCHEMA_FILE.read_text()
    if current != committed:
        diff = "\n".join(
            list(
                difflib.unified_diff(committed.splitlines(), current.splitlines(), "committed", "current", lineterm="")
            )[:40]
        )
        pytest.fail(f"db/schema.sql is not current; run `make schema`:\n{diff}")


def test_schema_sql_names_every_table_of_the_migrations() -> None:
    text = SCHEMA_FILE.read_text()
    for table in ("tenant.cluster_listing", "tenant.infrastructure_resources", "tenant.platform_overview()"):
        assert table in text
