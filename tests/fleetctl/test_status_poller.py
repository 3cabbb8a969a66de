"""The demo's status poller: cluster statuses in real PostgreSQL follow the simulated garden.

The database is seeded with the same `test` fleet the simulator plays, so after one poll every
planted scenario must show the status the seed intends, computed by the schema's own
`tenant.cluster_status()`; then changes to the world move the statuses as the provisioning side's
rules say (`fleetctl/status_poller/rules.py`). `fleet status-poller` runs the same rounds as a process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest

from common.clusterstatus import ClusterStatus
from db.seed.write import write_fleet
from fleet_description.model import Fleet
from fleet_description.scenarios import SHAPES, Scenario
from fleetctl.status_poller.poller import PollError, StatusPoller
from fleetctl.status_poller.rules import ShootView, shoot_status
from sim.api.credentials.kubeconfig import to_yaml
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest
from tests.fixtures.waiting import eventually

PROJECT = Path(__file__).resolve().parents[2]
STATUS_SQL = """
SELECT c.id, tenant.cluster_status(c.deleted IS NOT NULL, s.sync_status, s.shoot_status, s.shoot_operation,
                                   s.first_completed IS NOT NULL)
FROM tenant.clusters AS c LEFT JOIN tenant.fleet_sync_state AS s ON s.cluster_id = c.id
"""


def statuses(db: TestDatabase) -> dict[UUID, str]:
    with db.admin() as conn:
        return dict(conn.execute(STATUS_SQL).fetchall())  # type: ignore[arg-type]


def scenario_clusters(fleet: Fleet, scenario: Scenario) -> list[UUID]:
    return [UUID(value) for value in fleet.notes.get(f"scenario.{scenario.value}", "").split(",") if value]


@pytest.fixture
def seeded(database: TestDatabase, sim_fleet: Fleet) -> TestDatabase:
    with psycopg.connect(database.dsn()) as conn:
        write_fleet(conn, sim_fleet)
    return database


@pytest.fixture
def poller(sim: SimUnderTest, seeded: TestDatabase) -> StatusPoller:
    return StatusPoller(seeded.dsn(), sim.garden_kubeconfig, interval_seconds=1)


def cluster_of(sim: SimUnderTest, scenario: Scenario) -> tuple[UUID, str]:
    """A cluster of the scenario and its shoot's key."""
    by_label = {s.cluster_label: s.key for s in sim.shoots()}
    for cluster_id in scenario_clusters(sim.fleet, scenario):
        if str(cluster_id) in by_label:
            return cluster_id, by_label[str(cluster_id)]
    raise LookupError(f"no shoot for scenario {scenario}")


async def test_one_poll_gives_every_planted_scenario_its_status(
    sim: SimUnderTest, poller: StatusPoller, seeded: TestDatabase
) -> None:
    changed = await poller.run_once()
    assert changed > 0
    found = statuses(seeded)
    for scenario, shape in SHAPES.items():
        # The provisioning side notices a missing shoot: the drift scenario turns LOST.
        wanted = ClusterStatus.LOST if scenario is Scenario.MISSING_SHOOT else shape.status
        for cluster_id in scenario_clusters(sim.fleet, scenario):
            assert found[cluster_id] == wanted.value, scenario
    assert await poller.run_once() == 0  # nothing moved: nothing written


async def test_statuses_follow_the_world(sim: SimUnderTest, poller: StatusPoller, seeded: TestDatabase) -> None:
    await poller.run_once()
    running = [cluster_of(sim, s) for s in (Scenario.RUNNING, Scenario.PATCH_DIFFERS, Scenario.VERSION_MISMATCH)]
    (gone, gone_key), (stopped, stopped_key), (upgraded, upgraded_key) = running
    sick, sick_key = cluster_of(sim, Scenario.DELETED_PROJECT_LIVE_NAMESPACE)
    sim.control.delete_shoot(gone_key)
    sim.control.hibernate(stopped_key)
    sim.control.set_last_operation(upgraded_key, "Reconcile", "Processing")
    sim.control.set_control_plane_healthy(sick_key, False)
    assert await poller.run_once() == 4
    found = statuses(seeded)
    assert (found[gone], found[stopped], found[upgraded], found[sick]) == ("lost", "stopped", "upgrading", "unhealthy")
    sim.control.set_last_operation(upgraded_key, "Reconcile", "Succeeded")
    sim.control.hibernate(stopped_key, False)
    await poller.run_once()
    found = statuses(seeded)
    assert (found[stopped], found[upgraded]) == ("running", "running")


