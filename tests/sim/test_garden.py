"""fleet-sim's garden against the official client: shoots, selectors, paging, kubeconfig subresources."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

import orjson
import pytest
import yaml
from kubernetes import client as kubernetes_client
from kubernetes.client.exceptions import ApiException

from common import naming
from common.labels import CLUSTER_ID_LABEL, ORGANIZATION_ID_LABEL
from common.naming import worker_name
from sim.api.credentials.kubeconfig import kubeconfig, to_yaml
from tests.fixtures.sim import SimUnderTest, status_body

# The client's models declare almost every field Optional, and raw (`_preload_content=False`)
# answers are typed as models; these tests read both as a client does, so the client is untyped here.
client: Any = kubernetes_client

GROUP, VERSION = "core.gardener.cloud", "v1beta1"


def list_shoots(api: kubernetes_client.ApiClient, **kwargs: Any) -> dict[str, Any]:
    result: dict[str, Any] = client.CustomObjectsApi(api).list_cluster_custom_object(GROUP, VERSION, "shoots", **kwargs)
    return result


def post_subresource(
    api: kubernetes_client.ApiClient, namespace: str, name: str, sub: str, body: Any
) -> tuple[int, Any]:
    """POST a kubeconfig request the way Gardener's docs show for the Python client (param_serialize + call_api).

    `call_api` returns the raw answer whatever its status (only the typed wrappers raise ApiException).
    """
    method, url, headers, payload, post = api.param_serialize(
        "POST",
        f"/apis/{GROUP}/{VERSION}/namespaces/{namespace}/shoots/{name}/{sub}",
        header_params={"Content-Type": "application/json", "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
    )
    response: Any = api.call_api(method, url, headers, payload, post, _request_timeout=10)
    response.read()
    return response.status, orjson.loads(response.data)


def kubeconfig_request(kind: str, seconds: int | None) -> dict[str, Any]:
    spec = {} if seconds is None else {"expirationSeconds": seconds}
    return {"apiVersion": "authentication.gardener.cloud/v1alpha1", "kind": kind, "spec": spec}


def test_every_shoot_of_the_fleet_is_listed_with_its_labels_and_spec(sim: SimUnderTest) -> None:
    shoots = list_shoots(sim.garden_client())
    assert shoots["kind"] == "ShootList"
    listed = {(s["metadata"]["namespace"], s["metadata"]["name"]): s for s in shoots["items"]}
    assert set(listed) == {(s.namespace, s.name) for s in sim.fleet.shoots}
    for spec in sim.fleet.shoots:
        shoot = listed[(spec.namespace, spec.name)]
        assert shoot["metadata"]["uid"] == str(spec.uid)
        if spec.cluster_labelled:
            assert shoot["metadata"]["labels"][CLUSTER_ID_LABEL] == spec.cluster_label
        else:
            assert CLUSTER_ID_LABEL not in shoot["metadata"]["labels"]
        assert shoot["metadata"]["labels"][ORGANIZATION_ID_LABEL] == spec.organization_label
        assert shoot["metadata"]["labels"]["shoot.gardener.cloud/status"] in {"healthy", "progressing", "unhealthy"}
        assert shoot["spec"]["kubernetes"]["version"] == spec.kubernetes_version
        assert shoot["spec"]["region"] == spec.region
        assert shoot["spec"]["hibernation"]["enabled"] is spec.hibernated
        assert shoot["status"]["lastOperation"]["type"] == spec.last_operation
        assert shoot["status"]["lastOperation"]["state"] == spec.last_operation_state
        assert {c["type"] for c in shoot["status"]["conditions"]} >= {"APIServerAvailable", "ControlPlaneHealthy"}
        assert shoot["metadata"]["creationTimestamp"] == spec.created.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_workers_are_the_live_node_pools_of_the_shoots_cluster(sim: SimUnderTest) -> None:
    clusters = {str(c.id): c for c in sim.fleet.clusters}
    shoots = list_shoots(sim.garden_client())["items"]
    checked = 0
    for shoot in shoots:
        cluster = clusters.get(shoot["metadata"]["labels"].get(CLUSTER_ID_LABEL, ""))
        if cluster is None:
            continue
        pools = [p for p in sim.fleet.node_pools if p.cluster_id == cluster.id and p.deleted is None]
        workers = {w["name"]: w for w in shoot["spec"]["provider"]["workers"]}
        if not pools:
            continue
        assert set(workers) == {worker_name(p.name) for p in pools}
        for pool in pools:
            assert workers[worker_name(pool.name)]["minimum"] == pool.autoscale_min
            assert workers[worker_name(pool.name)]["machine"]["type"] == pool.machine_type
        checked += 1
    assert checked > 0


def test_the_cluster_label_existence_selector_leaves_out_unlabelled_shoots(sim: SimUnderTest) -> None:
    sim.control.add_shoot("strays0000", "unlabelled", cluster_label="", organization_label="")
    everything = list_shoots(sim.garden_client())["items"]
    labelled = list_shoots(sim.garden_client(), label_selector=CLUSTER_ID_LABEL)["items"]
    unlabelled = list_shoots(sim.garden_client(), label_selector=f"!{CLUSTER_ID_LABEL}")["items"]
    assert len(everything) == len(sim.fleet.shoots) + 1
    # An empty label value still counts as present, as in Kubernetes; only the planted unlabeled
    # shoot lacks the label.
    planted = [str(s.uid) for s in sim.fleet.shoots if not s.cluster_labelled]
    assert planted == [sim.fleet.notes["drift.unlabeled_shoot"]]
    assert len(labelled) == len(everything) - 1
    assert [s["metadata"]["uid"] for s in unlabelled] == planted


def test_a_shoot_loses_its_cluster_label_and_gets_it_back(sim: SimUnderTest) -> None:
    key = sim.serving_shoot().key
    sim.control.set_cluster_labelled(key, False)
    unlabelled = list_shoots(sim.garden_client(), label_selector=f"!{CLUSTER_ID_LABEL}")["items"]
    assert f"{key.split('--')[1]}" in {s["metadata"]["name"] for s in unlabelled}
    sim.control.set_cluster_labelled(key, True)
    unlabelled = list_shoots(sim.garden_client(), label_selector=f"!{CLUSTER_ID_LABEL}")["items"]
    assert [s["metadata"]["uid"] for s in unlabelled] == [sim.fleet.notes["drift.unlabeled_shoot"]]
    one = sim.fleet.shoots[0]
    only = list_shoots(sim.garden_client(), label_selector=f"{CLUSTER_ID_LABEL}={one.cluster_label}")["items"]
    assert [s["metadata"]["uid"] for s in only] == [
        str(s.uid) for s in sim.fleet.shoots if s.cluster_label == one.cluster_label
    ]


def test_shoots_of_one_project_namespace(sim: SimUnderTest) -> None:
    namespace = sim.fleet.shoots[0].namespace
    items = client.CustomObjectsApi(sim.garden_client()).list_namespaced_custom_object(
        GROUP, VERSION, namespace, "shoots"
    )["items"]
    assert sorted(s["metadata"]["name"] for s in items) == sorted(
        s.name for s in sim.fleet.shoots if s.namespace == namespace
    )


def test_paging_returns_every_shoot_once_in_key_order(sim: SimUnderTest) -> None:
    api = sim.garden_client()
    seen: list[tuple[str, str]] = []
    token = None
    pages = 0
    while True:
        page = list_shoots(api, limit=5, _continue=token) if token else list_shoots(api, limit=5)
        pages += 1
        seen += [(s["metadata"]["namespace"], s["metadata"]["name"]) for s in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            break
        assert page["metadata"]["remainingItemCount"] == len(sim.fleet.shoots) - len(seen)
    assert pages == -(-len(sim.fleet.shoots) // 5)
    assert seen == sorted(seen, key=lambda k: f"{k[0]}/{k[1]}")
    assert len(set(seen)) == len(sim.fleet.shoots)


def test_an_expired_continue_token_is_410_with_a_token_to_go_on(sim: SimUnderTest) -> None:
    api = sim.garden_client()
    first = list_shoots(api, limit=3)
    sim.control.advance_clock(301)
    with pytest.raises(ApiException) as caught:
        list_shoots(api, limit=3, _continue=first["metadata"]["continue"])
    assert caught.value.status == 410
    status = status_body(caught.value)
    assert status["reason"] == "Expired"
    # The inconsistent token of the 410 continues where the first page ended.
    rest = list_shoots(api, limit=100, _continue=status["metadata"]["continue"])
    assert len(first["items"]) + len(rest["items"]) == len(sim.fleet.shoots)


def test_compaction_expires_continue_tokens_at_once(sim: SimUnderTest) -> None:
    api = sim.garden_client()
    first = list_shoots(api, limit=3)
    sim.control.compact("garden")
    with pytest.raises(ApiException) as caught:
        list_shoots(api, limit=3, _continue=first["metadata"]["continue"])
    assert caught.value.status == 410


def test_resource_version_zero_ignores_the_limit(sim: SimUnderTest) -> None:
    page = list_shoots(sim.garden_client(), limit=2, resource_version="0")
    assert len(page["items"]) == len(sim.fleet.shoots)
    assert "continue" not in page["metadata"]


def test_a_bad_continue_token_is_400(sim: SimUnderTest) -> None:
    with pytest.raises(ApiException) as caught:
        list_shoots(sim.garden_client(), limit=3, _continue="not-a-token")
    assert caught.value.status == 400


@pytest.mark.parametrize(
    ("sub", "kind"), [("adminkubeconfig", "AdminKubeconfigRequest"), ("viewerkubeconfig", "ViewerKubeconfigRequest")]
)
def test_a_minted_kubeconfig_reaches_its_shoot_until_it_expires(sim: SimUnderTest, sub: str, kind: str) -> None:
    shoot = sim.serving_shoot()
    status, answer = post_subresource(
        sim.garden_client(), shoot.namespace, shoot.name, sub, kubeconfig_request(kind, 600)
    )
    assert status == 201
    assert answer["kind"] == kind
    assert answer["apiVersion"] == "authentication.gardener.cloud/v1alpha1"
    kubeconfig = yaml.safe_load(base64.b64decode(answer["status"]["kubeconfig"]))
    assert kubeconfig["clusters"][0]["cluster"]["server"].endswith(f"/shoots/{shoot.key}")
    shoot_api = client.CoreV1Api(sim.kube_client(kubeconfig))
    assert shoot_api.list_node().items
    assert sim.control.requests(shoot.key)[-1].token_kind.value == sub.removesuffix("kubeconfig")
    sim.control.advance_clock(540)  # well inside the ten minutes (client setup itself takes a moment)
    assert shoot_api.list_namespace().items
    sim.control.advance_clock(61)
    with pytest.raises(ApiException) as caught:
        shoot_api.list_node()
    assert caught.value.status == 401
    assert sim.control.requests(shoot.key)[-1].token_kind.value == "expired"


def test_the_expiration_defaults_to_an_hour_and_is_capped_at_a_day(sim: SimUnderTest) -> None:
    shoot = sim.serving_shoot()
    api = sim.garden_client()
    now = sim.server.sim.clock.time()
    for seconds, lifetime in ((None, 3600), (10**6, 86400)):
        _, answer = post_subresource(
            api, shoot.namespace, shoot.name, "adminkubeconfig", kubeconfig_request("AdminKubeconfigRequest", seconds)
        )
        expires = answer["status"]["expirationTimestamp"]
        expires_at = datetime.strptime(expires, "%Y-%m-%dT%H:%M:%S%z").timestamp()
        assert lifetime - 5 <= expires_at - now <= lifetime + 5


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        (kubeconfig_request("AdminKubeconfigRequest", 599), 422, "Invalid"),
        (kubeconfig_request("ViewerKubeconfigRequest", 600), 400, "BadRequest"),
        ({"kind": "AdminKubeconfigRequest", "spec": {"expirationSeconds": "soon"}}, 400, "BadRequest"),
        ("not json", 400, "BadRequest"),
    ],
    ids=["below-ten-minutes", "wrong-kind", "not-a-number", "not-json"],
)
def test_bad_kubeconfig_requests_are_refused(sim: SimUnderTest, body: Any, status: int, reason: str) -> None:
    shoot = sim.serving_shoot()
    answered, answer = post_subresource(sim.garden_client(), shoot.namespace, shoot.name, "adminkubeconfig", body)
    assert (answered, answer["kind"], answer["reason"]) == (status, "Status", reason)
    assert sim.server.sim.tokens.minted_count == 0


def test_kubeconfig_for_an_unknown_shoot_is_404(sim: SimUnderTest) -> None:
    status, answer = post_subresource(
        sim.garden_client(),
        "garden-nobody",
        "nothing",
        "adminkubeconfig",
        kubeconfig_request("AdminKubeconfigRequest", 600),
    )
    assert status == 404
    assert answer["message"] == 'shoots.core.gardener.cloud "nothing" not found'


def test_a_shoot_still_being_created_has_no_kubeconfig(sim: SimUnderTest) -> None:
    creating = sim.shoots(lambda s: s.last_operation == "Create" and s.last_operation_state != "Succeeded")
    assert creating, "the test fleet plants a shoot being created"
    shoot = creating[0]
    status, answer = post_subresource(
        sim.garden_client(),
        shoot.namespace,
        shoot.name,
        "adminkubeconfig",
        kubeconfig_request("AdminKubeconfigRequest", 600),
    )
    assert status == 400
    assert "advertised addresses" in answer["message"]


@pytest.mark.parametrize("credential", ["none", "wrong", "shoot"])
def test_the_garden_refuses_anything_but_its_token(sim: SimUnderTest, credential: str) -> None:
    kubeconfig = sim.garden_kubeconfig
    if credential == "shoot":
        kubeconfig["users"][0]["user"]["token"] = sim.control.shoot_kubeconfig(sim.serving_shoot().key)["users"][0][
            "user"
        ]["token"]
    elif credential == "wrong":
        kubeconfig["users"][0]["user"]["token"] = "not-the-token"
    else:
        del kubeconfig["users"][0]["user"]["token"]
    with pytest.raises(ApiException) as caught:
        list_shoots(sim.kube_client(kubeconfig))
    assert caught.value.status == 401
    assert status_body(caught.value)["reason"] == "Unauthorized"


def test_a_minted_kubeconfig_opens_no_other_shoot(sim: SimUnderTest) -> None:
    first, second = sim.shoots(lambda s: s.serving)[:2]
    kubeconfig = sim.control.shoot_kubeconfig(first.key)
    kubeconfig["clusters"][0]["cluster"]["server"] = kubeconfig["clusters"][0]["cluster"]["server"].replace(
        first.key, second.key
    )
    with pytest.raises(ApiException) as caught:
        client.CoreV1Api(sim.kube_client(kubeconfig)).list_node()
    assert caught.value.status == 401


def test_recreating_a_shoot_gives_a_new_uid_and_voids_old_credentials(sim: SimUnderTest) -> None:
    shoot = sim.serving_shoot()
    old = client.CoreV1Api(sim.shoot_client(shoot.key))
    assert old.list_node().items
    new_uid = sim.control.recreate_shoot(shoot.key)
    assert new_uid != shoot.uid
    listed = list_shoots(sim.garden_client(), label_selector=f"{CLUSTER_ID_LABEL}={shoot.cluster_label}")["items"]
    assert [s["metadata"]["uid"] for s in listed] == [new_uid]
    with pytest.raises(ApiException) as caught:
        old.list_node()
    assert caught.value.status == 401
    assert client.CoreV1Api(sim.shoot_client(shoot.key)).list_node().items


def test_deleting_a_shoot_removes_it_from_the_garden_and_its_api(sim: SimUnderTest) -> None:
    shoot = sim.serving_shoot()
    api = client.CoreV1Api(sim.shoot_client(shoot.key))
    sim.control.delete_shoot(shoot.key)
    uids = {s["metadata"]["uid"] for s in list_shoots(sim.garden_client())["items"]}
    assert shoot.uid not in uids
    with pytest.raises(ApiException) as caught:
        api.list_node()
    assert caught.value.status == 404


def list_projects(api: kubernetes_client.ApiClient, **kwargs: Any) -> dict[str, Any]:
    result: dict[str, Any] = client.CustomObjectsApi(api).list_cluster_custom_object(
        GROUP, VERSION, "projects", **kwargs
    )
    return result


def test_projects_and_project_namespaces_are_served(sim: SimUnderTest) -> None:
    answer = list_projects(sim.garden_client())
    assert answer["kind"] == "ProjectList"
    projects = {p["metadata"]["name"]: p for p in answer["items"]}
    described = {p.name: p for p in sim.fleet.garden_projects}
    # One per organization (the system one too), as the fleet describes them; a shoot's project the
    # fleet does not describe (the orphans') in Gardener's default shape, without Fundament's label.
    assert set(projects) == set(described) | {s.project for s in sim.fleet.shoots}
    for name, project in projects.items():
        assert "namespace" not in project["metadata"]
        assert project["status"]["phase"] == "Ready"
        spec = described.get(name)
        labels = project["metadata"].get("labels") or {}
        if spec is None:
            assert project["spec"]["namespace"] == f"garden-{name}"
            assert ORGANIZATION_ID_LABEL not in labels
        else:
            assert project["spec"]["namespace"] == spec.namespace
            assert labels[ORGANIZATION_ID_LABEL] == spec.organization_label
    organizations = {str(o.id) for o in sim.fleet.organizations}
    assert organizations <= {p.organization_label for p in described.values()}
    # Every shoot lives in its project's namespace.
    for shoot in sim.fleet.shoots:
        assert projects[shoot.project]["spec"]["namespace"] == shoot.namespace
    namespaces = {n.metadata.name: n for n in client.CoreV1Api(sim.garden_client()).list_namespace().items}
    assert set(namespaces) == {p["spec"]["namespace"] for p in projects.values()}
    for project in projects.values():
        labels = namespaces[project["spec"]["namespace"]].metadata.labels
        assert labels["project.gardener.cloud/name"] == project["metadata"]["name"]


def test_one_organizations_project_adopted_a_namespace_not_named_after_it(sim: SimUnderTest) -> None:
    """Only the Project's spec.namespace says where organization 0's shoots live (a deterministic plant)."""
    owner = sim.fleet.organizations[0]
    project_name = naming.project_name(owner.name)
    (project,) = list_projects(sim.garden_client(), field_selector=f"metadata.name={project_name}")["items"]
    namespace = project["spec"]["namespace"]
    assert namespace == sim.fleet.notes["planted.adopted_project_namespace"]
    assert namespace != naming.garden_namespace(owner.name)
    assert project["metadata"]["labels"][ORGANIZATION_ID_LABEL] == str(owner.id)
    shoots = list_shoots(sim.garden_client(), label_selector=f"{ORGANIZATION_ID_LABEL}={owner.id}")["items"]
    in_project = {
        s["metadata"]["name"] for s in shoots if s["metadata"]["labels"]["project.gardener.cloud/name"] == project_name
    }
    assert in_project
    assert {s["metadata"]["namespace"] for s in shoots if s["metadata"]["name"] in in_project} == {namespace}
    # The planted unlabeled shoot is one of them.
    unlabelled = list_shoots(sim.garden_client(), label_selector=f"!{CLUSTER_ID_LABEL}")["items"]
    assert [(s["metadata"]["namespace"], s["metadata"]["uid"]) for s in unlabelled] == [
        (namespace, sim.fleet.notes["drift.unlabeled_shoot"])
    ]
    # And the conventional namespace does not exist at all.
    names = {n.metadata.name for n in client.CoreV1Api(sim.garden_client()).list_namespace().items}
    assert naming.garden_namespace(owner.name) not in names


def test_projects_are_paged_and_selected_like_any_list(sim: SimUnderTest) -> None:
    api = sim.garden_client()
    everything = [p["metadata"]["name"] for p in list_projects(api)["items"]]
    assert everything == sorted(everything)
    seen: list[str] = []
    token = None
    while True:
        page = list_projects(api, limit=2, _continue=token) if token else list_projects(api, limit=2)
        assert len(page["items"]) <= 2
        seen += [p["metadata"]["name"] for p in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            break
    assert seen == everything
    owner = sim.fleet.organizations[1]
    labelled = list_projects(api, label_selector=f"{ORGANIZATION_ID_LABEL}={owner.id}")["items"]
    assert [p["metadata"]["name"] for p in labelled] == [naming.project_name(owner.name)]


def test_a_project_added_through_the_control_api_is_served_and_takes_shoots(sim: SimUnderTest) -> None:
    sim.control.add_project("someteam", namespace="garden-elsewhere", organization_label="not-fundaments")
    key = sim.control.add_shoot("someteam", "byhand", cluster_label="", organization_label="")
    assert sim.control.shoot(key).namespace == "garden-elsewhere"
    (project,) = list_projects(sim.garden_client(), field_selector="metadata.name=someteam")["items"]
    assert project["spec"]["namespace"] == "garden-elsewhere"
    assert project["metadata"]["labels"] == {ORGANIZATION_ID_LABEL: "not-fundaments"}
    items = client.CustomObjectsApi(sim.garden_client()).list_namespaced_custom_object(
        GROUP, VERSION, "garden-elsewhere", "shoots"
    )["items"]
    assert [s["metadata"]["name"] for s in items] == ["byhand"]
    with pytest.raises(ValueError, match="already belongs to a project"):
        sim.control.add_project("another", namespace="garden-elsewhere")
    with pytest.raises(ValueError, match="already exists"):
        sim.control.add_project("someteam")


@pytest.mark.parametrize("key", ["acme--web", "yes--no", "1--2", "a: b--#c", "é--'q\"", "x--" + "y" * 200])
def test_a_minted_kubeconfig_is_the_document_safe_dump_writes(key: str) -> None:
    config = kubeconfig(
        name=f"{key}-external", server=f"https://127.0.0.1:1/shoots/{key}", ca_pem=b"-" * 900, token=key, user=key
    )
    assert to_yaml(config) == yaml.safe_dump(config, sort_keys=False).encode()
