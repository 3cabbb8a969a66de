"""The chart's NetworkPolicies, migration Job and monitoring objects, rendered by a real `helm` and read
back as objects: who may reach each deployable, where each may go, what runs before an install or upgrade,
and that the PrometheusRule is deploy/monitoring/rules.yaml itself, its runbook addresses built from one value.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from tests.fixtures.helm import (
    MONITORING,
    ROOT,
    VARIANTS,
    Doc,
    containers,
    needs_helm,
    of_kind,
    pod_spec,
    render,
    workloads,
)

pytestmark = needs_helm

GATEWAY = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gateway"}}}
ADMIN_GATEWAY = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "admin-gateway"}}}
MONITORING_NS = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
# The release's `helm test` pod, which calls each API on both ports while the test runs.
HELM_TEST = {
    "podSelector": {"matchLabels": {"app.kubernetes.io/instance": "rel", "app.kubernetes.io/name": "helm-test"}}
}
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]


def policy_of(docs: list[Doc], name: str) -> Doc:
    policy = of_kind(docs, "NetworkPolicy")[name]
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    return policy


def ingress_ports(policy: Doc) -> dict[str, set[int]]:
    """Peer (as JSON) -> the TCP ports it may open."""
    allowed: dict[str, set[int]] = {}
    for rule in policy["spec"]["ingress"]:
        for peer in rule["from"]:
            allowed.setdefault(json.dumps(peer, sort_keys=True), set()).update(p["port"] for p in rule["ports"])
    return allowed


def egress_ports(policy: Doc) -> set[int]:
    return {p["port"] for rule in policy["spec"]["egress"] for p in rule["ports"]}


def key(peer: dict[str, Any]) -> str:
    return json.dumps(peer, sort_keys=True)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_pod_is_selected_by_a_policy(variant: str) -> None:
    docs = render(*VARIANTS[variant])
    policies = of_kind(docs, "NetworkPolicy")
    for name, workload in workloads(docs).items():
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert policies[name]["spec"]["podSelector"]["matchLabels"].items() <= labels.items(), name


def test_public_api_is_reachable_from_the_gateway_only() -> None:
    policy = policy_of(render(), "platform-public-api")
    assert ingress_ports(policy) == {
        key(GATEWAY): {8080, 9090},
        key(MONITORING_NS): {8080},
        key(HELM_TEST): {8080, 9090},
    }
    without_tests = policy_of(render("tests.enabled=false"), "platform-public-api")
    assert ingress_ports(without_tests) == {key(GATEWAY): {8080, 9090}, key(MONITORING_NS): {8080}}


def test_staff_api_is_reachable_from_the_admin_gateway_only() -> None:
    policy = policy_of(render(), "platform-admin-api")
    assert ingress_ports(policy) == {
        key(ADMIN_GATEWAY): {8081, 9091},
        key(MONITORING_NS): {8081},
        key(HELM_TEST): {8081, 9091},
    }


def test_the_gateways_are_values() -> None:
    docs = render("platformPublicApi.allowFrom[0].podSelector.matchLabels.app=edge")
    peers = ingress_ports(policy_of(docs, "platform-public-api"))
    assert key({"podSelector": {"matchLabels": {"app": "edge"}}}) in peers


def test_apis_and_migrations_may_reach_dns_and_the_database_port_only() -> None:
    docs = render("database.port=6432")
    for name in ("platform-public-api", "platform-admin-api", "migrations"):
        policy = policy_of(docs, name)
        assert egress_ports(policy) == {53, 6432}, name
        database_rules = [r for r in policy["spec"]["egress"] if {"protocol": "TCP", "port": 6432} in r["ports"]]
        assert database_rules == [{"ports": [{"protocol": "TCP", "port": 6432}]}]


def test_the_database_peers_narrow_the_database_rule() -> None:
    docs = render("database.peers[0].ipBlock.cidr=10.1.2.0/24")
    rule = next(r for r in policy_of(docs, "platform-admin-api")["spec"]["egress"] if r["ports"][0]["port"] == 5432)
    assert rule["to"] == [{"ipBlock": {"cidr": "10.1.2.0/24"}}]


@pytest.mark.parametrize("name", ["cluster-worker-inventory", "cluster-worker-reconcile"])
def test_workers_may_reach_the_garden_and_shoots_dns_and_the_database(name: str) -> None:
    policy = policy_of(render(), name)
    assert egress_ports(policy) == {53, 5432, 443, 6443}
    dns = next(r for r in policy["spec"]["egress"] if r["ports"] == DNS_PORTS)
    assert dns["to"][0]["podSelector"] == {"matchLabels": {"k8s-app": "kube-dns"}}
    # Nobody calls a worker but Prometheus, on its health port.
    assert ingress_ports(policy) == {key(MONITORING_NS): {8097}}


def test_sharded_workers_are_covered_too() -> None:
    docs = render(*VARIANTS["sharded"])
    labels = of_kind(docs, "StatefulSet")["cluster-worker-inventory"]["spec"]["template"]["metadata"]["labels"]
    selector = policy_of(docs, "cluster-worker-inventory")["spec"]["podSelector"]["matchLabels"]
    assert selector.items() <= labels.items()


def test_policies_can_be_left_to_the_platform() -> None:
    assert "NetworkPolicy" not in {d["kind"] for d in render("networkPolicy.enabled=false")}


def hooks(doc: Doc) -> tuple[set[str], int]:
    annotations = doc["metadata"]["annotations"]
    return set(annotations["helm.sh/hook"].split(",")), int(annotations["helm.sh/hook-weight"])


def test_migrations_run_roles_then_migrate_before_install_and_upgrade() -> None:
    docs = render()
    job = of_kind(docs, "Job")["migrations"]
    events, weight = hooks(job)
    assert events == {"pre-install", "pre-upgrade"}
    roles, migrate = containers(job)
    # Init container first: `migrate` starts only once `roles` succeeded (the `&&` of the two commands).
    assert pod_spec(job)["initContainers"] == [roles]
    # The DSN comes from the environment, never from the command line (process arguments are readable).
    assert roles["command"] == ["fleet", "db", "roles"]
    assert migrate["command"] == ["fleet", "db", "migrate"]
    assert pod_spec(job)["restartPolicy"] == "Never"
    # What the Job needs exists before it: its account and its policy are hooks of a lower weight.
    for kind in ("ServiceAccount", "NetworkPolicy"):
        needed = of_kind(docs, kind)["migrations"]
        needed_events, needed_weight = hooks(needed)
        assert needed_events == events and needed_weight < weight, kind
    # Gone once every hook succeeded; a failed Job stays for its logs until the next attempt replaces it.
    for doc in (job, of_kind(docs, "ServiceAccount")["migrations"], of_kind(docs, "NetworkPolicy")["migrations"]):
        policy = doc["metadata"]["annotations"]["helm.sh/hook-delete-policy"].split(",")
        assert set(policy) == {"before-hook-creation", "hook-succeeded"}, doc["kind"]


def test_only_the_migrations_hold_the_owner_credential() -> None:
    docs = render("migrations.databaseSecret=db-owner")
    holders = {
        name
        for name, workload in workloads(docs).items()
        for container in containers(workload)
        for env in container["env"]
        if env.get("valueFrom", {}).get("secretKeyRef", {}).get("name") == "db-owner"
    }
    assert holders == {"migrations"}


def test_migrations_can_be_run_by_hand_instead() -> None:
    assert "Job" not in {d["kind"] for d in render("migrations.enabled=false")}


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_pod_monitor_per_deployable_names_the_job_the_rules_use(variant: str) -> None:
    docs = render(*VARIANTS[variant], *MONITORING)
    monitors = of_kind(docs, "PodMonitor")
    assert set(monitors) == set(workloads(docs)) - {"migrations"}
    for name, monitor in monitors.items():
        # jobLabel takes the job from this pod label: the deployable's name, what rules.yaml selects by.
        assert monitor["spec"]["jobLabel"] == "app.kubernetes.io/name"
        labels = workloads(docs)[name]["spec"]["template"]["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == name
        assert monitor["spec"]["selector"]["matchLabels"].items() <= labels.items()
        ports = {p["name"] for p in containers(workloads(docs)[name])[0]["ports"]}
        assert [e["port"] for e in monitor["spec"]["podMetricsEndpoints"]] == ["http"]
        assert "http" in ports


def test_the_prometheus_rule_is_the_tested_rules_file() -> None:
    rule = of_kind(render(*MONITORING), "PrometheusRule")["rel-fleet-inventory"]
    plain = yaml.safe_load((ROOT / "deploy" / "monitoring" / "rules.yaml").read_text())
    assert rule["spec"] == plain
    chart_copy = ROOT / "deploy" / "fleet-inventory" / "files" / "rules.yaml"
    assert chart_copy.resolve() == (ROOT / "deploy" / "monitoring" / "rules.yaml").resolve()


def test_every_runbook_url_is_built_from_one_value() -> None:
    base = "https://wiki.example/fleet/operations.md"
    rule = of_kind(render(*MONITORING, f"monitoring.runbookBaseUrl={base}"), "PrometheusRule")["rel-fleet-inventory"]
    plain = yaml.safe_load((ROOT / "deploy" / "monitoring" / "rules.yaml").read_text())
    rendered = [r for group in rule["spec"]["groups"] for r in group["rules"]]
    written = [r for group in plain["groups"] for r in group["rules"]]
    assert len(rendered) == len(written)
    for got, wrote in zip(rendered, written, strict=True):
        assert got["annotations"].pop("runbook_url") == f"{base}#{got['alert'].lower()}"
        wrote["annotations"].pop("runbook_url")
        assert got == wrote, "nothing else changes"


def test_the_dashboard_config_map_is_the_dashboard_file() -> None:
    config_map = of_kind(render(*MONITORING), "ConfigMap")["rel-fleet-inventory-dashboard"]
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    plain = json.loads((ROOT / "deploy" / "monitoring" / "dashboard.json").read_text())
    assert json.loads(config_map["data"]["fleet-inventory.json"]) == plain


def test_monitoring_objects_are_off_unless_asked_for() -> None:
    kinds = {d["kind"] for d in render()}
    assert not kinds & {"PodMonitor", "PrometheusRule", "ConfigMap"}


def test_monitoring_labels_reach_the_operator_selectors() -> None:
    docs = render(*MONITORING, "monitoring.labels.release=kube-prometheus")
    for doc in docs:
        if doc["kind"] in {"PodMonitor", "PrometheusRule", "ConfigMap"}:
            assert doc["metadata"]["labels"]["release"] == "kube-prometheus"
