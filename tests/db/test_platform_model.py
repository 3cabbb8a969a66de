"""fleet inventory's migrations apply onto Fundament's database as Fundament has it, and onto nothing less.

The stand-in (db/fundament/tenant_model.sql) is Fundament's tenant schema at its version 33. The
migrations check what they rely on before adding anything: a database missing any of it is refused
with a message naming every missing object, and nothing is applied. They add only their own objects:
every constraint and trigger of Fundament's is as it was, and `public.schema_migrations` still says 33.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from common.organizations import SYSTEM_ORGANIZATION_ID, SYSTEM_ORGANIZATION_NAME
from db.migrate import MigrationError, applied_versions, apply_platform_model, migrate
from fleetctl.main import main
from tests.fixtures.postgres import TestDatabase

# What the baseline relies on, each removed in turn (the column list is the check's, db/migrations/0001).
RELIED_ON = {
    "table tenant.organizations": "DROP TABLE tenant.organizations CASCADE",
    "table tenant.clusters": "DROP TABLE tenant.clusters CASCADE",
    "table tenant.node_pools": "DROP TABLE tenant.node_pools CASCADE",
    "table tenant.projects": "DROP TABLE tenant.projects CASCADE",
    "table tenant.namespaces": "DROP TABLE tenant.namespaces CASCADE",
    "table tenant.cluster_outbox": "DROP TABLE tenant.cluster_outbox CASCADE",
    "column tenant.clusters.shoot_status": "ALTER TABLE tenant.clusters DROP COLUMN shoot_status",
    "column tenant.clusters.shoot_status_message": "ALTER TABLE tenant.clusters DROP COLUMN shoot_status_message",
    "column tenant.clusters.shoot_status_updated": "ALTER TABLE tenant.clusters DROP COLUMN shoot_status_updated",
    "column tenant.clusters.outbox_status": "ALTER TABLE tenant.clusters DROP COLUMN outbox_status",
    "column tenant.clusters.outbox_retries": "ALTER TABLE tenant.clusters DROP COLUMN outbox_retries",
    "column tenant.clusters.outbox_error": "ALTER TABLE tenant.clusters DROP COLUMN outbox_error",
    "column tenant.clusters.kubernetes_version": "ALTER TABLE tenant.clusters DROP COLUMN kubernetes_version",
    "column tenant.organizations.alias": "ALTER TABLE tenant.organizations DROP COLUMN alias",
    "column tenant.node_pools.autoscale_min": "ALTER TABLE tenant.node_pools DROP COLUMN autoscale_min CASCADE",
    "column tenant.projects.cluster_id": "ALTER TABLE tenant.projects DROP COLUMN cluster_id CASCADE",
    "column tenant.namespaces.project_id": "ALTER TABLE tenant.namespaces DROP COLUMN project_id CASCADE",
    "column tenant.cluster_outbox.processed": "ALTER TABLE tenant.cluster_outbox DROP COLUMN processed",
    "the system organization": "DELETE FROM tenant.organizations WHERE name = 'system'",
}
# Each check's own catalog fingerprint of Fundament's objects: constraints and triggers, by table.
FUNDAMENT_OBJECTS = """
SELECT conrelid::regclass::text, conname, pg_catalog.pg_get_constraintdef(oid)
FROM pg_catalog.pg_constraint
WHERE connamespace IN ('tenant'::regnamespace, 'authz'::regnamespace) AND conname NOT LIKE 'fleet\\_%%'
  -- PostgreSQL 18 lists NOT NULL as constraints: the one of the column FUN-23 adds is ours.
  AND conname <> 'organizations_listed_publicly_not_null'
  AND conrelid IN (SELECT oid FROM pg_catalog.pg_class WHERE relname IN
      ('organizations', 'clusters', 'node_pools', 'projects', 'namespaces', 'cluster_outbox', 'cluster_events',
       'outbox'))
UNION ALL
SELECT tgrelid::regclass::text, tgname, pg_catalog.pg_get_triggerdef(oid)
FROM pg_catalog.pg_trigger
WHERE NOT tgisinternal AND tgname NOT LIKE 'fleet\\_%%'
  AND tgrelid IN (SELECT oid FROM pg_catalog.pg_class WHERE relnamespace IN
      ('tenant'::regnamespace, 'authz'::regnamespace) AND relname IN
      ('organizations', 'clusters', 'node_pools', 'projects', 'namespaces', 'cluster_outbox', 'cluster_events'))
