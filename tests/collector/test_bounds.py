"""The collector's bounds one by one, in process, against fleet-sim's hostile answers over HTTPS.

Each case asks the real client for what a hostile server answers (sim/api/faults/hostile.py) and checks
the clear refusal; the ledger cap is checked through `read_shoot`. tests/collector/test_hostile.py
plays all of them at once against the real worker process under a memory limit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from collector.inventory.metrics import REGISTRY
from collector.inventory.shoot import MAX_NODE_POOLS, MAX_TENANT_NAMESPACES, NodeTally, read_shoot
from collector.inventory.sources import OVER_CAP, SOURCES, Unlisted
from collector.kube.client import KubeClient, garden_client, shoot_client
from collector.kube.credential import Credential
from collector.kube.errors import BadResponse, ConnectionFailed, TooLarge
from collector.kube.garden import RealGardener, ShootRef
from collector.kube.limits import ResponseLimits
from common.labels import CLUSTER_ID_LABEL, POOL_LABEL
from tests.fixtures.sim import SimUnderTest

SMALL = ResponseLimits(max_list_bytes=8 << 20, max_item_bytes=256 << 10, max_answer_bytes=1 << 20)


@pytest.fixture
async def gardener(sim: SimUnderTest, tmp_path: Path) -> AsyncIterator[RealGardener]:
    path = tmp_path / "garden.yaml"
    path.write_text(yaml.safe_dump(sim.garden_kubeconfig))
    garden = RealGardener(await garden_client(path, timeout_seconds=10, limits=SMALL))
    try:
        yield garden
    finally:
        await garden.close()


@pytest.fixture
async def shoot(gardener: RealGardener, sim: SimUnderTest) -> AsyncIterator[tuple[str, KubeClient]]:
    state = sim.serving_shoot()
    credential = await gardener.mint_credential(
        ShootRef(state.namespace, state.name), kind="admin", lifetime_seconds=600
    )
    async with shoot_client(credential, timeout_seconds=10, limits=SMALL) as client:
        yield state.key, client


async def drain(client: KubeClient, path: str) -> int:
    seen = 0

    def count(items: list[dict[str, Any]]) -> None:
        nonlocal seen
        seen += len(items)

    await client.stream_list(path, count)
    return seen


async def test_a_never_ending_item_is_refused_at_the_item_bound(
    shoot: tuple[str, KubeClient], sim: SimUnderTest
) -> None:
    key, client = shoot
    sim.control.fault(key, "endless_item", resource="nodes", seconds=30)
    with pytest.raises(TooLarge, match=r"one item of the list is over 0.25 MiB \(INVENTORY_MAX_ITEM_MIB\)"):
        await drain(client, "/api/v1/nodes")


async def test_an_endless_list_is_refused_at_the_list_bound(shoot: tuple[str, KubeClient], sim: SimUnderTest) -> None:
    key, client = shoot
    sim.control.fault(key, "endless_list", resource="nodes", seconds=30)
    with pytest.raises(TooLarge, match=r"response over 8 MiB \(INVENTORY_MAX_LIST_MIB\)"):
        await drain(client, "/api/v1/nodes")


async def test_a_list_dense_in_values_is_refused_unparsed(shoot: tuple[str, KubeClient], sim: SimUnderTest) -> None:
    key, client = shoot
    sim.control.fault(key, "value_bomb", resource="nodes", count=2, seconds=30)
    with pytest.raises(TooLarge, match=r"could not be cut|JSON values"):
        await drain(client, "/api/v1/nodes")


async def test_a_flood_under_the_list_bound_arrives_whole(shoot: tuple[str, KubeClient], sim: SimUnderTest) -> None:
    key, client = shoot
    sim.control.fault(key, "flood", resource="nodes", count=500)
    assert await drain(client, "/api/v1/nodes") == 500


async def test_a_gzip_body_is_refused_unread(shoot: tuple[str, KubeClient], sim: SimUnderTest) -> None:
    key, client = shoot
    sim.control.fault(key, "gzip_bomb", resource="pods", seconds=30)
    with pytest.raises(BadResponse, match=r"compressed \(gzip\) though identity was asked for"):
        await drain(client, "/api/v1/pods")
    asked = [r for r in sim.control.requests(key) if r.resource == "pods"]
    assert asked, "the request reached the simulator"


async def test_a_redirect_to_another_origin_is_not_followed(shoot: tuple[str, KubeClient], sim: SimUnderTest) -> None:
    key, client = shoot
    sim.control.clear_requests()
    sim.control.fault(key, "redirect", resource="nodes")
    with pytest.raises(BadResponse, match=r"307 redirect to 'https://localhost:.*' refused"):
        await drain(client, "/api/v1/nodes")
    nodes = [r for r in sim.control.requests(key) if r.resource == "nodes"]
    assert len(nodes) == 1, "the redirect's target was never asked"


async def test_an_endless_garden_answer_is_refused_at_one_objects_bound(
    gardener: RealGardener, sim: SimUnderTest
) -> None:
    state = sim.serving_shoot()
    sim.control.fault(state.key, "endless_answer", resource="adminkubeconfig", seconds=30)
    with pytest.raises(TooLarge, match=r"response over 1 MiB \(one object's bound\)"):
        await gardener.mint_credential(ShootRef(state.namespace, state.name), kind="admin", lifetime_seconds=600)


async def test_an_endless_page_of_shoots_is_refused_at_the_answer_bound(
    gardener: RealGardener, sim: SimUnderTest
) -> None:
    sim.control.fault("garden", "endless_list", resource="shoots", seconds=30)
    with pytest.raises(TooLarge, match=r"response over 1 MiB \(GARDENER_MAX_ANSWER_MIB\)"):
        await gardener.list_shoots(label_selector="x")


@pytest.mark.parametrize(("fault", "says"), [("http_server", "is not https"), ("string_boolean", "not a boolean")])
async def test_a_hostile_minted_kubeconfig_is_refused(
    gardener: RealGardener, sim: SimUnderTest, fault: str, says: str
) -> None:
    state = sim.serving_shoot()
    sim.control.fault(state.key, fault, resource="adminkubeconfig")
    with pytest.raises(BadResponse, match=says):
        await gardener.mint_credential(ShootRef(state.namespace, state.name), kind="admin", lifetime_seconds=600)


@pytest.fixture
async def wide_gardener(sim: SimUnderTest, tmp_path: Path) -> AsyncIterator[RealGardener]:
    """Default byte bounds (a value bomb fits under them), a small bound on a list's values."""
    path = tmp_path / "garden.yaml"
    path.write_text(yaml.safe_dump(sim.garden_kubeconfig))
    garden = RealGardener(await garden_client(path, timeout_seconds=30, limits=ResponseLimits(max_list_values=100_000)))
    try:
        yield garden
    finally:
        await garden.close()


