"""INVENTORY_SOURCE=prometheus against REAL Prometheus servers serving a stock Gardener shoot's series.

Each chosen shoot gets a Prometheus of its own (Debian's `prometheus`), as Gardener runs one per shoot:
it scrapes the shoot's kube-state-metrics exposition from fleet-sim (the stock Gardener stack: every
node, kube-system's pods, nothing of the tenants) with Gardener's target and external labels, and
answers over HTTPS with basic auth for the password of the shoot's monitoring secret, which fleet-sim
then points at it. The collector resolves the secret and queries it as it would a landscape's.

The same world read through the API-server source and through the Prometheus source stores the same
snapshots and the same ledger rows. What differs by design: the snapshot's `source`, the requests
made, the credential minted (`viewerkubeconfig` for the Prometheus source, never `adminkubeconfig`),
and freshness (the Prometheus holds the world as of its last scrape, so each change is waited for).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from uuid import UUID

from collector.inventory.reading import ClusterRow
from collector.prometheus.queries import NODE_QUERIES
from sim.api.prometheus import gardener_ksm
from sim.api.prometheus.monitoring import external_labels
from tests.collector.test_prometheus import differences
from tests.collector.test_prometheus_hybrid import active, ledger_rows, stored_numbers
from tests.collector.test_sim import assert_stored_equals_expected
from tests.fixtures.collector import Collector, shoot_key_of
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.prometheus import RunningPrometheus, needs_prometheus, shoot_prometheus
from tests.fixtures.sim import SimUnderTest

pytestmark = [needs_prometheus]


@contextmanager
def real_prometheus_of(sim: SimUnderTest, key: str, tmp_path: Path) -> Iterator[RunningPrometheus]:
    """A real Prometheus for the shoot, its monitoring secret pointing at it, until the block ends."""
    folder = tmp_path / key
    folder.mkdir()
    tls = sim.server.sim.tls
    with shoot_prometheus(
        folder,
        metrics_url=sim.server.sim.metrics_url(key),
        target_labels=gardener_ksm.TARGET,
        external_labels=external_labels(sim.control.shoot(key)),
        tls=(tls.ca_pem, tls.cert_pem, tls.key_pem),
        password=sim.control.monitoring_password(key),
    ) as prometheus:
        sim.control.set_monitoring_url(key, prometheus.url)
        try:
            yield prometheus
        finally:
            sim.control.set_monitoring_url(key, None)


def scraped(prometheus: RunningPrometheus, sim: SimUnderTest, key: str) -> None:
    """Wait until the Prometheus holds the shoot as it is now: every node, with its Ready condition."""
    expected = sim.control.expected(key)

    def current() -> bool:
        nodes = prometheus.query("count(kube_node_info)")
        ready = prometheus.query('sum(kube_node_status_condition{condition="Ready",status="true"})')
        return [float(r["value"][1]) for r in nodes + ready] == [expected.nodes, expected.ready_nodes]

    prometheus.wait_until(current, f"{key}'s {expected.nodes} nodes, {expected.ready_nodes} Ready")


async def two_clusters(collector: Collector) -> list[ClusterRow]:
    return await collector.few(2)


async def test_against_real_prometheus_both_sources_store_the_same_snapshots_and_ledger(
    sim_collector: Collector,
    hybrid_collector: Collector,
    sim: SimUnderTest,
    sim_database: TestDatabase,
    tmp_path: Path,
) -> None:
    clusters = await two_clusters(sim_collector)
    keys = {cluster.id: shoot_key_of(sim, cluster.id) for cluster in clusters}
    with ExitStack() as stack:
        servers: dict[UUID, RunningPrometheus] = {
            cluster_id: stack.enter_context(real_prometheus_of(sim, key, tmp_path)) for cluster_id, key in keys.items()
        }
        for cluster_id, prometheus in servers.items():
            scraped(prometheus, sim, keys[cluster_id])
        await sim_collector.round(clusters)
        by_api = stored_numbers(sim_database)
        sim.control.clear_requests()
        summary = await hybrid_collector.round(clusters)
        assert summary.collected == len(clusters), [r.error for r in summary.results]
        # Every snapshot number and every ledger row as the API-server source stored them.
        assert differences(by_api, stored_numbers(sim_database)) == []
        assert all(counts.created == counts.destroyed == 0 for counts in summary.ledger.values())
        for cluster in clusters:
            assert_stored_equals_expected(sim_database, cluster.id, sim.control.expected(keys[cluster.id]))
        log = sim.control.requests()
        assert not [r for r in log if r.extra.get("api") == "prometheus"], "fleet-sim's own Prometheus was not asked"
        minted = {r.api_path.rsplit("/", 1)[-1] for r in log if r.api_path.endswith("kubeconfig")}
        assert minted == {"viewerkubeconfig"}, "never an adminkubeconfig"

        # The world moves: a node more in one cluster, a tenant namespace (and what it held) gone in the other.
        grown, emptied = clusters
        worker = sim.control.shoot(keys[grown.id]).workers[0]
        nodes_before = active(ledger_rows(sim_database, grown.id), "kubernetes.node")
        sim.control.scale_pool(keys[grown.id], worker.name, worker.minimum + 1)
        owned = [e for e in sim.control.expected(keys[emptied.id]).ledger if e.tenant and e.namespace]
        rows_before = active(ledger_rows(sim_database, emptied.id))
        if owned:
            sim.control.remove_namespace(keys[emptied.id], owned[0].namespace)
        scraped(servers[grown.id], sim, keys[grown.id])
        moved = await hybrid_collector.round(clusters)
        assert moved.collected == len(clusters), [r.error for r in moved.results]
        assert len(active(ledger_rows(sim_database, grown.id), "kubernetes.node") - nodes_before) == 1
        assert moved.ledger["kubernetes.node"].created == 1
        gone = rows_before - active(ledger_rows(sim_database, emptied.id))
        assert (not owned and not gone) or (gone and all(k[0] != "kubernetes.node" for k in gone))
        for cluster in clusters:
            assert_stored_equals_expected(sim_database, cluster.id, sim.control.expected(keys[cluster.id]))


async def test_only_the_node_queries_are_sent_and_all_answer_from_the_real_prometheus(
    hybrid_collector: Collector, sim: SimUnderTest, tmp_path: Path
) -> None:
    """What the collector asks a stock Gardener shoot Prometheus is all there: every query has series."""
    [cluster] = await hybrid_collector.few(1)
    key = shoot_key_of(sim, cluster.id)
    with real_prometheus_of(sim, key, tmp_path) as prometheus:
        scraped(prometheus, sim, key)
        for name, expression in NODE_QUERIES.items():
            assert prometheus.query(expression), f"{name}: no series in a stock Gardener shoot Prometheus"
        assert not prometheus.query("kube_namespace_labels"), "a stock Gardener shoot Prometheus has no namespaces"
        tenants = prometheus.query('count by (namespace) (kube_pod_info{namespace!="kube-system"})')
        assert tenants == [], "nor pods of any namespace but kube-system"
