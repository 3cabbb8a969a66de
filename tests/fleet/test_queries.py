"""Every named block of services/fleet/queries/*.sql runs against the migrated schema as fun_platform_admin_api.

This does sqlc's job: a renamed column, a wrong cast or a missing grant fails here, before any API
test. Each typed function of the query modules is called once on an empty database, with filters set
so that every optional branch is planned with a value.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from services.fleet.queries import base, clusters, findings, ledger, organizations, search, summary, trends, usage
from tests.fixtures.postgres import TestDatabase

ROLE = "fun_platform_admin_api"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
SOME_ID = uuid.UUID("018f0000-0000-7000-8000-000000000001")

Conn = psycopg.AsyncConnection[Any]

USAGE_FILTERS = {
    aggregate: usage.UsageFilters(
        start=NOW - timedelta(days=30),
        end=NOW,
        step_seconds=86400,
        aggregate=aggregate,
        organization_id=SOME_ID,
        cluster_id=SOME_ID,
        resource_type="kubernetes.node",
        include_non_billable=True,
    )
    for aggregate in usage.UsageAggregate
}
USAGE_AFTER: dict[usage.UsageAggregate, tuple[Any, ...]] = {
    usage.UsageAggregate.ORGANIZATION: ("acme", SOME_ID, "kubernetes.node"),
    usage.UsageAggregate.CLUSTER: ("acme", "prod", SOME_ID, "kubernetes.node"),
    usage.UsageAggregate.RESOURCE_TYPE: ("kubernetes.node",),
}

CALLS: dict[str, Callable[[Conn], Awaitable[object]]] = {
    "begin_consistent_read": base.begin_consistent_read,
    "list_organizations": lambda conn: organizations.list_organizations(
        conn, filters=organizations.OrganizationFilters(pattern="%acm%"), after=("acme", SOME_ID), limit=3
    ),
    "list_clusters": lambda conn: clusters.list_clusters(
        conn,
        filters=clusters.ClusterFilters(
            organization_id=SOME_ID,
            statuses=("running", "lost"),
            needs_attention=True,
            stale=True,
            region="eu-west-1",
            include_deleted=True,
            either_pattern="%pro%",
            cluster_pattern="pr%",
            organization_pattern="%acm%",
        ),
        now=NOW,
        after=("prod", SOME_ID),
        limit=3,
    ),
    "get_cluster": lambda conn: clusters.get_cluster(conn, cluster_id=SOME_ID),
    "cluster_node_pools": lambda conn: clusters.cluster_node_pools(conn, cluster_id=SOME_ID),
    "cluster_projects": lambda conn: clusters.cluster_projects(conn, cluster_id=SOME_ID),
    "cluster_namespaces": lambda conn: clusters.cluster_namespaces(conn, cluster_id=SOME_ID),
    "cluster_ledger_counts": lambda conn: ledger.cluster_ledger_counts(conn, cluster_id=SOME_ID),
    "list_drift_findings": lambda conn: findings.list_drift_findings(
        conn,
        filters=findings.FindingFilters(
            kind="orphan_shoot", organization_id=SOME_ID, cluster_id=SOME_ID, include_resolved=True
        ),
        after=(NOW, SOME_ID),
        limit=3,
    ),
    "list_infrastructure_resources": lambda conn: ledger.list_infrastructure_resources(
        conn,
        filters=ledger.ResourceFilters(
            cluster_id=SOME_ID, resource_type="kubernetes.node", billable=True, include_destroyed=True
        ),
        after=(SOME_ID, "kubernetes.node", "", "node-1", SOME_ID),
        limit=3,
    ),
    "search_namespaces": lambda conn: search.search_namespaces(
        conn, search=search.NamespaceSearch("%web%", "web%", "%ab", "cd%"), after=("web", SOME_ID), limit=3
    ),
    "inventory_clock": clusters.inventory_clock,
    "latest_fleet_totals": summary.latest_fleet_totals,
    "fleet_totals": lambda conn: summary.fleet_totals(conn, now=NOW),
    "fleet_status_inputs": summary.fleet_status_inputs,
    "open_findings_by_kind": summary.open_findings_by_kind,
    "loop_freshness": summary.loop_freshness,
    "cluster_resolved_findings": lambda conn: findings.cluster_resolved_findings(conn, cluster_id=SOME_ID, limit=3),
    "standby_replay": summary.standby_replay,
    "list_finding_history": lambda conn: findings.list_finding_history(
        conn,
        filters=findings.HistoryFilters(
            kind="orphan_shoot", organization_id=SOME_ID, cluster_id=SOME_ID, open_only=True
        ),
        after=(NOW, NOW, "orphan_shoot", "x"),
        now=NOW,
        limit=3,
    ),
    "organization_listing_changes": lambda conn: organizations.organization_listing_changes(
        conn, organization_id=SOME_ID, limit=3
    ),
    "fleet_trends": lambda conn: trends.fleet_trends(
        conn, trends.TrendRange(NOW, NOW + timedelta(days=1), 60, SOME_ID)
    ),
    "usage_groups_by_organization": lambda conn: usage.usage_groups(
        conn,
        filters=USAGE_FILTERS[usage.UsageAggregate.ORGANIZATION],
        now=NOW,
        after=USAGE_AFTER[usage.UsageAggregate.ORGANIZATION],
        limit=3,
    ),
    "usage_groups_by_cluster": lambda conn: usage.usage_groups(
        conn,
        filters=USAGE_FILTERS[usage.UsageAggregate.CLUSTER],
        now=NOW,
        after=USAGE_AFTER[usage.UsageAggregate.CLUSTER],
        limit=3,
    ),
    "usage_groups_by_resource_type": lambda conn: usage.usage_groups(
        conn,
        filters=USAGE_FILTERS[usage.UsageAggregate.RESOURCE_TYPE],
        now=NOW,
        after=USAGE_AFTER[usage.UsageAggregate.RESOURCE_TYPE],
        limit=3,
    ),
    "usage_steps": lambda conn: usage.usage_steps(
        conn,
        filters=USAGE_FILTERS[usage.UsageAggregate.CLUSTER],
        now=NOW,
        groups=[usage.UsageGroupRow(SOME_ID, "acme", SOME_ID, "prod", "kubernetes.node")],
    ),
}


@pytest.fixture
async def conn(database: TestDatabase) -> AsyncIterator[Conn]:
    async with await psycopg.AsyncConnection.connect(database.dsn(ROLE)) as connection:
        yield connection


def test_every_block_has_a_call_here() -> None:
    assert set(CALLS) == set(base.query_names())


@pytest.mark.parametrize("name", sorted(CALLS))
async def test_block_runs_as_the_admin_role(conn: Conn, name: str) -> None:
    await CALLS[name](conn)
    await conn.rollback()


# A key after which each order continues: its first part has the order's type.
ORDER_KEYS: dict[str, tuple[object, ...]] = {
    "name": ("prod", SOME_ID),
    "organization": ("acme", "prod", SOME_ID),
    "alias": ("Acme", "acme", SOME_ID),
    "pods": (12, "prod", SOME_ID),
    "nodes": (3, "prod", SOME_ID),
    "observed": (NOW, "prod", SOME_ID),
    "status_since": (base.NEVER, "prod", SOME_ID),
    "created": (NOW, "acme", SOME_ID),
}


def test_every_order_block_belongs_to_an_order() -> None:
    expected = {f"clusters_by_{order}_{d}" for order in clusters.ClusterOrder for d in ("asc", "desc")}
    expected |= {f"organizations_by_{order}_{d}" for order in organizations.OrganizationOrder for d in ("asc", "desc")}
    assert set(base.ORDERS) == expected


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("order", list(clusters.ClusterOrder))
async def test_every_cluster_order_runs_first_and_later_pages(
    conn: Conn, order: clusters.ClusterOrder, descending: bool
) -> None:
    filters = clusters.ClusterFilters(order=order, descending=descending, either_pattern="%pro%")
    for after in (None, ORDER_KEYS[order.value]):
        assert await clusters.list_clusters(conn, filters=filters, now=NOW, after=after, limit=3) == []


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("order", list(organizations.OrganizationOrder))
async def test_every_organization_order_runs_first_and_later_pages(
    conn: Conn, order: organizations.OrganizationOrder, descending: bool
) -> None:
    filters = organizations.OrganizationFilters(order=order, descending=descending)
    for after in (None, ORDER_KEYS[order.value]):
        assert await organizations.list_organizations(conn, filters=filters, after=after, limit=3) == []


async def test_first_pages_on_an_empty_platform_are_empty(conn: Conn) -> None:
    assert await organizations.list_organizations(conn, after=None, limit=10) == []
    assert await clusters.list_clusters(conn, filters=clusters.ClusterFilters(), now=NOW, after=None, limit=10) == []
    assert await findings.list_drift_findings(conn, filters=findings.FindingFilters(), after=None, limit=10) == []
    assert await findings.cluster_open_findings(conn, cluster_id=SOME_ID) == []
    empty = ledger.ResourceFilters()
    assert await ledger.list_infrastructure_resources(conn, filters=empty, after=None, limit=10) == []
    totals = await summary.fleet_totals(conn, now=NOW)
    assert (totals.organizations, totals.clusters, totals.namespaces) == (0, 0, 0)


async def test_the_role_cannot_write(conn: Conn) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        await conn.execute("UPDATE tenant.organizations SET alias = 'x'")


async def test_the_organization_list_names_its_columns_as_the_row_orders_its_fields(conn: Conn) -> None:
    """list_organizations builds its rows by position: the block's columns must be the row's fields. It
    loads the times as the int8 microseconds a timestamptz is on the wire, so they must stay timestamptz."""
    statement = organizations.organization_page_statement(organizations.OrganizationFilters())
    async with conn.cursor() as cur:
        await cur.execute(
            statement,
            {
                "pattern": None,
                "organization_id": None,
                "limit": 1,
                "first_page": True,
                "after_value": None,
                "after_name": None,
                "after_id": None,
            },
            prepare=False,
        )
        assert cur.description is not None
        assert [column.name for column in cur.description] == list(organizations.OrganizationRow._fields)
        types = {column.name: conn.adapters.types[column.type_code].name for column in cur.description}
        assert (types["id"], types["created_micros"], types["deleted_micros"]) == ("text", "timestamptz", "timestamptz")
