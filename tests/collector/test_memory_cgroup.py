"""The real worker in a 512 MiB memory cgroup against answers that parse into far more than their bytes.

Each hostile kind is played by fleet-sim (sim/api/faults/hostile.py) while one `cluster-worker run`
process (INVENTORY_SOURCE=prometheus, INVENTORY_WORKERS=4) runs one round inside a memory cgroup of
the chart's limit (tests/fixtures/memory_cgroup.py): a shoot's Prometheus answering 15 MiB of
`[],[],…`, a monitoring secret answering 1 MiB of it (over the values bound, under the 1.5 MiB of one
object), one page of the garden's shoot list answering 15 MiB of it, and a shoot list whose
`continue` tokens never end. The Prometheus and secret kinds are played on one shoot, then on
four at once. After each round: no OOM kill, the cgroup's peak under RSS_BOUND_BYTES, `/livez`
answered every poll, the hostile clusters failed with reason `too_large` (their numbers kept) or,
for the garden list, every cluster failed naming the garden's refusal: never a round that
"succeeded" on a list it did not read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.collector.test_hostile import LivezPoller, snapshots
from tests.collector.test_process import WAIT_SECONDS, Worker, ready_ids, real_worker_env, serving_labels
from tests.fixtures.memory_cgroup import memory_cgroup
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest

logger = logging.getLogger(__name__)
LIMIT_BYTES = 512 << 20  # the chart's memory limit
RSS_BOUND_BYTES = 300 << 20


@dataclass(frozen=True)
class Hostile:
    """What the simulator plays on `shoots` hostile shoots (or on the garden), and what the victims' last_error says."""

    play: Callable[[SimUnderTest, list[str]], None]
    shoots: int
    says: str
    garden: bool = False


def _on_shoots(kind: str, resource: str, mib: int) -> Callable[[SimUnderTest, list[str]], None]:
    def play(sim: SimUnderTest, keys: list[str]) -> None:
        for key in keys:
            sim.control.fault(key, kind, resource=resource, count=mib)

    return play


def _on_garden(kind: str, mib: int = 0) -> Callable[[SimUnderTest, list[str]], None]:
    def play(sim: SimUnderTest, _: list[str]) -> None:
        sim.control.fault("garden", kind, resource="shoots", count=mib)

    return play


# The Prometheus bomb meets the first request of a target (its configuration, for whose it is) or a query.
PROMETHEUS_SAYS = "JSON values"
CASES = {
    "prometheus": Hostile(_on_shoots("value_bomb", "prometheus", 15), 1, PROMETHEUS_SAYS),
    "prometheus x4": Hostile(_on_shoots("value_bomb", "prometheus", 15), 4, PROMETHEUS_SAYS),
    "monitoring secret": Hostile(
        _on_shoots("value_bomb", "monitoring-secret", 1), 1, "more than 50,000 JSON values (one object's bound)"
    ),
    "monitoring secret x4": Hostile(
        _on_shoots("value_bomb", "monitoring-secret", 1), 4, "more than 50,000 JSON values (one object's bound)"
    ),
    "garden page": Hostile(
        _on_garden("value_bomb", 15), 0, "more than 1,000,000 JSON values (a garden page's bound)", garden=True
    ),
    "endless continue": Hostile(_on_garden("endless_pages"), 0, "(GARDENER_MAX_LIST_VALUES)", garden=True),
}


@pytest.fixture
def worker_slot() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.stop()


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_the_worker_survives_every_hostile_kind_within_the_charts_memory_limit(
    sim: SimUnderTest,
    sim_database: TestDatabase,
    tmp_path: Path,
    worker_slot: list[Worker],
    case: str,
) -> None:
    hostile = CASES[case]
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(sim.server.sim.tls.ca_pem)
    env = real_worker_env(
        sim,
        sim_database,
        tmp_path,
        INVENTORY_SOURCE="prometheus",
        PROMETHEUS_CA_FILE=str(ca_file),
        PROMETHEUS_ALLOW_LOOPBACK="true",  # fleet-sim's Prometheus is on 127.0.0.1
        INVENTORY_WORKERS="4",
        INVENTORY_TIMEOUT_SECONDS="60",  # generous: a loaded machine must not turn a bound into a timeout
        WORKER_MODE="inventory",
    )
    collectable = sorted(ready_ids(sim_database) & serving_labels(sim))
    keys = {s.cluster_label: s.key for s in sim.shoots(lambda s: s.cluster_label in collectable and not s.deleting)}
    victims = collectable[: hostile.shoots]
    before = snapshots(sim_database)
    hostile.play(sim, [keys[cid] for cid in victims])
    with memory_cgroup(LIMIT_BYTES) as cgroup:
        worker = Worker(env, "run", prefix=cgroup.prefix)
        worker_slot.append(worker)
        listening = worker.wait_for_log("health port listening")
        poller = LivezPoller(f"http://{listening['address']}")
        try:
            done = worker.wait_for_log("inventory round done")
        finally:
            poller.stop()
        peak, kills = cgroup.peak_bytes(), cgroup.oom_kills()
        metrics = httpx.get(f"http://{listening['address']}/metrics", timeout=WAIT_SECONDS).text
        alive = worker.process.poll() is None
        worker.stop()
    sim.control.clear_faults()

    logger.info("memory cgroup figures: %s: peak %d MiB, %d OOM kills", case, peak >> 20, kills)
    assert kills == 0 and alive, f"{case}: the worker was killed ({kills} OOM kills)"
    assert peak < RSS_BOUND_BYTES, f"{case}: the cgroup's peak was {peak >> 20} MiB"
    assert poller.answers > 0 and poller.failures == [], poller.failures[:3]
    after = snapshots(sim_database)
    assert 'fleet_inventory_clusters_failed_total{reason="too_large"}' in metrics
    if hostile.garden:
        # The garden's list was refused: the round has no shoot to map any cluster to, and says why.
        assert done["collected"] == 0 and done["failed"] >= len(collectable), done
        for cid in collectable:
            last_error = after[cid][3]
            assert last_error is not None and hostile.says in last_error, (cid, last_error)
            if cid in before:
                assert after[cid][:3] == before[cid][:3], f"{case}: the previous numbers are kept"
        return
    for cid in victims:
        nodes, pods, observed, last_error = after[cid]
        assert last_error is not None and hostile.says in last_error, (case, last_error)
        if cid in before:  # a fresh database has no numbers yet to keep
            assert (nodes, pods, observed) == before[cid][:3], f"{case}: the previous numbers are kept"
        assert observed is None or cid in before, f"{case}: nothing was stored"
    for cid in collectable[hostile.shoots :]:
        assert after[cid][3] is None, f"{case}: healthy cluster {cid} failed: {after[cid][3]}"
