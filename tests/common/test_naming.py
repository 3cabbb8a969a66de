"""Fundament's naming contract (common.naming): the documented vectors, and properties of our own."""

from __future__ import annotations

import uuid
from uuid import UUID

import pytest

from collector.inventory.pools import map_pools
from common.naming import (
    PROJECT_NAME_LENGTH,
    SHOOT_NAME_LENGTH,
    WORKER_NAME_LENGTH,
    bounded,
    garden_namespace,
    namespace_name,
    project_name,
    sanitize,
    sanitize_dns1035,
    shoot_name,
    worker_name,
)

ONES = UUID("11111111-1111-1111-1111-111111111111")


@pytest.mark.parametrize(
    ("pool", "worker"),
    [
        ("workers", "work4aa7"),
        ("workers-production-a", "work8305"),
        ("workers-production-b", "workf010"),
        ("7gpu", "x7gpc1e2"),
        ("!!!", "e84c538e"),
    ],
)
def test_worker_names_match_the_provisioning_side(pool: str, worker: str) -> None:
    assert worker_name(pool) == worker


@pytest.mark.parametrize(
    ("organization", "project"),
    [("Acme Corp", "acmeco563e"), ("abc", "abcba7bf8f"), ("My-Org!@#$", "myorgda341")],
)
def test_project_names_match_the_provisioning_side(organization: str, project: str) -> None:
    assert project_name(organization) == project
    assert garden_namespace(organization) == f"garden-{project}"


@pytest.mark.parametrize(("cluster", "shoot"), [("production", "productib8f"), ("dev", "devb8f12b8f")])
def test_shoot_names_match_the_provisioning_side(cluster: str, shoot: str) -> None:
    assert shoot_name(cluster, ONES) == shoot


def test_namespace_names_match_the_provisioning_side() -> None:
    assert namespace_name("payments", ONES, "api") == "paymentsc9a9-api"


def test_building_blocks() -> None:
    assert sanitize("My-Org_1 !") == "myorg1"
    assert sanitize_dns1035("7gpu") == "x7gpu"
    assert sanitize_dns1035("") == ""
    # Cut when long, padded from the digest when short; always prefix + hash long.
    assert bounded("abcdefgh", "0123456789", 4, 2, 3) == "abcd34"
    assert bounded("ab", "0123456789", 4, 2, 0) == "ab0101"
    assert bounded("", "0123456789", 4, 2, 6) == "012367"


@pytest.mark.parametrize("name", ["", "!!!", "a", "A" * 300, "ÄÖÜ", "-", "0", "pool with spaces", "日本"])
def test_every_name_gets_a_name_of_the_fixed_length(name: str) -> None:
    for derived, length in (
        (worker_name(name), WORKER_NAME_LENGTH),
        (project_name(name), PROJECT_NAME_LENGTH),
        (shoot_name(name, ONES), SHOOT_NAME_LENGTH),
    ):
        assert len(derived) == length
        assert derived.isascii() and derived.isalnum() and derived == derived.lower()


def test_a_common_prefix_is_kept_apart_by_the_hash() -> None:
    names = [f"workers-production-{c}" for c in "abcdefghij"]
    assert len({worker_name(n) for n in names}) == len(names)
    assert all(worker_name(n).startswith("work") for n in names)
    # The shoot's hash is over the cluster id, so two clusters of one name get two shoots.
    assert shoot_name("dev", ONES) != shoot_name("dev", uuid.uuid4())


class Pool:
    def __init__(self, name: str) -> None:
        self.id = uuid.uuid4()
        self.name = name


def test_pools_map_onto_their_own_workers() -> None:
    a, b, odd = Pool("workers-production-a"), Pool("workers-production-b"), Pool("!!!")
    nodes = {worker_name(a.name): (3, 3), worker_name(b.name): (2, 1), worker_name(odd.name): (1, 0)}
    mapped = map_pools([a, b, odd, Pool("idle")], nodes)
    assert mapped.counts[a.id] == (3, 3) and mapped.counts[b.id] == (2, 1) and mapped.counts[odd.id] == (1, 0)
    assert not mapped.unmapped
    assert len(mapped.counts) == 4  # a pool with no nodes counts zero


def test_pools_sharing_a_worker_name_are_left_out_with_a_reason() -> None:
    # A real collision needs a 16-bit hash clash; two pools of one name within a cluster stand in for it.
    a, twin, other = Pool("gpu"), Pool("gpu"), Pool("system")
    mapped = map_pools([a, twin, other], {worker_name("gpu"): (4, 4), worker_name("system"): (1, 1)})
    assert mapped.counts == {other.id: (1, 1)}
    assert set(mapped.unmapped) == {a.id, twin.id}
    assert "share the worker name" in mapped.unmapped[a.id] and worker_name("gpu") in mapped.unmapped[a.id]
