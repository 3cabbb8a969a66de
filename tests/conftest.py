"""Fixture modules are plugins (psycopg's `fix_*.py` style), not one giant conftest."""

pytest_plugins = [
    "tests.fixtures.tools",  # first: the other plugins import it
    "tests.fixtures.parallel",
    "tests.fixtures.postgres",
    "tests.fixtures.fleet_api",
    "tests.fixtures.collector",
    "tests.fixtures.sim",
    "tests.fixtures.browser",
    "tests.fixtures.pages",
    "tests.fixtures.replication",
]