ORDER BY 1, 2, 3
"""


@pytest.fixture
def fundament(empty_database: TestDatabase) -> Iterator[TestDatabase]:
    """Fundament's database (the stand-in), without fleet inventory."""
    assert apply_platform_model(empty_database.dsn())
    yield empty_database


@pytest.mark.parametrize("missing", list(RELIED_ON), ids=list(RELIED_ON))
def test_a_database_without_what_it_relies_on_is_refused_naming_it(fundament: TestDatabase, missing: str) -> None:
    with fundament.admin() as conn:
        conn.execute(RELIED_ON[missing])
    with pytest.raises(MigrationError) as refused:
        migrate(fundament.dsn())
    assert missing in str(refused.value)
    assert "0001_baseline.sql" in str(refused.value)
    with psycopg.connect(fundament.dsn()) as conn:
        assert applied_versions(conn) == {}
        assert conn.execute("SELECT to_regclass('tenant.cluster_snapshots')").fetchone() == (None,)


def test_an_empty_database_is_refused_naming_every_table(empty_database: TestDatabase) -> None:
    with pytest.raises(MigrationError) as refused:
        migrate(empty_database.dsn())
    for table in ("organizations", "clusters", "node_pools", "projects", "namespaces", "cluster_outbox"):
        assert f"table tenant.{table}" in str(refused.value)


def test_it_adds_only_its_own_objects_and_never_writes_fundaments_version(fundament: TestDatabase) -> None:
    with fundament.admin() as conn:
        before = conn.execute(FUNDAMENT_OBJECTS).fetchall()
        assert conn.execute("SELECT version, dirty FROM public.schema_migrations").fetchall() == [(33, False)]
    migrate(fundament.dsn())
    with fundament.admin() as conn:
        assert conn.execute(FUNDAMENT_OBJECTS).fetchall() == before
        assert conn.execute("SELECT version, dirty FROM public.schema_migrations").fetchall() == [(33, False)]
        # What it added to Fundament's tables is named fleet_… (and the one column FUN-23 names).
        ours = conn.execute(
            """SELECT c.relname, a.attname FROM pg_catalog.pg_attribute AS a
               JOIN pg_catalog.pg_class AS c ON c.oid = a.attrelid
               WHERE c.relnamespace = 'tenant'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
                 AND c.relname = 'organizations' ORDER BY a.attnum"""
        ).fetchall()
        assert [name for _, name in ours][-1] == "listed_publicly"
        foreign_names = conn.execute(
            """SELECT i.indexrelid::regclass::text FROM pg_catalog.pg_index AS i
               JOIN pg_catalog.pg_class AS t ON t.oid = i.indrelid
               WHERE t.relnamespace = 'tenant'::regnamespace
                 AND t.relname IN ('organizations', 'clusters', 'node_pools', 'projects', 'namespaces',
                                   'cluster_outbox')
                 AND i.indexrelid::regclass::text NOT LIKE 'tenant.fleet\\_%%'"""
        ).fetchall()
    stand_in = {
        name
        for (name,) in foreign_names
        if not str(name).startswith(
            (
                "tenant.organizations_",
                "tenant.clusters_",
                "tenant.node_pools_",
                "tenant.projects_",
                "tenant.namespaces_",
                "tenant.cluster_outbox_",
            )
        )
    }
    assert stand_in == set(), "an index of ours on Fundament's tables is not named fleet_…"


def test_the_python_system_organization_is_the_sql_one(database: TestDatabase) -> None:
    with database.admin() as conn:
        row = conn.execute(
            "SELECT o.id, o.name FROM tenant.organizations AS o WHERE o.id = tenant.system_organization_id()"
        ).fetchone()
    assert row == (SYSTEM_ORGANIZATION_ID, SYSTEM_ORGANIZATION_NAME)
    assert str(SYSTEM_ORGANIZATION_ID) == "019b4000-0000-7000-8000-000000000000"


def test_the_migration_job_statement_alone_applies_onto_the_stand_in(fundament: TestDatabase) -> None:
    """What the chart's Job runs (`fleet db migrate`, no stand-in) onto Fundament's database."""
    assert main(["db", "migrate", "--dsn", fundament.dsn()]) == 0
    with psycopg.connect(fundament.dsn()) as conn:
        assert max(applied_versions(conn)) >= 1
        tables = conn.execute(
            sql.SQL("SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = {}").format(sql.Literal("tenant"))
        ).fetchone()
    assert tables is not None and int(tables[0]) > 10
