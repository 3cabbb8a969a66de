"""The collector against fleet-sim (Kubernetes and Gardener APIs over TLS) and real PostgreSQL.

The database holds the fleet the simulator serves (`sim_database`); the collector connects as
fun_cluster_worker and reads every shoot through the official client. What it stores is compared
with `SimControl.expected(...)`, the simulator's own count of what a correct collector finds.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from psycopg.rows import dict_row

from collector.inventory.results import ClusterResult
from common.naming import worker_name
from sim.api.credentials.tokens import TokenKind
from sim.control.expected import ExpectedShoot
from tests.fixtures.collector import FAULT_TIMEOUT_SECONDS, LATENCY_SECONDS, Collector, shoot_key_of
from tests.fixtures.collector import SHOOT_FAULTS as FAULTS
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest


def rows(database: TestDatabase, query: str, *params: object) -> list[dict[str, Any]]:
    with database.admin() as admin, admin.cursor(row_factory=dict_row) as cur:
        return cur.execute(query, params).fetchall()


def assert_stored_equals_expected(
    database: TestDatabase, cluster_id: UUID, expected: ExpectedShoot, *, ledger: bool = True
) -> None:
    """The cluster's snapshots (and, with `ledger`, its active ledger rows) are what the simulator holds."""
    [snap] = rows(database, "SELECT * FROM tenant.cluster_snapshots WHERE cluster_id = %s", cluster_id)
    assert snap["last_error"] is None
    assert (snap["nodes"], snap["ready_nodes"], snap["pods"]) == (expected.nodes, expected.ready_nodes, expected.pods)
    assert (snap["allocatable_pods"], snap["cpu_allocatable_millicores"], snap["memory_allocatable_bytes"]) == (
        expected.allocatable.pods,
        expected.allocatable.cpu_millicores,
        expected.allocatable.memory_bytes,
    )
    pools = rows(
        database,
        "SELECT p.name, s.nodes, s.ready_nodes FROM tenant.node_pools p"
        " JOIN tenant.node_pool_snapshots s ON s.node_pool_id = p.id WHERE p.cluster_id = %s AND p.deleted IS NULL",
        cluster_id,
    )
    live_pools = rows(
        database, "SELECT name FROM tenant.node_pools WHERE cluster_id = %s AND deleted IS NULL", cluster_id
    )
    assert len(pools) == len(live_pools), "every live node pool gets a snapshot"
    for pool in pools:
        counts = expected.pools.get(worker_name(pool["name"]))
        assert (pool["nodes"], pool["ready_nodes"]) == ((counts.nodes, counts.ready_nodes) if counts else (0, 0))
    namespaces = rows(
        database,
        "SELECT n.id, s.pods FROM tenant.namespaces n JOIN tenant.projects p ON p.id = n.project_id"
        " JOIN tenant.namespace_snapshots s ON s.namespace_id = n.id"
        " WHERE p.cluster_id = %s AND n.deleted IS NULL AND p.deleted IS NULL",
        cluster_id,
    )
    for namespace in namespaces:
        assert namespace["pods"] == expected.namespace_pods.get(str(namespace["id"]), 0)
    if ledger:
        assert_ledger_equals_expected(database, cluster_id, expected)


def assert_ledger_equals_expected(database: TestDatabase, cluster_id: UUID, expected: ExpectedShoot) -> None:
    ledger = rows(
        database,
        "SELECT resource_type, namespace, name, resource_id FROM tenant.infrastructure_resources"
        " WHERE cluster_id = %s AND destroyed IS NULL",
        cluster_id,
    )
    stored = {(r["resource_type"], r["namespace"], r["name"]): r["resource_id"] for r in ledger}
    wanted: dict[tuple[str, str, str], str] = {}
    for entry in expected.ledger:
        if entry.resource_type == "kubernetes.node" or entry.tenant:
            cluster_wide = entry.resource_type in {"kubernetes.node", "kubernetes.persistentvolume"}
            wanted[(entry.resource_type, "" if cluster_wide else entry.namespace, entry.name)] = entry.resource_id
    assert set(stored) == set(wanted)
    for key, resource_id in wanted.items():
        # An ingress's id is the address of the load balancer serving it (the simulator names it by key).
        if key[0] != "kubernetes.ingress":
            assert stored[key] == resource_id, key


