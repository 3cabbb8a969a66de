"""A simulated shoot's API against the official client: every kind typed and raw, selectors, paging,
metadata-only lists, the watch-cache read, and what the collector's counts must come to."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from kubernetes import client as kubernetes_client
from kubernetes import dynamic
from kubernetes.client.exceptions import ApiException

from common.labels import NAMESPACE_ID_LABEL, POOL_LABEL
from common.naming import namespace_name
from sim.control.expected import TERMINAL_PHASES
from tests.fixtures.sim import SimUnderTest, status_body

# The client's models declare almost every field Optional, and raw (`_preload_content=False`)
# answers are typed as models; these tests read both as a client does, so the client is untyped here.
client: Any = kubernetes_client

META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
# What client-go's metadata client sends for a list (protobuf first, then JSON, then plain JSON).
CLIENT_GO_META = (
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)


def raw(response: Any) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(response.data)
    return data


def all_pages(list_call: Any, **kwargs: Any) -> list[Any]:
    items: list[Any] = []
    token = None
    while True:
        page = list_call(_continue=token, **kwargs) if token else list_call(**kwargs)
        items += page.items
        token = page.metadata._continue
        if not token:
            return items


@pytest.fixture
def shoot_key(sim: SimUnderTest) -> str:
    """A running shoot with the cert-manager CRD and at least one tenant namespace."""
    return sim.serving_shoot(lambda s: s.has_certificates_crd and bool(sim.control.expected(s.key).namespace_pods)).key


def test_every_kind_lists_typed(sim: SimUnderTest, shoot_key: str) -> None:
    api = sim.shoot_client(shoot_key)
    core, networking = client.CoreV1Api(api), client.NetworkingV1Api(api)
    expected = sim.control.expected(shoot_key)
    nodes = core.list_node().items
    assert len(nodes) == expected.nodes
    assert (
        sum(1 for n in nodes for c in n.status.conditions if c.type == "Ready" and c.status == "True")
        == expected.ready_nodes
    )
    pods = core.list_pod_for_all_namespaces().items
    assert sum(1 for p in pods if p.status.phase not in TERMINAL_PHASES) == expected.pods
    assert {p.status.phase for p in pods} >= {"Running"}
    assert core.list_namespace().items
    volumes = core.list_persistent_volume().items
    assert {v.spec.csi.volume_handle for v in volumes if v.spec.csi and v.spec.claim_ref} == expected.ledger_ids(
        "kubernetes.persistentvolume"
    )
    assert core.list_persistent_volume_claim_for_all_namespaces().items
    services = core.list_service_for_all_namespaces().items
    load_balancers = {
        (i.hostname or i.ip)
        for s in services
        if s.spec.type == "LoadBalancer"
        for i in (s.status.load_balancer.ingress or [])[:1]
    }
    assert load_balancers == expected.ledger_ids("kubernetes.loadbalancer")
    ingresses = networking.list_ingress_for_all_namespaces().items
    assert {i.status.load_balancer.ingress[0].ip for i in ingresses} == expected.ledger_ids("kubernetes.ingress")
    assert len(ingresses) == sum(1 for e in expected.ledger if e.resource_type == "kubernetes.ingress")
    certificates = client.CustomObjectsApi(api).list_cluster_custom_object("cert-manager.io", "v1", "certificates")[
        "items"
    ]
    assert {c["spec"]["secretName"] for c in certificates} == expected.ledger_ids("kubernetes.certificate")


def test_nodes_carry_what_the_collector_reads(sim: SimUnderTest, shoot_key: str) -> None:
    expected = sim.control.expected(shoot_key)
    nodes = raw(client.CoreV1Api(sim.shoot_client(shoot_key)).list_node(resource_version="0", _preload_content=False))
    by_pool: dict[str, int] = {}
    for node in nodes["items"]:
        by_pool[node["metadata"]["labels"][POOL_LABEL]] = by_pool.get(node["metadata"]["labels"][POOL_LABEL], 0) + 1
        assert node["spec"]["providerID"]
        assert set(node["status"]["allocatable"]) >= {"cpu", "memory", "pods"}
    assert by_pool == {worker: counts.nodes for worker, counts in expected.pools.items()}
    assert {n["spec"]["providerID"] for n in nodes["items"]} == expected.ledger_ids("kubernetes.node")


def test_node_pools_come_from_the_database_minimums(sim: SimUnderTest, shoot_key: str) -> None:
    shoot = sim.control.shoot(shoot_key)
    pools = {w.name: w.minimum for w in shoot.workers}
    expected = sim.control.expected(shoot_key)
    for worker, minimum in pools.items():
        assert expected.pools.get(worker, None) is None or expected.pools[worker].nodes == minimum
    assert sum(pools.values()) <= expected.nodes


def test_tenant_namespaces_are_the_live_namespaces_of_live_projects(sim: SimUnderTest, shoot_key: str) -> None:
    shoot = sim.control.shoot(shoot_key)
    projects = {p.id: p for p in sim.fleet.projects if str(p.cluster_id) == shoot.cluster_label and p.deleted is None}
    live = {
        namespace_name(projects[n.project_id].name, n.project_id, n.name): str(n.id)
        for n in sim.fleet.namespaces
        if n.project_id in projects and n.deleted is None
    }
    listed = client.CoreV1Api(sim.shoot_client(shoot_key)).list_namespace(label_selector=NAMESPACE_ID_LABEL).items
    assert {n.metadata.name: n.metadata.labels[NAMESPACE_ID_LABEL] for n in listed} == live
    everything = client.CoreV1Api(sim.shoot_client(shoot_key)).list_namespace().items
    assert {"kube-system", "default"} <= {n.metadata.name for n in everything}


def test_the_phase_field_selector_leaves_out_finished_pods(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    running = core.list_pod_for_all_namespaces(field_selector="status.phase!=Succeeded,status.phase!=Failed").items
    assert len(running) == sim.control.expected(shoot_key).pods
    assert all(p.status.phase not in TERMINAL_PHASES for p in running)
    succeeded = core.list_pod_for_all_namespaces(field_selector="status.phase=Succeeded").items
    assert all(p.status.phase == "Succeeded" for p in succeeded)
    node = core.list_node().items[0].metadata.name
    assert all(
        p.spec.node_name == node for p in core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}").items
    )


def test_metadata_only_pod_list_counts_per_namespace(sim: SimUnderTest, shoot_key: str) -> None:
    """The collector's pod read: metadata-only, with the phase selector, counted per namespace."""
    api = sim.shoot_client(shoot_key)
    core = client.CoreV1Api(api)
    tenants = {
        n.metadata.name: n.metadata.labels[NAMESPACE_ID_LABEL]
        for n in core.list_namespace(label_selector=NAMESPACE_ID_LABEL).items
    }
    response = core.list_pod_for_all_namespaces(
        field_selector="status.phase!=Succeeded,status.phase!=Failed",
        _headers={"Accept": CLIENT_GO_META},
        _preload_content=False,
    )
    assert response.headers["Content-Type"] == META_LIST
    body = raw(response)
    assert body["kind"] == "PartialObjectMetadataList"
    assert body["apiVersion"] == "meta.k8s.io/v1"
    counts: dict[str, int] = {}
    for item in body["items"]:
        assert item["kind"] == "PartialObjectMetadata"
        assert set(item) == {"kind", "apiVersion", "metadata"}
        assert item["metadata"]["managedFields"]
        namespace = item["metadata"]["namespace"]
        if namespace in tenants:
            counts[tenants[namespace]] = counts.get(tenants[namespace], 0) + 1
    expected = sim.control.expected(shoot_key).namespace_pods
    assert counts == {k: v for k, v in expected.items() if v}
    last = sim.control.requests(shoot_key)[-1]
    assert last.accept == CLIENT_GO_META
    assert last.query["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"


def test_typed_metadata_only_lists_have_no_spec(sim: SimUnderTest, shoot_key: str) -> None:
    pods = (
        client.CoreV1Api(sim.shoot_client(shoot_key)).list_pod_for_all_namespaces(_headers={"Accept": META_LIST}).items
    )
    assert pods
    assert all(p.spec is None and p.metadata.uid for p in pods)


def test_a_metadata_only_get_of_one_object(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    node = core.list_node().items[0].metadata.name
    response = core.read_node(
        node,
        _headers={"Accept": "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"},
        _preload_content=False,
    )
    assert response.headers["Content-Type"] == "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    assert raw(response)["metadata"]["name"] == node


def test_an_accept_header_without_json_is_406(sim: SimUnderTest, shoot_key: str) -> None:
    with pytest.raises(ApiException) as caught:
        client.CoreV1Api(sim.shoot_client(shoot_key)).list_node(
            _headers={"Accept": "application/vnd.kubernetes.protobuf"}
        )
    assert caught.value.status == 406


def test_get_of_one_object_of_every_kind(sim: SimUnderTest, shoot_key: str) -> None:
    api = sim.shoot_client(shoot_key)
    core = client.CoreV1Api(api)
    node = core.list_node().items[0]
    assert core.read_node(node.metadata.name).metadata.uid == node.metadata.uid
    namespace = core.list_namespace().items[0]
    assert core.read_namespace(namespace.metadata.name).metadata.name == namespace.metadata.name
    pod = core.list_pod_for_all_namespaces().items[0]
    assert core.read_namespaced_pod(pod.metadata.name, pod.metadata.namespace).metadata.uid == pod.metadata.uid
    volume = core.list_persistent_volume().items[0]
    assert core.read_persistent_volume(volume.metadata.name).spec.capacity == volume.spec.capacity
    claim = core.list_persistent_volume_claim_for_all_namespaces().items[0]
    assert (
        core.read_namespaced_persistent_volume_claim(claim.metadata.name, claim.metadata.namespace).spec.volume_name
        == claim.spec.volume_name
    )
    service = core.list_service_for_all_namespaces().items[0]
    assert (
        core.read_namespaced_service(service.metadata.name, service.metadata.namespace).spec.cluster_ip
        == service.spec.cluster_ip
    )
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_pod("no-such-pod", pod.metadata.namespace)
    assert caught.value.status == 404
    assert status_body(caught.value)["message"] == 'pods "no-such-pod" not found'


def test_pods_of_one_namespace(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    every = core.list_pod_for_all_namespaces().items
    namespace = every[-1].metadata.namespace
    assert [p.metadata.name for p in core.list_namespaced_pod(namespace).items] == [
        p.metadata.name for p in every if p.metadata.namespace == namespace
    ]
    assert core.list_namespaced_pod("no-such-namespace").items == []


@pytest.mark.parametrize(
    ("selector", "keep"),
    [
        ("app=web", lambda labels: labels.get("app") == "web"),
        ("app==web", lambda labels: labels.get("app") == "web"),
        ("app!=web", lambda labels: labels.get("app") != "web"),
        ("app in (web,api)", lambda labels: labels.get("app") in {"web", "api"}),
        ("app notin (web,api)", lambda labels: labels.get("app") not in {"web", "api"}),
        ("pod-template-hash", lambda labels: "pod-template-hash" in labels),
        ("!pod-template-hash", lambda labels: "pod-template-hash" not in labels),
        ("app in (web),pod-template-hash", lambda labels: labels.get("app") == "web" and "pod-template-hash" in labels),
    ],
    ids=["equals", "double-equals", "not-equals", "in", "notin", "exists", "not-exists", "two-requirements"],
)
def test_label_selectors(sim: SimUnderTest, shoot_key: str, selector: str, keep: Any) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    every = core.list_pod_for_all_namespaces().items
    chosen = core.list_pod_for_all_namespaces(label_selector=selector).items
    wanted = [p.metadata.uid for p in every if keep(p.metadata.labels or {})]
    assert [p.metadata.uid for p in chosen] == wanted
    assert 0 < len(wanted) < len(every) or selector.startswith("!")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"field_selector": "spec.containers=x"}, "field label not supported: spec.containers"),
        ({"field_selector": "status.phase"}, "invalid selector"),
        ({"label_selector": "app in web"}, "unable to parse requirement"),
        ({"label_selector": "app=,"}, "unable to parse requirement"),
        ({"label_selector": "Bad Key=1"}, "unable to parse requirement"),
        ({"limit": 5, "_continue": "garbage"}, "continue key is not valid"),
    ],
    ids=[
        "unsupported-field",
        "field-without-operator",
        "in-without-parentheses",
        "trailing-comma",
        "space-in-key",
        "bad-continue",
    ],
)
def test_bad_list_options_are_400_with_the_servers_message(
    sim: SimUnderTest, shoot_key: str, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ApiException) as caught:
        client.CoreV1Api(sim.shoot_client(shoot_key)).list_pod_for_all_namespaces(**kwargs)
    assert caught.value.status == 400
    status = status_body(caught.value)
    assert status["reason"] == "BadRequest"
    assert message in status["message"]


