"""Changing the simulated world while it runs, over the Python control API and over HTTP (`/_sim`)."""

from __future__ import annotations

import ssl
from typing import Any

import httpx
import orjson
import pytest
from kubernetes import client as kubernetes_client

from common.labels import CLUSTER_ID_LABEL, NAMESPACE_ID_LABEL
from sim.control.expected import TERMINAL_PHASES
from tests.fixtures.sim import SimUnderTest

# The client's models declare almost every field Optional, and raw (`_preload_content=False`)
# answers are typed as models; these tests read both as a client does, so the client is untyped here.
client: Any = kubernetes_client


def shoots_by_uid(sim: SimUnderTest) -> dict[str, dict[str, Any]]:
    items = client.CustomObjectsApi(sim.garden_client()).list_cluster_custom_object(
        "core.gardener.cloud", "v1beta1", "shoots"
    )["items"]
    return {s["metadata"]["uid"]: s for s in items}


@pytest.fixture
def shoot_key(sim: SimUnderTest) -> str:
    return sim.serving_shoot(lambda s: bool(sim.control.expected(s.key).namespace_pods)).key


def test_scaling_a_pool_changes_nodes_and_their_daemonset_pods(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    before = sim.control.expected(shoot_key)
    worker = next(iter(before.pools))
    pods_before = len(core.list_pod_for_all_namespaces().items)
    sim.control.scale_pool(shoot_key, worker, before.pools[worker].nodes + 3)
    after = sim.control.expected(shoot_key)
    assert after.pools[worker].nodes == before.pools[worker].nodes + 3
    assert len(core.list_node(label_selector=f"worker.gardener.cloud/pool={worker}").items) == after.pools[worker].nodes
    assert len(core.list_pod_for_all_namespaces().items) == pods_before + 3 * 2
    sim.control.scale_pool(shoot_key, worker, 0)
    assert worker not in sim.control.expected(shoot_key).pools
    assert core.list_node(label_selector=f"worker.gardener.cloud/pool={worker}").items == []


def test_a_new_pool_name_is_a_pool_the_database_does_not_know(sim: SimUnderTest, shoot_key: str) -> None:
    sim.control.scale_pool(shoot_key, "surprise", 2)
    nodes = (
        client.CoreV1Api(sim.shoot_client(shoot_key))
        .list_node(label_selector="worker.gardener.cloud/pool=surprise")
        .items
    )
    assert len(nodes) == 2


def test_adding_and_removing_pods(sim: SimUnderTest, shoot_key: str) -> None:
    expected = sim.control.expected(shoot_key)
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    tenants = {
        n.metadata.labels[NAMESPACE_ID_LABEL]: n.metadata.name
        for n in core.list_namespace(label_selector=NAMESPACE_ID_LABEL).items
    }
    namespace_id, namespace = next(iter(tenants.items()))
    added = sim.control.add_pods(shoot_key, namespace, 4)
    assert len(added) == 4
    assert sim.control.expected(shoot_key).namespace_pods[namespace_id] == expected.namespace_pods[namespace_id] + 4
    sim.control.add_pods(shoot_key, namespace, 2, phase="Succeeded")
    assert sim.control.expected(shoot_key).namespace_pods[namespace_id] == expected.namespace_pods[namespace_id] + 4
    removed = sim.control.remove_pods(shoot_key, namespace, 100)
    assert sim.control.expected(shoot_key).namespace_pods[namespace_id] == 0
    assert core.list_namespaced_pod(namespace).items == []
    assert len(removed) >= 6


def test_adding_and_removing_namespaces(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    sim.control.add_namespace(shoot_key, "brand-new", namespace_id="11111111-2222-4333-8444-555555555555", pods=3)
    assert sim.control.expected(shoot_key).namespace_pods["11111111-2222-4333-8444-555555555555"] == 3
    assert (
        core.read_namespace("brand-new").metadata.labels[NAMESPACE_ID_LABEL] == "11111111-2222-4333-8444-555555555555"
    )
    tenant = next(
        n.metadata.name
        for n in core.list_namespace(label_selector=NAMESPACE_ID_LABEL).items
        if n.metadata.name != "brand-new"
    )
    volumes_before = core.list_persistent_volume().items
    claimed = [v for v in volumes_before if v.spec.claim_ref and v.spec.claim_ref.namespace == tenant]
    sim.control.remove_namespace(shoot_key, tenant)
    assert tenant not in {n.metadata.name for n in core.list_namespace().items}
    assert core.list_namespaced_pod(tenant).items == []
    assert len(core.list_persistent_volume().items) == len(volumes_before) - len(claimed)
    with pytest.raises(LookupError):
        sim.control.remove_namespace(shoot_key, tenant)
    with pytest.raises(ValueError, match="already exists"):
        sim.control.add_namespace(shoot_key, "brand-new")


def test_pod_phase_changes_move_the_counts(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    pod = next(p for p in core.list_pod_for_all_namespaces().items if p.status.phase not in TERMINAL_PHASES)
    before = sim.control.expected(shoot_key).pods
    sim.control.set_pod_phase(shoot_key, pod.metadata.namespace, pod.metadata.name, "Failed")
    assert sim.control.expected(shoot_key).pods == before - 1
    assert core.read_namespaced_pod(pod.metadata.name, pod.metadata.namespace).status.phase == "Failed"


def test_version_bump_hibernation_and_operations_show_in_the_garden(sim: SimUnderTest, shoot_key: str) -> None:
    shoot = sim.control.shoot(shoot_key)
    major, minor = shoot.kubernetes_version.split(".")[:2]
    assert sim.control.bump_version(shoot_key) == f"{major}.{int(minor) + 1}.0"
    assert shoots_by_uid(sim)[shoot.uid]["spec"]["kubernetes"]["version"] == f"{major}.{int(minor) + 1}.0"
    sim.control.set_last_operation(shoot_key, "Reconcile", "Processing")
    listed = shoots_by_uid(sim)[shoot.uid]
    assert listed["metadata"]["labels"]["shoot.gardener.cloud/status"] == "progressing"
    sim.control.hibernate(shoot_key)
    listed = shoots_by_uid(sim)[shoot.uid]
    assert listed["spec"]["hibernation"]["enabled"] is True
    assert listed["status"]["isHibernated"] is True
    sim.control.set_control_plane_healthy(shoot_key, False)
    listed = shoots_by_uid(sim)[shoot.uid]
    assert {c["type"]: c["status"] for c in listed["status"]["conditions"]}["ControlPlaneHealthy"] == "False"
    with pytest.raises(ValueError, match="operation"):
        sim.control.set_last_operation(shoot_key, "Explode", "Processing")


def test_labels_can_be_pointed_elsewhere(sim: SimUnderTest, shoot_key: str) -> None:
    shoot = sim.control.shoot(shoot_key)
    sim.control.set_labels(shoot_key, cluster_label="not-a-uuid")
    assert shoots_by_uid(sim)[shoot.uid]["metadata"]["labels"][CLUSTER_ID_LABEL] == "not-a-uuid"


def test_every_change_bumps_the_resource_version(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    before = int(core.list_node().metadata.resource_version)
    sim.control.scale_pool(shoot_key, next(iter(sim.control.expected(shoot_key).pools)), 5)
    assert int(core.list_node().metadata.resource_version) > before


def test_reset_restores_the_generated_world(sim: SimUnderTest, shoot_key: str) -> None:
    original = sim.control.expected(shoot_key)
    sim.control.scale_pool(shoot_key, next(iter(original.pools)), 9)
    sim.control.delete_shoot(shoot_key)
    sim.control.fault("garden", "500")
    sim.control.reset()
    assert sim.control.expected(shoot_key) == original
    assert sim.control.faults() == []
    assert sim.control.requests() == []


def test_the_request_log_records_path_query_accept_and_credential(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key, viewer=True))
    sim.control.clear_requests()
    core.list_pod_for_all_namespaces(
        resource_version="0", label_selector="app=web", _headers={"Accept": "application/json"}
    )
    [entry] = sim.control.requests(shoot_key)
    assert entry.path == f"/shoots/{shoot_key}/api/v1/pods"
    assert entry.api_path == "/api/v1/pods"
    assert entry.resource == "pods"
    assert entry.query == {"resourceVersion": "0", "labelSelector": "app=web"}
    assert entry.accept == "application/json"
    assert entry.token_kind.value == "viewer"
    assert entry.status == 200
    sim.control.clear_requests()
    assert sim.control.requests() == []


def test_unknown_shoots_pools_and_namespaces_are_lookup_errors(sim: SimUnderTest, shoot_key: str) -> None:
    with pytest.raises(LookupError):
        sim.control.delete_shoot("nobody--nothing")
    with pytest.raises(LookupError):
        sim.control.add_pods(shoot_key, "no-such-namespace", 1)
    with pytest.raises(ValueError, match="cannot run -1"):
        sim.control.scale_pool(shoot_key, "system", -1)


# --- over HTTP ---------------------------------------------------------------------------------


@pytest.fixture
def admin(sim: SimUnderTest) -> httpx.Client:
    context = ssl.create_default_context(cadata=sim.server.sim.tls.ca_pem.decode())
    token = sim.server.sim.tokens.control_token
    return httpx.Client(base_url=sim.url, verify=context, headers={"Authorization": f"Bearer {token}"}, timeout=10)


def test_http_actions_change_the_world(sim: SimUnderTest, shoot_key: str, admin: httpx.Client) -> None:
    with admin:
        worker = next(iter(sim.control.expected(shoot_key).pools))
        answer = admin.post("/_sim/actions/scale_pool", json={"key": shoot_key, "worker": worker, "nodes": 7})
        assert answer.status_code == 200, answer.text
        assert sim.control.expected(shoot_key).pools[worker].nodes == 7
        answer = admin.post(
            "/_sim/actions/fault", json={"target": shoot_key, "kind": "500", "resource": "nodes", "times": 1}
        )
        assert answer.status_code == 200
        assert admin.get("/_sim/state").json()["faults"] == [
            {"kind": "server_error", "target": shoot_key, "resource": "nodes", "seconds": 0.0, "times": 1, "count": 0}
        ]
        expected = admin.post("/_sim/actions/expected", json={"key": shoot_key}).json()["result"]
        assert expected["pools"][worker]["nodes"] == 7
        new_uid = admin.post("/_sim/actions/recreate_shoot", json={"key": shoot_key}).json()["result"]
        assert new_uid in shoots_by_uid(sim)


def test_http_requests_log_is_readable_and_clearable(sim: SimUnderTest, shoot_key: str, admin: httpx.Client) -> None:
    client.CoreV1Api(sim.shoot_client(shoot_key)).list_node()
    with admin:
        logged = admin.get("/_sim/requests", params={"target": shoot_key}).json()
        assert [e["api_path"] for e in logged] == ["/api/v1/nodes"]
        assert logged[0]["token_kind"] == "admin"
        assert admin.delete("/_sim/requests").status_code == 200
        assert admin.get("/_sim/requests").json() == []


@pytest.mark.parametrize(
    ("path", "body", "status", "message"),
    [
        ("/_sim/actions/explode", {}, 404, "no action"),
        ("/_sim/actions/scale_pool", {"key": "x"}, 400, "missing a required argument"),
        ("/_sim/actions/scale_pool", {"key": "nobody--nothing", "worker": "w", "nodes": 1}, 404, "no shoot"),
        ("/_sim/actions/fault", {"target": "garden", "kind": "teapot"}, 400, "unknown fault"),
        ("/_sim/actions/fault", [1, 2], 400, "JSON object"),
        ("/_sim/nothing", {}, 404, "no control endpoint"),
    ],
    ids=["unknown-action", "missing-argument", "unknown-shoot", "bad-fault", "not-an-object", "unknown-path"],
)
def test_http_bad_actions_get_clear_errors(
    admin: httpx.Client, path: str, body: Any, status: int, message: str
) -> None:
    with admin:
        answer = admin.post(path, content=orjson.dumps(body))
    assert answer.status_code == status
    assert message in answer.json()["error"]


@pytest.mark.parametrize("token", ["none", "garden", "wrong"])
def test_http_control_needs_the_control_token(sim: SimUnderTest, token: str) -> None:
    context = ssl.create_default_context(cadata=sim.server.sim.tls.ca_pem.decode())
    headers = (
        {}
        if token == "none"
        else {"Authorization": "Bearer " + (sim.server.sim.tokens.garden_token if token == "garden" else "x")}
    )
    with httpx.Client(base_url=sim.url, verify=context, headers=headers, timeout=10) as anonymous:
        assert anonymous.post("/_sim/actions/reset").status_code == 401
        assert anonymous.get("/_sim/state").status_code == 401
