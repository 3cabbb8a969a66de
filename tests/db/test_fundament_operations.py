"""Fundament's own operations go through whatever fleet inventory holds, and what is kept reads after.

funops deletes an organization for good with `DELETE FROM tenant.organizations WHERE name = $1`
(Fundament can, once no cluster refers to it: its foreign keys are ON DELETE NO ACTION). Every table
of ours that can hold rows of an organization without a cluster holds some here: its totals (derived,
they go with it), its listing audit, its drift findings, its fleet history and the shoots that named it
(records, they stay and read without it). Soft deletes and Fundament's delete order (leaves first)
pass through our triggers as well.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid4

import psycopg
import pytest
from psycopg.types.json import Jsonb

from db import provisioning
from tests.fixtures.postgres import TestDatabase

# funops' OrganizationDelete, exactly (funops/pkg/db/organization.sql).
FUNOPS_ORGANIZATION_DELETE = "DELETE FROM tenant.organizations WHERE name = $1"
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def populate(conn: psycopg.Connection[tuple[object, ...]], name: str) -> UUID:
    """An organization that once had a cluster (deleted and moved away since) and rows of ours about it."""
    organization = uuid4()
    conn.execute(
        "INSERT INTO tenant.organizations (id, name, alias, listed_publicly) VALUES (%s, %s, 'Doomed', true)",
        (organization, name),
    )
    conn.execute("UPDATE tenant.organizations SET listed_publicly = false WHERE id = %s", (organization,))
    # Its totals row (the listing's refresh writes it when any of its clusters is written).
    conn.execute("SELECT tenant.refresh_organization_totals(ARRAY[%s]::uuid[])", (organization,))
    shoot = uuid4()
    conn.execute(
        "INSERT INTO tenant.gardener_shoots (uid, name, namespace, cluster_label, organization_label,"
        " organization_id, kubernetes_version, region, created, first_seen, last_seen)"
        " VALUES (%s, 'lost', 'garden-doomed', 'not-a-uuid', %s, %s, '1.31.2', 'eu', %s, %s, %s)",
        (shoot, str(organization), organization, T0, T0, T0),
    )
    conn.execute(
        "INSERT INTO tenant.drift_findings (kind, subject, organization_id, details, first_detected, last_detected)"
        " VALUES ('unlabeled_shoot', %s, %s, %s, %s, %s)",
        (
            str(shoot),
            organization,
            Jsonb({"shoot": {"name": "lost"}, "organization": {"id": str(organization), "name": name}}),
            T0,
            T0,
        ),
    )
    conn.execute(
        "INSERT INTO tenant.fleet_history (resolution, organization_id, at, clusters, clusters_by_status, nodes,"
        " ready_nodes, pods, cpu_allocatable_millicores, memory_allocatable_bytes, open_findings_by_kind)"
        " VALUES ('hour', %s, %s, 1, '{}', 3, 3, 40, 4000, 1024, '{}')",
        (organization, T0),
    )
    return organization


def counts(conn: psycopg.Connection[tuple[object, ...]], organization: UUID) -> dict[str, int]:
    tables = {
        "organization_totals": "organization_id",
        "organization_listing_changes": "organization_id",
        "drift_findings": "organization_id",
        "fleet_history": "organization_id",
        "gardener_shoots": "organization_id",
    }
    found = {}
    for table, column in tables.items():
        row = conn.execute(f"SELECT count(*) FROM tenant.{table} WHERE {column} = %s", (organization,)).fetchone()
        found[table] = int(str(row[0])) if row else 0
    return found


def test_funops_hard_delete_goes_through_and_the_records_stay(database: TestDatabase) -> None:
    with database.admin() as conn:
        organization = populate(conn, "doomed")
        before = counts(conn, organization)
    assert all(before.values()), f"every table of ours holds a row of the organization: {before}"

    # funops runs it with its own (superuser) connection and a bound parameter.
    with psycopg.connect(database.dsn()) as conn:
        deleted = conn.execute(FUNOPS_ORGANIZATION_DELETE.replace("$1", "%s"), ("doomed",), prepare=True).rowcount
    assert deleted == 1

    with database.admin() as conn:
        after = counts(conn, organization)
        changes = conn.execute(
            "SELECT organization_name, organization_alias, listed_publicly FROM tenant.organization_listing_changes"
            " WHERE organization_id = %s ORDER BY changed, listed_publicly",
            (organization,),
        ).fetchall()
        finding = conn.execute(
            "SELECT details -> 'organization' ->> 'name' FROM tenant.drift_findings WHERE organization_id = %s",
            (organization,),
        ).fetchone()
    assert after == {**before, "organization_totals": 0}
    assert sorted(changes) == [("doomed", "Doomed", False), ("doomed", "Doomed", True)]
    assert finding == ("doomed",)


def test_fundaments_delete_order_and_soft_deletes_pass_our_triggers(seeded_database: TestDatabase) -> None:
    """Leaves first: a cluster with live projects is refused by Fundament's own trigger, not by ours."""
    with seeded_database.admin() as conn:
        cluster = conn.execute(
            "SELECT c.id FROM tenant.clusters AS c JOIN tenant.projects AS p ON p.cluster_id = c.id"
            " WHERE c.deleted IS NULL AND p.deleted IS NULL AND c.organization_id <> tenant.system_organization_id()"
            " LIMIT 1"
        ).fetchone()
        assert cluster is not None
        with pytest.raises(psycopg.errors.RaiseException, match="Cannot delete cluster with undeleted projects"):
            conn.execute("UPDATE tenant.clusters SET deleted = now() WHERE id = %s", cluster)
        conn.execute(
            "UPDATE tenant.namespaces SET deleted = now() WHERE deleted IS NULL AND project_id IN"
            " (SELECT id FROM tenant.projects WHERE cluster_id = %s)",
            cluster,
        )
        conn.execute("UPDATE tenant.projects SET deleted = now() WHERE deleted IS NULL AND cluster_id = %s", cluster)
        conn.execute("UPDATE tenant.clusters SET deleted = now() WHERE id = %s", cluster)
        provisioning.record_shoot_status(conn, str(cluster[0]), "deleting", at=T0 + timedelta(days=1))
        status = conn.execute("SELECT status, projects, namespaces FROM tenant.cluster_listing WHERE id = %s", cluster)
        assert status.fetchone() == ("deleting", 0, 0)
