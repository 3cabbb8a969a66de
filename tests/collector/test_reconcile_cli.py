"""`cluster-worker reconcile --once` as a process: the real entry point, fleet-sim and PostgreSQL."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import psycopg
import pytest

from collector.reconcile.drift import KIND_IDS
from db.seed.write import write_fleet
from sim.api.credentials.kubeconfig import to_yaml
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest
from tests.fixtures.waiting import eventually

PROJECT = Path(__file__).resolve().parents[2]


def worker_env(database: TestDatabase, kubeconfig: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "DATABASE_URL": database.dsn("fun_cluster_worker"),
        "GARDENER_MODE": "real",
        "GARDENER_KUBECONFIG": str(kubeconfig),
        "GARDENER_TIMEOUT_SECONDS": "10",
        "RECONCILE_INTERVAL_SECONDS": "120",
        "LOG_LEVEL": "warning",
    }


def run_once(database: TestDatabase, kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collector.main", "reconcile", "--once"],
        cwd=PROJECT,
        env=worker_env(database, kubeconfig),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def table(stdout: str) -> dict[str, list[int]]:
    """The printed rows: kind -> [opened, still open, resolved]."""
    rows: dict[str, list[int]] = {}
    for line in stdout.splitlines():
        parts = line.split()
        if parts and (parts[0] in KIND_IDS or parts[0] == "total"):
            rows[parts[0]] = [int(p) for p in parts[1:]]
    return rows


@pytest.fixture
def world(sim: SimUnderTest, database: TestDatabase, tmp_path: Path) -> Path:
    with psycopg.connect(database.dsn()) as admin:
        write_fleet(admin, sim.fleet)
    kubeconfig = tmp_path / "garden.yaml"
    kubeconfig.write_bytes(to_yaml(sim.garden_kubeconfig))
    return kubeconfig


def test_reconcile_once_prints_opened_still_open_and_resolved(
    sim: SimUnderTest, database: TestDatabase, world: Path
) -> None:
    first = run_once(database, world)
    assert first.returncode == 0, first.stderr
    rows = table(first.stdout)
    assert set(rows) == {*KIND_IDS, "total"}
    with database.admin() as admin:
        per_kind: dict[str, int] = {
            str(kind): int(str(count))
            for kind, count in admin.execute(
                "SELECT kind, count(*) FROM tenant.drift_findings WHERE resolved IS NULL GROUP BY kind"
            )
        }
        (interval,) = admin.execute(
            "SELECT interval_seconds FROM tenant.worker_heartbeats WHERE loop = 'reconcile'"
        ).fetchone() or (None,)
    assert {k: v[0] for k, v in rows.items() if k != "total"} == {k: per_kind.get(k, 0) for k in KIND_IDS}
    assert rows["total"] == [sum(per_kind.values()), 0, 0]
    assert interval == 120
    labelled = len(sim.shoots(lambda s: s.cluster_labelled))
    assert (
        f"shoots listed {labelled} (new {labelled}, gone 0, unlabeled {len(sim.shoots()) - labelled})" in first.stdout
    )
    assert per_kind["unlabeled_shoot"] == 1

    # The orphan shoots go away: their findings are resolved; every other one is still open.
    for key in [s.key for s in sim.shoots(lambda s: s.project == "strays0000")]:
        sim.control.delete_shoot(key)
    second = run_once(database, world)
    assert second.returncode == 0, second.stderr
    rows = table(second.stdout)
    assert rows["orphan_shoot"] == [0, 0, per_kind["orphan_shoot"]]
    assert rows["total"] == [0, sum(per_kind.values()) - per_kind["orphan_shoot"], per_kind["orphan_shoot"]]


def test_reconcile_once_fails_and_records_nothing_when_the_garden_fails(
    sim: SimUnderTest, database: TestDatabase, world: Path
) -> None:
    sim.control.fault("garden", "server_error")
    result = run_once(database, world)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "nothing was recorded" in result.stderr
    with database.admin() as admin:
        counts = admin.execute(
            "SELECT (SELECT count(*) FROM tenant.gardener_shoots), (SELECT count(*) FROM tenant.drift_findings),"
            " (SELECT count(*) FROM tenant.worker_heartbeats)"
        ).fetchone()
    assert counts == (0, 0, 0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_worker_mode_reconcile_serves_health_and_metrics_and_stops_on_sigterm(
    database: TestDatabase, world: Path, tmp_path: Path
) -> None:
    port = free_port()
    env = worker_env(database, world) | {"WORKER_MODE": "reconcile", "HEALTH_PORT": str(port)}
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "collector.main"], cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    try:

        def first_pass_shown() -> str | None:
            text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text
            return text if 'fleet_reconcile_passes_total{outcome="completed"} 1.0' in text else None

        # The process is another program: poll its endpoint until the first pass shows in /metrics.
        try:
            metrics = eventually(
                first_pass_shown, "the first pass in /metrics", ignoring=(httpx.TransportError,), process=worker
            )
        except AssertionError as e:
            raise AssertionError(log_path.read_text()) from e
        assert httpx.get(f"http://127.0.0.1:{port}/livez", timeout=2).status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200
        assert 'fleet_reconcile_open_findings{kind="orphan_shoot"} 2.0' in metrics
        assert "fleet_reconcile_shoots_listed" in metrics
        with database.admin() as admin:
            row = admin.execute(
                "SELECT interval_seconds FROM tenant.worker_heartbeats WHERE loop = 'reconcile'"
            ).fetchone()
        assert row == (120,)
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
