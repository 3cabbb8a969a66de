"""ListClusters, GetCluster and GetFleetSummary against what the database holds, judged by clusterstatus.

The truth here is computed in Python, from raw rows read as a superuser, with the one definition of
status, readiness and staleness (`common.clusterstatus`); the service filters with the SQL
twins and derives what it returns in Python, so these tests hold both to the same answer on a
generated fleet that has every status. The service's clock is fixed at NOW (tests/fixtures/fleet_api.py).
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
from fundament.fleet.v1 import fleet_pb2

from common import clusterstatus
from common.clusterstatus import ClusterStatus
from db import provisioning
from tests.fixtures.fleet_api import NOW, SYSTEM_ORGANIZATION, CallFailed, FleetApiUnderTest
from tests.fixtures.postgres import TestDatabase


@dataclass(frozen=True)
class Truth:
    """One cluster as the database holds it, with what clusterstatus says about it."""

    id: str
    name: str
    organization_id: uuid.UUID
    region: str
    live: bool  # the cluster and its organization are live
    status: ClusterStatus
    ready: bool
    stale: bool


def read_truth(database: TestDatabase) -> dict[str, Truth]:
    """Every non-system cluster, judged in Python at NOW."""
    with database.admin() as conn:
        heartbeat = conn.execute(
            "SELECT interval_seconds, first_completed FROM tenant.worker_heartbeats WHERE loop = 'inventory'"
        ).fetchone()
        rows = conn.execute(
            "SELECT c.id, c.name, c.organization_id, c.region, c.deleted IS NOT NULL, o.deleted IS NOT NULL,"
            " s.sync_status, s.shoot_status, s.shoot_operation, s.first_completed, s.ready_since,"
            " snap.observed"
            " FROM tenant.clusters c JOIN tenant.organizations o ON o.id = c.organization_id"
            " LEFT JOIN tenant.fleet_sync_state s ON s.cluster_id = c.id"
            " LEFT JOIN tenant.cluster_snapshots snap ON snap.cluster_id = c.id"
            " WHERE c.organization_id <> %s",
            (SYSTEM_ORGANIZATION,),
        ).fetchall()
    interval, since = (heartbeat[0], heartbeat[1]) if heartbeat else (None, None)
    truth: dict[str, Truth] = {}
    for row in rows:
        cid, name, org_id, region, deleted, org_deleted, sync, shoot, operation, first, changed, observed = row
        assert isinstance(org_id, uuid.UUID)
        status = clusterstatus.cluster_status(
            deleted=bool(deleted),
            sync_status=_opt_str(sync),
            shoot_status=_opt_str(shoot),
            shoot_operation=_opt_str(operation),
            ever_completed=first is not None,
        )
        ready = clusterstatus.is_ready(
            cluster_deleted=bool(deleted),
            organization_deleted=bool(org_deleted),
            organization_id=org_id,
            shoot_status=_opt_str(shoot),
        )
        stale = clusterstatus.is_stale(
            ready=ready,
            observed=_opt_time(observed),
            ready_since=_opt_time(changed),
            interval_seconds=int(str(interval)) if interval is not None else None,
            collector_since=_opt_time(since),
            now=NOW,
        )
        live = not deleted and not org_deleted
        truth[str(cid)] = Truth(str(cid), str(name), org_id, str(region), live, status, ready, stale)
    return truth


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def _opt_time(value: object) -> datetime | None:
    assert value is None or isinstance(value, datetime)
    return value


@pytest.fixture(scope="module")
def truth(shared_fleet_api: FleetApiUnderTest) -> dict[str, Truth]:
    return read_truth(shared_fleet_api.database)


async def list_all(api: FleetApiUnderTest, protocol: str = "grpc", **filters: Any) -> list[fleet_pb2.ClusterSummary]:
    clusters: list[fleet_pb2.ClusterSummary] = []
    token = ""
    while True:
        response = await api.call(
            protocol, "ListClusters", fleet_pb2.ListClustersRequest(page_size=500, page_token=token, **filters)
        )
        clusters += list(response.clusters)
        token = response.next_page_token
        if not token:
            return clusters


def proto_status(status: ClusterStatus) -> int:
    return int(fleet_pb2.ClusterStatus.Value(f"CLUSTER_STATUS_{status.name}"))


# --- the world has what the tests need ---------------------------------------------------------------


def test_the_world_has_every_status_stale_and_fresh(truth: dict[str, Truth]) -> None:
    statuses = {t.status for t in truth.values()}
    assert statuses == set(ClusterStatus)
    ready = [t for t in truth.values() if t.ready]
    assert any(t.stale for t in ready) and any(not t.stale for t in ready)
    assert any(t.status in clusterstatus.NEEDS_ATTENTION for t in truth.values() if t.live)


# --- filters -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", list(ClusterStatus), ids=[s.name for s in ClusterStatus])
async def test_status_filter_returns_exactly_the_clusters_in_that_status(
    shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth], status: ClusterStatus
) -> None:
    everywhere = await list_all(shared_fleet_api, statuses=[proto_status(status)], include_deleted=True)
    assert {c.id for c in everywhere} == {t.id for t in truth.values() if t.status is status}
    assert all(c.status == proto_status(status) for c in everywhere)
    live_only = await list_all(shared_fleet_api, "connect", statuses=[proto_status(status)])
    assert {c.id for c in live_only} == {t.id for t in truth.values() if t.status is status and t.live}


async def test_several_statuses_combine_with_or(shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth]) -> None:
    wanted = {ClusterStatus.RUNNING, ClusterStatus.STOPPED, ClusterStatus.LOST}
    clusters = await list_all(shared_fleet_api, statuses=[proto_status(s) for s in wanted])
    assert {c.id for c in clusters} == {t.id for t in truth.values() if t.live and t.status in wanted}


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
async def test_needs_attention_filter(
    shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth], protocol: str
) -> None:
    clusters = await list_all(shared_fleet_api, protocol, needs_attention=True)
    expected = {t.id for t in truth.values() if t.live and clusterstatus.needs_attention(t.status)}
    assert expected and {c.id for c in clusters} == expected


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
async def test_stale_filter(shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth], protocol: str) -> None:
    clusters = await list_all(shared_fleet_api, protocol, stale=True)
    expected = {t.id for t in truth.values() if t.stale}
    assert expected and {c.id for c in clusters} == expected
    assert all(c.stale for c in clusters)


async def test_every_listed_cluster_carries_the_python_status_and_staleness(
    shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth]
) -> None:
    clusters = await list_all(shared_fleet_api, include_deleted=True)
    assert {c.id for c in clusters} == set(truth)
    for cluster in clusters:
        assert cluster.status == proto_status(truth[cluster.id].status), cluster.name
        assert cluster.stale == truth[cluster.id].stale, cluster.name


async def test_filters_combine_with_and(shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth]) -> None:
    some = next(t for t in truth.values() if t.live and t.status is ClusterStatus.RUNNING)
    clusters = await list_all(
        shared_fleet_api,
        organization_id=str(some.organization_id),
        region=some.region,
        statuses=[proto_status(ClusterStatus.RUNNING)],
    )
    expected = {
        t.id
        for t in truth.values()
        if t.live and t.organization_id == some.organization_id and t.region == some.region and t.status is some.status
    }
    assert some.id in expected and {c.id for c in clusters} == expected
    stale_running = await list_all(shared_fleet_api, stale=True, statuses=[proto_status(ClusterStatus.RUNNING)])
    assert {c.id for c in stale_running} == {
        t.id for t in truth.values() if t.stale and t.live and t.status is ClusterStatus.RUNNING
    }


async def test_region_filter(shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth]) -> None:
    regions = Counter(t.region for t in truth.values() if t.live)
    region, count = regions.most_common(1)[0]
    clusters = await list_all(shared_fleet_api, region=region)
    assert len(clusters) == count and all(c.region == region for c in clusters)


# --- the system organization ----------------------------------------------------------------------------


async def test_system_organization_is_never_shown(shared_fleet_api: FleetApiUnderTest) -> None:
    system_cluster = shared_fleet_api.world.fleet.notes["planted.system_cluster"]
    clusters = await list_all(shared_fleet_api, include_deleted=True)
    assert system_cluster not in {c.id for c in clusters}
    assert str(SYSTEM_ORGANIZATION) not in {c.organization_id for c in clusters}
    organizations = await shared_fleet_api.call(
        "grpc", "ListOrganizations", fleet_pb2.ListOrganizationsRequest(page_size=500)
    )
    assert "system" not in {o.name for o in organizations.organizations}
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call("grpc", "GetCluster", fleet_pb2.GetClusterRequest(id=system_cluster))
    assert caught.value.code == "not_found"
    ledger = await shared_fleet_api.call(
        "grpc", "ListInfrastructureResources", fleet_pb2.ListInfrastructureResourcesRequest(cluster_id=system_cluster)
    )
    assert list(ledger.resources) == []
    findings = await shared_fleet_api.call(
        "grpc", "ListDriftFindings", fleet_pb2.ListDriftFindingsRequest(cluster_id=system_cluster)
    )
    assert list(findings.findings) == []
    with shared_fleet_api.database.admin() as conn:
        row = conn.execute(
            "SELECT count(*) FROM tenant.infrastructure_resources WHERE cluster_id = %s", (system_cluster,)
        ).fetchone()
    assert row is not None and int(str(row[0])) > 0, "the world must hold ledger rows of the system cluster"


# --- errors -------------------------------------------------------------------------------------------


def with_raw_statuses(*values: int) -> fleet_pb2.ListClustersRequest:
    """A request carrying enum numbers as a client on another contract version might send them."""
    request = fleet_pb2.ListClustersRequest()
    request.statuses.extend(values)  # type: ignore[arg-type]
    return request


BAD_REQUESTS: list[tuple[str, str, Any]] = [
    ("get-cluster-not-a-uuid", "GetCluster", fleet_pb2.GetClusterRequest(id="not-a-uuid")),
    ("get-cluster-empty-id", "GetCluster", fleet_pb2.GetClusterRequest()),
    ("get-cluster-sql-ish", "GetCluster", fleet_pb2.GetClusterRequest(id="1' OR '1'='1")),
    ("clusters-bad-organization", "ListClusters", fleet_pb2.ListClustersRequest(organization_id="acme")),
    ("clusters-unknown-status", "ListClusters", with_raw_statuses(99)),
    ("clusters-unspecified-status", "ListClusters", with_raw_statuses(0)),
    ("clusters-region-with-nul", "ListClusters", fleet_pb2.ListClustersRequest(region="eu\x00west")),
    ("clusters-region-too-long", "ListClusters", fleet_pb2.ListClustersRequest(region="x" * 300)),
    ("findings-bad-cluster", "ListDriftFindings", fleet_pb2.ListDriftFindingsRequest(cluster_id="123")),
    ("findings-bad-organization", "ListDriftFindings", fleet_pb2.ListDriftFindingsRequest(organization_id="x")),
    ("findings-unknown-kind", "ListDriftFindings", fleet_pb2.ListDriftFindingsRequest(kind=42)),  # type: ignore[arg-type]
    (
        "ledger-bad-cluster",
        "ListInfrastructureResources",
        fleet_pb2.ListInfrastructureResourcesRequest(cluster_id="00000000-0000-0000-0000"),
    ),
    (
        "ledger-bad-type",
        "ListInfrastructureResources",
        fleet_pb2.ListInfrastructureResourcesRequest(resource_type="Load Balancer"),
    ),
]


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
@pytest.mark.parametrize(
    ("method", "request_"), [(m, r) for _, m, r in BAD_REQUESTS], ids=[n for n, _, _ in BAD_REQUESTS]
)
async def test_bad_argument_is_invalid_argument(
    shared_fleet_api: FleetApiUnderTest, method: str, request_: Any, protocol: str
) -> None:
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call(protocol, method, request_)
    assert caught.value.code == "invalid_argument", caught.value.message
    assert "SELECT" not in caught.value.message and "psycopg" not in caught.value.message


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
async def test_unknown_cluster_is_not_found(shared_fleet_api: FleetApiUnderTest, protocol: str) -> None:
    unknown = str(uuid.uuid4())
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call(protocol, "GetCluster", fleet_pb2.GetClusterRequest(id=unknown))
    assert caught.value.code == "not_found"
    assert unknown in caught.value.message


async def test_uppercase_uuid_is_accepted(shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth]) -> None:
    some = next(iter(truth.values()))
    response = await shared_fleet_api.call("grpc", "GetCluster", fleet_pb2.GetClusterRequest(id=some.id.upper()))
    assert response.cluster.id == some.id


# --- every combination of status inputs, end to end ----------------------------------------------------


def _insert_every_combination(database: TestDatabase) -> tuple[uuid.UUID, dict[str, ClusterStatus]]:
    """One organization with a cluster per allowed combination of status inputs (and one without sync state)."""
    expected: dict[str, ClusterStatus] = {}
    with database.admin() as conn:
        org_row = conn.execute(
            "INSERT INTO tenant.organizations (name, alias) VALUES ('combinations', 'Combinations') RETURNING id"
        ).fetchone()
        assert org_row is not None
        org_id = org_row[0]
        combos = [
            (deleted, sync, shoot, operation, ever)
            for deleted in (False, True)
            for sync in clusterstatus.SYNC_STATUSES
            for shoot in clusterstatus.SHOOT_STATUSES
            for operation in (None, *clusterstatus.SHOOT_OPERATIONS)
            for ever in (False, True)
            if not (sync == "completed" and not ever)  # a completed latest sync has completed once
        ]
        for n, (deleted, sync, shoot, operation, ever) in enumerate(combos):
            row = conn.execute(
                "INSERT INTO tenant.clusters (organization_id, name, region, kubernetes_version, deleted)"
                " VALUES (%s, %s, 'combo-region', '1.33.1', CASE WHEN %s THEN now() END) RETURNING id",
                (org_id, f"combo-{n:04d}", deleted),
            ).fetchone()
            assert row is not None
            # As Fundament records it; an operation is only a progressing shoot's (its message says it).
            provisioning.write_state(
                conn,
                str(row[0]),
                sync_status=sync,
                shoot_status=shoot,
                shoot_operation=operation,
                first_completed=NOW - timedelta(hours=1) if ever else None,
                at=NOW,
            )
            expected[str(row[0])] = clusterstatus.cluster_status(
                deleted=deleted, sync_status=sync, shoot_status=shoot, shoot_operation=operation, ever_completed=ever
            )
        bare = conn.execute(
            "INSERT INTO tenant.clusters (organization_id, name, region, kubernetes_version)"
            " VALUES (%s, 'combo-bare', 'combo-region', '1.33.1') RETURNING id",
            (org_id,),
        ).fetchone()
        assert bare is not None
        expected[str(bare[0])] = ClusterStatus.PROVISIONING
    assert isinstance(org_id, uuid.UUID)
    return org_id, expected


async def test_every_combination_of_status_inputs_agrees_with_clusterstatus(fleet_api: FleetApiUnderTest) -> None:
    org_id, expected = _insert_every_combination(fleet_api.database)
    listed = await list_all(fleet_api, organization_id=str(org_id), include_deleted=True)
    assert {c.id: c.status for c in listed} == {cid: proto_status(s) for cid, s in expected.items()}
    for status in ClusterStatus:
        filtered = await list_all(
            fleet_api, organization_id=str(org_id), include_deleted=True, statuses=[proto_status(status)]
        )
        assert {c.id for c in filtered} == {cid for cid, s in expected.items() if s is status}, status
    attention = await list_all(fleet_api, organization_id=str(org_id), needs_attention=True)
    assert {c.id for c in attention} == {
        cid
        for cid, s in expected.items()
        if clusterstatus.needs_attention(s) and s not in (ClusterStatus.DELETING, ClusterStatus.DELETED)
    }
    summary = await fleet_api.call("grpc", "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest())
    before = read_truth(fleet_api.database)
    live = Counter(t.status for t in before.values() if t.live)
    assert {c.status: c.clusters for c in summary.clusters_by_status} == {proto_status(s): n for s, n in live.items()}
