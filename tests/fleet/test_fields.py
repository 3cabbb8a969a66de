"""Every field of every RPC is filled, and filled right, on the generated fleet.

Expected values are computed here from raw rows read as a superuser with plain queries and Python
(the "live at every level" and "ready" rules spelled out again), so a wrong join
or a forgotten field in the service shows up as a difference.
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from datetime import datetime
from typing import Any

import pytest
from fundament.fleet.v1 import fleet_pb2
from google.protobuf.json_format import MessageToDict

from common import clusterstatus, naming
from tests.fixtures.fleet_api import NOW, SYSTEM_ORGANIZATION, FleetApiUnderTest
from tests.fixtures.postgres import TestDatabase
from tests.fleet.test_clusters import Truth, list_all, proto_status, read_truth


def rows(database: TestDatabase, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with database.admin() as conn:
        return conn.execute(query, params).fetchall()


def when(message: Any, field: str) -> datetime | None:
    """A Timestamp field as an aware datetime, None when unset."""
    if not message.HasField(field):
        return None
    stamp = getattr(message, field)
    return stamp.ToDatetime(NOW.tzinfo)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def truth(shared_fleet_api: FleetApiUnderTest) -> dict[str, Truth]:
    return read_truth(shared_fleet_api.database)


@pytest.fixture(scope="module")
def model(shared_fleet_api: FleetApiUnderTest) -> dict[str, list[tuple[Any, ...]]]:
    db = shared_fleet_api.database
    return {
        "organizations": rows(
            db, "SELECT id, name, alias, listed_publicly, created, deleted FROM tenant.organizations"
        ),
        "clusters": rows(db, "SELECT id, organization_id, deleted FROM tenant.clusters"),
        "projects": rows(db, "SELECT id, cluster_id, deleted FROM tenant.projects"),
        "namespaces": rows(db, "SELECT id, project_id, deleted FROM tenant.namespaces"),
        "snapshots": rows(
            db,
            "SELECT cluster_id, nodes, ready_nodes, pods, allocatable_pods, cpu_allocatable_millicores,"
            " memory_allocatable_bytes, source FROM tenant.cluster_snapshots",
        ),
    }


def live_counts(model: dict[str, list[tuple[Any, ...]]]) -> dict[uuid.UUID, tuple[int, int, int]]:
    """Per non-system organization: live clusters, live projects on them, live namespaces in those."""
    live_orgs = {r[0] for r in model["organizations"] if r[5] is None and r[0] != SYSTEM_ORGANIZATION}
    cluster_org = {r[0]: r[1] for r in model["clusters"] if r[2] is None and r[1] in live_orgs}
    project_org = {r[0]: cluster_org[r[1]] for r in model["projects"] if r[2] is None and r[1] in cluster_org}
    counts: dict[uuid.UUID, list[int]] = defaultdict(lambda: [0, 0, 0])
    for org in cluster_org.values():
        counts[org][0] += 1
    for org in project_org.values():
        counts[org][1] += 1
    for ns in model["namespaces"]:
        if ns[2] is None and ns[1] in project_org:
            counts[project_org[ns[1]]][2] += 1
    return {org: (c[0], c[1], c[2]) for org, c in counts.items()}


# --- organizations --------------------------------------------------------------------------------------


async def test_organization_summaries(
    shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth], model: dict[str, list[tuple[Any, ...]]]
) -> None:
    organizations: list[fleet_pb2.OrganizationSummary] = []
    token = ""
    while True:
        page = await shared_fleet_api.call(
            "connect", "ListOrganizations", fleet_pb2.ListOrganizationsRequest(page_size=500, page_token=token)
        )
        organizations += list(page.organizations)
        token = page.next_page_token
        if not token:
            break
    counts = live_counts(model)
    snapshots = {r[0]: r for r in model["snapshots"]}
    ready_nodes: Counter[uuid.UUID] = Counter()
    pods: Counter[uuid.UUID] = Counter()
    attention: Counter[uuid.UUID] = Counter()
    for t in truth.values():
        snap = snapshots.get(uuid.UUID(t.id))
        if t.ready and snap is not None:
            ready_nodes[t.organization_id] += snap[2]
            pods[t.organization_id] += snap[3]
        if t.live and clusterstatus.needs_attention(t.status):
            attention[t.organization_id] += 1
    expected = {r[0]: r for r in model["organizations"] if r[0] != SYSTEM_ORGANIZATION}
    assert {o.id for o in organizations} == {str(i) for i in expected}
    assert any(o.deleted.seconds for o in organizations) and any(o.listed_publicly for o in organizations)
    assert any(not o.listed_publicly for o in organizations)
    for o in organizations:
        oid, name, alias, listed, created, deleted = expected[uuid.UUID(o.id)]
        assert (o.name, o.alias, o.listed_publicly) == (name, alias, listed)
        assert when(o, "created") == created and when(o, "deleted") == deleted
        assert (o.clusters, o.projects, o.namespaces) == counts.get(oid, (0, 0, 0)), name
        assert (o.ready_nodes, o.pods) == (ready_nodes[oid], pods[oid]), name
        assert o.clusters_needing_attention == attention[oid], name


async def test_deleted_organization_counts_nothing_although_a_cluster_was_left_live(
    shared_fleet_api: FleetApiUnderTest,
) -> None:
    leftover = shared_fleet_api.world.fleet.notes["planted.deleted_organization_live_cluster"]
    got = await shared_fleet_api.call("grpc", "GetCluster", fleet_pb2.GetClusterRequest(id=leftover))
    organizations = await shared_fleet_api.call(
        "grpc", "ListOrganizations", fleet_pb2.ListOrganizationsRequest(page_size=500)
    )
    token = organizations.next_page_token
    every = list(organizations.organizations)
    more = await shared_fleet_api.call(
        "grpc", "ListOrganizations", fleet_pb2.ListOrganizationsRequest(page_token=token)
    )
    every += list(more.organizations)
    owner = next(o for o in every if o.id == got.cluster.organization_id)
    assert owner.HasField("deleted")
    assert (owner.clusters, owner.projects, owner.namespaces, owner.ready_nodes, owner.pods) == (0, 0, 0, 0, 0)
    live = await list_all(shared_fleet_api)
    assert leftover not in {c.id for c in live}


async def test_every_snapshot_says_which_source_read_it(
    shared_fleet_api: FleetApiUnderTest, model: dict[str, list[tuple[Any, ...]]]
) -> None:
    stored = {str(r[0]): r[7] for r in model["snapshots"]}
    listed = await list_all(shared_fleet_api, "grpc", include_deleted=True)
    names = {
        "apiserver": fleet_pb2.SNAPSHOT_SOURCE_API_SERVER,
        "prometheus": fleet_pb2.SNAPSHOT_SOURCE_PROMETHEUS,
        None: fleet_pb2.SNAPSHOT_SOURCE_UNSPECIFIED,
    }
    seen = set()
    for cluster in listed:
        if cluster.id in stored:
            assert cluster.snapshot.source == names[stored[cluster.id]], cluster.name
            seen.add(cluster.snapshot.source)
    assert seen == set(names.values()), "the fixture stores every case"


# --- one cluster in full ------------------------------------------------------------------------------


def _pick(truth: dict[str, Truth], database: TestDatabase) -> str:
    """A ready, collected cluster with a failed collection since, findings, ledger rows and a shoot."""
    candidates = rows(
        database,
        "SELECT s.cluster_id FROM tenant.cluster_snapshots s"
        " JOIN tenant.gardener_shoots g ON g.cluster_id = s.cluster_id AND g.deleted IS NULL"
        " WHERE s.last_error IS NOT NULL AND s.observed IS NOT NULL"
        " AND EXISTS (SELECT 1 FROM tenant.drift_findings f WHERE f.cluster_id = s.cluster_id AND f.resolved IS NULL)"
        " ORDER BY s.cluster_id",
    )
    return next(str(r[0]) for r in candidates if str(r[0]) in truth and truth[str(r[0])].ready)


async def test_cluster_summary_fields(shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth]) -> None:
    db = shared_fleet_api.database
    cid = _pick(truth, db)
    (row,) = rows(
        db,
        "SELECT c.name, c.organization_id, o.name, o.alias, c.region, c.kubernetes_version, c.created, c.deleted,"
        " s.shoot_status_changed, g.kubernetes_version, snap.observed, snap.nodes, snap.ready_nodes, snap.pods,"
        " snap.allocatable_pods, snap.cpu_allocatable_millicores, snap.memory_allocatable_bytes, snap.last_error,"
        " snap.last_error_at,"
        " (SELECT count(*) FROM tenant.drift_findings f WHERE f.cluster_id = c.id AND f.resolved IS NULL)"
        " FROM tenant.clusters c JOIN tenant.organizations o ON o.id = c.organization_id"
        " JOIN tenant.fleet_sync_state s ON s.cluster_id = c.id"
        " JOIN tenant.cluster_snapshots snap ON snap.cluster_id = c.id"
        " JOIN tenant.gardener_shoots g ON g.cluster_id = c.id AND g.deleted IS NULL WHERE c.id = %s",
        (cid,),
    )
    (name, org_id, org_name, org_alias, region, version, created, deleted, changed, observed_version, observed) = row[
        :11
    ]
    listed = [c for c in await list_all(shared_fleet_api, "connect", organization_id=str(org_id)) if c.id == cid]
    got = (await shared_fleet_api.call("grpc", "GetCluster", fleet_pb2.GetClusterRequest(id=cid))).cluster
    assert listed == [got]
    assert (got.name, got.organization_id, got.organization_name, got.organization_alias) == (
        name,
        str(org_id),
        org_name,
        org_alias,
    )
    assert (got.region, got.kubernetes_version, got.observed_kubernetes_version) == (region, version, observed_version)
    assert got.status == proto_status(truth[cid].status) and got.stale == truth[cid].stale
    assert when(got, "created") == created and when(got, "deleted") == deleted
    assert when(got, "shoot_status_changed") == changed
    snap = got.snapshot
    assert when(snap, "observed") == observed
    assert snap.age_seconds == int((NOW - observed).total_seconds()) and snap.age_seconds > 0
    assert (
        snap.nodes,
        snap.ready_nodes,
        snap.pods,
        snap.allocatable_pods,
        snap.cpu_allocatable_millicores,
        snap.memory_allocatable_bytes,
        snap.last_error,
    ) == tuple(row[11:18])
    assert when(snap, "last_error_at") == row[18]
    assert got.open_drift_findings == row[19] > 0


async def test_get_cluster_parts(shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth]) -> None:
    db = shared_fleet_api.database
    cid = _pick(truth, db)
    got = await shared_fleet_api.call("connect", "GetCluster", fleet_pb2.GetClusterRequest(id=cid))
    pools = rows(
        db,
        "SELECT np.id, np.name, np.machine_type, np.autoscale_min, np.autoscale_max, s.observed, s.nodes, s.ready_nodes"
        " FROM tenant.node_pools np LEFT JOIN tenant.node_pool_snapshots s ON s.node_pool_id = np.id"
        " WHERE np.cluster_id = %s AND np.deleted IS NULL ORDER BY np.name, np.id",
        (cid,),
    )
    assert pools
    assert [
        (p.id, p.name, p.machine_type, p.autoscale_min, p.autoscale_max, when(p.snapshot, "observed"))
        for p in got.node_pools
    ] == [(str(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in pools]
    assert [(p.snapshot.nodes, p.snapshot.ready_nodes) for p in got.node_pools] == [(r[6], r[7]) for r in pools]
    projects = rows(
        db,
        "SELECT p.id, p.name, p.alias, (SELECT count(*) FROM tenant.namespaces n"
        " WHERE n.project_id = p.id AND n.deleted IS NULL)"
        " FROM tenant.projects p WHERE p.cluster_id = %s AND p.deleted IS NULL ORDER BY p.name, p.id",
        (cid,),
    )
    assert [(p.id, p.name, p.alias, p.namespaces) for p in got.projects] == [
        (str(r[0]), r[1], r[2], r[3]) for r in projects
    ]
    namespaces = rows(
        db,
        "SELECT n.id, n.name, p.id, p.name, s.observed, s.pods FROM tenant.namespaces n"
        " JOIN tenant.projects p ON p.id = n.project_id LEFT JOIN tenant.namespace_snapshots s ON s.namespace_id = n.id"
        " WHERE p.cluster_id = %s AND p.deleted IS NULL AND n.deleted IS NULL ORDER BY p.name, p.id, n.name, n.id",
        (cid,),
    )
    assert [
        (n.id, n.name, n.project_id, n.project_name, when(n.snapshot, "observed"), n.snapshot.pods)
        for n in got.namespaces
    ] == [(str(r[0]), r[1], str(r[2]), r[3], r[4], r[5]) for r in namespaces]
    # The name on the shoot, as the provisioning side names it (what the ledger and kubectl show).
    assert [n.kubernetes_name for n in got.namespaces] == [naming.namespace_name(r[3], r[2], r[1]) for r in namespaces]
    findings = rows(
        db,
        "SELECT id FROM tenant.drift_findings WHERE cluster_id = %s AND resolved IS NULL ORDER BY first_detected, id",
        (cid,),
    )
    assert [f.id for f in got.open_findings] == [str(r[0]) for r in findings]
    assert all(f.cluster_id == cid and f.cluster_name == got.cluster.name for f in got.open_findings)
    ledger = rows(
        db,
        "SELECT resource_type, count(*), count(*) FILTER (WHERE billable) FROM tenant.infrastructure_resources"
        " WHERE cluster_id = %s AND destroyed IS NULL GROUP BY 1 ORDER BY 1",
        (cid,),
    )
    assert [(entry.resource_type, entry.active, entry.active_billable) for entry in got.ledger] == [
        tuple(r) for r in ledger
    ]
    (sync,) = rows(
        db,
        "SELECT sync_status, sync_attempts, coalesce(sync_error, ''), sync_updated, first_completed, shoot_status,"
        " coalesce(shoot_operation, ''), coalesce(shoot_message, ''), shoot_status_changed"
        " FROM tenant.fleet_sync_state WHERE cluster_id = %s",
        (cid,),
    )
    s = got.sync
    assert (s.sync_status, s.sync_attempts, s.sync_error) == tuple(sync[:3])
    assert (when(s, "sync_updated"), when(s, "first_completed")) == (sync[3], sync[4])
    assert (s.shoot_status, s.shoot_operation, s.shoot_message, when(s, "shoot_status_changed")) == tuple(sync[5:])


async def test_get_cluster_of_a_never_synced_cluster_has_no_completed_sync_and_no_snapshot(
    shared_fleet_api: FleetApiUnderTest,
) -> None:
    cid = shared_fleet_api.world.fleet.notes["scenario.provisioning"].split(",")[0]
    got = await shared_fleet_api.call("grpc", "GetCluster", fleet_pb2.GetClusterRequest(id=cid))
    # Fundament queues a cluster's first sync as it is created: pending, never completed, no shoot yet.
    assert got.sync.sync_status == "pending" and not got.sync.HasField("first_completed")
    assert got.sync.shoot_status == ""
    assert not got.cluster.HasField("snapshot") and not got.cluster.HasField("shoot_status_changed")
    assert got.cluster.status == fleet_pb2.CLUSTER_STATUS_PROVISIONING
    assert got.cluster.observed_kubernetes_version == ""


async def test_deleted_cluster_is_found_with_its_deletion_time(shared_fleet_api: FleetApiUnderTest) -> None:
    cid = shared_fleet_api.world.fleet.notes["scenario.deleted"].split(",")[0]
    got = await shared_fleet_api.call("grpc", "GetCluster", fleet_pb2.GetClusterRequest(id=cid))
    assert got.cluster.HasField("deleted") and got.cluster.status == fleet_pb2.CLUSTER_STATUS_DELETED


# --- findings -----------------------------------------------------------------------------------------


async def list_findings(api: FleetApiUnderTest, **filters: Any) -> list[fleet_pb2.DriftFinding]:
    findings: list[fleet_pb2.DriftFinding] = []
    token = ""
    while True:
        page = await api.call(
            "grpc", "ListDriftFindings", fleet_pb2.ListDriftFindingsRequest(page_size=500, page_token=token, **filters)
        )
        findings += list(page.findings)
        token = page.next_page_token
        if not token:
            return findings


async def test_finding_fields(shared_fleet_api: FleetApiUnderTest) -> None:
    db = shared_fleet_api.database
    expected = {
        str(r[0]): r
        for r in rows(
            db,
            # An unlabeled shoot has no cluster: its organization is the finding's own, and its shoot is
            # named by the subject and details (it is not in the mirror).
            "SELECT f.id, f.kind, f.subject, f.cluster_id, c.name, o.id, o.name,"
            " coalesce(f.shoot_uid::text, CASE WHEN f.kind = 'unlabeled_shoot' THEN f.subject END),"
            " coalesce(g.name, f.details #>> '{shoot,name}'), coalesce(g.namespace, f.details #>> '{shoot,namespace}'),"
            " f.details, f.first_detected, f.last_detected FROM tenant.drift_findings f"
            " LEFT JOIN tenant.clusters c ON c.id = f.cluster_id LEFT JOIN tenant.organizations o"
            " ON o.id = coalesce(c.organization_id, f.organization_id)"
            " LEFT JOIN tenant.gardener_shoots g ON g.uid = f.shoot_uid"
            " WHERE f.resolved IS NULL AND o.id IS DISTINCT FROM %s",
            (SYSTEM_ORGANIZATION,),
        )
    }
    findings = await list_findings(shared_fleet_api)
    assert {f.id for f in findings} == set(expected)
    kinds = {f.kind for f in findings}
    assert kinds == {value for name, value in fleet_pb2.DriftKind.items() if not name.endswith("UNSPECIFIED")}
    for f in findings:
        r = expected[f.id]
        assert f.kind == fleet_pb2.DriftKind.Value(f"DRIFT_KIND_{r[1].upper()}")
        text = ["" if v is None else str(v) for v in r[2:10]]
        assert [
            f.subject,
            f.cluster_id,
            f.cluster_name,
            f.organization_id,
            f.organization_name,
            f.shoot_uid,
            f.shoot_name,
            f.shoot_namespace,
        ] == text
        details = MessageToDict(f.details)
        if "shoot_created" in r[10]:
            # Stored with an offset by an older release; answered in the API's one form, Z.
            assert r[10]["shoot_created"].endswith("+00:00")
            assert details["shoot_created"] == r[10]["shoot_created"].replace("+00:00", "Z")
            details["shoot_created"] = r[10]["shoot_created"]
        assert details == r[10]
        assert (when(f, "first_detected"), when(f, "last_detected")) == (r[11], r[12])
        assert not f.HasField("resolved")
    assert any(f.cluster_id == "" and f.shoot_name for f in findings), "an orphan shoot finding"


@pytest.mark.parametrize("kind", ["missing_shoot", "orphan_shoot", "version_mismatch"])
async def test_findings_filtered_by_kind(shared_fleet_api: FleetApiUnderTest, kind: str) -> None:
    everything = await list_findings(shared_fleet_api)
    value = fleet_pb2.DriftKind.Value(f"DRIFT_KIND_{kind.upper()}")
    filtered = await list_findings(shared_fleet_api, kind=value)
    assert filtered and [f.id for f in filtered] == [f.id for f in everything if f.kind == value]


async def test_findings_filtered_by_organization_and_cluster(shared_fleet_api: FleetApiUnderTest) -> None:
    everything = await list_findings(shared_fleet_api)
    some = next(f for f in everything if f.cluster_id)
    by_org = await list_findings(shared_fleet_api, organization_id=some.organization_id)
    assert [f.id for f in by_org] == [f.id for f in everything if f.organization_id == some.organization_id]
    by_cluster = await list_findings(shared_fleet_api, cluster_id=some.cluster_id)
    assert [f.id for f in by_cluster] == [f.id for f in everything if f.cluster_id == some.cluster_id]
    # The finding's cluster may be a deleted one (a shoot of a deleted cluster), which lists only on request.
    listed = await list_all(shared_fleet_api, organization_id=some.organization_id, include_deleted=True)
    assert next(c for c in listed if c.id == some.cluster_id).open_drift_findings == len(by_cluster)


# --- the ledger ---------------------------------------------------------------------------------------


async def list_ledger(api: FleetApiUnderTest, **filters: Any) -> list[fleet_pb2.InfrastructureResource]:
    resources: list[fleet_pb2.InfrastructureResource] = []
    token = ""
    while True:
        page = await api.call(
            "connect",
            "ListInfrastructureResources",
            fleet_pb2.ListInfrastructureResourcesRequest(page_size=500, page_token=token, **filters),
        )
        resources += list(page.resources)
        token = page.next_page_token
        if not token:
            return resources


async def test_ledger_fields_and_filters(shared_fleet_api: FleetApiUnderTest) -> None:
    db = shared_fleet_api.database
    expected = {
        str(r[0]): r
        for r in rows(
            db,
            "SELECT r.id, r.cluster_id, c.name, o.name, r.resource_type, r.resource_id, r.name, r.namespace,"
            " r.billable, r.created, r.last_seen, r.destroyed FROM tenant.infrastructure_resources r"
            " JOIN tenant.clusters c ON c.id = r.cluster_id JOIN tenant.organizations o ON o.id = c.organization_id"
            " WHERE o.id <> %s",
            (SYSTEM_ORGANIZATION,),
        )
    }
    everything = await list_ledger(shared_fleet_api, include_destroyed=True)
    assert {r.id for r in everything} == set(expected)
    for r in everything:
        e = expected[r.id]
        assert [r.cluster_id, r.cluster_name, r.organization_name, r.resource_type, r.resource_id, r.name] == [
            "" if v is None else str(v) for v in e[1:7]
        ]
        assert (r.namespace, r.billable) == (e[7], e[8])
        assert (when(r, "created"), when(r, "last_seen"), when(r, "destroyed")) == (e[9], e[10], e[11])
    active = await list_ledger(shared_fleet_api)
    assert [r.id for r in active] == [r.id for r in everything if not r.HasField("destroyed")]
    assert len(active) < len(everything)
    billable = await list_ledger(shared_fleet_api, billable=True)
    not_billable = await list_ledger(shared_fleet_api, billable=False)
    assert billable and not_billable and all(r.billable for r in billable) and not any(r.billable for r in not_billable)
    assert len(billable) + len(not_billable) == len(active)
    ingresses = await list_ledger(shared_fleet_api, resource_type="kubernetes.ingress")
    assert ingresses and [r.id for r in ingresses] == [r.id for r in active if r.resource_type == "kubernetes.ingress"]
    one = active[0].cluster_id
    of_one = await list_ledger(shared_fleet_api, cluster_id=one, include_destroyed=True)
    assert [r.id for r in of_one] == [r.id for r in everything if r.cluster_id == one]


# --- the summary --------------------------------------------------------------------------------------


async def test_fleet_summary(
    shared_fleet_api: FleetApiUnderTest, truth: dict[str, Truth], model: dict[str, list[tuple[Any, ...]]]
) -> None:
    db = shared_fleet_api.database
    summary = await shared_fleet_api.call("connect-get", "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest())
    live_orgs = [r for r in model["organizations"] if r[5] is None and r[0] != SYSTEM_ORGANIZATION]
    counts = live_counts(model)
    snapshots = {r[0]: r for r in model["snapshots"]}
    ready = [t for t in truth.values() if t.ready]
    sums = [0] * 6
    for t in ready:
        snap = snapshots.get(uuid.UUID(t.id))
        if snap is not None:
            sums = [a + b for a, b in zip(sums, snap[1:7], strict=True)]
    assert (summary.organizations, summary.organizations_listed) == (len(live_orgs), sum(1 for r in live_orgs if r[3]))
    assert (summary.clusters, summary.projects, summary.namespaces) == tuple(
        sum(c[i] for c in counts.values()) for i in range(3)
    )
    assert summary.clusters == sum(1 for t in truth.values() if t.live)
    assert summary.clusters_ready == len(ready) > 0
    assert [
        summary.nodes,
        summary.ready_nodes,
        summary.pods,
        summary.allocatable_pods,
        summary.cpu_allocatable_millicores,
        summary.memory_allocatable_bytes,
    ] == sums
    by_status = Counter(t.status for t in truth.values() if t.live)
    assert [(c.status, c.clusters) for c in summary.clusters_by_status] == sorted(
        (proto_status(s), n) for s, n in by_status.items()
    )
    assert summary.clusters_needing_attention == sum(
        n for s, n in by_status.items() if clusterstatus.needs_attention(s)
    )
    assert summary.clusters_stale == sum(1 for t in truth.values() if t.stale) > 0
    kinds = rows(
        db,
        "SELECT f.kind, count(*) FROM tenant.drift_findings f LEFT JOIN tenant.clusters c ON c.id = f.cluster_id"
        " WHERE f.resolved IS NULL AND c.organization_id IS DISTINCT FROM %s GROUP BY 1 ORDER BY 1",
        (SYSTEM_ORGANIZATION,),
    )
    assert [(k.kind, k.findings) for k in summary.open_findings_by_kind] == [
        (fleet_pb2.DriftKind.Value(f"DRIFT_KIND_{r[0].upper()}"), r[1]) for r in kinds
    ]
    loops = rows(db, "SELECT loop, last_completed, interval_seconds FROM tenant.worker_heartbeats ORDER BY loop")
    assert [(lp.loop, when(lp, "last_completed"), lp.interval_seconds) for lp in summary.loops] == [
        tuple(r) for r in loops
    ]
    assert [lp.age_seconds for lp in summary.loops] == [int((NOW - r[1]).total_seconds()) for r in loops]
    assert when(summary, "read") == NOW
