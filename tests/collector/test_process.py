"""`cluster-worker` as a process: health port, SIGTERM, kill -9 mid-round, and the `collect` command.

The worker runs as a real subprocess against fleet-sim (in this process, on loopback) and the test
database, configured only through its environment, as in a Deployment.
"""

from __future__ import annotations

import gc
import io
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import orjson
import pytest
import yaml

from collector.inventory.shards import in_shard
from collector.main import collect, main
from collector.settings import Settings, Shard
from common.health import OPERATIONS_MAX_CONNECTIONS
from tests.fixtures.collector import FAULT_TIMEOUT_SECONDS, LATENCY_SECONDS, SHOOT_FAULTS, WORKER_ROLE
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest
from tests.fixtures.slowloris import slowloris, status_of, trickle
from tests.fixtures.waiting import eventually

PROJECT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 60.0


class Worker:
    """A cluster-worker subprocess whose JSON log lines are read as they come."""

    def __init__(
        self,
        env: dict[str, str],
        *args: str,
        address_space_bytes: int | None = None,
        prefix: tuple[str, ...] = (),
    ) -> None:
        # A limit is set by prlimit(1) exec'ing the worker, not by a preexec_fn: that would make Python
        # fork() this process, whose gRPC and simulator threads may be running, instead of vfork() it.
        # `prefix` is another such command (tests/fixtures/memory_cgroup.py moves it into a cgroup).
        limit = [] if address_space_bytes is None else ["prlimit", f"--as={address_space_bytes}", "--"]
        self.process = subprocess.Popen(
            [*prefix, *limit, sys.executable, "-m", "collector.main", *args],
            cwd=PROJECT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            try:
                self.lines.put(orjson.loads(raw))
            except orjson.JSONDecodeError:
                self.lines.put({"message": raw.decode(errors="replace")})

    def wait_for_log(self, message: str) -> dict[str, Any]:
        def logged() -> dict[str, Any] | None:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.process.poll() is not None:  # every line is read: it never said it
                    exited = self.process.returncode
                    raise AssertionError(
                        f"the worker exited ({exited}) before logging {message!r}: {self.seen[-5:]}"
                    ) from None
                return None
            self.seen.append(line)
            return line if line.get("message") == message else None

        return eventually(logged, f"{message!r} in the worker's log", within=WAIT_SECONDS, every=0)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(WAIT_SECONDS)
        self._reader.join(WAIT_SECONDS)
        if self.process.stderr is not None:
            self.process.stderr.close()


def real_worker_env(sim: SimUnderTest, database: TestDatabase, tmp_path: Path, **settings: str) -> dict[str, str]:
    """The environment of an inventory worker against fleet-sim's garden (GARDENER_MODE=real), one
    round an hour on a free health port; `settings` add to or override it."""
    kubeconfig = tmp_path / "garden.yaml"
    kubeconfig.write_text(yaml.safe_dump(sim.garden_kubeconfig))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INVENTORY_", "GARDENER_", "DATABASE_"))}
    env.update(
        DATABASE_URL=database.dsn(WORKER_ROLE),
        WORKER_MODE="inventory",
        GARDENER_MODE="real",
        GARDENER_KUBECONFIG=str(kubeconfig),
        INVENTORY_INTERVAL_SECONDS="3600",
        HEALTH_PORT="0",
        LOG_LEVEL="info",
    )
    env.update(settings)
    return env


@pytest.fixture
def worker_env(sim: SimUnderTest, sim_database: TestDatabase, tmp_path: Path) -> dict[str, str]:
    # A third of the fleet keeps each round short (and runs the sharding of a real process).
    return real_worker_env(
        sim, sim_database, tmp_path, INVENTORY_WORKERS="2", INVENTORY_SHARD="0/3", INVENTORY_TIMEOUT_SECONDS="20"
    )


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.stop()


def scalar(database: TestDatabase, query: str) -> Any:
    with database.admin() as admin:
        row = admin.execute(query).fetchone()
    assert row is not None
    return row[0]


def ready_ids(database: TestDatabase) -> set[str]:
    with database.admin() as admin:
        rows = admin.execute(
            "SELECT c.id::text FROM tenant.clusters c JOIN tenant.organizations o ON o.id = c.organization_id"
            " JOIN tenant.fleet_sync_state s ON s.cluster_id = c.id"
            " WHERE tenant.cluster_is_ready(c.deleted IS NOT NULL, o.deleted IS NOT NULL, o.id, s.shoot_status)"
        ).fetchall()
    return {str(r[0]) for r in rows}


def cluster_names(database: TestDatabase) -> dict[str, str]:
    """Every cluster's id with its `organization/name`, as `collect` prints it."""
    with database.admin() as admin:
        rows = admin.execute(
            "SELECT c.id::text, o.name || '/' || c.name FROM tenant.clusters c"
            " JOIN tenant.organizations o ON o.id = c.organization_id"
        ).fetchall()
    return {str(cid): str(name) for cid, name in rows}


def serving_labels(sim: SimUnderTest) -> set[str]:
    return {s.cluster_label for s in sim.shoots(lambda s: s.serving and not s.deleting)}


COLLECTABLE = "SELECT count(*) FROM tenant.cluster_snapshots WHERE observed IS NOT NULL AND observed >= {since}"
DUPLICATES = (
    "SELECT count(*) FROM (SELECT 1 FROM tenant.infrastructure_resources WHERE destroyed IS NULL"
    " GROUP BY cluster_id, resource_type, namespace, name HAVING count(*) > 1) d"
)


@pytest.mark.slow
def test_kill_minus_nine_mid_round_then_restart_completes_without_duplicates(
    sim: SimUnderTest, sim_database: TestDatabase, worker_env: dict[str, str], workers: list[Worker]
) -> None:
    # Slow shoots make a round take seconds, so the kill lands in the middle of one.
    sim.control.fault("*", "latency", seconds=0.1)
    first = Worker(worker_env)
    workers.append(first)
    eventually(lambda: scalar(sim_database, COLLECTABLE.format(since="'-infinity'")) >= 2, "a few collections")
    os.kill(first.process.pid, signal.SIGKILL)
    first.process.wait(WAIT_SECONDS)
    partial = scalar(sim_database, COLLECTABLE.format(since="'-infinity'"))

    restarted_at = scalar(sim_database, "SELECT now()")
    second = Worker(worker_env)
    workers.append(second)
    done = second.wait_for_log("inventory round done")
    shard = Shard(0, 3)
    mine = {cid for cid in ready_ids(sim_database) if in_shard(UUID(cid), shard)}
    without_shoot = len(mine - serving_labels(sim))
    assert done["clusters"] == len(mine)
    assert (done["collected"], done["failed"]) == (done["clusters"] - without_shoot, without_shoot)
    stored = scalar(sim_database, COLLECTABLE.format(since=f"'{restarted_at.isoformat()}'"))
    assert stored == done["collected"] > partial
    assert scalar(sim_database, DUPLICATES) == 0
    beat = scalar(sim_database, "SELECT last_completed FROM tenant.worker_heartbeats WHERE loop = 'inventory'")
    assert beat >= restarted_at
    second.process.send_signal(signal.SIGTERM)
    assert second.process.wait(WAIT_SECONDS) == 0


def test_health_port_and_graceful_sigterm(sim: SimUnderTest, worker_env: dict[str, str], workers: list[Worker]) -> None:
    worker = Worker(worker_env)
    workers.append(worker)
    listening = worker.wait_for_log("health port listening")
    base = f"http://{listening['address']}"
    worker.wait_for_log("inventory round done")
    with httpx.Client(base_url=base, timeout=5) as http:
        assert http.get("/livez").status_code == 200
        assert http.get("/readyz").status_code == 200
        metrics = http.get("/metrics").text
    assert "fleet_inventory_clusters_collected_total" in metrics
    assert 'fleet_inventory_credentials_minted_total{kind="admin"}' in metrics
    worker.process.send_signal(signal.SIGTERM)
    assert worker.process.wait(WAIT_SECONDS) == 0
    worker.wait_for_log("cluster-worker stopped")


def test_liveness_answers_through_a_slowloris_on_the_health_port(
    worker_env: dict[str, str], workers: list[Worker]
) -> None:
    """More unfinished heads than the health port serves at once: /metrics is 503, /livez stays 200."""
    worker = Worker(worker_env)
    workers.append(worker)
    port = int(str(worker.wait_for_log("health port listening")["address"]).rsplit(":", 1)[1])
    with slowloris(port, OPERATIONS_MAX_CONNECTIONS + 8) as held:
        assert status_of(port, "/metrics") == 503
        for _ in range(5):
            trickle(held)
            assert status_of(port, "/livez") == 200
    eventually(lambda: status_of(port, "/metrics") == 200, "/metrics served after the flood")


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_the_worker_logs_as_log_format_says(worker_env: dict[str, str], workers: list[Worker], log_format: str) -> None:
    worker = Worker({**worker_env, "LOG_FORMAT": log_format})
    workers.append(worker)

    def listening() -> dict[str, Any] | None:
        line = worker.lines.get(timeout=WAIT_SECONDS)
        return line if "health port listening" in line["message"] else None

    line = eventually(listening, "the worker saying its health port listens", within=WAIT_SECONDS, every=0)
    text = line["message"]
    if log_format == "json":
        assert text == "health port listening" and line["level"] == "info"
    else:
        # A plain line (Worker keeps a line that is not JSON whole as its message).
        assert list(line) == ["message"] and " INFO " in text and ": health port listening" in text


def probe(base: str, path: str) -> tuple[int, str]:
    with httpx.Client(base_url=base, timeout=5) as http:
        answer = http.get(path)
    return answer.status_code, answer.text


@pytest.mark.parametrize("mode", ["inventory", "reconcile"])
def test_readyz_waits_for_the_first_round_or_pass(
    sim: SimUnderTest, worker_env: dict[str, str], workers: list[Worker], mode: str
) -> None:
    # The garden's shoot list answers after a delay, once: the first round (or pass) cannot finish before.
    sim.control.fault("garden", "latency", resource="shoots", seconds=4, times=1)
    worker = Worker({**worker_env, "WORKER_MODE": mode, "GARDENER_TIMEOUT_SECONDS": "60"})
    workers.append(worker)
    base = f"http://{worker.wait_for_log('health port listening')['address']}"
    assert probe(base, "/readyz") == (503, "not ready\n")
    assert probe(base, "/livez")[0] == 200
    worker.wait_for_log("inventory round done" if mode == "inventory" else "reconcile pass stored")
    eventually(lambda: probe(base, "/readyz")[0] == 200, "ready after the first round or pass")


@pytest.mark.slow
def test_livez_fails_while_the_loop_makes_no_progress_and_recovers(
    sim: SimUnderTest, worker_env: dict[str, str], workers: list[Worker]
) -> None:
    # Passes every second, so three silent seconds are a stall; the first pass's listing hangs for 12.
    sim.control.fault("garden", "latency", resource="shoots", seconds=12, times=1)
    env = {
        **worker_env,
        "WORKER_MODE": "reconcile",
        "RECONCILE_INTERVAL_SECONDS": "1",
        "GARDENER_TIMEOUT_SECONDS": "60",
    }
    worker = Worker(env)
    workers.append(worker)
    base = f"http://{worker.wait_for_log('health port listening')['address']}"
    eventually(lambda: probe(base, "/livez")[0] == 503, "/livez failing while the pass hangs")
    status, text = probe(base, "/livez")
    assert status == 503 and "stalled: no progress for" in text and "limit 3 s" in text
    assert probe(base, "/readyz")[0] == 503
    worker.wait_for_log("reconcile pass stored")
    eventually(lambda: probe(base, "/livez") == (200, "ok\n"), "/livez recovering once passes go on")
    assert probe(base, "/readyz")[0] == 200


async def test_collect_prints_a_summary_and_fails_when_a_cluster_fails(
    sim: SimUnderTest, sim_database: TestDatabase, worker_env: dict[str, str]
) -> None:
    ids = {name: cid for cid, name in cluster_names(sim_database).items()}
    ready, served = ready_ids(sim_database), serving_labels(sim)
    good = sorted(name for name, cid in ids.items() if cid in ready and cid in served)[0]
    settings = Settings.from_env(worker_env)

    out, progress = io.StringIO(), io.StringIO()
    assert await collect(settings, [good], out, progress) == 0
    assert good in out.getvalue() and " ok " in out.getvalue()
    assert "LEDGER TYPE" in out.getvalue() and "kubernetes.node" in out.getvalue()
    assert progress.getvalue().endswith("1/1 clusters\n")

    key = next(s.key for s in sim.shoots(lambda s: s.cluster_label == ids[good]))
    sim.control.fault(key, "forbidden")
    out = io.StringIO()
    assert await collect(settings, [ids[good]], out, None) == 1
    assert "FAILED (forbidden)" in out.getvalue() and "403" in out.getvalue()

    assert await collect(settings, ["no-such-cluster"], io.StringIO(), None) == 2


@pytest.mark.slow
def test_the_worker_on_uvloop_names_every_fault(
    sim: SimUnderTest, sim_database: TestDatabase, worker_env: dict[str, str]
) -> None:
    """The process runs on uvloop (EVENT_LOOP's default) and the in-process fault tests on the standard
    loop: one `collect` over shoots that each carry a different fault must name every one the same way.
    (The kill -9 and SIGTERM tests run whole rounds of healthy shoots on uvloop.)"""
    names = cluster_names(sim_database)
    ready, served = ready_ids(sim_database), serving_labels(sim)
    collectable = sorted(cid for cid in names if cid in ready and cid in served)
    assert len(collectable) >= len(SHOOT_FAULTS), "the test fleet has a shoot for every fault"
    victims = dict(zip(collectable, SHOOT_FAULTS, strict=False))
    keys = {s.cluster_label: s.key for s in sim.shoots(lambda s: s.cluster_label in victims)}
    env = {
        **worker_env,
        "INVENTORY_TIMEOUT_SECONDS": f"{FAULT_TIMEOUT_SECONDS:g}",
        "INVENTORY_WORKERS": str(len(victims)),
    }
    env.pop("EVENT_LOOP", None)
    args = [arg for cid in victims for arg in ("--cluster", cid)]
    try:
        for cid, (fault, resource, _, _) in victims.items():
            late = LATENCY_SECONDS if fault == "latency" else 0.0
            sim.control.fault(keys[cid], fault, resource=resource, seconds=late)
        done = subprocess.run(
            [sys.executable, "-m", "collector.main", "collect", *args],
            cwd=PROJECT,
            env=env,
            capture_output=True,
            timeout=WAIT_SECONDS,
            check=False,
        )
    finally:
        sim.control.clear_faults()
    out = done.stdout.decode()
    assert done.returncode == 1, done.stderr.decode()[-2000:]
    lines = {line.split()[0]: line for line in out.splitlines() if line.split() and line.split()[0] in names.values()}
    for cid, (fault, _, reasons, says) in victims.items():
        line = lines[names[cid]]
        assert any(f"FAILED ({reason})" in line for reason in reasons.split("|")), (fault, line)
        assert any(part in line for part in says.split("|")), (fault, line)


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("INVENTORY_WORKERS", "0", "INVENTORY_WORKERS='0': must be at least 1"),
        ("INVENTORY_SHARD", "2/2", "INVENTORY_SHARD='2/2'"),
        ("INVENTORY_CREDENTIAL", "root", "INVENTORY_CREDENTIAL='root': expected one of admin, viewer"),
        ("GARDENER_KUBECONFIG", "/no/such/file", "GARDENER_KUBECONFIG='/no/such/file': no such file"),
        ("INVENTORY_TIMEOUT_SECONDS", "soon", "INVENTORY_TIMEOUT_SECONDS='soon': expected a number"),
        ("EVENT_LOOP", "tokio", "EVENT_LOOP='tokio': expected one of uvloop, asyncio"),
        ("GC_THRESHOLD", "0", "GC_THRESHOLD='0': must be at least 1"),
        ("RECONCILE_DELETION_TIMEOUT_SECONDS", "0", "RECONCILE_DELETION_TIMEOUT_SECONDS='0': must be at least 1"),
        ("INVENTORY_MAX_ITEM_MIB", "0", "INVENTORY_MAX_ITEM_MIB='0': must be at least 0.0625"),
        ("INVENTORY_MAX_LIST_MIB", "lots", "INVENTORY_MAX_LIST_MIB='lots': expected a number"),
        ("INVENTORY_LEDGER_MAX_PER_TYPE", "0", "INVENTORY_LEDGER_MAX_PER_TYPE='0': must be at least 1"),
    ],
)
def test_bad_settings_are_named_and_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str, value: str, says: str
) -> None:
    for name in list(os.environ):
        if name.startswith(("INVENTORY_", "GARDENER_", "WORKER_", "HEALTH_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("GARDENER_MODE", "real")
    monkeypatch.setenv("GARDENER_KUBECONFIG", __file__)
    monkeypatch.setenv(variable, value)
    assert main([]) == 2
    assert says in capsys.readouterr().err


def test_the_deletion_bound_defaults_to_three_reconcile_intervals() -> None:
    assert Settings.from_env({"RECONCILE_INTERVAL_SECONDS": "20"}).reconcile.deletion_bound_seconds == 60
    assert Settings.from_env({}).reconcile.deletion_bound_seconds == 900
    given = Settings.from_env({"RECONCILE_INTERVAL_SECONDS": "20", "RECONCILE_DELETION_TIMEOUT_SECONDS": "3600"})
    assert given.reconcile.deletion_bound_seconds == 3600


def test_the_bounds_are_read_in_mib_and_reach_the_clients() -> None:
    from collector.kube.limits import DEFAULT_LIMITS  # noqa: PLC0415
    from collector.worker import response_limits  # noqa: PLC0415

    env = {
        "INVENTORY_MAX_LIST_MIB": "64",
        "INVENTORY_MAX_ITEM_MIB": "1.5",
        "GARDENER_MAX_ANSWER_MIB": "2",
        "INVENTORY_LEDGER_MAX_PER_TYPE": "500",
    }
    settings = Settings.from_env(env)
    limits = response_limits(settings)
    assert (limits.max_list_bytes, limits.max_item_bytes, limits.max_answer_bytes) == (64 << 20, 3 << 19, 2 << 20)
    assert settings.inventory.ledger_max_per_type == 500
    defaults = response_limits(Settings.from_env({}))
    assert (defaults.max_list_bytes, defaults.max_item_bytes, defaults.max_answer_bytes) == (
        512 << 20,
        3 << 20,
        16 << 20,
    )
    assert defaults == DEFAULT_LIMITS, "the settings' defaults and the clients' agree"


def test_the_worker_sets_the_gc_threshold_it_is_given(
    monkeypatch: pytest.MonkeyPatch, worker_env: dict[str, str]
) -> None:
    for name, value in {**worker_env, "GC_THRESHOLD": "12345", "LOG_LEVEL": "error"}.items():
        monkeypatch.setenv(name, value)
    root, access = logging.getLogger(), logging.getLogger("uvicorn.access")
    before = gc.get_threshold(), root.handlers[:], root.level, access.level
    try:
        assert main(["collect", "--cluster", "no-such-cluster"]) == 2
        assert gc.get_threshold() == (12_345, *before[0][1:])
    finally:
        gc.set_threshold(*before[0])
        for handler in root.handlers:
            if handler not in before[1]:
                handler.close()
        root.handlers[:], root.level = before[1], before[2]
        access.setLevel(before[3])
