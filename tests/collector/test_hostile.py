"""The real `cluster-worker` against fleet-sim's hostile mode, under a memory limit.

One shoot per hostile case (sim/api/faults/hostile.py: a never-ending node item, an endless gzip body, an
endless certificates list, an endless garden kubeconfig answer, floods of ingresses and
certificates, an `http://` server and a string boolean in a minted kubeconfig, a redirect to
another origin), the rest of the fleet healthy. The worker runs as a subprocess (GARDENER_MODE=real,
over HTTPS) in a memory cgroup of the chart's 512 MiB (tests/fixtures/memory_cgroup.py), so a bound
that does not hold gets it killed. Its time bounds are generous (INVENTORY_TIMEOUT_SECONDS=60): on a
loaded machine a tight budget fails healthy clusters "while storing" instead of testing the bounds.
After one round: its peak RSS (VmHWM) stayed well under the limit, each hostile cluster failed
alone with its reason and kept its previous numbers (or, for the ledger cases, was collected with
that type left as it was), every other cluster was updated in the same round, and `/livez`
answered every poll during the round.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sim.api.faults.hostile import HOSTILE_CASES
from tests.collector.test_process import (
    PROJECT,
    WAIT_SECONDS,
    Worker,
    ready_ids,
    real_worker_env,
    scalar,
    serving_labels,
)
from tests.fixtures.memory_cgroup import memory_cgroup
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest

MEMORY_LIMIT_BYTES = 512 << 20  # the chart's memory limit, a cgroup as in a Deployment
RSS_BOUND_BYTES = 300 << 20  # the target of the hostile benchmark, well under the chart's 512 MiB
LEDGER_CAP = 10_000

# What each hostile case leaves in its cluster's last_error (None: the cluster is collected and only
# the ledger type is left as it was).
EXPECTED: dict[tuple[str, str], str | None] = {
    ("endless_item", "nodes"): "one item of the list is over 3 MiB",
    ("gzip_bomb", "pods"): "compressed (gzip)",
    ("endless_list", "certificates"): None,
    ("endless_answer", "adminkubeconfig"): "response over 1.5 MiB",
    ("flood", "ingresses"): None,
    ("flood", "certificates"): None,
    ("http_server", "adminkubeconfig"): "is not https",
    ("string_boolean", "adminkubeconfig"): "not a boolean",
    ("redirect", "nodes"): "redirect",
}
LEDGER_TYPE = {"ingresses": "kubernetes.ingress", "certificates": "kubernetes.certificate"}


def peak_rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/PID/status")


class LivezPoller:
    """Polls /livez from a thread until stopped; counts answers and anything that was not a 200."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.answers = 0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=WAIT_SECONDS) as http:
            while not self._stop.is_set():
                try:
                    status = http.get("/livez").status_code
                except httpx.HTTPError as e:
                    self.failures.append(f"{type(e).__name__}: {e}")
                else:
                    self.answers += 1
                    if status != 200:
                        self.failures.append(f"status {status}")
                self._stop.wait(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(WAIT_SECONDS)


def snapshots(database: TestDatabase) -> dict[str, tuple[Any, ...]]:
    """Cluster id -> (nodes, pods, observed, last_error) of every snapshot."""
    with database.admin() as admin:
        rows = admin.execute(
            "SELECT cluster_id::text, nodes, pods, observed, last_error FROM tenant.cluster_snapshots"
        ).fetchall()
    return {str(r[0]): tuple(r[1:]) for r in rows}


def ledger_rows(database: TestDatabase, cluster_id: str, resource_type: str) -> tuple[int, int]:
    """(all rows, active rows) of one type in one cluster: neither moves when the type is not listed."""
    with database.admin() as admin:
        row = admin.execute(
            "SELECT count(*), count(*) FILTER (WHERE destroyed IS NULL) FROM tenant.infrastructure_resources"
            " WHERE cluster_id = %s AND resource_type = %s",
            (cluster_id, resource_type),
        ).fetchone()
    assert row is not None
    return int(str(row[0])), int(str(row[1]))


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.stop()


@pytest.fixture
def hostile_env(sim: SimUnderTest, sim_database: TestDatabase, tmp_path: Path) -> dict[str, str]:
    return real_worker_env(
        sim,
        sim_database,
        tmp_path,
        INVENTORY_WORKERS="4",
        INVENTORY_TIMEOUT_SECONDS="60",
        INVENTORY_LEDGER_MAX_PER_TYPE=str(LEDGER_CAP),
    )


def run_collect(env: dict[str, str], cluster_ids: list[str]) -> None:
    args = [arg for cid in cluster_ids for arg in ("--cluster", cid)]
    done = subprocess.run(
        [sys.executable, "-m", "collector.main", "collect", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        timeout=WAIT_SECONDS * 2,
        check=False,
    )
    assert done.returncode == 0, done.stdout.decode()[-2000:] + done.stderr.decode()[-2000:]


@pytest.mark.slow
def test_a_round_of_hostile_shoots_is_bounded_and_fails_only_them(
    sim: SimUnderTest, sim_database: TestDatabase, hostile_env: dict[str, str], workers: list[Worker]
) -> None:
    collectable = sorted(ready_ids(sim_database) & serving_labels(sim))
    assert len(collectable) > len(HOSTILE_CASES), "the test fleet has a shoot for every case and healthy ones"
    # The previous numbers every cluster keeps when its hostile round fails.
    run_collect(hostile_env, collectable)
    before = snapshots(sim_database)
    victims = collectable[: len(HOSTILE_CASES)]
    healthy = collectable[len(HOSTILE_CASES) :]
    keys = {s.cluster_label: s.key for s in sim.shoots(lambda s: s.cluster_label in victims and not s.deleting)}
    ledger_before = {cid: {t: ledger_rows(sim_database, cid, t) for t in LEDGER_TYPE.values()} for cid in victims}
    started = scalar(sim_database, "SELECT now()")

    played = sim.control.hostile([keys[cid] for cid in victims], seconds=WAIT_SECONDS)
    assert [(p["kind"], p["resource"]) for p in played] == list(EXPECTED)
    with memory_cgroup(MEMORY_LIMIT_BYTES) as cgroup:
        worker = Worker(hostile_env, prefix=cgroup.prefix)
        workers.append(worker)
        listening = worker.wait_for_log("health port listening")
        poller = LivezPoller(f"http://{listening['address']}")
        try:
            done = worker.wait_for_log("inventory round done")
        finally:
            poller.stop()
        peak = peak_rss_bytes(worker.process.pid)
        metrics = httpx.get(f"http://{listening['address']}/metrics", timeout=WAIT_SECONDS).text
        alive, kills = worker.process.poll() is None, cgroup.oom_kills()
        worker.stop()
    sim.control.clear_faults()

    assert alive and kills == 0, f"the worker survived the round ({kills} OOM kills)"
    assert peak < RSS_BOUND_BYTES, f"peak RSS {peak >> 20} MiB"
    assert poller.answers > 0 and poller.failures == [], poller.failures[:3]
    after = snapshots(sim_database)
    failing = [cid for cid, case in zip(victims, EXPECTED.values(), strict=True) if case is not None]
    assert done["failed"] >= len(failing)
    for cid, ((kind, res), says) in zip(victims, EXPECTED.items(), strict=True):
        nodes, pods, observed, last_error = after[cid]
        if says is None:  # a ledger case: collected, the flooded type left as it was
            assert last_error is None and observed >= started, (kind, res, last_error)
            resource_type = LEDGER_TYPE[res]
            assert ledger_rows(sim_database, cid, resource_type) == ledger_before[cid][resource_type], (kind, res)
            continue
        assert last_error is not None and says in last_error, (kind, res, last_error)
        assert (nodes, pods, observed) == before[cid][:3], f"{kind} {res}: the previous numbers are kept"
    for cid in healthy:
        assert after[cid][3] is None and after[cid][2] >= started, f"healthy cluster {cid} updated in the round"
    for resource_type in ("kubernetes.ingress", "kubernetes.certificate"):
        assert f'fleet_inventory_ledger_over_cap_total{{resource_type="{resource_type}"}}' in metrics
