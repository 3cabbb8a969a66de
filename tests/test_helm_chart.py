"""The Helm chart (deploy/fleet-inventory), rendered by a real `helm` and checked for what the design needs.

`scripts/fetch-helm` (run by `make test`) puts helm at .fleet/tools/helm; without it these tests skip
and say why.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HELM = ROOT / ".fleet" / "tools" / "helm"
CHART = ROOT / "deploy" / "fleet-inventory"

pytestmark = pytest.mark.skipif(
    not HELM.exists(), reason="helm is not installed (scripts/fetch-helm could not fetch it)"
)


def render(*sets: str) -> list[dict[str, Any]]:
    args = [str(HELM), "template", "rel", str(CHART)]
    for value in sets:
        args += ["--set", value]
    result = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def deployments(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["labels"]["app.kubernetes.io/name"]: d for d in docs if d["kind"] == "Deployment"}


def env_of(deployment: dict[str, Any]) -> dict[str, Any]:
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_helm_lint_passes() -> None:
    result = subprocess.run([str(HELM), "lint", str(CHART)], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_default_render_has_every_deployable() -> None:
    names = set(deployments(render()))
    assert names == {
        "platform-public-api",
        "platform-admin-api",
        "cluster-worker-inventory",
        "cluster-worker-reconcile",
    }


def test_inventory_worker_is_one_replica_recreated_and_in_inventory_mode() -> None:
    worker = deployments(render())["cluster-worker-inventory"]
    assert worker["spec"]["replicas"] == 1
    assert worker["spec"]["strategy"] == {"type": "Recreate"}
    assert env_of(worker)["WORKER_MODE"] == "inventory"


def test_inventory_worker_is_rendered_only_with_the_staff_api() -> None:
    names = set(deployments(render("platformAdminApi.enabled=false")))
    assert "cluster-worker-inventory" not in names
    assert "platform-admin-api" not in names
    assert {"platform-public-api", "cluster-worker-reconcile"} <= names


def test_each_api_reads_its_own_database_secret() -> None:
    found = deployments(render())
    public = env_of(found["platform-public-api"])["DATABASE_URL"]["secretKeyRef"]["name"]
    admin = env_of(found["platform-admin-api"])["DATABASE_URL"]["secretKeyRef"]["name"]
    assert public != admin
    assert "JWT_SECRET" not in env_of(found["platform-public-api"])
    assert env_of(found["platform-admin-api"])["JWT_SECRET"]["secretKeyRef"]["key"] == "secret"


@pytest.mark.parametrize(
    "name", ["platform-public-api", "platform-admin-api", "cluster-worker-inventory", "cluster-worker-reconcile"]
)
def test_probes_use_the_health_endpoints(name: str) -> None:
    container = deployments(render())[name]["spec"]["template"]["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_configuration_comes_from_values() -> None:
    found = deployments(render("platformPublicApi.cacheTtlSeconds=30", "clusterWorkerInventory.credential=viewer"))
    assert env_of(found["platform-public-api"])["CACHE_TTL"] == "30"
    assert env_of(found["cluster-worker-inventory"])["INVENTORY_CREDENTIAL"] == "viewer"
