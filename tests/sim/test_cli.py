"""The `fleet-sim` command: starts, prints where the garden kubeconfig is, serves it, stops on SIGTERM."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml
from kubernetes import client as kubernetes_client
from kubernetes import config

from sim.control.client import ControlClient

PROJECT = Path(__file__).resolve().parents[2]
# Untyped for the same reason as in the other simulator tests: the client's models are all-Optional.
client: Any = kubernetes_client


def start(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sim.main", "--port", "0", "--state-dir", str(tmp_path / "state"), *args],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    process = start(tmp_path, "--fleet", "test")
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # blocks until listening (or the process died)
        second = process.stdout.readline()
        assert first.startswith("fleet-sim: https://127.0.0.1:"), first + (
            process.stderr.read() if process.stderr else ""
        )
        assert second.startswith("garden kubeconfig: ")
        yield process, Path(second.removeprefix("garden kubeconfig: ").strip())
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def test_the_printed_kubeconfig_reaches_the_garden(running: tuple[subprocess.Popen[str], Path]) -> None:
    _, kubeconfig_path = running
    assert oct(kubeconfig_path.stat().st_mode & 0o777) == oct(0o600)
    kubeconfig = yaml.safe_load(kubeconfig_path.read_text())
    with config.new_client_from_config_dict(kubeconfig) as api:
        shoots = client.CustomObjectsApi(api).list_cluster_custom_object("core.gardener.cloud", "v1beta1", "shoots")
    assert len(shoots["items"]) > 10


def test_the_state_dir_names_the_control_token_and_it_works(running: tuple[subprocess.Popen[str], Path]) -> None:
    _, kubeconfig_path = running
    state = orjson.loads((kubeconfig_path.parent / "sim.json").read_bytes())
    token = Path(state["control_token_file"]).read_text().strip()
    context = ssl.create_default_context(cafile=state["ca_file"])
    with httpx.Client(base_url=state["url"], verify=context, headers={"Authorization": f"Bearer {token}"}) as admin:
        answer = admin.get("/_sim/state")
    assert answer.status_code == 200
    assert answer.json()["shoots"] > 10


async def test_the_control_client_finds_it_by_its_state_dir(running: tuple[subprocess.Popen[str], Path]) -> None:
    _, kubeconfig_path = running
    async with ControlClient.from_state_dir(kubeconfig_path.parent) as control:
        state = await control.state()
        keys = await control.shoot_keys()
    assert state["shoots"] == len(keys) > 10


def test_sigterm_stops_it_cleanly(running: tuple[subprocess.Popen[str], Path]) -> None:
    process, _ = running
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


@pytest.mark.slow
def test_the_huge_shoot_mode_serves_one_shoot_at_kubernetes_limits(tmp_path: Path) -> None:
    process = start(tmp_path, "--huge-shoot")
    try:
        assert process.stdout is not None
        assert "(1 shoots)" in process.stdout.readline()
        kubeconfig = yaml.safe_load(Path(process.stdout.readline().split(": ", 1)[1].strip()).read_text())
        state = orjson.loads((tmp_path / "state" / "sim.json").read_bytes())
        token = Path(state["control_token_file"]).read_text().strip()
        context = ssl.create_default_context(cafile=state["ca_file"])
        with httpx.Client(
            base_url=state["url"], verify=context, headers={"Authorization": f"Bearer {token}"}, timeout=120
        ) as admin:
            shoot_kubeconfig = admin.post("/_sim/actions/shoot_kubeconfig", json={"key": "huge--huge"}).json()["result"]
        assert kubeconfig["clusters"][0]["cluster"]["server"] == state["url"]
        with config.new_client_from_config_dict(shoot_kubeconfig) as api:
            core = client.CoreV1Api(api)
            nodes = core.list_node(limit=1)
            pods = core.list_pod_for_all_namespaces(limit=1, _request_timeout=120)
        assert 1 + nodes.metadata.remaining_item_count == 5_000
        assert 1 + pods.metadata.remaining_item_count == 150_000
    finally:
        process.terminate()
        process.communicate(timeout=30)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FLEET_SIM_PORT": "many"}, "FLEET_SIM_PORT"),
        ({"FLEET_SIM_LATENCY_SECONDS": "-1"}, "FLEET_SIM_LATENCY_SECONDS"),
        ({"GC_THRESHOLD": "often"}, "GC_THRESHOLD='often': expected a whole number"),
    ],
)
def test_bad_settings_are_refused_with_the_variable_named(tmp_path: Path, env: dict[str, str], message: str) -> None:
    process = start(tmp_path, env=env)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert message in stderr


def test_the_hostile_mode_names_the_shoot_of_each_case_and_plays_it(tmp_path: Path) -> None:
    from sim.api.faults.hostile import HOSTILE_CASES, MONITORING_HOSTILE_CASES  # noqa: PLC0415

    process = start(tmp_path, "--fleet", "test", "--hostile")
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(2 + len(HOSTILE_CASES) + len(MONITORING_HOSTILE_CASES))]
        cases = [line.split() for line in lines[2:]]
        assert [(c[3], c[5]) for c in cases] == [(k.value, r) for k, r, _ in HOSTILE_CASES] + [
            (k.value, "prometheus") for k, _ in MONITORING_HOSTILE_CASES
        ], lines
        state = orjson.loads((tmp_path / "state" / "sim.json").read_bytes())
        token = Path(state["control_token_file"]).read_text().strip()
        context = ssl.create_default_context(cafile=state["ca_file"])
        with httpx.Client(
            base_url=state["url"], verify=context, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as admin:
            faults = admin.get("/_sim/state").json()["faults"]
        assert {(f["target"], f["kind"]) for f in faults} == {(c[1], c[3]) for c in cases}
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)