async def test_ready_since_moves_only_when_the_status_changes(
    sim: SimUnderTest, poller: StatusPoller, seeded: TestDatabase
) -> None:
    cluster_id, key = cluster_of(sim, Scenario.RUNNING)
    await poller.run_once()

    def changed_at() -> Any:
        with seeded.admin() as conn:
            row = conn.execute(
                "SELECT shoot_status_changed FROM tenant.fleet_sync_state WHERE cluster_id = %s", (cluster_id,)
            ).fetchone()
            assert row is not None
            return row[0]

    before = changed_at()
    sim.control.set_last_operation(key, "Reconcile", "Processing")
    await poller.run_once()
    during = changed_at()
    assert during > before


async def test_a_failed_garden_list_writes_nothing(
    sim: SimUnderTest, poller: StatusPoller, seeded: TestDatabase
) -> None:
    before = statuses(seeded)
    sim.control.fault("garden", "500", resource="shoots")
    with pytest.raises(PollError, match="500"):
        await poller.run_once()
    assert statuses(seeded) == before


def test_shoot_status_table() -> None:
    def view(**changes: Any) -> ShootView:
        base: dict[str, Any] = {
            "cluster_label": "x",
            "deleting": False,
            "hibernation_enabled": False,
            "is_hibernated": False,
            "operation": "Reconcile",
            "state": "Succeeded",
            "description": "done",
            "healthy": True,
        }
        return ShootView(**(base | changes))

    def status(shoot: ShootView | None, *, deleted: bool = False, completed: bool = True) -> str | None:
        found = shoot_status(shoot, cluster_deleted=deleted, ever_completed=completed)
        return None if found is None else found.status

    assert status(view()) == "ready"
    assert status(view(healthy=False)) == "unhealthy"
    assert status(view(state="Processing")) == "progressing"
    assert status(view(state=None, operation=None)) == "progressing"
    assert status(view(state="Error")) == "error"
    assert status(view(state="Aborted")) == "error"
    assert status(view(hibernation_enabled=True, is_hibernated=True)) == "hibernated"
    assert status(view(hibernation_enabled=True, state="Processing")) == "hibernating"
    assert status(view(deleting=True)) == "deleting"
    assert status(view(), deleted=True) == "deleting"
    assert status(None) == "missing"
    assert status(None, completed=False) is None
    assert status(None, deleted=True) == "deleted"


# --- the command the demo starts ------------------------------------------------------------------


def status_poller_command(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "fleetctl.main", "status-poller", *args],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_the_command_polls_until_sigterm(sim: SimUnderTest, seeded: TestDatabase, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "garden-kubeconfig.yaml"
    kubeconfig.write_bytes(to_yaml(sim.garden_kubeconfig))
    gone, gone_key = cluster_of(sim, Scenario.RUNNING)
    sim.control.delete_shoot(gone_key)
    process = status_poller_command("--dsn", seeded.dsn(), "--garden-kubeconfig", str(kubeconfig), "--interval", "0.5")
    try:
        try:
            eventually(
                lambda: statuses(seeded).get(gone) == "lost", "the poller writing the lost shoot", process=process
            )
        except AssertionError as e:
            raise AssertionError(process.communicate()[1] if process.poll() is not None else str(e)) from e
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "status poll done" in stderr


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ((), {"STATUS_POLLER_INTERVAL_SECONDS": "often"}, "STATUS_POLLER_INTERVAL_SECONDS"),
        (("--interval", "0.1"), {}, "--interval 0.1"),
        (("--garden-kubeconfig", "/nonexistent/garden.yaml"), {}, "cannot read the garden kubeconfig"),
    ],
    ids=["bad-env", "interval-too-short", "no-kubeconfig"],
)
def test_the_command_refuses_bad_settings(args: tuple[str, ...], env: dict[str, str], message: str) -> None:
    process = status_poller_command(*args, env=env)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert message in stderr
