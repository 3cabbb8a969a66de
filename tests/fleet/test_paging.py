"""Paging of the four List RPCs over real sockets (keyset paging with signed tokens).

Walking every page with sizes 1, 7, 100 and 500 yields every row exactly once, in the documented
order; so it does while rows are inserted between pages (rows inserted behind the walk's position
are not returned, rows ahead of it are). Sizes are defaulted, capped and refused as specified, and a
token that is tampered with, truncated, issued for other filters or for another list is
INVALID_ARGUMENT on both protocols. The expected order comes from the database itself (the admin
connection, ORDER BY the documented keys), so it holds under any collation.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from fundament.fleet.v1 import fleet_pb2
from google.protobuf.message import Message

from tests.fixtures.fleet_api import NOW, CallFailed, FleetApiUnderTest
from tests.fixtures.postgres import TestDatabase


@dataclass(frozen=True)
class ListSpec:
    """One List RPC: how to ask for a page, where the items are, and the expected ids in order."""

    method: str
    request: Callable[..., Message]
    items: str
    expected_sql: str


LISTS: dict[str, ListSpec] = {
    "organizations": ListSpec(
        "ListOrganizations",
        fleet_pb2.ListOrganizationsRequest,
        "organizations",
        "SELECT id FROM tenant.organizations WHERE id <> tenant.system_organization_id() ORDER BY name, id",
    ),
    "clusters": ListSpec(
        "ListClusters",
        fleet_pb2.ListClustersRequest,
        "clusters",
        "SELECT c.id FROM tenant.clusters c JOIN tenant.organizations o ON o.id = c.organization_id"
        " WHERE c.deleted IS NULL AND o.deleted IS NULL AND o.id <> tenant.system_organization_id()"
        " ORDER BY c.name, c.id",
    ),
    "drift_findings": ListSpec(
        "ListDriftFindings",
        fleet_pb2.ListDriftFindingsRequest,
        "findings",
        "SELECT f.id FROM tenant.drift_findings f LEFT JOIN tenant.clusters c ON c.id = f.cluster_id"
        " WHERE f.resolved IS NULL AND c.organization_id IS DISTINCT FROM tenant.system_organization_id()"
        " ORDER BY f.first_detected, f.id",
    ),
    "infrastructure_resources": ListSpec(
        "ListInfrastructureResources",
        fleet_pb2.ListInfrastructureResourcesRequest,
        "resources",
        "SELECT r.id FROM tenant.infrastructure_resources r JOIN tenant.clusters c ON c.id = r.cluster_id"
        " WHERE r.destroyed IS NULL AND c.organization_id <> tenant.system_organization_id()"
        " ORDER BY r.cluster_id, r.resource_type, r.namespace, r.name, r.id",
    ),
}


def expected_ids(database: TestDatabase, spec: ListSpec) -> list[str]:
    with database.admin() as conn:
        return [str(row[0]) for row in conn.execute(spec.expected_sql)]


async def walk(
    api: FleetApiUnderTest,
    protocol: str,
    spec: ListSpec,
    size: int,
    between_pages: Callable[[int], None] | None = None,
    max_pages: int | None = None,
    **filters: Any,
) -> tuple[list[str], int]:
    """Every page of one list (or its first `max_pages`): the ids in the order returned, and how many pages
    it took."""
    ids: list[str] = []
    token = ""
    pages = 0
    while True:
        response = await api.call(protocol, spec.method, spec.request(page_size=size, page_token=token, **filters))
        items = list(getattr(response, spec.items))
        pages += 1
        assert len(items) <= size
        ids += [item.id for item in items]
        token = response.next_page_token
        if not token:
            return ids, pages
        # A token comes only with a full page: more may follow.
        assert len(items) == size
        if pages == max_pages:
            return ids, pages
        if between_pages is not None:
            between_pages(pages)


# Page size 1 runs over gRPC only and stops after SINGLE_PAGES pages: every page boundary then falls
# between two rows, many of them between rows that share the order's leading keys (cluster names, first
# detections and a cluster's resources repeat from the first rows on), while the whole walk would take
# about 2,800 round trips. The other sizes walk every page over
# both protocols, which also proves the end of each list.
WALKS = [("grpc", 1)] + [(protocol, size) for size in (7, 100, 500) for protocol in ("grpc", "connect")]
SINGLE_PAGES = 200


@pytest.mark.parametrize(("protocol", "size"), WALKS, ids=[f"{p}-{s}" for p, s in WALKS])
@pytest.mark.parametrize("name", sorted(LISTS))
async def test_walk_yields_every_row_once_in_order(
    shared_fleet_api: FleetApiUnderTest, name: str, protocol: str, size: int
) -> None:
    spec = LISTS[name]
    expected = expected_ids(shared_fleet_api.database, spec)
    assert len(expected) > 500, "the world must be larger than one maximal page"
    if size == 1:
        ids, pages = await walk(shared_fleet_api, protocol, spec, size, max_pages=SINGLE_PAGES)
        assert ids == expected[:SINGLE_PAGES] and pages == SINGLE_PAGES
        return
    ids, pages = await walk(shared_fleet_api, protocol, spec, size)
    assert ids == expected
    # LIMIT size + 1 knows when the end is reached: no empty page after a full last one.
    assert pages == -(-len(expected) // size)


# --- rows inserted between pages -------------------------------------------------------------------


def _insert_around(database: TestDatabase, name: str, page: int) -> tuple[str, str]:
    """Insert one row that sorts before every row and one that sorts after every row so far.

    The keys grow with `page` (zero-padded names, later times), so each "after" row also sorts after
    the "after" rows of earlier pages, which the walk may have reached by then. Returns (before, after).
    """
    with database.admin() as conn:
        cluster = conn.execute(
            "SELECT c.id, c.organization_id FROM tenant.clusters c JOIN tenant.organizations o"
            " ON o.id = c.organization_id WHERE c.deleted IS NULL AND o.deleted IS NULL"
            " AND o.id <> tenant.system_organization_id() ORDER BY c.id LIMIT 1"
        ).fetchone()
        assert cluster is not None
        org = (cluster[1],)
        made: list[str] = []
        for prefix in ("a", "z"):
            if name == "organizations":
                row = conn.execute(
                    "INSERT INTO tenant.organizations (name, alias) VALUES (%s, 'Late') RETURNING id",
                    (f"{prefix * 3}-late-{page:05d}",),
                ).fetchone()
            elif name == "clusters":
                row = conn.execute(
                    "INSERT INTO tenant.clusters (organization_id, name, region, kubernetes_version)"
                    " VALUES (%s, %s, 'eu-west-1', '1.33.1') RETURNING id",
                    (org[0], f"{prefix * 3}-late-{page:05d}"),
                ).fetchone()
            elif name == "drift_findings":
                detected = NOW + timedelta(days=400 if prefix == "z" else -400, seconds=page)
                row = conn.execute(
                    "INSERT INTO tenant.drift_findings (kind, subject, cluster_id, first_detected, last_detected)"
                    " VALUES ('missing_shoot', %s, %s, %s, %s) RETURNING id",
                    (str(uuid.uuid4()), cluster[0], detected, detected),
                ).fetchone()
            else:
                target = conn.execute(
                    "SELECT id FROM tenant.clusters WHERE organization_id <> tenant.system_organization_id()"
                    f" ORDER BY id {'ASC' if prefix == 'a' else 'DESC'} LIMIT 1"
                ).fetchone()
                assert target is not None
                row = conn.execute(
                    "INSERT INTO tenant.infrastructure_resources (cluster_id, resource_type, name, billable,"
                    " created, last_seen) VALUES (%s, %s, %s, true, now(), now()) RETURNING id",
                    (target[0], f"{'aaa' if prefix == 'a' else 'zzz'}.late", f"late-{page:05d}"),
                ).fetchone()
            assert row is not None
            made.append(str(row[0]))
    return made[0], made[1]


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
@pytest.mark.parametrize("name", sorted(LISTS))
async def test_walk_stays_consistent_while_rows_are_inserted(
    fleet_api: FleetApiUnderTest, name: str, protocol: str
) -> None:
    spec = LISTS[name]
    original = expected_ids(fleet_api.database, spec)
    behind: list[str] = []
    ahead: list[str] = []

    def insert(page: int) -> None:
        if page % 20 == 1:  # every few pages, a row on either side of the walk's position
            before, after = _insert_around(fleet_api.database, name, page)
            behind.append(before)
            ahead.append(after)

    ids, _ = await walk(fleet_api, protocol, spec, 7, insert)
    assert behind and ahead
    assert len(ids) == len(set(ids)), "a row came twice"
    assert not set(behind) & set(ids), "a row inserted behind the position was returned"
    assert ids == original + [i for i in expected_ids(fleet_api.database, spec) if i in ahead]


# --- page sizes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
@pytest.mark.parametrize(
    ("requested", "returned"), [(0, 100), (501, 500), (2**31 - 1, 500), (3, 3)], ids=["default", "501", "max", "3"]
)
@pytest.mark.parametrize("name", sorted(LISTS))
async def test_page_size_is_defaulted_and_capped(
    shared_fleet_api: FleetApiUnderTest, name: str, requested: int, returned: int, protocol: str
) -> None:
    spec = LISTS[name]
    response = await shared_fleet_api.call(protocol, spec.method, spec.request(page_size=requested))
    assert len(getattr(response, spec.items)) == returned
    assert response.next_page_token


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
@pytest.mark.parametrize("requested", [-1, -(2**31)], ids=["minus-one", "int32-min"])
@pytest.mark.parametrize("name", sorted(LISTS))
async def test_negative_page_size_is_invalid(
    shared_fleet_api: FleetApiUnderTest, name: str, requested: int, protocol: str
) -> None:
    spec = LISTS[name]
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call(protocol, spec.method, spec.request(page_size=requested))
    assert caught.value.code == "invalid_argument"
    assert "page_size" in caught.value.message


# --- bad tokens --------------------------------------------------------------------------------------


def _flip(token: str, index: int) -> str:
    return token[:index] + ("B" if token[index] == "A" else "A") + token[index + 1 :]


async def _first_token(api: FleetApiUnderTest, spec: ListSpec, **filters: Any) -> str:
    response = await api.call("grpc", spec.method, spec.request(page_size=5, **filters))
    token: str = response.next_page_token
    assert token
    return token


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
@pytest.mark.parametrize("damage", ["tampered-middle", "tampered-end", "truncated", "garbage", "doubled"])
@pytest.mark.parametrize("name", sorted(LISTS))
async def test_damaged_token_is_invalid(
    shared_fleet_api: FleetApiUnderTest, name: str, damage: str, protocol: str
) -> None:
    spec = LISTS[name]
    token = await _first_token(shared_fleet_api, spec)
    bad = {
        "tampered-middle": _flip(token, len(token) // 3),
        "tampered-end": _flip(token, len(token) - 2),
        "truncated": token[: len(token) - 6],
        "garbage": "bm90IGEgdG9rZW4",
        "doubled": token + token,
    }[damage]
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call(protocol, spec.method, spec.request(page_size=5, page_token=bad))
    assert caught.value.code == "invalid_argument"
    assert "page_token" in caught.value.message


CROSS_FILTERS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "clusters": ({"region": "eu-west-1"}, {"region": "us-east-1"}),
    "drift_findings": ({"kind": fleet_pb2.DRIFT_KIND_MISSING_SHOOT}, {}),
    "infrastructure_resources": ({"billable": True}, {"billable": False}),
}


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
@pytest.mark.parametrize("name", sorted(CROSS_FILTERS))
async def test_token_used_with_other_filters_is_invalid(
    shared_fleet_api: FleetApiUnderTest, name: str, protocol: str
) -> None:
    spec = LISTS[name]
    issued_with, used_with = CROSS_FILTERS[name]
    token = await _first_token(shared_fleet_api, spec, **issued_with)
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call(protocol, spec.method, spec.request(page_size=5, page_token=token, **used_with))
    assert caught.value.code == "invalid_argument"
    assert "other filters" in caught.value.message
    # The same token with the filters it was issued with is fine.
    response = await shared_fleet_api.call(protocol, spec.method, spec.request(page_token=token, **issued_with))
    assert len(getattr(response, spec.items)) > 0


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
async def test_token_of_another_list_is_invalid(shared_fleet_api: FleetApiUnderTest, protocol: str) -> None:
    token = await _first_token(shared_fleet_api, LISTS["organizations"])
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call(protocol, "ListClusters", fleet_pb2.ListClustersRequest(page_token=token))
    assert caught.value.code == "invalid_argument"
    assert "another list" in caught.value.message


async def test_token_survives_a_change_of_page_size(shared_fleet_api: FleetApiUnderTest) -> None:
    spec = LISTS["clusters"]
    first = await shared_fleet_api.call("grpc", "ListClusters", fleet_pb2.ListClustersRequest(page_size=3))
    second = await shared_fleet_api.call(
        "connect", "ListClusters", fleet_pb2.ListClustersRequest(page_size=11, page_token=first.next_page_token)
    )
    expected = expected_ids(shared_fleet_api.database, spec)
    assert [c.id for c in first.clusters] + [c.id for c in second.clusters] == expected[:14]