async def test_a_page_of_shoots_dense_in_values_is_refused_unparsed(
    wide_gardener: RealGardener, sim: SimUnderTest
) -> None:
    sim.control.fault("garden", "value_bomb", resource="shoots", count=4, seconds=30)
    with pytest.raises(TooLarge, match=r"more than 1,000,000 JSON values \(a garden page's bound\); refused unparsed"):
        await wide_gardener.list_shoots(label_selector="x")


async def test_a_list_whose_continue_tokens_never_end_is_refused_at_the_total_bound(
    wide_gardener: RealGardener, sim: SimUnderTest
) -> None:
    sim.control.fault("garden", "endless_pages", resource="shoots", count=200)
    with pytest.raises(
        TooLarge, match=r"more than 100,000 JSON values across its \d+ pages \(GARDENER_MAX_LIST_VALUES\)"
    ):
        await wide_gardener.list_shoots(label_selector=CLUSTER_ID_LABEL, page_size=200)
    pages = [r for r in sim.control.requests("garden") if r.resource == "shoots"]
    assert 1 < len(pages) < 10, "stopped after a few pages of real shoots"


async def test_a_monitoring_secret_dense_in_values_is_refused_unparsed(
    wide_gardener: RealGardener, sim: SimUnderTest
) -> None:
    state = sim.serving_shoot()
    sim.control.fault(state.key, "value_bomb", resource="monitoring-secret", count=1, seconds=30)
    with pytest.raises(TooLarge, match=r"more than 50,000 JSON values \(one object's bound\)"):
        await wide_gardener.read_secret(state.namespace, f"{state.name}.monitoring")
    other = sim.serving_shoot(lambda s: s.key != state.key)
    secret = await wide_gardener.read_secret(other.namespace, f"{other.name}.monitoring")
    assert secret["metadata"]["name"] == f"{other.name}.monitoring", "only that shoot's secret is hostile"


