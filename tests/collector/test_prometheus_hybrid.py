"""INVENTORY_SOURCE=prometheus against a stock Gardener shoot Prometheus (fleet-sim's default stack).

A stock Gardener shoot Prometheus holds the nodes and kube-system, nothing of the tenants. So by
default the collector reads the nodes (numbers and the ledger's node rows) from it and the rest
(tenant namespaces, pods, volumes, load balancers, ingresses, certificates) from the shoot's API
server with `viewerkubeconfig`, never `adminkubeconfig` (collector/inventory/split.py). The same world
read through both sources stores the same snapshots and the same ledger rows; what differs by
design: the snapshot's `source`, the requests made, and which credential was minted. The ledger
follows the world under this source, and a split that asks the stock Prometheus for pods fails
loudly instead of storing nothing.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest

from collector.inventory.split import Split
from collector.prometheus.queries import NODE_QUERIES
from tests.collector.test_prometheus import differences
from tests.collector.test_sim import assert_ledger_equals_expected, assert_stored_equals_expected, rows
from tests.fixtures.collector import Collector, shoot_key_of
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest

# What the two sources store differently by design: which source read the snapshot (`source`), and when.
LEDGER_COLUMNS = "cluster_id, resource_type, namespace, name, resource_id, billable, created, destroyed"


def stored_numbers(database: TestDatabase) -> dict[str, dict[Any, tuple[Any, ...]]]:
    """Every snapshot number and every ledger row, without when or which source read them."""
    clusters = rows(
        database,
        "SELECT cluster_id, nodes, ready_nodes, pods, allocatable_pods, cpu_allocatable_millicores,"
        " memory_allocatable_bytes, last_error FROM tenant.cluster_snapshots",
    )
    pools = rows(database, "SELECT node_pool_id, nodes, ready_nodes FROM tenant.node_pool_snapshots")
    namespaces = rows(database, "SELECT namespace_id, pods, unread_reason FROM tenant.namespace_snapshots")
    ledger = rows(database, f"SELECT id, {LEDGER_COLUMNS} FROM tenant.infrastructure_resources")
    return {
        "clusters": {r["cluster_id"]: tuple(v for k, v in r.items() if k != "cluster_id") for r in clusters},
        "pools": {r["node_pool_id"]: (r["nodes"], r["ready_nodes"]) for r in pools},
        "namespaces": {r["namespace_id"]: (r["pods"], r["unread_reason"]) for r in namespaces},
        "ledger": {r["id"]: tuple(v for k, v in r.items() if k != "id") for r in ledger},
    }


async def test_the_same_world_through_both_sources_stores_the_same_snapshots_and_ledger(
    sim_collector: Collector, hybrid_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    api_round = await sim_collector.round()
    by_api = stored_numbers(sim_database)
    assert by_api["ledger"], "the API-server source recorded the fleet's resources"
    sim.control.advance_clock(900)
    sim.control.clear_requests()
    hybrid_round = await hybrid_collector.round()
    assert [(r.cluster.id, r.ok) for r in sorted(api_round.results, key=lambda r: str(r.cluster.id))] == [
        (r.cluster.id, r.ok) for r in sorted(hybrid_round.results, key=lambda r: str(r.cluster.id))
    ]
    # Every number and every ledger row as the API server's source left them: nothing created, nothing
    # destroyed, no id changed (only last_seen moved).
    assert differences(by_api, stored_numbers(sim_database)) == []
    assert all(counts.created == counts.destroyed == 0 for counts in hybrid_round.ledger.values())
    reasons = {u.reason for r in hybrid_round.results if r.ledger for u in r.ledger.unlisted.values()}
    assert "not_visible" not in reasons, "every ledger type is read: none is left as it was for want of a source"
    assert hybrid_round.unlisted == api_round.unlisted
    collected = [r for r in hybrid_round.results if r.ok]
    assert collected and all(r.reading is not None and r.reading.source == "prometheus" for r in collected)
    for result in collected:
        expected = sim.control.expected(shoot_key_of(sim, result.cluster.id))
        assert_stored_equals_expected(sim_database, result.cluster.id, expected)
    sources = rows(sim_database, "SELECT DISTINCT source FROM tenant.cluster_snapshots WHERE observed IS NOT NULL")
    assert sources == [{"source": "prometheus"}]
    log = sim.control.requests()
    minted = {r.api_path.rsplit("/", 1)[-1] for r in log if r.api_path.endswith("kubeconfig")}
    assert minted == {"viewerkubeconfig"}, "the rest is read with the viewer credential, never an admin one"
    queries = [
        r.query.get("query") for r in log if r.extra.get("api") == "prometheus" and r.api_path == "/api/v1/query"
    ]
    assert set(queries) == set(NODE_QUERIES.values()), "only what a stock Gardener shoot Prometheus holds"
    shoot_lists = {r.api_path for r in log if r.target != "garden" and r.extra.get("api") != "prometheus"}
    assert "/api/v1/nodes" not in shoot_lists, "the nodes come from the Prometheus alone"
    assert {"/api/v1/pods", "/api/v1/namespaces", "/api/v1/persistentvolumes"} <= shoot_lists


def ledger_rows(database: TestDatabase, cluster_id: UUID) -> list[dict[str, Any]]:
    return rows(database, "SELECT * FROM tenant.infrastructure_resources WHERE cluster_id = %s", cluster_id)


def active(found: list[dict[str, Any]], resource_type: str | None = None) -> set[tuple[str, str, str]]:
    return {
        (r["resource_type"], r["namespace"], r["name"])
        for r in found
        if r["destroyed"] is None and resource_type in {None, r["resource_type"]}
    }


async def test_the_ledger_follows_the_world_under_the_prometheus_source(
    hybrid_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    """Nodes come and go through the Prometheus, a tenant's volumes and load balancers through the viewer."""
    clusters = await hybrid_collector.few(8)
    await hybrid_collector.round(clusters)
    for cluster in clusters:
        key = shoot_key_of(sim, cluster.id)
        owned = [e for e in sim.control.expected(key).ledger if e.tenant and e.resource_type != "kubernetes.node"]
        if owned:
            break
    else:
        raise AssertionError("the test fleet has no tenant namespace with resources")
    before = ledger_rows(sim_database, cluster.id)
    worker = sim.control.shoot(key).workers[0]
    sim.control.scale_pool(key, worker.name, worker.minimum + 2)
    namespace = next(e.namespace for e in owned if e.namespace)
    sim.control.remove_namespace(key, namespace)
    sim.control.advance_clock(900)
    summary = await hybrid_collector.round([cluster])
    assert summary.collected == 1, [r.error for r in summary.results]
    after = ledger_rows(sim_database, cluster.id)
    assert len(active(after, "kubernetes.node") - active(before, "kubernetes.node")) == 2
    gone = active(before) - active(after)
    assert gone and all(key_[1] in {namespace, ""} and key_[0] != "kubernetes.node" for key_ in gone)
    assert summary.ledger["kubernetes.node"].created == 2
    assert_ledger_equals_expected(sim_database, cluster.id, sim.control.expected(key))


