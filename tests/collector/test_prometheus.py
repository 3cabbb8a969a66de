"""The Prometheus source (INVENTORY_SOURCE=prometheus) against fleet-sim over HTTPS and real PostgreSQL.

The collector resolves each shoot's monitoring secret in the garden, queries its Prometheus with
basic auth and stores the same snapshot tables as the API-server source; what it stores is compared
with the simulator's own expected counts, and each failure of the monitoring stack must keep the
cluster's previous numbers, name the source in `last_error` and leave the other clusters alone.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from collector.prometheus.queries import QUERIES
from tests.collector.test_process import PROJECT, WAIT_SECONDS, ready_ids, real_worker_env, serving_labels
from tests.collector.test_sim import assert_stored_equals_expected, rows
from tests.fixtures.collector import FAULT_TIMEOUT_SECONDS, LATENCY_SECONDS, Collector, shoot_key_of
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest


def _snapshot_numbers(database: TestDatabase, cluster_id: Any) -> dict[str, Any]:
    [snap] = rows(database, "SELECT * FROM tenant.cluster_snapshots WHERE cluster_id = %s", cluster_id)
    return snap


async def test_a_round_through_prometheus_stores_what_the_simulator_holds(
    monitoring_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    summary = await monitoring_collector.round()
    assert summary.collected >= 10
    for result in summary.results:
        if not result.ok:
            assert result.reason == "no_shoot", result.error
            continue
        expected = sim.control.expected(shoot_key_of(sim, result.cluster.id))
        assert_stored_equals_expected(sim_database, result.cluster.id, expected, ledger=False)
        assert _snapshot_numbers(sim_database, result.cluster.id)["source"] == "prometheus"


def _all_snapshots(database: TestDatabase) -> dict[str, dict[Any, tuple[Any, ...]]]:
    """Every snapshot number the collector stored, without when and from where."""
    clusters = rows(
        database,
        "SELECT cluster_id, nodes, ready_nodes, pods, allocatable_pods, cpu_allocatable_millicores,"
        " memory_allocatable_bytes, last_error FROM tenant.cluster_snapshots",
    )
    pools = rows(database, "SELECT node_pool_id, nodes, ready_nodes FROM tenant.node_pool_snapshots")
    namespaces = rows(database, "SELECT namespace_id, pods FROM tenant.namespace_snapshots")
    return {
        "clusters": {r["cluster_id"]: tuple(v for k, v in r.items() if k != "cluster_id") for r in clusters},
        "pools": {r["node_pool_id"]: (r["nodes"], r["ready_nodes"]) for r in pools},
        "namespaces": {r["namespace_id"]: (r["pods"],) for r in namespaces},
    }


def differences(a: dict[str, dict[Any, tuple[Any, ...]]], b: dict[str, dict[Any, tuple[Any, ...]]]) -> list[str]:
    out: list[str] = []
    for table, rows_a in a.items():
        rows_b = b[table]
        for key in sorted(set(rows_a) | set(rows_b), key=str):
            if rows_a.get(key) != rows_b.get(key):
                out.append(f"{table} {key}: {rows_a.get(key)} != {rows_b.get(key)}")
    return out


@pytest.mark.parametrize("labels_exported", [True, False], ids=["allow-listed", "no-allow-list"])
async def test_both_sources_store_the_same_numbers_for_the_same_world(
    sim_collector: Collector,
    monitoring_collector: Collector,
    sim: SimUnderTest,
    sim_database: TestDatabase,
    labels_exported: bool,
) -> None:
    api_round = await sim_collector.round()
    by_api = _all_snapshots(sim_database)
    sources = rows(sim_database, "SELECT DISTINCT source FROM tenant.cluster_snapshots WHERE observed IS NOT NULL")
    assert sources == [{"source": "apiserver"}]
    sim.control.set_monitoring_labels(labels_exported)
    sim.control.advance_clock(900)
    prometheus_round = await monitoring_collector.round()
    by_prometheus = _all_snapshots(sim_database)
    assert [(r.cluster.id, r.ok) for r in sorted(api_round.results, key=lambda r: str(r.cluster.id))] == [
        (r.cluster.id, r.ok) for r in sorted(prometheus_round.results, key=lambda r: str(r.cluster.id))
    ]
    # Without the pool label the pools keep what the API server counted, so they agree either way;
    # the namespaces are matched by their generated names instead of the id label.
    assert differences(by_api, by_prometheus) == []
    collected = [r for r in prometheus_round.results if r.ok]
    assert collected and all(r.reading is not None and r.reading.pools_known == labels_exported for r in collected)
    sources = rows(sim_database, "SELECT DISTINCT source FROM tenant.cluster_snapshots WHERE observed IS NOT NULL")
    assert sources == [{"source": "prometheus"}]


async def test_without_the_pool_label_the_pools_keep_their_counts(
    monitoring_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    clusters = await monitoring_collector.few(2)
    await monitoring_collector.round(clusters)
    victim = clusters[0]
    key = shoot_key_of(sim, victim.id)
    pools_before = rows(
        sim_database, "SELECT * FROM tenant.node_pool_snapshots WHERE cluster_id = %s ORDER BY 1", victim.id
    )
    shoot = sim.control.shoot(key)
    sim.control.scale_pool(key, shoot.workers[0].name, shoot.workers[0].minimum + 2)
    sim.control.set_monitoring_labels(False, key=key)
    sim.control.advance_clock(900)
    await monitoring_collector.round(clusters)
    expected = sim.control.expected(key)
    snap = _snapshot_numbers(sim_database, victim.id)
    assert (snap["nodes"], snap["ready_nodes"], snap["last_error"]) == (expected.nodes, expected.ready_nodes, None)
    pools_after = rows(
        sim_database, "SELECT * FROM tenant.node_pool_snapshots WHERE cluster_id = %s ORDER BY 1", victim.id
    )
    assert pools_after == pools_before, "nodes that cannot be told apart by pool say nothing about any pool"


async def test_a_change_between_two_queries_of_a_collection_neither_fails_nor_mixes_it(
    monitoring_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    """Every query of one collection is evaluated at one time: fleet-sim adds 20 nodes right after its
    first answer, and the collection stores the world as it was, every number from that one state."""
    [cluster] = await monitoring_collector.few(1)
    key = shoot_key_of(sim, cluster.id)
    before = sim.control.expected(key)
    worker = sim.control.shoot(key).workers[0]
    sim.control.scale_pool_after_queries(key, worker.name, worker.minimum + 20, queries=1)
    sim.control.clear_requests()
    summary = await monitoring_collector.round([cluster])
    assert summary.collected == 1, [r.error for r in summary.results]
    assert sim.control.expected(key).nodes == before.nodes + 20, "the change landed during the collection"
    assert_stored_equals_expected(sim_database, cluster.id, before, ledger=False)
    times = {
        r.query.get("time")
        for r in sim.control.requests(key)
        if r.extra.get("api") == "prometheus" and r.api_path == "/api/v1/query"
    }
    assert len(times) == 1 and None not in times, times
    sim.control.advance_clock(60)
    await monitoring_collector.round([cluster])
    assert_stored_equals_expected(sim_database, cluster.id, sim.control.expected(key), ledger=False)


async def test_no_shoot_credential_is_minted_and_secrets_are_read_once_per_ttl(
    monitoring_collector: Collector, sim: SimUnderTest
) -> None:
    clusters = await monitoring_collector.few(4)
    sim.control.clear_requests()
    for _ in range(3):
        summary = await monitoring_collector.round(clusters)
        assert summary.collected == len(clusters)
        sim.control.advance_clock(60)
    log = sim.control.requests()
    assert not [r for r in log if r.api_path.endswith("kubeconfig")], "the Prometheus source mints nothing"
    assert not [r for r in log if r.target not in {"garden"} and r.extra.get("api") != "prometheus"], (
        "no shoot API server was asked"
    )
    secrets = [r for r in log if r.target == "garden" and r.resource == "secrets"]
    assert len(secrets) == len(clusters), "one secret read per cluster while the cache holds"
    assert monitoring_collector.resolver is not None and monitoring_collector.resolver.reads == len(clusters)
    asked = [r for r in log if r.extra.get("api") == "prometheus"]
    queries = [r for r in asked if r.api_path == "/api/v1/query"]
    assert all(r.method == "GET" for r in asked)
    assert len(queries) == 3 * len(clusters) * len(QUERIES), "six instant queries per cluster and round"
    configs = [r for r in asked if r.api_path == "/api/v1/status/config"]
    assert len(configs) == len(clusters) == len(asked) - len(queries), "whose it is: asked once per target"


async def test_rotated_monitoring_credentials_are_resolved_again(
    monitoring_collector: Collector, sim: SimUnderTest
) -> None:
    clusters = await monitoring_collector.few(2)
    await monitoring_collector.round(clusters)
    key = shoot_key_of(sim, clusters[0].id)
    sim.control.rotate_monitoring(key)
    summary = await monitoring_collector.round(clusters)
    assert summary.collected == 2, [r.error for r in summary.results]
    assert monitoring_collector.resolver is not None and monitoring_collector.resolver.reads == 3


# Each failure of a shoot's monitoring: (fault, the reasons the collector may give, what last_error says).
MONITORING_FAULTS = [
    ("unauthorized", "unauthorized", "401"),
    ("unavailable", "server_error", "503"),
    ("server_error", "server_error", "500"),
    ("hang", "timeout", f"INVENTORY_TIMEOUT_SECONDS|no complete answer within {FAULT_TIMEOUT_SECONDS:g} s"),
    ("latency", "timeout", f"INVENTORY_TIMEOUT_SECONDS|no complete answer within {FAULT_TIMEOUT_SECONDS:g} s"),
    ("truncated", "bad_response", "cut off|not complete JSON"),
    ("malformed", "bad_response", "JSON"),
    ("reset", "bad_response|connection_failed", ""),
    ("redirect", "bad_response", "redirect"),
    ("gzip_bomb", "bad_response", "compressed"),
    ("endless_answer", "too_large", "GARDENER_MAX_ANSWER_MIB"),
    ("flood", "too_large", "series|JSON values"),
    ("value_bomb", "too_large", "more than 200,000 JSON values (an instant query's bound)"),
]


# A 4 MiB answer bound: an endless answer reaches it quickly, a flood of 30,000 series stays under it.
@pytest.mark.parametrize(
    "monitoring_collector", [{"timeout_seconds": FAULT_TIMEOUT_SECONDS, "answer_bytes": 4 << 20}], indirect=True
)
@pytest.mark.parametrize(("fault", "reason", "says"), MONITORING_FAULTS, ids=[f[0] for f in MONITORING_FAULTS])
async def test_a_failing_monitoring_stack_keeps_the_numbers_and_names_the_source(
    monitoring_collector: Collector,
    sim: SimUnderTest,
    sim_database: TestDatabase,
    fault: str,
    reason: str,
    says: str,
) -> None:
    clusters = await monitoring_collector.few()
    first = await monitoring_collector.round(clusters)
    assert all(r.ok for r in first.results)
    victim = clusters[0]
    key = shoot_key_of(sim, victim.id)
    before = _snapshot_numbers(sim_database, victim.id)
    pools_before = rows(
        sim_database, "SELECT * FROM tenant.node_pool_snapshots WHERE cluster_id = %s ORDER BY 1", victim.id
    )
    sim.control.fault(
        key,
        fault,
        resource="prometheus",
        seconds=LATENCY_SECONDS if fault == "latency" else 0.0,
        count={"flood": 30_000, "value_bomb": 2}.get(fault, 0),  # series of a flood, MiB of a value bomb
    )
    sim.control.advance_clock(900)
    second = await monitoring_collector.round(clusters)
    sim.control.clear_faults()
    by_id = {r.cluster.id: r for r in second.results}
    failed = by_id[victim.id]
    assert not failed.ok
    assert failed.reason in reason.split("|"), failed.error
    after = _snapshot_numbers(sim_database, victim.id)
    assert {k: v for k, v in after.items() if not k.startswith("last_error")} == {
        k: v for k, v in before.items() if not k.startswith("last_error")
    }
    assert "Prometheus" in after["last_error"], after["last_error"]
    assert any(part in after["last_error"] for part in says.split("|")), after["last_error"]
    pools_after = rows(
        sim_database, "SELECT * FROM tenant.node_pool_snapshots WHERE cluster_id = %s ORDER BY 1", victim.id
    )
    assert pools_after == pools_before
    assert all(by_id[c.id].ok for c in clusters[1:]), "one cluster never fails the round"


async def test_a_shoot_without_monitoring_fails_alone_as_monitoring_unavailable(
    monitoring_collector: Collector, sim: SimUnderTest
) -> None:
    clusters = await monitoring_collector.few(2)
    sim.control.fault("garden", "not_found", resource="secrets", times=1)  # the first secret read: 404
    summary = await monitoring_collector.round(clusters)
    failed = [r for r in summary.results if not r.ok]
    assert len(failed) == 1 and failed[0].reason == "monitoring_unavailable", [r.error for r in failed]
    assert failed[0].error is not None and ".monitoring does not exist" in failed[0].error
    assert "the shoot's Prometheus" in failed[0].error


# (fleet-sim's monitoring stack, the worker's split settings, the shoot credentials it may mint)
PROCESS_SPLITS = [
    ("gardener", {}, {"viewerkubeconfig"}),
    ("fuller", {"PROMETHEUS_PARTS": "nodes,pods", "PROMETHEUS_OTHERS_FROM": "nowhere"}, set()),
]


@pytest.mark.parametrize(("stack", "split", "mints"), PROCESS_SPLITS, ids=["default-split", "prometheus-only"])
def test_the_worker_process_collects_through_prometheus_without_an_admin_credential(
    sim: SimUnderTest, sim_database: TestDatabase, tmp_path: Path, stack: str, split: dict[str, str], mints: set[str]
) -> None:
    """`cluster-worker collect` as a process with INVENTORY_SOURCE=prometheus and the simulator's CA: by
    default against a stock Gardener shoot Prometheus (the rest read with viewerkubeconfig, even with
    INVENTORY_CREDENTIAL=admin set), or from the Prometheus alone, minting nothing."""
    sim.control.set_monitoring_stack(stack)
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(sim.server.sim.tls.ca_pem)
    env = real_worker_env(
        sim,
        sim_database,
        tmp_path,
        INVENTORY_SOURCE="prometheus",
        PROMETHEUS_CA_FILE=str(ca_file),
        PROMETHEUS_ALLOW_LOOPBACK="true",
        INVENTORY_CREDENTIAL="admin",
        **split,
    )
    ready, served = ready_ids(sim_database), serving_labels(sim)
    chosen = sorted(cid for cid in ready if cid in served)[:3]
    sim.control.clear_requests()
    done = subprocess.run(
        [sys.executable, "-m", "collector.main", "collect", *(a for cid in chosen for a in ("--cluster", cid))],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    stored = rows(
        sim_database,
        "SELECT cluster_id::text, source FROM tenant.cluster_snapshots"
        " WHERE last_error IS NULL AND observed IS NOT NULL",
    )
    assert {(r["cluster_id"], r["source"]) for r in stored} == {(cid, "prometheus") for cid in chosen}
    log = sim.control.requests()
    minted = {r.api_path.rsplit("/", 1)[-1] for r in log if r.api_path.endswith("kubeconfig")}
    assert minted == mints, "never an adminkubeconfig"
    assert {r.target for r in log if r.extra.get("api") == "prometheus"} == {
        s.key for s in sim.shoots(lambda s: s.cluster_label in chosen)
    }