async def test_one_round_stores_what_the_simulator_holds(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    summary = await sim_collector.round()
    assert summary.collected >= 10, "the test fleet has many ready clusters with shoots"
    serving = {s.cluster_label for s in sim.shoots(lambda s: s.serving)}
    for result in summary.results:
        if result.ok:
            assert_stored_equals_expected(
                sim_database, result.cluster.id, sim.control.expected(shoot_key_of(sim, result.cluster.id))
            )
        else:
            # Only a planted drift may fail: a ready cluster whose shoot is gone from the garden.
            assert result.reason == "no_shoot", result.error
            assert str(result.cluster.id) not in serving
    pods = [r for r in sim.control.requests() if r.resource == "pods" and r.method == "GET"]
    assert pods and all(
        r.query.get("resourceVersion") == "0"
        and r.query.get("fieldSelector") == "status.phase!=Succeeded,status.phase!=Failed"
        and "as=PartialObjectMetadataList" in r.accept
        for r in pods
    )
    nodes = [r for r in sim.control.requests() if r.resource == "nodes"]
    assert nodes and all(r.query.get("resourceVersion") == "0" for r in nodes)


async def test_the_world_changing_between_rounds_is_followed(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    first = await sim_collector.round()
    target = next(r for r in first.results if r.ok)
    key = shoot_key_of(sim, target.cluster.id)
    shoot = sim.control.shoot(key)
    sim.control.scale_pool(key, shoot.workers[0].name, shoot.workers[0].minimum + 2)
    tenant = next(ns for ns, nid in _tenant_names(sim, key).items() if nid)
    sim.control.add_pods(key, tenant, 5)
    sim.control.scale_pool(key, "surprise", 1)  # a pool the database does not know: counts for the cluster
    sim.control.advance_clock(900)
    await sim_collector.round()
    assert_stored_equals_expected(sim_database, target.cluster.id, sim.control.expected(key))
    destroyed = rows(
        sim_database,
        "SELECT count(*) AS n FROM tenant.infrastructure_resources WHERE cluster_id = %s AND destroyed IS NOT NULL",
        target.cluster.id,
    )
    assert destroyed == [{"n": 0}], "scaling up destroys nothing"


def _tenant_names(sim: SimUnderTest, key: str) -> dict[str, str | None]:
    contents = sim.server.sim.world.contents(key)
    return {ns.name: ns.namespace_id for ns in contents.namespaces.iter_from()}


@pytest.mark.parametrize("sim_collector", [{"timeout_seconds": FAULT_TIMEOUT_SECONDS}], indirect=True)
@pytest.mark.parametrize(("fault", "resource", "reason", "says"), FAULTS, ids=[f[0] for f in FAULTS])
async def test_a_fault_on_one_shoot_keeps_its_numbers_and_says_why(
    sim_collector: Collector,
    sim: SimUnderTest,
    sim_database: TestDatabase,
    fault: str,
    resource: str | None,
    reason: str,
    says: str,
) -> None:
    clusters = await sim_collector.few()
    first = await sim_collector.round(clusters)
    victim = next(r for r in first.results if r.ok)
    key = shoot_key_of(sim, victim.cluster.id)
    [before] = rows(sim_database, "SELECT * FROM tenant.cluster_snapshots WHERE cluster_id = %s", victim.cluster.id)
    pools_before = rows(
        sim_database, "SELECT * FROM tenant.node_pool_snapshots WHERE cluster_id = %s ORDER BY 1", victim.cluster.id
    )
    sim.control.fault(key, fault, resource=resource, seconds=LATENCY_SECONDS if fault == "latency" else 0.0)
    sim.control.advance_clock(900)
    second = await sim_collector.round(clusters)
    sim.control.clear_faults()
    by_id = {r.cluster.id: r for r in second.results}
    failed = by_id[victim.cluster.id]
    assert not failed.ok
    assert failed.reason in reason.split("|"), failed.error
    [after] = rows(sim_database, "SELECT * FROM tenant.cluster_snapshots WHERE cluster_id = %s", victim.cluster.id)
    assert {k: v for k, v in after.items() if not k.startswith("last_error")} == {
        k: v for k, v in before.items() if not k.startswith("last_error")
    }
    assert any(part in after["last_error"] for part in says.split("|")), after["last_error"]
    assert after["last_error_at"] is not None
    assert (
        rows(
            sim_database,
            "SELECT * FROM tenant.node_pool_snapshots WHERE cluster_id = %s ORDER BY 1",
            victim.cluster.id,
        )
        == pools_before
    )
    others_first = {r.cluster.id for r in first.results if r.ok} - {victim.cluster.id}
    assert all(by_id[cid].ok for cid in others_first), "every other cluster collected in the same round"


async def test_a_missing_kind_leaves_only_its_ledger_type_alone(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    clusters = await sim_collector.few(8)
    first = await sim_collector.round(clusters)
    with_certs = [
        r
        for r in first.results
        if r.ok and r.ledger is not None and r.ledger.by_type["kubernetes.certificate"].found > 0
    ]
    assert with_certs, "the test fleet has a cluster with tenant certificates"
    victim = with_certs[0]
    key = shoot_key_of(sim, victim.cluster.id)
    certificates_before = rows(
        sim_database,
        "SELECT * FROM tenant.infrastructure_resources WHERE cluster_id = %s"
        " AND resource_type = 'kubernetes.certificate'",
        victim.cluster.id,
    )
    sim.control.fault(key, "not_found", resource="certificates")
    tenant = next(ns for ns, nid in _tenant_names(sim, key).items() if nid)
    sim.control.add_pods(key, tenant, 3)
    sim.control.advance_clock(900)
    second = await sim_collector.round(clusters)
    result = next(r for r in second.results if r.cluster.id == victim.cluster.id)
    assert result.ok and result.ledger is not None
    assert result.ledger.unlisted["kubernetes.certificate"].reason == "not_found"
    assert (
        rows(
            sim_database,
            "SELECT * FROM tenant.infrastructure_resources WHERE cluster_id = %s"
            " AND resource_type = 'kubernetes.certificate'",
            victim.cluster.id,
        )
        == certificates_before
    ), "could not list is not none exist"
    expected = sim.control.expected(key)
    [snap] = rows(sim_database, "SELECT * FROM tenant.cluster_snapshots WHERE cluster_id = %s", victim.cluster.id)
    assert snap["pods"] == expected.pods, "the snapshot moved on"


def _mints(sim: SimUnderTest, subresource: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in sim.control.requests("garden"):
        if entry.method == "POST" and entry.api_path.endswith(subresource):
            shoot = entry.api_path.split("/")[-2]
            counts[shoot] = counts.get(shoot, 0) + 1
    return counts


async def test_credentials_are_minted_about_once_an_hour(sim_collector: Collector, sim: SimUnderTest) -> None:
    # Rounds at 0, 15, 30 and 45 minutes with one-hour credentials, then one at 60.
    collected: list[set[UUID]] = []
    clusters = await sim_collector.few()
    for round_number in range(5):
        if round_number:
            sim.control.advance_clock(900)
        summary = await sim_collector.round(clusters)
        collected.append({r.cluster.id for r in summary.results if r.ok})
        if round_number == 3:
            mints_in_four_rounds = _mints(sim, "adminkubeconfig")
    assert all(c == {c.id for c in clusters} for c in collected), "every round collected every cluster"
    assert mints_in_four_rounds and set(mints_in_four_rounds.values()) == {1}
    after_an_hour = _mints(sim, "adminkubeconfig")
    assert set(after_an_hour.values()) == {2}, "a credential about to expire is renewed"
    assert sim_collector.credentials is not None
    assert max(sim_collector.credentials.minted.values()) == 2


async def test_a_rejected_credential_is_dropped_and_minted_again_once(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    clusters = await sim_collector.few(2)
    first = await sim_collector.round(clusters)
    target = next(r for r in first.results if r.ok)
    key = shoot_key_of(sim, target.cluster.id)
    sim.control.fault(key, "unauthorized", times=1)
    sim.control.advance_clock(900)
    second = await sim_collector.round(clusters)
    assert next(r for r in second.results if r.cluster.id == target.cluster.id).ok
    assert _mints(sim, "adminkubeconfig")[sim.control.shoot(key).name] == 2


@pytest.mark.parametrize("sim_collector", [{"credential": "viewer"}], indirect=True)
async def test_viewer_mode_never_asks_for_admin_credentials(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    summary = await sim_collector.round()
    assert summary.collected >= 10
    assert _mints(sim, "adminkubeconfig") == {}
    assert _mints(sim, "viewerkubeconfig")
    shoot_requests = [r for r in sim.control.requests() if r.target not in {"garden", "control"}]
    assert shoot_requests and {r.token_kind for r in shoot_requests} == {TokenKind.VIEWER}
    for result in summary.results:
        if result.ok:
            assert_stored_equals_expected(
                sim_database, result.cluster.id, sim.control.expected(shoot_key_of(sim, result.cluster.id))
            )


async def test_the_client_makes_no_hidden_retries(sim_collector: Collector, sim: SimUnderTest) -> None:
    first = await sim_collector.round(await sim_collector.few(1))
    target = next(r for r in first.results if r.ok)
    key = shoot_key_of(sim, target.cluster.id)
    sim.control.fault(key, "server_error", resource="nodes")
    sim.control.clear_requests()
    result: ClusterResult = await sim_collector.loop.collect(target.cluster)
    assert result.reason == "server_error"
    assert len([r for r in sim.control.requests(key) if r.resource == "nodes"]) == 1


async def test_a_garden_that_cannot_be_listed_uses_the_last_known_shoots(
    sim_collector: Collector, sim: SimUnderTest
) -> None:
    first = await sim_collector.round()
    sim.control.fault("garden", "server_error", resource="shoots")
    second = await sim_collector.round()
    assert {r.cluster.id for r in second.results if r.ok} == {r.cluster.id for r in first.results if r.ok}


async def test_pools_with_a_common_prefix_and_no_usable_character_get_their_own_counts(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    """The simulator names workers as the provisioning side does; the collector maps them back."""
    cluster_id = UUID(sim.fleet.notes["planted.pool_names"])
    summary = await sim_collector.round()
    [result] = [r for r in summary.results if r.cluster.id == cluster_id]
    assert result.ok, result.error
    shoot = sim.control.shoot(shoot_key_of(sim, cluster_id))
    served = {w.name for w in shoot.workers}
    assert {worker_name(n) for n in ("workers-production-a", "workers-production-b", "!!!")} <= served
    stored = {
        r["name"]: r["nodes"]
        for r in rows(
            sim_database,
            "SELECT p.name, s.nodes FROM tenant.node_pools p JOIN tenant.node_pool_snapshots s"
            " ON s.node_pool_id = p.id WHERE p.cluster_id = %s",
            cluster_id,
        )
    }
    minimums = {p.name: p.autoscale_min for p in sim.fleet.node_pools if p.cluster_id == cluster_id}
    assert stored["workers-production-a"] == minimums["workers-production-a"] == 1
    assert stored["workers-production-b"] == minimums["workers-production-b"] == 2
    assert stored["!!!"] == minimums["!!!"] == 3
    assert_stored_equals_expected(sim_database, cluster_id, sim.control.expected(shoot_key_of(sim, cluster_id)))
