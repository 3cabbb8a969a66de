"""The Helm chart (deploy/fleet-inventory), linted and rendered by a real `helm` in every variant an operator
installs, and checked object by object: deployables, hardening, resources, sharding and values validation.
NetworkPolicies, the migration Job and monitoring: tests/deploy/test_helm_policies.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from collector.settings import Shard
from tests.fixtures.helm import (
    CHART,
    MONITORING,
    VARIANTS,
    containers,
    env_of,
    helm,
    needs_helm,
    of_kind,
    pod_spec,
    render,
    set_args,
    workloads,
)

pytestmark = needs_helm

DEPLOYABLES = {"platform-public-api", "platform-admin-api", "cluster-worker-inventory", "cluster-worker-reconcile"}
# The image target of each deployable (deploy/Dockerfile's stages of the same name).
TARGETS = {
    "platform-public-api": "public-api",
    "platform-admin-api": "admin-api",
    "cluster-worker-inventory": "worker",
    "cluster-worker-reconcile": "worker",
    "migrations": "operator",
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_helm_lint_passes(variant: str) -> None:
    result = helm("lint", "--strict", str(CHART), *set_args(VARIANTS[variant] + MONITORING))
    assert result.returncode == 0, result.stdout + result.stderr


def test_default_render_has_every_deployable_and_the_migrations() -> None:
    found = workloads(render())
    assert set(found) == DEPLOYABLES | {"migrations"}
    assert {name for name, w in found.items() if w["kind"] == "Deployment"} == DEPLOYABLES


def test_inventory_worker_is_one_replica_recreated_and_in_inventory_mode() -> None:
    worker = of_kind(render(), "Deployment")["cluster-worker-inventory"]
    assert worker["spec"]["replicas"] == 1
    assert worker["spec"]["strategy"] == {"type": "Recreate"}
    assert env_of(containers(worker)[0])["WORKER_MODE"] == "inventory"


def test_no_public_variant_renders_nothing_of_the_public_api() -> None:
    docs = render(*VARIANTS["no-public"], *MONITORING)
    public = [d for d in docs if d["metadata"].get("labels", {}).get("app.kubernetes.io/name") == "platform-public-api"]
    assert public == []
    assert set(workloads(docs)) == (DEPLOYABLES - {"platform-public-api"}) | {"migrations"}


def test_inventory_worker_is_rendered_only_with_the_staff_api() -> None:
    names = set(workloads(render("platformAdminApi.enabled=false")))
    assert "cluster-worker-inventory" not in names
    assert "platform-admin-api" not in names
    assert {"platform-public-api", "cluster-worker-reconcile"} <= names


def test_viewer_variant_asks_for_the_read_only_credential() -> None:
    worker = workloads(render(*VARIANTS["viewer"]))["cluster-worker-inventory"]
    assert env_of(containers(worker)[0])["INVENTORY_CREDENTIAL"] == "viewer"


def test_each_process_reads_its_own_database_secret() -> None:
    found = workloads(render())
    secret = {name: env_of(containers(w)[-1]) for name, w in found.items()}
    public = secret["platform-public-api"]["DATABASE_URL"]["secretKeyRef"]["name"]
    admin = secret["platform-admin-api"]["DATABASE_URL"]["secretKeyRef"]["name"]
    owner = secret["migrations"]["MIGRATION_DATABASE_URL"]["secretKeyRef"]["name"]
    assert len({public, admin, owner}) == 3
    assert "JWT_SECRET" not in secret["platform-public-api"]
    assert secret["platform-admin-api"]["JWT_SECRET"]["secretKeyRef"]["key"] == "secret"


@pytest.mark.parametrize("name", sorted(DEPLOYABLES))
def test_probes_use_the_health_endpoints(name: str) -> None:
    container = containers(workloads(render())[name])[0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_configuration_comes_from_values() -> None:
    found = workloads(
        render(
            "platformPublicApi.cacheTtlSeconds=30",
            "clusterWorkerInventory.credential=viewer",
            "clusterWorkerInventory.source=prometheus",
        )
    )
    assert env_of(containers(found["platform-public-api"])[0])["CACHE_TTL_SECONDS"] == "30"
    inventory = env_of(containers(found["cluster-worker-inventory"])[0])
    assert inventory["INVENTORY_CREDENTIAL"] == "viewer"
    assert inventory["INVENTORY_SOURCE"] == "prometheus"
    assert env_of(containers(workloads(render())["cluster-worker-inventory"])[0])["INVENTORY_SOURCE"] == "apiserver"


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_pod_is_hardened(variant: str) -> None:
    docs = render(*VARIANTS[variant], *MONITORING)
    accounts = of_kind(docs, "ServiceAccount")
    for name, workload in workloads(docs).items():
        spec = pod_spec(workload)
        # Its own account, without an API token (nothing here talks to the hosting cluster's API).
        assert spec["serviceAccountName"] == f"rel-{name}", name
        assert accounts[name]["automountServiceAccountToken"] is False
        assert spec["automountServiceAccountToken"] is False
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["securityContext"]["runAsUser"] != 0
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        tmp = next(v for v in spec["volumes"] if v["name"] == "tmp")
        assert "emptyDir" in tmp
        for container in containers(workload):
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True, name
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"] == {"drop": ["ALL"]}
            assert context["seccompProfile"] == {"type": "RuntimeDefault"}
            assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
            # Requests for scheduling, a memory limit for the measured peaks (values.yaml says where from).
            assert {"cpu", "memory"} <= set(container["resources"]["requests"])
            assert "memory" in container["resources"]["limits"]


def test_each_deployable_runs_its_own_image_target() -> None:
    for name, workload in workloads(render()).items():
        for container in containers(workload):
            assert container["image"] == f"fleet-inventory-{TARGETS[name]}:0.1.0", name


def test_apis_have_disruption_budgets_and_the_workers_none() -> None:
    docs = render()
    budgets = of_kind(docs, "PodDisruptionBudget")
    assert set(budgets) == {"platform-public-api", "platform-admin-api"}
    for name, budget in budgets.items():
        template_labels = workloads(docs)[name]["spec"]["template"]["metadata"]["labels"]
        assert budget["spec"]["selector"]["matchLabels"].items() <= template_labels.items()
        assert budget["spec"]["maxUnavailable"] == 1


def test_sharded_variant_is_a_statefulset_of_one_pod_per_shard() -> None:
    docs = render(*VARIANTS["sharded"])
    assert "cluster-worker-inventory" not in of_kind(docs, "Deployment")
    sharded = of_kind(docs, "StatefulSet")["cluster-worker-inventory"]
    assert sharded["spec"]["replicas"] == 3
    governing = of_kind(docs, "Service")["cluster-worker-inventory"]
    assert sharded["spec"]["serviceName"] == governing["metadata"]["name"]
    assert governing["spec"]["clusterIP"] == "None"
    container = containers(sharded)[0]
    assert env_of(container)["POD_NAME"] == {"fieldRef": {"fieldPath": "metadata.name"}}


def test_each_ordinal_of_the_statefulset_collects_its_own_shard(tmp_path: Path) -> None:
    sharded = of_kind(render(*VARIANTS["sharded"]), "StatefulSet")["cluster-worker-inventory"]
    command = containers(sharded)[0]["command"]
    # The container's real entry line, with a stand-in `python` that prints the shard it was given.
    stand_in = tmp_path / "python"
    stand_in.write_text('#!/bin/sh\necho "$INVENTORY_SHARD"\n')
    stand_in.chmod(0o755)
    shards = set()
    for ordinal in range(3):
        env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "POD_NAME": f"rel-cluster-worker-inventory-{ordinal}"}
        out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=10, check=True).stdout
        shard = Shard.parse("INVENTORY_SHARD", out.strip())
        assert shard == Shard(ordinal, 3)
        shards.add(shard)
    assert len(shards) == 3


@pytest.mark.parametrize(
    ("setting", "complaint"),
    [
        ("clusterWorkerInventory.credential=root", "/clusterWorkerInventory/credential"),
        ("clusterWorkerInventory.shards=0", "/clusterWorkerInventory/shards"),
        ("platformPublicApi.cacheTtlSeconds=120", "/platformPublicApi/cacheTtlSeconds"),
        ("platformPublicApi.cachTtl=3", "'cachTtl' not allowed"),
        ("gardener.mode=fake", "/gardener/mode"),
        ("clusterWorkerInventory.source=metrics", "/clusterWorkerInventory/source"),
    ],
    ids=["unknown-credential", "no-shards", "ttl-above-a-minute", "misspelt-key", "unknown-gardener-mode", "source"],
)
def test_values_schema_refuses_bad_values_naming_them(setting: str, complaint: str) -> None:
    result = helm("template", "rel", str(CHART), "--set", setting)
    assert result.returncode != 0
    assert complaint in result.stderr


def test_every_value_is_described_by_the_schema() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    schema = yaml.safe_load((CHART / "values.schema.json").read_text())
    assert set(schema["properties"]) == set(values)
    for key, value in values.items():
        # A group of the chart's own keys (not a Kubernetes object passed through, such as nodeSelector).
        if isinstance(value, dict) and "required" in schema["properties"][key]:
            assert set(schema["properties"][key]["properties"]) == set(value), key


def test_the_renders_use_only_objects_a_cluster_knows() -> None:
    kinds = {d["kind"] for variant in VARIANTS.values() for d in render(*variant, *MONITORING)}
    assert kinds == {
        "Deployment", "StatefulSet", "Service", "ServiceAccount", "Job", "NetworkPolicy",
        "PodDisruptionBudget", "PodMonitor", "PrometheusRule", "ConfigMap", "Pod",
    }  # fmt: skip
