"""fleet-sim keeps encoded shoot lists between requests: the answers must stay those of a fresh render,
whatever changes in the world between two lists."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from kubernetes import client as kubernetes_client

from sim.api.machinery.listcache import ENTRY_OVERHEAD_BYTES, ListCache
from sim.world.store import Store
from tests.fixtures.sim import SimUnderTest

client: Any = kubernetes_client

META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
UNFINISHED = "status.phase!=Succeeded,status.phase!=Failed"


def test_the_cache_keeps_the_most_recently_used_within_its_bound() -> None:
    cache = ListCache(3 * (ENTRY_OVERHEAD_BYTES + 10))
    for key in "abc":
        cache.put(key, key.encode() * 10)
    assert cache.get("a") == b"a" * 10  # now the most recently used
    cache.put("d", b"d" * 10)
    assert cache.get("b") is None
    assert [cache.get(k) for k in "acd"] == [b"a" * 10, b"c" * 10, b"d" * 10]
    assert cache.size_bytes == 3 * (ENTRY_OVERHEAD_BYTES + 10)
    cache.put("big", b"x" * cache.max_bytes)
    assert cache.get("big") is None
    assert len(cache) == 3
    cache.clear()
    assert (len(cache), cache.size_bytes) == (0, 0)


def test_a_store_version_changes_with_every_write_and_is_never_shared() -> None:
    store: Store[Any] = Store()
    other: Store[Any] = Store()
    seen = {store.version, other.version}
    record = type("R", (), {"name": "a", "namespace": "", "rv": 1})()
    store.put(record)
    store.put(record)  # a replacement is a change too
    seen |= {store.version}
    store.delete("", "a")
    assert store.version not in seen
    before = store.version
    store.delete("", "a")  # nothing to delete: no change
    assert store.version == before


def lists(core: Any) -> dict[str, bytes]:
    """The collector's lists as served from the watch cache (rv=0), and again through the paged path, uncached."""
    calls = {
        "nodes": (core.list_node, {}, None),
        "namespaces": (core.list_namespace, {"label_selector": "fundament.io/namespace-id"}, META_LIST),
        "pods": (core.list_pod_for_all_namespaces, {"field_selector": UNFINISHED}, META_LIST),
        "services": (core.list_service_for_all_namespaces, {}, None),
        "volumes": (core.list_persistent_volume, {}, None),
    }
    bodies: dict[str, bytes] = {}
    for name, (call, kwargs, accept) in calls.items():
        headers = {"Accept": accept} if accept else {}
        cached = call(resource_version="0", _preload_content=False, _headers=headers, **kwargs).data
        again = call(resource_version="0", _preload_content=False, _headers=headers, **kwargs).data
        fresh = call(limit=1_000_000, _preload_content=False, _headers=headers, **kwargs).data
        assert cached == again == fresh, name
        bodies[name] = cached
    return bodies


def names(body: bytes) -> list[str]:
    return [item["metadata"]["name"] for item in orjson.loads(body)["items"]]


@pytest.fixture
def shoot_key(sim: SimUnderTest) -> str:
    return sim.serving_shoot(lambda s: bool(sim.control.expected(s.key).namespace_pods)).key


def test_lists_follow_every_change_of_the_world(sim: SimUnderTest, shoot_key: str) -> None:
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    before = lists(core)
    tenant = names(before["namespaces"])[0]

    removed = sim.control.remove_pods(shoot_key, tenant, 1)  # a delete moves no resourceVersion here
    after_remove = lists(core)
    assert removed
    assert set(removed) <= set(names(before["pods"])) - set(names(after_remove["pods"]))

    added = sim.control.add_pods(shoot_key, tenant, 2)
    assert set(added) <= set(names(lists(core)["pods"]))

    sim.control.set_kubernetes_version(shoot_key, "1.99.1")  # rendered into every node, no node written
    nodes = orjson.loads(lists(core)["nodes"])["items"]
    assert {n["status"]["nodeInfo"]["kubeletVersion"] for n in nodes} == {"v1.99.1"}

    sim.control.reset()
    core = client.CoreV1Api(sim.shoot_client(shoot_key))
    assert lists(core) == before
