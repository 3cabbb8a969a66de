"""fleet-sim's PromQL subset against a REAL Prometheus over the same series: the same answer to every query.

fleet-sim answers the collector's queries itself (`sim/api/prometheus/promql.py`, `evaluation.py`), so
the tests and the benchmarks need no Prometheus binary. That is only sound while it answers exactly as
Prometheus does. Here a real Prometheus (Debian's `prometheus`) scrapes the shoot's kube-state-metrics
exposition from fleet-sim, with the target labels the simulated stack carries, and both are asked every
query the collector may send (`collector.prometheus.queries.QUERIES`) at one evaluation time, plus the
raw selection of every kube-state-metrics series: the series, labels, values and timestamps must be
equal. Each monitoring stack fleet-sim plays is compared: a stock Gardener shoot Prometheus, and a
landscape's fuller kube-state-metrics with and without its label allow-list. The external labels its
`/api/v1/status/config` serves read back as a real Prometheus's do.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from collector.prometheus.queries import QUERIES
from sim.api.prometheus import gardener_ksm, kube_state_metrics
from sim.api.prometheus.monitoring import FULLER, GARDENER, external_labels
from tests.fixtures.prometheus import RunningPrometheus, needs_prometheus, shoot_prometheus
from tests.fixtures.sim import SimUnderTest

pytestmark = [needs_prometheus]

EVERY_SERIES = '{__name__=~"kube_.+"}'
# Beyond the collector's own: a bare selector, a sum of everything, a one-to-one match.
MORE = {
    "every_series": EVERY_SERIES,
    "node_info": "kube_node_info",
    "allocatable_total": "sum(kube_node_status_allocatable)",
    "ready_per_node": 'kube_node_status_condition{condition="Ready",status="true"} * on (node) kube_node_info',
}
STACKS = [(GARDENER, True), (FULLER, True), (FULLER, False)]
Answer = set[tuple[frozenset[tuple[str, str]], float, str]]


def answer(result: list[dict[str, Any]]) -> Answer:
    """An instant vector as a set: (labels, evaluation time, value as written)."""
    return {(frozenset(r["metric"].items()), r["value"][0], r["value"][1]) for r in result}


@pytest.fixture
def shoot_key(sim: SimUnderTest) -> str:
    return sim.serving_shoot().key


@pytest.fixture
def sim_prometheus(sim: SimUnderTest, shoot_key: str) -> Iterator[httpx.Client]:
    """fleet-sim's own Prometheus of the shoot, logged in with its monitoring password."""
    context = ssl.create_default_context(cadata=sim.server.sim.tls.ca_pem.decode())
    with httpx.Client(
        base_url=f"{sim.server.sim.base_url}/prometheus/{shoot_key}",
        auth=("admin", sim.control.monitoring_password(shoot_key)),
        verify=context,
        timeout=10,
    ) as client:
        yield client


def sim_query(client: httpx.Client, expression: str, at: str) -> list[dict[str, Any]]:
    response = client.get("/api/v1/query", params={"query": expression, "time": at})
    assert response.status_code == 200, (expression, response.text)
    result: list[dict[str, Any]] = response.json()["data"]["result"]
    return result


@pytest.mark.parametrize(("stack", "labels_exported"), STACKS, ids=["gardener", "fuller", "fuller-no-allow-list"])
def test_fleet_sims_promql_answers_every_collector_query_as_a_real_prometheus(
    sim: SimUnderTest,
    shoot_key: str,
    sim_prometheus: httpx.Client,
    tmp_path: Path,
    stack: str,
    labels_exported: bool,
) -> None:
    sim.control.set_monitoring_stack(stack)
    sim.control.set_monitoring_labels(labels_exported)
    tls = sim.server.sim.tls
    target = gardener_ksm.TARGET if stack == GARDENER else kube_state_metrics.TARGET
    with shoot_prometheus(
        tmp_path,
        metrics_url=sim.server.sim.metrics_url(shoot_key),
        target_labels=target,
        external_labels=external_labels(sim.control.shoot(shoot_key)),
        tls=(tls.ca_pem, tls.cert_pem, tls.key_pem),
        password=sim.control.monitoring_password(shoot_key),
    ) as real:
        wait_for_a_scrape(real, sim, shoot_key)
        at = f"{sim.server.sim.clock.time():.3f}"
        compared = 0
        for name, expression in {**QUERIES, **MORE}.items():
            theirs, ours = answer(real.query(expression, at)), answer(sim_query(sim_prometheus, expression, at))
            assert ours == theirs, (
                f"{name}: {expression}\nonly fleet-sim: {ours - theirs}\nonly Prometheus: {theirs - ours}"
            )
            compared += len(ours)
        assert compared > 100, "the answers held series to compare"
        config = real.get("/api/v1/status/config").json()["data"]["yaml"]
        served = sim_prometheus.get("/api/v1/status/config").json()["data"]["yaml"]
        assert (
            yaml.safe_load(served)["global"]["external_labels"] == yaml.safe_load(config)["global"]["external_labels"]
        )


def wait_for_a_scrape(real: RunningPrometheus, sim: SimUnderTest, key: str) -> None:
    nodes = sim.control.expected(key).nodes
    real.wait_until(
        lambda: [r["value"][1] for r in real.query("count(kube_node_info)")] == [str(nodes)], f"{key}'s {nodes} nodes"
    )