def test_paging_with_continue_returns_every_pod_once(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    every = core.list_pod_for_all_namespaces().items
    first = core.list_pod_for_all_namespaces(limit=7)
    assert len(first.items) == 7
    assert first.metadata.remaining_item_count == len(every) - 7
    paged = all_pages(core.list_pod_for_all_namespaces, limit=7)
    assert [p.metadata.uid for p in paged] == [p.metadata.uid for p in every]
    keys = [f"{p.metadata.namespace}/{p.metadata.name}" for p in paged]
    assert keys == sorted(keys)
    filtered = all_pages(core.list_pod_for_all_namespaces, limit=4, field_selector="status.phase=Running")
    assert [p.metadata.uid for p in filtered] == [p.metadata.uid for p in every if p.status.phase == "Running"]


def test_resource_version_zero_is_served_whole_ignoring_the_limit(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    cached = core.list_pod_for_all_namespaces(resource_version="0", limit=3)
    assert len(cached.items) == len(core.list_pod_for_all_namespaces().items)
    assert cached.metadata._continue is None
    assert int(cached.metadata.resource_version) > 0


def test_continue_with_a_resource_version_is_400_and_a_future_one_504(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    token = core.list_pod_for_all_namespaces(limit=2).metadata._continue
    with pytest.raises(ApiException) as caught:
        core.list_pod_for_all_namespaces(limit=2, _continue=token, resource_version="5")
    assert caught.value.status == 400
    with pytest.raises(ApiException) as caught:
        core.list_pod_for_all_namespaces(resource_version="999999999")
    assert caught.value.status == 504


def test_a_stale_continue_token_is_410_expired(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    token = core.list_pod_for_all_namespaces(limit=2).metadata._continue
    sim.control.compact(shoot_key)
    with pytest.raises(ApiException) as caught:
        core.list_pod_for_all_namespaces(limit=2, _continue=token)
    assert caught.value.status == 410
    assert status_body(caught.value)["reason"] == "Expired"


def test_certificates_are_404_where_the_crd_is_missing(sim: SimUnderTest) -> None:
    shoot = sim.serving_shoot(lambda s: not s.has_certificates_crd)
    api = sim.shoot_client(shoot.key)
    with pytest.raises(ApiException) as caught:
        client.CustomObjectsApi(api).list_cluster_custom_object("cert-manager.io", "v1", "certificates")
    assert caught.value.status == 404
    groups = client.ApisApi(api).get_api_versions().groups
    assert "cert-manager.io" not in {g.name for g in groups}


def test_a_hibernated_shoot_answers_503(sim: SimUnderTest, shoot_key: str) -> None:
    api = client.CoreV1Api(sim.shoot_client(shoot_key))
    sim.control.hibernate(shoot_key)
    with pytest.raises(ApiException) as caught:
        api.list_node()
    assert caught.value.status == 503


def test_the_dynamic_client_discovers_every_kind(sim: SimUnderTest, shoot_key: str) -> None:
    dyn = dynamic.DynamicClient(sim.shoot_client(shoot_key))
    for api_version, kind in (
        ("v1", "Node"),
        ("v1", "Namespace"),
        ("v1", "Pod"),
        ("v1", "PersistentVolume"),
        ("v1", "PersistentVolumeClaim"),
        ("v1", "Service"),
        ("networking.k8s.io/v1", "Ingress"),
        ("cert-manager.io/v1", "Certificate"),
    ):
        resource = dyn.resources.get(api_version=api_version, kind=kind)
        listed = resource.get(header_params={"Accept": META_LIST})
        assert listed.kind == "PartialObjectMetadataList"
    version = client.VersionApi(sim.shoot_client(shoot_key)).get_code()
    assert version.git_version == f"v{sim.control.shoot(shoot_key).kubernetes_version}"


def test_the_world_is_the_same_on_every_build(sim: SimUnderTest, shoot_key: str) -> None:
    before = raw(client.CoreV1Api(sim.shoot_client(shoot_key)).list_pod_for_all_namespaces(_preload_content=False))
    sim.control.reset()
    after = raw(client.CoreV1Api(sim.shoot_client(shoot_key)).list_pod_for_all_namespaces(_preload_content=False))
    assert before == after


def test_list_items_carry_kind_only_for_custom_resources(sim: SimUnderTest, shoot_key: str) -> None:
    """As a real API server: a built-in list names its kind once; a CRD's items are unstructured."""
    api = sim.shoot_client(shoot_key)
    pods = raw(client.CoreV1Api(api).list_pod_for_all_namespaces(_preload_content=False))
    assert (pods["kind"], pods["apiVersion"]) == ("PodList", "v1")
    assert all("kind" not in item and "apiVersion" not in item for item in pods["items"])
    certificates = client.CustomObjectsApi(api).list_cluster_custom_object("cert-manager.io", "v1", "certificates")
    assert all(item["kind"] == "Certificate" for item in certificates["items"])
    one = client.CoreV1Api(api).read_namespaced_pod(
        pods["items"][0]["metadata"]["name"], pods["items"][0]["metadata"]["namespace"], _preload_content=False
    )
    assert raw(one)["kind"] == "Pod"
