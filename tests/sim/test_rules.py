"""fleet-sim's rules without I/O: selectors, key order, continue tokens, content negotiation, and the
deterministic derivation of a shoot's contents from the fleet."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from common.naming import worker_name
from fleet_description.generate import generate
from sim.api.credentials.tokens import MAX_LIFETIME_SECONDS, SWEEP_EVERY, TokenKind, Tokens
from sim.api.machinery.listing import ContinueToken, Representation, negotiate
from sim.api.machinery.selectors import SelectorError, parse_field_selector, parse_label_selector
from sim.api.machinery.status import ApiError
from sim.world.clock import Clock
from sim.world.store import Store
from sim.world.world import World

LABELS = {"app": "web", "tier": "front", "version": "3"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app=api", False),
        ("app!=api", True),
        ("missing!=x", True),
        ("app in (api, web)", True),
        ("app notin (api,web)", False),
        ("missing notin (x)", True),
        ("tier", True),
        ("!tier", False),
        ("!missing", True),
        ("version>2", True),
        ("version<3", False),
        ("app=web,tier=front", True),
        ("app=web,tier=back", False),
        ("example.com/key", False),
    ],
)
def test_label_selectors_match_like_kubernetes(selector: str, matches: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is matches


@pytest.mark.parametrize(
    "selector",
    ["app in web", "app in (web", "app=web,", ",app", "app ~ web", "bad key=1", "app=" + "x" * 64, "version>x", "!"],
)
def test_malformed_label_selectors_are_refused(selector: str) -> None:
    with pytest.raises(SelectorError, match="unable to parse requirement"):
        parse_label_selector(selector)


def test_field_selectors_support_only_the_resources_fields() -> None:
    supported = frozenset({"metadata.name", "status.phase"})
    selector = parse_field_selector("status.phase!=Succeeded,status.phase!=Failed", supported)
    phases = {"Running": True, "Pending": True, "Succeeded": False, "Failed": False}
    for phase, kept in phases.items():
        fields = {"status.phase": phase}
        assert selector.matches(fields.get) is kept
    assert parse_field_selector(r"metadata.name=a\,b", supported).terms[0].value == "a,b"
    with pytest.raises(SelectorError, match=r"field label not supported: spec\.nodeName"):
        parse_field_selector("spec.nodeName=x", supported)
    with pytest.raises(SelectorError, match="invalid selector"):
        parse_field_selector("status.phase", supported)


@dataclass(frozen=True)
class Item:
    name: str
    namespace: str
    rv: int = 1


def test_the_store_orders_like_etcd_keys() -> None:
    # etcd sorts whole keys: "a-b/..." comes before "a/..." because "-" < "/".
    store = Store([Item("x", "a"), Item("y", "a-b"), Item("b", "a"), Item("z", "b")])
    keys = [f"{i.namespace}/{i.name}" for i in store.iter_from()]
    assert keys == sorted(keys) == ["a-b/y", "a/b", "a/x", "b/z"]
    assert [i.name for i in store.iter_from("a/b\x00")] == ["x", "z"]
    assert store.count_from("a/b\x00") == 2
    assert [i.name for i in store.iter_from("a/b\x00", namespace="a")] == ["x"]
    store.put(Item("b", "a", rv=2))
    assert len(store) == 4
    assert store.get("a", "b") == Item("b", "a", rv=2)
    assert store.delete("a-b", "y") == Item("y", "a-b")
    assert store.namespaces() == ["a", "b"]


def test_continue_tokens_round_trip_and_reject_garbage() -> None:
    token = ContinueToken(42, "ns/pod\x00", 1700000000.5)
    assert ContinueToken.decode(token.encode()) == token
    for garbage in ("x", "eyJ2IjoxfQ", token.encode()[:-4]):
        with pytest.raises(ApiError) as caught:
            ContinueToken.decode(garbage)
        assert caught.value.code == 400


@pytest.mark.parametrize(
    ("accept", "single", "wanted"),
    [
        ("", False, Representation.FULL),
        ("application/json", False, Representation.FULL),
        ("*/*", True, Representation.FULL),
        ("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", False, Representation.METADATA),
        ("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", True, Representation.METADATA),
        ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", False, Representation.FULL),
        ("application/vnd.kubernetes.protobuf,application/json", False, Representation.FULL),
    ],
)
def test_content_negotiation(accept: str, single: bool, wanted: Representation) -> None:
    assert negotiate(accept, single=single) is wanted


def test_content_negotiation_without_json_is_406() -> None:
    with pytest.raises(ApiError) as caught:
        negotiate("application/vnd.kubernetes.protobuf", single=False)
    assert caught.value.code == 406


def test_the_world_is_derived_from_the_fleet_deterministically() -> None:
    fleet = generate("test")
    first, second = World(fleet, Clock()), World(fleet, Clock())
    for shoot in first.shoots.iter_from():
        a, b = first.contents(shoot.key), second.contents(shoot.key)
        for resource in ("nodes", "namespaces", "pods", "persistentvolumes", "services", "ingresses", "certificates"):
            assert list(a.store(resource).iter_from()) == list(b.store(resource).iter_from()), resource


def test_one_node_per_pool_minimum_and_tenant_namespaces_per_live_namespace() -> None:
    fleet = generate("test")
    world = World(fleet, Clock())
    clusters = {str(c.id): c for c in fleet.clusters}
    checked = 0
    for shoot in world.shoots.iter_from():
        cluster = clusters.get(shoot.cluster_label)
        if cluster is None:
            continue
        contents = world.contents(shoot.key)
        pools = [p for p in fleet.node_pools if p.cluster_id == cluster.id and p.deleted is None]
        for pool in pools:
            nodes = [n for n in contents.nodes.iter_from() if n.worker == worker_name(pool.name)]
            assert len(nodes) == pool.autoscale_min
        live_projects = {p.id for p in fleet.projects if p.cluster_id == cluster.id and p.deleted is None}
        live_namespaces = {str(n.id) for n in fleet.namespaces if n.project_id in live_projects and n.deleted is None}
        tenant_ids = {n.namespace_id for n in contents.namespaces.iter_from() if n.namespace_id is not None}
        assert tenant_ids == live_namespaces
        checked += 1
    assert checked > 10


def test_some_nodes_are_not_ready_and_some_pods_finished() -> None:
    world = World(generate("demo"), Clock())
    nodes = pods = not_ready = finished = unknown_pool = 0
    for shoot in world.shoots.iter_from():
        contents = world.contents(shoot.key)
        workers = {w.name for w in shoot.workers}
        for node in contents.nodes.iter_from():
            nodes += 1
            not_ready += not node.ready
            unknown_pool += node.worker not in workers
        for pod in contents.pods.iter_from():
            pods += 1
            finished += pod.phase in {"Succeeded", "Failed"}
    assert 0 < not_ready < nodes / 4
    assert 0 < finished < pods / 4
    assert unknown_pool > 0


def test_shoot_names_that_would_make_an_ambiguous_key_are_refused() -> None:
    fleet = generate("test")
    bad = replace(fleet, shoots=(replace(fleet.shoots[0], name="a--b"),))
    with pytest.raises(ValueError, match="cannot be part of a shoot key"):
        World(bad, Clock())


def test_long_expired_tokens_are_forgotten_in_a_long_run() -> None:
    tokens = Tokens()
    old = tokens.mint(TokenKind.ADMIN, "a--b", "uid", 1000.0)
    assert tokens.resolve(f"Bearer {old}", 2000.0).kind is TokenKind.EXPIRED
    for _ in range(SWEEP_EVERY - 2):
        tokens.mint(TokenKind.VIEWER, "a--b", "uid", 1000.0)
    fresh = tokens.mint(TokenKind.ADMIN, "a--b", "uid", 1000.0 + 3 * MAX_LIFETIME_SECONDS)  # this mint sweeps
    assert tokens.minted_count == 1
    assert tokens.resolve(f"Bearer {old}", 2000.0).kind is TokenKind.UNKNOWN
    assert tokens.resolve(f"Bearer {fresh}", 2000.0).kind is TokenKind.ADMIN
    assert tokens.resolve("Basic abc", 2000.0).kind is TokenKind.UNKNOWN
    assert tokens.resolve(None, 2000.0).kind is TokenKind.NONE
