"""fleet-sim's shoot Prometheus plays a stock Gardener shoot Prometheus by default, a fuller one under a switch.

A stock Gardener shoot's kube-state-metrics watches kube-system and the nodes only; its Prometheus's
configuration carries Gardener's external labels. The exposition a real Prometheus scrapes holds the
same series without the scrape's labels. (tests/sim/test_promql_differential.py compares all of it
with a real Prometheus; these need no binary.)
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from sim.api.prometheus.exposition import handle_metrics
from sim.api.prometheus.monitoring import FULLER
from tests.fixtures.sim import SimUnderTest


@pytest.fixture
def shoot(sim: SimUnderTest) -> Iterator[tuple[httpx.Client, str]]:
    key = sim.serving_shoot().key
    context = ssl.create_default_context(cadata=sim.server.sim.tls.ca_pem.decode())
    with httpx.Client(
        base_url=sim.server.sim.prometheus_url(key),
        auth=("admin", sim.control.monitoring_password(key)),
        verify=context,
        timeout=10,
    ) as client:
        yield client, key


def query(client: httpx.Client, expression: str) -> list[dict[str, Any]]:
    response = client.get("/api/v1/query", params={"query": expression})
    assert response.status_code == 200, response.text
    result: list[dict[str, Any]] = response.json()["data"]["result"]
    return result


def test_the_default_stack_holds_the_nodes_and_kube_system_only(
    sim: SimUnderTest, shoot: tuple[httpx.Client, str]
) -> None:
    client, key = shoot
    expected = sim.control.expected(key)
    assert expected.namespace_pods, "the shoot has tenant namespaces running pods"
    nodes = query(client, "kube_node_info")
    assert len(nodes) == expected.nodes
    assert all(n["metric"]["provider_id"].startswith("fleet-sim:///") for n in nodes)
    assert {(n["metric"]["job"], n["metric"]["instance"], n["metric"]["type"]) for n in nodes} == {
        ("kube-state-metrics", "kube-state-metrics", "shoot")
    }
    labels = query(client, "kube_node_labels")[0]["metric"]
    assert {"label_worker_gardener_cloud_pool", "label_kubernetes_io_arch", "label_node_kubernetes_io_role"} <= set(
        labels
    ), "nodes=[*]: every node label"
    assert [r["metric"] for r in query(client, "count by (namespace) (kube_pod_info)")] == [
        {"namespace": "kube-system"}
    ]
    assert query(client, "kube_namespace_labels") == []
    text = b"".join(handle_metrics(sim.server.sim, key).chunks).decode()
    assert 'job="' not in text and "kube_namespace" not in text, "the page holds no scrape labels, no namespaces"


def test_the_fuller_stack_holds_every_namespace(sim: SimUnderTest, shoot: tuple[httpx.Client, str]) -> None:
    client, key = shoot
    sim.control.set_monitoring_stack(FULLER, key)
    namespaces = {r["metric"]["namespace"] for r in query(client, "kube_namespace_labels")}
    assert "kube-system" in namespaces and len(namespaces) > 4
    ids = {r["metric"].get("label_fundament_io_namespace_id") for r in query(client, "kube_namespace_labels")} - {None}
    assert ids == set(sim.control.expected(key).namespace_pods)


def test_the_configuration_carries_gardeners_external_labels(
    sim: SimUnderTest, shoot: tuple[httpx.Client, str]
) -> None:
    client, key = shoot
    response = client.get("/api/v1/status/config")
    assert response.status_code == 200
    labels = yaml.safe_load(response.json()["data"]["yaml"])["global"]["external_labels"]
    state = sim.control.shoot(key)
    assert (labels["cluster"], labels["project"], labels["shoot_name"], labels["name"]) == (
        state.technical_id,
        state.project,
        state.name,
        state.name,
    )
    assert {"seed_api", "seed_region", "seed_provider", "shoot_infra", "ignoreAlerts"} <= set(labels)