def test_a_client_for_a_plain_http_server_is_refused() -> None:
    with pytest.raises(ConnectionFailed, match="is not https"):
        shoot_client(Credential(server="http://127.0.0.1:1", token="t"), timeout_seconds=1)


async def test_a_flooded_ledger_type_is_not_listed_and_counted(gardener: RealGardener, sim: SimUnderTest) -> None:
    # A shoot with an ingress in a tenant namespace: the flood copies it under new names.
    state = next(
        s
        for s in sim.shoots(lambda s: s.serving and not s.deleting)
        if any(e.resource_type == "kubernetes.ingress" and e.tenant for e in sim.control.expected(s.key).ledger)
    )
    credential = await gardener.mint_credential(
        ShootRef(state.namespace, state.name), kind="admin", lifetime_seconds=600
    )
    sim.control.fault(state.key, "flood", resource="ingresses", count=3000)
    before = over_cap_count("kubernetes.ingress")
    async with shoot_client(credential, timeout_seconds=10, limits=SMALL) as client:
        reading = await read_shoot(client, SOURCES, ledger_timeout_seconds=10, ledger_max_per_type=100)
    ingresses = reading.ledger["kubernetes.ingress"]
    assert isinstance(ingresses, Unlisted) and ingresses.reason == OVER_CAP, ingresses
    assert "more than 100 Ingress objects" in ingresses.message
    assert "INVENTORY_LEDGER_MAX_PER_TYPE" in ingresses.message
    assert reading.nodes > 0, "the rest of the cluster is still read"
    assert not isinstance(reading.ledger["kubernetes.node"], Unlisted)
    assert over_cap_count("kubernetes.ingress") == before, "read_shoot only reports; the loop counts"


def over_cap_count(resource_type: str) -> float:
    return REGISTRY.get_sample_value("fleet_inventory_ledger_over_cap_total", {"resource_type": resource_type}) or 0.0


async def test_nodes_over_the_cap_still_count_but_their_ledger_type_is_not_listed(
    shoot: tuple[str, KubeClient], sim: SimUnderTest
) -> None:
    key, client = shoot
    sim.control.fault(key, "flood", resource="nodes", count=300)
    reading = await read_shoot(client, SOURCES, ledger_timeout_seconds=10, ledger_max_per_type=100)
    assert reading.nodes == 300
    nodes = reading.ledger["kubernetes.node"]
    assert isinstance(nodes, Unlisted) and nodes.reason == OVER_CAP


async def test_more_tenant_namespaces_than_a_cluster_can_have_fail_the_reading(
    shoot: tuple[str, KubeClient], sim: SimUnderTest
) -> None:
    key, client = shoot
    sim.control.fault(key, "flood", resource="namespaces", count=MAX_TENANT_NAMESPACES + 100)
    with pytest.raises(TooLarge, match=f"more than {MAX_TENANT_NAMESPACES} tenant namespaces"):
        await read_shoot(client, SOURCES, ledger_timeout_seconds=10)


def test_more_node_pools_than_a_cluster_can_have_are_refused() -> None:
    tally = NodeTally()
    nodes = [{"metadata": {"name": f"n{i}", "labels": {POOL_LABEL: f"pool-{i}"}}} for i in range(MAX_NODE_POOLS)]
    tally.add(nodes)
    tally.add([nodes[0]])  # a pool it knows is fine
    with pytest.raises(TooLarge, match=f"more than {MAX_NODE_POOLS} node pools"):
        tally.add([{"metadata": {"name": "one-more", "labels": {POOL_LABEL: "pool-new"}}}])
