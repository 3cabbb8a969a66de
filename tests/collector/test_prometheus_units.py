"""The Prometheus source's strict parts: the monitoring secret, the answers, the setting."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from collector.kube.errors import BadResponse, TooLarge
from collector.prometheus.queries import MAX_SERIES, vector
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
