"""Search and sort of ListClusters and ListOrganizations, and SearchNamespaces, over real sockets.

Every order in both directions walks the whole list in the order the database itself gives for the
documented key (the admin connection, ORDER BY written out here), so keyset conditions, first-page
folding and the key of a row in pages.py must all agree. Queries find what they name, escape LIKE's
wildcards, and bad ones are INVALID_ARGUMENT; a token is bound to its order, direction and query.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fundament.fleet.v1 import fleet_pb2

from common import naming
from tests.fixtures.fleet_api import CallFailed, FleetApiUnderTest
from tests.fixtures.postgres import TestDatabase

LIVE_CLUSTERS = (
    "SELECT c.id FROM tenant.clusters c JOIN tenant.organizations o ON o.id = c.organization_id"
    " LEFT JOIN tenant.cluster_snapshots s ON s.cluster_id = c.id"
    " LEFT JOIN tenant.fleet_sync_state ss ON ss.cluster_id = c.id"
    " WHERE c.deleted IS NULL AND o.deleted IS NULL AND o.id <> tenant.system_organization_id()"
)
CLUSTER_KEYS: dict[int, list[str]] = {
    fleet_pb2.CLUSTER_ORDER_NAME: [],
    fleet_pb2.CLUSTER_ORDER_ORGANIZATION: ["o.name"],
    fleet_pb2.CLUSTER_ORDER_PODS: ["coalesce(s.pods, 0)"],
    fleet_pb2.CLUSTER_ORDER_NODES: ["coalesce(s.nodes, 0)"],
    fleet_pb2.CLUSTER_ORDER_OBSERVED: ["coalesce(s.observed, '-infinity')"],
    fleet_pb2.CLUSTER_ORDER_STATUS_SINCE: ["coalesce(ss.shoot_status_changed, '-infinity')"],
}
ORGANIZATION_KEYS: dict[int, list[str]] = {
    fleet_pb2.ORGANIZATION_ORDER_NAME: [],
    fleet_pb2.ORGANIZATION_ORDER_ALIAS: ["alias"],
    fleet_pb2.ORGANIZATION_ORDER_CREATED: ["created"],
}


def ordered_ids(database: TestDatabase, base: str, keys: list[str], names: list[str], descending: bool) -> list[str]:
    direction = " DESC" if descending else ""
    order = ", ".join(f"{key}{direction}" for key in keys + names)
    with database.admin() as conn:
        return [str(row[0]) for row in conn.execute(f"{base} ORDER BY {order}")]


async def walk(api: FleetApiUnderTest, method: str, items: str, size: int = 100, **fields: Any) -> list[str]:
    requests = {
        "ListClusters": fleet_pb2.ListClustersRequest,
        "ListOrganizations": fleet_pb2.ListOrganizationsRequest,
        "SearchNamespaces": fleet_pb2.SearchNamespacesRequest,
    }
    ids: list[str] = []
    token = ""
    while True:
        response = await api.call("grpc", method, requests[method](page_size=size, page_token=token, **fields))
        ids += [item.id for item in getattr(response, items)]
        token = response.next_page_token
        if not token:
            return ids


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("order", sorted(CLUSTER_KEYS), ids=fleet_pb2.ClusterOrder.Name)
async def test_every_cluster_order_walks_in_the_documented_order(
    shared_fleet_api: FleetApiUnderTest, order: int, descending: bool
) -> None:
    expected = ordered_ids(
        shared_fleet_api.database, LIVE_CLUSTERS, CLUSTER_KEYS[order], ["c.name", "c.id"], descending
    )
    assert len(expected) > 100
    assert await walk(shared_fleet_api, "ListClusters", "clusters", order=order, descending=descending) == expected


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("order", sorted(ORGANIZATION_KEYS), ids=fleet_pb2.OrganizationOrder.Name)
async def test_every_organization_order_walks_in_the_documented_order(
    shared_fleet_api: FleetApiUnderTest, order: int, descending: bool
) -> None:
    base = "SELECT id FROM tenant.organizations WHERE id <> tenant.system_organization_id()"
    expected = ordered_ids(shared_fleet_api.database, base, ORGANIZATION_KEYS[order], ["name", "id"], descending)
    found = await walk(
        shared_fleet_api, "ListOrganizations", "organizations", size=7, order=order, descending=descending
    )
    assert found == expected


def _one_cluster(database: TestDatabase) -> tuple[str, str, str, str]:
    """A live cluster with the rarest name of the platform: (id, name, org name, org alias)."""
    with database.admin() as conn:
        row = conn.execute(
            f"{LIVE_CLUSTERS.replace('SELECT c.id', 'SELECT c.id, c.name, o.name, o.alias')}"
            " ORDER BY (SELECT count(*) FROM tenant.clusters x WHERE strpos(x.name, c.name) > 0), c.id LIMIT 1"
        ).fetchone()
    assert row is not None
    return str(row[0]), str(row[1]), str(row[2]), str(row[3])


def _matching(database: TestDatabase, condition: str, *params: str) -> list[str]:
    with database.admin() as conn:
        return [str(row[0]) for row in conn.execute(f"{LIVE_CLUSTERS} AND ({condition}) ORDER BY c.name, c.id", params)]


async def test_a_unique_cluster_name_finds_that_cluster_in_any_case(shared_fleet_api: FleetApiUnderTest) -> None:
    cluster_id, name, _, _ = _one_cluster(shared_fleet_api.database)
    found = await walk(shared_fleet_api, "ListClusters", "clusters", query=f"  {name.upper()} ")
    assert cluster_id in found
    assert found == _matching(
        shared_fleet_api.database,
        "strpos(lower(c.name), %s) > 0 OR strpos(lower(o.name), %s) > 0 OR strpos(lower(o.alias), %s) > 0",
        *[name.lower()] * 3,
    )


async def test_organization_slash_cluster_matches_both_parts(shared_fleet_api: FleetApiUnderTest) -> None:
    cluster_id, name, organization, alias = _one_cluster(shared_fleet_api.database)
    by_name = await walk(shared_fleet_api, "ListClusters", "clusters", query=f"{organization}/{name}")
    by_alias = await walk(shared_fleet_api, "ListClusters", "clusters", query=f"{alias}/{name}")
    assert cluster_id in by_name
    assert by_name == _matching(
        shared_fleet_api.database,
        "strpos(lower(c.name), %s) > 0 AND (strpos(lower(o.name), %s) > 0 OR strpos(lower(o.alias), %s) > 0)",
        name.lower(),
        organization.lower(),
        organization.lower(),
    )
    assert cluster_id in by_alias
    whole_organization = await walk(shared_fleet_api, "ListClusters", "clusters", query=f"{organization}/")
    assert whole_organization == _matching(
        shared_fleet_api.database,
        "strpos(lower(o.name), %s) > 0 OR strpos(lower(o.alias), %s) > 0",
        organization.lower(),
        organization.lower(),
    )


async def test_a_short_query_matches_prefixes_only(shared_fleet_api: FleetApiUnderTest) -> None:
    _, name, _, _ = _one_cluster(shared_fleet_api.database)
    prefix = name[:2]
    found = await walk(shared_fleet_api, "ListClusters", "clusters", query=f"/{prefix}")
    assert found == _matching(shared_fleet_api.database, "starts_with(lower(c.name), %s)", prefix.lower())
    assert found


async def test_like_wildcards_in_a_query_match_themselves(shared_fleet_api: FleetApiUnderTest) -> None:
    # Names are DNS labels: no '%' or '_' in any of them, so a query made of wildcards finds nothing.
    for query in ("%%%", "___", "a_b", "%"):
        assert await walk(shared_fleet_api, "ListClusters", "clusters", query=query) == []
        assert await walk(shared_fleet_api, "ListOrganizations", "organizations", query=query) == []
        assert await walk(shared_fleet_api, "SearchNamespaces", "namespaces", query=query) == []


async def test_organizations_are_searched_by_name_and_alias(shared_fleet_api: FleetApiUnderTest) -> None:
    _, _, organization, alias = _one_cluster(shared_fleet_api.database)
    with shared_fleet_api.database.admin() as conn:
        row = conn.execute(
            "SELECT id FROM tenant.organizations WHERE name = %s AND deleted IS NULL", [organization]
        ).fetchone()
    assert row is not None
    organization_id = str(row[0])
    assert organization_id in await walk(shared_fleet_api, "ListOrganizations", "organizations", query=organization)
    assert organization_id in await walk(shared_fleet_api, "ListOrganizations", "organizations", query=alias.upper())


async def test_namespaces_are_found_with_their_cluster_and_organization(shared_fleet_api: FleetApiUnderTest) -> None:
    with shared_fleet_api.database.admin() as conn:
        row = conn.execute(
            "SELECT n.id, n.name, p.name, c.id, c.name, o.id, o.name, o.alias FROM tenant.namespaces n"
            " JOIN tenant.projects p ON p.id = n.project_id JOIN tenant.clusters c ON c.id = p.cluster_id"
            " JOIN tenant.organizations o ON o.id = c.organization_id WHERE n.deleted IS NULL AND p.deleted IS NULL"
            " AND c.deleted IS NULL AND o.deleted IS NULL AND o.id <> tenant.system_organization_id()"
            " ORDER BY n.id LIMIT 1"
        ).fetchone()
        assert row is not None
        expected = [
            str(r[0])
            for r in conn.execute(
                "SELECT n.id FROM tenant.namespaces n JOIN tenant.projects p ON p.id = n.project_id"
                " JOIN tenant.clusters c ON c.id = p.cluster_id JOIN tenant.organizations o ON o.id = c.organization_id"
                " WHERE n.deleted IS NULL AND p.deleted IS NULL AND c.deleted IS NULL AND o.deleted IS NULL"
                " AND o.id <> tenant.system_organization_id() AND strpos(lower(n.name), lower(%s)) > 0"
                " ORDER BY n.name, n.id",
                [row[1]],
            )
        ]
    response = await shared_fleet_api.call(
        "connect", "SearchNamespaces", fleet_pb2.SearchNamespacesRequest(query=str(row[1]).upper(), page_size=500)
    )
    match = next(m for m in response.namespaces if m.id == str(row[0]))
    assert (match.name, match.project_name, match.cluster_id, match.cluster_name) == (
        row[1],
        row[2],
        str(row[3]),
        row[4],
    )
    assert (match.organization_id, match.organization_name, match.organization_alias) == (str(row[5]), row[6], row[7])
    assert await walk(shared_fleet_api, "SearchNamespaces", "namespaces", size=7, query=str(row[1])) == expected


@pytest.mark.parametrize(
    ("method", "request_fields", "message"),
    [
        ("ListClusters", {"query": "x" * 101}, "at most 100"),
        ("ListClusters", {"query": "a/b/c"}, "at most one '/'"),
        ("ListClusters", {"query": "pro\x00d"}, "control characters"),
        ("ListClusters", {"order": 99}, "not a ClusterOrder"),
        ("ListOrganizations", {"order": 99}, "not an OrganizationOrder"),
        ("ListOrganizations", {"query": "y" * 101}, "at most 100"),
        ("SearchNamespaces", {}, "query is required"),
        ("SearchNamespaces", {"query": "   "}, "query is required"),
    ],
)
@pytest.mark.parametrize("protocol", ["grpc", "connect"])
async def test_bad_queries_and_orders_are_invalid_argument(
    shared_fleet_api: FleetApiUnderTest, protocol: str, method: str, request_fields: dict[str, Any], message: str
) -> None:
    requests = {
        "ListClusters": fleet_pb2.ListClustersRequest,
        "ListOrganizations": fleet_pb2.ListOrganizationsRequest,
        "SearchNamespaces": fleet_pb2.SearchNamespacesRequest,
    }
    with pytest.raises(CallFailed) as failed:
        await shared_fleet_api.call(protocol, method, requests[method](**request_fields))
    assert failed.value.code == "invalid_argument"
    assert message in failed.value.message


@pytest.mark.parametrize(
    "other",
    [
        {"order": fleet_pb2.CLUSTER_ORDER_NODES},
        {"order": fleet_pb2.CLUSTER_ORDER_PODS, "descending": True},
        {"order": fleet_pb2.CLUSTER_ORDER_PODS, "query": "prod"},
        {},
    ],
)
async def test_a_token_is_bound_to_its_order_direction_and_query(
    shared_fleet_api: FleetApiUnderTest, other: dict[str, Any]
) -> None:
    first = await shared_fleet_api.call(
        "grpc", "ListClusters", fleet_pb2.ListClustersRequest(page_size=5, order=fleet_pb2.CLUSTER_ORDER_PODS)
    )
    assert first.next_page_token
    with pytest.raises(CallFailed) as failed:
        await shared_fleet_api.call(
            "grpc",
            "ListClusters",
            fleet_pb2.ListClustersRequest(page_size=5, page_token=first.next_page_token, **other),
        )
    assert failed.value.code == "invalid_argument"


async def test_a_walk_by_pods_stays_consistent_while_snapshots_change(fleet_api: FleetApiUnderTest) -> None:
    """Between pages the last cluster seen moves to the far end of the order: every cluster still
    comes once at its place, none is skipped, and each moved one comes again at the end (ahead of
    the position, as keyset paging promises), in the order they moved."""
    database = fleet_api.database
    original = ordered_ids(database, LIVE_CLUSTERS, ["coalesce(s.pods, 0)"], ["c.name", "c.id"], False)
    ids: list[str] = []
    moved: list[str] = []
    token = ""
    while True:
        request = fleet_pb2.ListClustersRequest(page_size=50, page_token=token, order=fleet_pb2.CLUSTER_ORDER_PODS)
        response = await fleet_api.call("grpc", "ListClusters", request)
        ids += [c.id for c in response.clusters]
        token = response.next_page_token
        if not token:
            break
        with database.admin() as conn:
            changed = conn.execute(
                "UPDATE tenant.cluster_snapshots SET pods = 1000000 + %s WHERE cluster_id = %s",
                [len(moved), ids[-1]],
            ).rowcount
        if changed:
            moved.append(ids[-1])
    assert len(moved) > 3
    assert ids == original + moved


def _live_namespaces(database: TestDatabase) -> list[tuple[str, str, str]]:
    """(id, name, Kubernetes name) of every live namespace the search may return, by (name, id)."""
    with database.admin() as conn:
        rows = conn.execute(
            "SELECT n.id, n.name, p.name, p.id FROM tenant.namespaces n JOIN tenant.projects p ON p.id = n.project_id"
            " JOIN tenant.clusters c ON c.id = p.cluster_id JOIN tenant.organizations o ON o.id = c.organization_id"
            " WHERE n.deleted IS NULL AND p.deleted IS NULL AND c.deleted IS NULL AND o.deleted IS NULL"
            " AND o.id <> tenant.system_organization_id() ORDER BY n.name, n.id"
        ).fetchall()
    return [(str(r[0]), str(r[1]), naming.namespace_name(str(r[2]), uuid.UUID(str(r[3])), str(r[1]))) for r in rows]


def _kubernetes_name_queries(namespaces: list[tuple[str, str, str]]) -> list[str]:
    _, name, kubernetes = namespaces[len(namespaces) // 2]
    prefix = kubernetes[: naming.PROJECT_NAME_LENGTH + 2]
    return [
        kubernetes,  # the whole name, as an alert shows it
        kubernetes[8:16],  # across the '-': the prefix's hash part and the start of the name
        prefix[2:9],  # inside the prefix
        kubernetes[:2],  # a short query: what a name starts with
        "-" + name[:3],  # the name's start right after the prefix
        kubernetes.upper(),
    ]


async def test_namespaces_are_found_by_their_kubernetes_name(shared_fleet_api: FleetApiUnderTest) -> None:
    namespaces = _live_namespaces(shared_fleet_api.database)
    for query in _kubernetes_name_queries(namespaces):
        wanted = query.lower()

        def matches(name: str, kubernetes: str, wanted: str = wanted) -> bool:
            if len(wanted) < 3:
                return name.lower().startswith(wanted) or kubernetes.startswith(wanted)
            return wanted in name.lower() or wanted in kubernetes

        expected = [id_ for id_, name, kubernetes in namespaces if matches(name, kubernetes)]
        assert expected, query
        assert await walk(shared_fleet_api, "SearchNamespaces", "namespaces", size=5, query=query) == expected, query
    response = await shared_fleet_api.call(
        "grpc", "SearchNamespaces", fleet_pb2.SearchNamespacesRequest(query=namespaces[0][2])
    )
    assert [(m.id, m.kubernetes_name) for m in response.namespaces] == [namespaces[0][::2]]


@pytest.mark.parametrize("name", ["payments", "web-0", "7up", "!!!", "UPPER_case-Name", "a", "x" * 40, "Ünï côde"])
def test_the_sql_prefix_of_a_kubernetes_name_is_the_naming_contracts(database: TestDatabase, name: str) -> None:
    project_id = uuid.uuid4()
    with database.admin() as conn:
        row = conn.execute("SELECT tenant.namespace_name_prefix(%s, %s)", [name, project_id]).fetchone()
    assert row is not None
    assert f"{row[0]}-ns" == naming.namespace_name(name, project_id, "ns")
