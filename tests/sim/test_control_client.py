"""The control client (`sim.control.client`) against a real fleet-sim over real HTTPS."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as kubernetes_client
from kubernetes import config

from db.embedded import free_port
from sim.control.actions import HTTP_ACTIONS, SimControl
from sim.control.client import ControlClient, ControlError
from tests.fixtures.sim import SimUnderTest

# Untyped for the same reason as in the other simulator tests: the client's models are all-Optional.
client: Any = kubernetes_client


def ca_file(sim: SimUnderTest, tmp_path: Path) -> Path:
    path = tmp_path / "ca.crt"
    path.write_bytes(sim.server.sim.tls.ca_pem)
    return path


@pytest.fixture
async def control(sim: SimUnderTest, tmp_path: Path) -> AsyncIterator[ControlClient]:
    async with ControlClient(sim.url, sim.server.sim.tokens.control_token, ca_file(sim, tmp_path)) as control:
        yield control


@pytest.mark.parametrize("action", HTTP_ACTIONS)
def test_every_http_action_is_a_client_method_with_the_same_arguments(action: str) -> None:
    def parameters(method: Any) -> list[tuple[str, Any, Any]]:
        found = inspect.signature(method).parameters.values()
        return [(p.name, p.kind, p.default) for p in found if p.name != "self"]

    assert parameters(getattr(ControlClient, action)) == parameters(getattr(SimControl, action))


async def test_actions_change_the_world_and_reads_see_it(sim: SimUnderTest, control: ControlClient) -> None:
    keys = await control.shoot_keys()
    assert keys == sim.control.shoot_keys()
    key = sim.serving_shoot().key
    worker = next(iter((await control.expected(key))["pools"]))
    await control.scale_pool(key, worker, 7)
    assert sim.control.expected(key).pools[worker].nodes == 7
    assert (await control.object_counts(key))["nodes"] == sim.control.object_counts(key)["nodes"]
    namespace_id = "11111111-2222-4333-8444-555555555555"
    await control.add_namespace(key, "client-made", namespace_id=namespace_id, pods=2)
    added = await control.add_pods(key, "client-made", 3)
    assert len(added) == 3
    assert sim.control.expected(key).namespace_pods[namespace_id] == 5
    assert len(await control.remove_pods(key, "client-made", 5)) == 5
    await control.remove_namespace(key, "client-made")
    assert namespace_id not in sim.control.expected(key).namespace_pods
    old_uid = sim.control.shoot(key).uid
    assert await control.recreate_shoot(key) != old_uid
    version = await control.bump_version(key)
    assert sim.control.shoot(key).kubernetes_version == version
    await control.delete_shoot(key)
    assert key not in await control.shoot_keys()


async def test_faults_state_and_the_request_log(sim: SimUnderTest, control: ControlClient) -> None:
    key = sim.serving_shoot().key
    await control.fault(key, "500", resource="nodes", times=1)
    assert await control.faults() == [
        {"kind": "server_error", "target": key, "resource": "nodes", "seconds": 0.0, "times": 1, "count": 0}
    ]
    state = await control.state()
    assert state["url"] == sim.url
    assert state["faults"] == await control.faults()
    await control.clear_faults()
    assert await control.faults() == []
    await control.clear_requests()
    kubeconfig = await control.shoot_kubeconfig(key, viewer=True)
    with client.ApiClient(_configuration(kubeconfig)) as api:
        client.CoreV1Api(api).list_node()
    [entry] = await control.requests(key)
    assert (entry["api_path"], entry["token_kind"]) == ("/api/v1/nodes", "viewer")
    await control.reset()
    assert await control.requests() == []


def _configuration(kubeconfig: dict[str, Any]) -> Any:
    configuration = client.Configuration()
    config.load_kube_config_from_dict(kubeconfig, client_configuration=configuration)
    configuration.retries = 0
    return configuration


async def test_refusals_are_control_errors_with_the_status(control: ControlClient) -> None:
    with pytest.raises(ControlError, match="no shoot") as unknown:
        await control.delete_shoot("nobody--nothing")
    assert unknown.value.status == 404
    with pytest.raises(ControlError, match="unknown fault") as bad:
        await control.fault("garden", "teapot")
    assert bad.value.status == 400
    with pytest.raises(ControlError) as no_action:
        await control.call("explode")
    assert no_action.value.status == 404


async def test_a_wrong_token_and_no_simulator_are_control_errors(sim: SimUnderTest, tmp_path: Path) -> None:
    async with ControlClient(sim.url, sim.server.sim.tokens.garden_token, ca_file(sim, tmp_path)) as wrong:
        with pytest.raises(ControlError) as refused:
            await wrong.shoot_keys()
    assert refused.value.status == 401
    nobody = f"https://127.0.0.1:{free_port()}"
    async with ControlClient(nobody, "x", ca_file(sim, tmp_path), timeout_seconds=5) as unreachable:
        with pytest.raises(ControlError) as failed:
            await unreachable.state()
    assert failed.value.status is None


async def test_hostile_mode_plays_each_case_on_one_shoot(sim: SimUnderTest, control: ControlClient) -> None:
    keys = [s.key for s in sim.shoots(lambda s: s.serving)][:3]
    played = await control.hostile(keys, seconds=5)
    assert [p["shoot"] for p in played] == keys
    assert [(p["kind"], p["resource"]) for p in played] == [
        ("endless_item", "nodes"),
        ("gzip_bomb", "pods"),
        ("endless_list", "certificates"),
    ]
    active = {(f["target"], f["kind"], f["resource"]) for f in await control.faults()}
    assert active == {(p["shoot"], p["kind"], p["resource"]) for p in played}
    await control.clear_faults()
    assert await control.faults() == []
