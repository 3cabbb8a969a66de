"""The Prometheus source's strict parts: the monitoring secret, the answers, the settings, the split."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from collector.inventory.sources import RESOURCE_TYPES, SOURCES, Discovered, Unlisted
from collector.inventory.split import Split, node_ledger
from collector.kube.errors import BadResponse, TooLarge
from collector.prometheus.address import AddressPolicy, AddressRefused
from collector.prometheus.identity import check_identity, external_labels
from collector.prometheus.queries import MAX_SERIES, NODE_QUERIES, POD_QUERIES, Sample, node_metrics, vector
from collector.prometheus.target import MonitoringUnavailable, WrongPrometheus, target_from_secret
from collector.settings import Settings
from collector.worker import database_hosts
from common.labels import exported_label
from common.settings import SettingsError


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret(url: object = "https://prometheus.example/", user: str = b64("admin"), password: str = b64("pw")) -> Any:
    return {"metadata": {"annotations": {"prometheus-url": url}}, "data": {"username": user, "password": password}}


def test_a_monitoring_secret_gives_the_address_and_the_credentials() -> None:
    target = target_from_secret(secret(), what="s", policy=AddressPolicy())
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
        (secret(url=7), BadResponse, "not a string"),
        (secret(user="not base64!"), BadResponse, "base64"),
        (secret(user=b64("a:b")), BadResponse, "colon"),
        ({"metadata": {}, "data": {}}, MonitoringUnavailable, "no prometheus-url"),
        ({"metadata": {"annotations": {"prometheus-url": "https://p"}}}, MonitoringUnavailable, "username"),
    ],
)
def test_a_bad_monitoring_secret_is_refused(bad: Any, error: type[Exception], says: str) -> None:
    with pytest.raises(error, match=says):
        target_from_secret(bad, what="s", policy=AddressPolicy())


POLICY = AddressPolicy(
    domains=("ingress.seed.example",), database=frozenset({("db.internal", 5432), ("10.0.0.5", 5432)})
)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://user:s3cret@p-a--b.ingress.seed.example/", "carries userinfo"),
        ("https://p-a--b.ingress.seed.example /", "whitespace, control or non-ASCII"),
        ("https://p-a--b.ingress.seed.example/\x7f", "whitespace, control"),
        ("https://p-a--b.ingress.seed.example/\u202e", "whitespace, control or non-ASCII"),
        ("https://p-a--b.ingress.seed.example\t", "whitespace, control or non-ASCII"),
        ("http://p-a--b.ingress.seed.example/", "not https"),
        ("https://p-a--b.ingress.seed.example/?x=1", "query or a fragment"),
        ("https://p-a--b.ingress.seed.example/a/../b", "not plain"),
        ("https://p-a--b.ingress.seed.example:99999/", "not a URL"),
        ("https://garden.example/api/v1/secrets", "not under PROMETHEUS_ALLOWED_DOMAINS"),
        ("https://evil-ingress.seed.example/", "not under PROMETHEUS_ALLOWED_DOMAINS"),
        ("https://127.0.0.1:9090/", "a loopback address"),
        ("https://[::1]/", "a loopback address"),
        ("https://localhost/", "a loopback address"),
        ("https://169.254.169.254/", "a link-local address"),
        ("https://[::ffff:169.254.169.254]/", "a link-local address"),
        ("https://0.0.0.0/", "not a unicast address"),
        ("https://db.internal/", "the database's address"),
        ("https://10.0.0.5:5432/", "the database's address"),
    ],
)
def test_a_prometheus_url_outside_the_policy_is_refused(url: str, says: str) -> None:
    with pytest.raises(AddressRefused, match=says) as refused:
        POLICY.check(url.encode().decode("unicode_escape"), "secret garden-a/b.monitoring")
    assert refused.value.reason == "address_refused"
    assert "s3cret" not in str(refused.value), "the userinfo's password is never repeated"


def test_a_prometheus_url_under_the_policy_is_normalized() -> None:
    address = POLICY.check("HTTPS://P-a--b.Ingress.Seed.Example:443/prom/", "s")
    assert address.url == "https://p-a--b.ingress.seed.example/prom"
    loopback = AddressPolicy(allow_loopback=True, database=frozenset({("127.0.0.1", 5432)}))
    assert loopback.check("https://127.0.0.1:8443/", "s").url == "https://127.0.0.1:8443"
    with pytest.raises(AddressRefused, match="the database's address"):
        loopback.check("https://127.0.0.1:5432/", "s")


def test_the_database_address_is_read_from_its_url() -> None:
    assert database_hosts("postgresql://fun:pw@db.example:6432,10.0.0.5/fleet?sslmode=require") == {
        ("db.example", 6432),
        ("10.0.0.5", 5432),
    }
    assert database_hosts("host=/tmp port=5") == set()
    assert database_hosts("host='a.b,c' port=7 dbname=x") == {("a.b", 7), ("c", 7)}
    assert database_hosts("postgresql://u@[::1]:5433/x") == {("::1", 5433)}


def test_a_secret_not_owned_by_the_shoot_is_refused() -> None:
    owned = secret()
    owned["metadata"]["ownerReferences"] = [{"kind": "Shoot", "uid": "u-1", "controller": True, "name": "b"}]
    assert target_from_secret(owned, what="s", policy=AddressPolicy(), shoot_uid="u-1").username == "admin"
    with pytest.raises(WrongPrometheus, match="no controller owner reference to the Shoot"):
        target_from_secret(owned, what="s", policy=AddressPolicy(), shoot_uid="u-2")


def test_the_external_labels_must_name_the_shoot() -> None:
    yaml_text = (
        "global:\n  scrape_interval: 1m\n  external_labels:\n    cluster: shoot--a--b\n    shoot_name: b\n"
        "scrape_configs: []\n"
    )
    labels = external_labels({"status": "success", "data": {"yaml": yaml_text}}, "p")
    assert labels == {"cluster": "shoot--a--b", "shoot_name": "b"}
    check_identity(labels, shoot="garden-a/b", name="b", technical_id="shoot--a--b", what="p")
    with pytest.raises(WrongPrometheus, match="external label cluster is 'shoot--a--b', not 'shoot--a--c'"):
        check_identity(labels, shoot="garden-a/c", name="b", technical_id="shoot--a--c", what="p")
    with pytest.raises(WrongPrometheus, match="external label shoot_name is none"):
        check_identity({}, shoot="garden-a/b", name="b", technical_id="", what="p")


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
