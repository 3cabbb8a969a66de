"""The Prometheus source's strict parts: the monitoring secret, the answers, the settings, the split."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from collector.inventory.sources import RESOURCE_TYPES, SOURCES, Discovered, Unlisted
from collector.inventory.split import Split, node_ledger
from collector.kube.errors import BadResponse, TooLarge
from collector.prometheus.queries import MAX_SERIES, NODE_QUERIES, POD_QUERIES, Sample, node_metrics, vector
from collector.prometheus.target import MonitoringUnavailable, target_from_secret
from collector.settings import Settings
from common.labels import exported_label
from common.settings import SettingsError


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret(url: object = "https://prometheus.example/", user: str = b64("admin"), password: str = b64("pw")) -> Any:
    return {"metadata": {"annotations": {"prometheus-url": url}}, "data": {"username": user, "password": password}}


def test_a_monitoring_secret_gives_the_address_and_the_credentials() -> None:
    target = target_from_secret(secret(), what="s")
    assert (target.query_url, target.username, target.password) == (
        "https://prometheus.example/api/v1/query",
        "admin",
        "pw",
    )
    assert "pw" not in repr(target)


@pytest.mark.parametrize(
    ("bad", "error", "says"),
    [
        (secret(url="http://prometheus.example"), BadResponse, "not https"),
        (secret(url=7), BadResponse, "not an address"),
        (secret(user="not base64!"), BadResponse, "base64"),
        (secret(user=b64("a:b")), BadResponse, "colon"),
        ({"metadata": {}, "data": {}}, MonitoringUnavailable, "no prometheus-url"),
        ({"metadata": {"annotations": {"prometheus-url": "https://p"}}}, MonitoringUnavailable, "username"),
    ],
)
def test_a_bad_monitoring_secret_is_refused(bad: Any, error: type[Exception], says: str) -> None:
    with pytest.raises(error, match=says):
        target_from_secret(bad, what="s")


def test_kube_state_metrics_label_names() -> None:
    assert exported_label("worker.gardener.cloud/pool") == "label_worker_gardener_cloud_pool"
    assert exported_label("fundament.io/namespace-id") == "label_fundament_io_namespace_id"


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({"status": "error"}, "not success"),
        ({"status": "success", "data": {"resultType": "matrix", "result": []}}, "instant vector"),
        ({"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, 2]}]}}, "value"),
        (
            {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, "-1"]}]}},
            "finite count",
        ),
        (
            {
                "status": "success",
                "data": {"resultType": "vector", "result": [{"metric": {"a": 1}, "value": [1, "1"]}]},
            },
            "string labels",
        ),
    ],
)
def test_answers_are_read_strictly(answer: dict[str, Any], says: str) -> None:
    with pytest.raises(BadResponse, match=says):
        vector(answer, "q")


def test_too_many_series_are_refused() -> None:
    result = [{"metric": {"n": str(i)}, "value": [1, "1"]} for i in range(MAX_SERIES + 1)]
    with pytest.raises(TooLarge, match="series"):
        vector({"status": "success", "data": {"resultType": "vector", "result": result}}, "q")


def test_the_prometheus_source_needs_the_real_garden(tmp_path: Any) -> None:
    with pytest.raises(SettingsError, match="GARDENER_MODE=real"):
        Settings.from_env({"INVENTORY_SOURCE": "prometheus"})
    with pytest.raises(SettingsError, match="INVENTORY_SOURCE"):
        Settings.from_env({"INVENTORY_SOURCE": "cadvisor"})
    kubeconfig = tmp_path / "k.yaml"
    kubeconfig.write_text("{}")
    with pytest.raises(SettingsError, match="PROMETHEUS_CA_FILE"):
        Settings.from_env(
            {
                "INVENTORY_SOURCE": "prometheus",
                "GARDENER_MODE": "real",
                "GARDENER_KUBECONFIG": str(kubeconfig),
                "PROMETHEUS_CA_FILE": str(tmp_path / "missing.crt"),
            }
        )
    settings = Settings.from_env(
        {"INVENTORY_SOURCE": "prometheus", "GARDENER_MODE": "real", "GARDENER_KUBECONFIG": str(kubeconfig)}
    )
    assert (settings.inventory.source, settings.inventory.monitoring_ttl_seconds) == ("prometheus", 300.0)


@pytest.mark.parametrize(
    ("env", "parts", "others"),
    [
        ({}, ("nodes",), "viewer"),
        ({"PROMETHEUS_PARTS": "nodes, pods"}, ("nodes", "pods"), "viewer"),
        ({"PROMETHEUS_PARTS": "nodes,pods", "PROMETHEUS_OTHERS_FROM": "nowhere"}, ("nodes", "pods"), "nowhere"),
    ],
    ids=["default", "pods", "prometheus-only"],
)
def test_the_split_settings(env: dict[str, str], parts: tuple[str, ...], others: str) -> None:
    inventory = Settings.from_env(env).inventory
    assert (inventory.prometheus_parts, inventory.prometheus_others_from) == (parts, others)
    split = Split.from_settings(inventory.prometheus_parts, inventory.prometheus_others_from)
    assert set(split.queries()) == set(NODE_QUERIES) | (set(POD_QUERIES) if "pods" in parts else set())
    read_there = {source.resource_type for source in split.apiserver_sources(SOURCES)}
    assert read_there == (set(RESOURCE_TYPES) - {"kubernetes.node"} if others == "viewer" else set())


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"PROMETHEUS_PARTS": "pods"}, "PROMETHEUS_PARTS"),
        ({"PROMETHEUS_PARTS": "nodes,volumes"}, "PROMETHEUS_PARTS"),
        ({"PROMETHEUS_OTHERS_FROM": "admin"}, "PROMETHEUS_OTHERS_FROM"),
        ({"PROMETHEUS_OTHERS_FROM": "nowhere"}, "the pods must come from somewhere"),
    ],
)
def test_a_split_that_leaves_a_gap_is_refused(env: dict[str, str], says: str) -> None:
    with pytest.raises(SettingsError, match=says):
        Settings.from_env(env)


def samples(**series: list[tuple[dict[str, str], float]]) -> dict[str, list[Sample]]:
    base: dict[str, list[Sample]] = {"pool_nodes": [], "pool_ready": [], "allocatable": [], "node_ids": []}
    base.update({name: [Sample(labels, value) for labels, value in found] for name, found in series.items()})
    return base


def test_the_node_ledger_reads_kube_node_info_and_never_reads_its_absence_as_no_nodes() -> None:
    pool = exported_label("worker.gardener.cloud/pool")
    counted = [({pool: "work1234"}, 2.0)]
    ids = [({"node": "a", "provider_id": "aws:///eu-west-1a/i-1"}, 1.0), ({"node": "b"}, 1.0)]
    nodes = node_metrics(samples(pool_nodes=counted, node_ids=ids), "p")
    assert nodes.node_ids == {"a": "aws:///eu-west-1a/i-1", "b": None}
    [source] = [s for s in SOURCES if s.resource_type == "kubernetes.node"]
    assert node_ledger(source, nodes, cap=10) == (
        Discovered("kubernetes.node", "", "a", "aws:///eu-west-1a/i-1", True),
        Discovered("kubernetes.node", "", "b", None, True),
    )
    assert isinstance(node_ledger(source, nodes, cap=1), Unlisted)
    missing = node_metrics(samples(pool_nodes=counted), "p")
    assert missing.node_ids is None
    unlisted = node_ledger(source, missing, cap=10)
    assert isinstance(unlisted, Unlisted) and unlisted.reason == "not_exported"
    with pytest.raises(BadResponse, match="the series disagree"):
        node_metrics(samples(pool_nodes=counted, node_ids=ids[:1]), "p")
    with pytest.raises(BadResponse, match="two provider ids"):
        node_metrics(samples(pool_nodes=counted, node_ids=[ids[0], ({"node": "a", "provider_id": "x"}, 1.0)]), "p")
