"""The plan of every ListClusters filter and order page on a fleet of 10,000 clusters: no sequential
scan over clusters, and SearchNamespaces' plan none over namespaces.

Plans are read with EXPLAIN (FORMAT JSON) as the service's role, the planner's settings as they are
(enable_seqscan on), the statement and parameters exactly as the service runs them, after ANALYZE.
A fleet this size makes a sequential scan of clusters a real choice for the planner, so a missing
index, statistic or a filter it cannot push down shows here as a Seq Scan node.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg import sql

from db.seed.write import write_fleet
from fleet_description.generate import FleetSize, generate
from services.fleet.parse.search import namespace_patterns
from services.fleet.queries import clusters, search
from tests.fixtures.fleet_api import write_observations
from tests.fixtures.kept_fleet import kept_database
from tests.fixtures.postgres import TestDatabase

# A large fleet (built once and kept, but built anew whenever the schema or the generator changes).
pytestmark = pytest.mark.slow
ROLE = "fun_platform_admin_api"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
PLANS_SIZE = FleetSize("plans", 2000, 5, 1, 1, 2, 0.3)
# Tables a page must never read whole: the big ones, and the listing that pages ListClusters.
BIG_TABLES = {"clusters", "namespaces", "cluster_listing", "cluster_search", "projects"}


PLANS_SEED = 3


def _write_plans_fleet(conn: psycopg.Connection[Any]) -> None:
    fleet = generate(PLANS_SIZE, seed=PLANS_SEED)
    write_fleet(conn, fleet)
    write_observations(conn, fleet)
    conn.execute("ANALYZE")


@pytest.fixture(scope="module")
def plans_database() -> Iterator[TestDatabase]:
    """A clone of the plan fleet, which is built once and kept between runs (tests/fixtures/kept_fleet.py)."""
    with kept_database(
        "plans",
        _write_plans_fleet,
        shape=(PLANS_SIZE, PLANS_SEED),
        shaped_by=(generate, write_fleet, write_observations),
    ) as db:
        yield db


@pytest.fixture(scope="module")
def plan_conn(plans_database: TestDatabase) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(plans_database.dsn(ROLE), autocommit=True) as conn:
        assert conn.execute("SHOW enable_seqscan").fetchone() == ("on",)
        yield conn


def _plan_nodes(conn: psycopg.Connection[Any], statement: str, params: dict[str, object]) -> list[dict[str, Any]]:
    explain = sql.SQL("EXPLAIN (FORMAT JSON) ") + sql.SQL(statement)
    row = conn.execute(explain, params, prepare=False).fetchone()
    assert row is not None
    nodes: list[dict[str, Any]] = []

    def visit(node: dict[str, Any]) -> None:
        nodes.append(node)
        for child in node.get("Plans", ()):
            visit(child)

    visit(row[0][0]["Plan"])
    return nodes


def sequential_scans(conn: psycopg.Connection[Any], statement: str, params: dict[str, object]) -> set[str]:
    return {
        str(node["Relation Name"]) for node in _plan_nodes(conn, statement, params) if node["Node Type"] == "Seq Scan"
    }


def relations_read(conn: psycopg.Connection[Any], statement: str, params: dict[str, object]) -> set[str]:
    return {str(node["Relation Name"]) for node in _plan_nodes(conn, statement, params) if "Relation Name" in node}


def _organization_id(conn: psycopg.Connection[Any]) -> uuid.UUID:
    row = conn.execute(
        "SELECT id FROM tenant.organizations WHERE deleted IS NULL AND id <> tenant.system_organization_id()"
        " ORDER BY name LIMIT 1 OFFSET 7"
    ).fetchone()
    assert row is not None
    return uuid.UUID(str(row[0]))


FILTERS: dict[str, dict[str, Any]] = {
    "none": {},
    "organization": {"organization_id": "ORG"},
    "status common": {"statuses": ("running",)},
    "status rare": {"statuses": ("lost",)},
    "statuses": {"statuses": ("error", "unhealthy")},
    "status and region": {"statuses": ("running",), "region": "eu-west-1"},
    "status and organization": {"statuses": ("running",), "organization_id": "ORG"},
    "needs attention": {"needs_attention": True},
    "stale": {"stale": True},
    "region": {"region": "eu-west-1"},
    "include deleted": {"include_deleted": True},
    "query": {"either_pattern": "%prod-1%"},
    "organization/cluster": {"organization_pattern": "%acme%", "cluster_pattern": "pr%"},
}
# Orders whose key is on the cluster or organization row: every filter is index-served with them.
ROW_ORDERS = (clusters.ClusterOrder.NAME, clusters.ClusterOrder.ORGANIZATION)


def _matrix() -> list[Any]:
    return [
        pytest.param(name, order, descending, id=f"{name}-{order}-{'desc' if descending else 'asc'}")
        for name in sorted(FILTERS)
        for order in clusters.ClusterOrder
        for descending in (False, True)
    ]


def _middle_key(order: clusters.ClusterOrder) -> tuple[Any, ...]:
    """A page token's key somewhere in the middle of `order` (a later page's plan)."""
    value: dict[clusters.ClusterOrder, Any] = {
        clusters.ClusterOrder.ORGANIZATION: "m",
        clusters.ClusterOrder.PODS: 400,
        clusters.ClusterOrder.NODES: 10,
        clusters.ClusterOrder.OBSERVED: NOW - timedelta(minutes=30),
        clusters.ClusterOrder.STATUS_SINCE: NOW - timedelta(days=30),
    }
    if order is clusters.ClusterOrder.NAME:
        return ("m", uuid.UUID(int=1))
    return (value[order], "prod-3", uuid.UUID(int=1))


def _clock(conn: psycopg.Connection[Any]) -> clusters.InventoryClock:
    """The inventory clock as the service reads it (clusters.inventory_clock) for the stale filter."""
    row = conn.execute(clusters.QUERIES["inventory_clock"].sql, prepare=False).fetchone()
    return clusters.InventoryClock() if row is None else clusters.InventoryClock(row[0], row[1])


@pytest.mark.parametrize(("name", "order", "descending"), _matrix())
def test_no_page_reads_all_clusters(
    plan_conn: psycopg.Connection[Any], name: str, order: clusters.ClusterOrder, descending: bool
) -> None:
    fields = dict(FILTERS[name])
    if fields.get("organization_id") == "ORG":
        fields["organization_id"] = _organization_id(plan_conn)
    filters = clusters.ClusterFilters(order=order, descending=descending, **fields)
    for after in (
        None,
        _middle_key(order),
    ):
        statement, params = clusters.cluster_page_query(
            filters, now=NOW, after=after, limit=101, clock=_clock(plan_conn)
        )
        assert sequential_scans(plan_conn, statement, params) & BIG_TABLES == set()


@pytest.mark.parametrize("order", [o for o in clusters.ClusterOrder if o not in ROW_ORDERS], ids=str)
def test_snapshot_orders_within_one_organization_read_only_its_clusters(
    plan_conn: psycopg.Connection[Any], order: clusters.ClusterOrder
) -> None:
    filters = clusters.ClusterFilters(order=order, organization_id=_organization_id(plan_conn))
    statement, params = clusters.cluster_page_query(filters, now=NOW, after=None, limit=101)
    assert sequential_scans(plan_conn, statement, params) & BIG_TABLES == set()


@pytest.mark.parametrize(
    "query",
    # A common name, a prefix, a unique Kubernetes name's start and end, a name nobody has, a prefix
    # of a project's part, and a query that starts with the separator.
    ["api", "wo", "web0", "frontend-9", "zzzz", "-worker", "web0-api-0"],
)
def test_namespace_search_reads_no_whole_table(plan_conn: psycopg.Connection[Any], query: str) -> None:
    patterns = namespace_patterns("query", query)
    wanted = search.NamespaceSearch(patterns.name, patterns.name_start, patterns.project, patterns.project_names)
    for after in (None, ("m", uuid.UUID(int=1))):
        statement, params = search.namespace_search_query(wanted, after=after, limit=101)
        assert sequential_scans(plan_conn, statement, params) & BIG_TABLES == set()


@pytest.mark.parametrize("name", sorted(name for name in FILTERS if "pattern" not in " ".join(FILTERS[name])))
def test_a_page_without_a_query_reads_no_search_key(plan_conn: psycopg.Connection[Any], name: str) -> None:
    # The search keys' table is joined for the query only: without one the planner removes the join.
    fields = dict(FILTERS[name])
    if fields.get("organization_id") == "ORG":
        fields["organization_id"] = _organization_id(plan_conn)
    statement, params = clusters.cluster_page_query(
        clusters.ClusterFilters(**fields), now=NOW, after=None, limit=101, clock=_clock(plan_conn)
    )
    read = relations_read(plan_conn, statement, params)
    assert "cluster_listing" in read and "cluster_search" not in read


def test_a_page_with_a_query_reads_the_search_keys(plan_conn: psycopg.Connection[Any]) -> None:
    statement, params = clusters.cluster_page_query(
        clusters.ClusterFilters(either_pattern="%prod-1%"), now=NOW, after=None, limit=101, clock=_clock(plan_conn)
    )
    assert "cluster_search" in relations_read(plan_conn, statement, params)


def test_the_fleet_is_large_enough_to_matter(plans_database: TestDatabase) -> None:
    with plans_database.admin() as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM tenant.clusters), (SELECT count(*) FROM tenant.namespaces)"
        ).fetchone()
    assert row is not None and int(str(row[0])) >= 10_000 and int(str(row[1])) >= 20_000
