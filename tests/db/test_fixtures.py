"""The test database fixtures themselves: a migrated clone per test, connectable as every role."""

from common.database import SCHEMA_VERSION
from db.migrate import latest_version
from tests.fixtures.postgres import TestDatabase


def test_clone_is_migrated_to_the_latest_version(database: TestDatabase) -> None:
    with database.admin() as conn:
        row = conn.execute("SELECT max(version) FROM fleet_meta.schema_migrations").fetchone()
    assert row is not None and row[0] == latest_version()


def test_services_need_exactly_the_latest_migration() -> None:
    assert latest_version() == SCHEMA_VERSION