async def test_prometheus_only_moves_the_node_rows_and_leaves_the_rest_as_it_was(
    sim_collector: Collector, monitoring_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    """PROMETHEUS_OTHERS_FROM=nowhere (a fuller kube-state-metrics, nothing from the API server): the node
    rows still follow the nodes; the other types are not visible, counted, and left exactly as they were."""
    [cluster] = await sim_collector.few(1)
    await sim_collector.round([cluster])
    key = shoot_key_of(sim, cluster.id)
    before = ledger_rows(sim_database, cluster.id)
    worker = sim.control.shoot(key).workers[0]
    sim.control.scale_pool(key, worker.name, worker.minimum + 1)
    owned = [e for e in sim.control.expected(key).ledger if e.tenant and e.namespace]
    if owned:
        sim.control.remove_namespace(key, owned[0].namespace)
    sim.control.advance_clock(900)
    summary = await monitoring_collector.round([cluster])
    assert summary.collected == 1, [r.error for r in summary.results]
    after = ledger_rows(sim_database, cluster.id)
    assert len(active(after, "kubernetes.node") - active(before, "kubernetes.node")) == 1
    assert active(before) - active(after) == set(), "no row of a type not read is closed"
    result = summary.results[0]
    assert result.ledger is not None
    assert {t: u.reason for t, u in result.ledger.unlisted.items()} == {
        t: "not_visible"
        for t in (
            "kubernetes.persistentvolume",
            "kubernetes.loadbalancer",
            "kubernetes.ingress",
            "kubernetes.certificate",
        )
    }


@pytest.mark.parametrize("hybrid_collector", [{"split": Split(pods_from_prometheus=True)}], indirect=True)
async def test_pods_asked_of_a_stock_gardener_prometheus_fail_loudly(
    hybrid_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    """PROMETHEUS_PARTS=nodes,pods against a stock shoot Prometheus: kube_namespace_labels is not there, so the
    collection fails naming the setting; nothing is stored as zero."""
    [cluster] = await hybrid_collector.few(1)
    summary = await hybrid_collector.round([cluster])
    [result] = summary.results
    assert not result.ok and result.reason == "bad_response"
    assert result.error is not None and "PROMETHEUS_PARTS=nodes" in result.error
    [snapshot] = rows(sim_database, "SELECT * FROM tenant.cluster_snapshots WHERE cluster_id = %s", cluster.id)
    assert snapshot["observed"] is None, "no numbers were stored"
    assert "kube_namespace_labels is empty" in snapshot["last_error"]
