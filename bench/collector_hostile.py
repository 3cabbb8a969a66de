"""Benchmark: the real worker's memory and health port during a round in which one shoot answers a bomb.

    .venv/bin/python -m bench.collector_hostile [--dsn SUPERUSER_DSN] [--json FILE]

fleet-sim serves the `test` fleet from a process of its own and PostgreSQL (a throwaway embedded
server unless `--dsn` names one) holds it. For each bomb of fleet-sim's hostile mode (an endless node
item, an endless gzip body, an endless cert-manager certificates list, an endless garden
adminkubeconfig answer, 30,000 ingresses, 15 MiB of `[],[],…` that parse into far more than their
bytes) one shoot answers it, the rest of the fleet is healthy,
and one `cluster-worker` process (GARDENER_MODE=real, default bounds and INVENTORY_TIMEOUT_SECONDS) runs one
round. Measured side by side with a round without a bomb: the worker's peak RSS (VmHWM) after the
round and the worst `/livez` latency while it ran (polled every 5 ms). Targets: peak RSS < 300 MB,
worst `/livez` < 250 ms, for every bomb.

Exits non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import orjson
import psycopg

from bench.common import PROJECT, module_command, postgres, simulator_process, worker_database
from bench.runs import Benchmark, Options, Reading, Result, Run, largest
from bench.table import Row, Target
from collector.kube.client import garden_client
from collector.kube.garden import RealGardener, shoot_refs
from common.labels import CLUSTER_ID_LABEL
from sim.control.client import ControlClient
from sim.world.fleets import named_fleet

DATABASE = "fleet_bench_hostile"
RSS_TARGET_MB = 300.0
LIVEZ_TARGET_MS = 250.0
POLL_SECONDS = 0.005
ROUND_TIMEOUT_SECONDS = 180.0


@dataclass(frozen=True)
class Bomb:
    name: str
    kind: str
    resource: str
    count: int = 0


BOMBS = (
    Bomb("endless node item", "endless_item", "nodes"),
    Bomb("endless gzip body", "gzip_bomb", "pods"),
    Bomb("endless certificates list", "endless_list", "certificates"),
    Bomb("endless adminkubeconfig answer", "endless_answer", "adminkubeconfig"),
    Bomb("30,000 ingresses", "flood", "ingresses", 30_000),
    Bomb("15 MiB of [],[],... as nodes", "value_bomb", "nodes", 15),
)


@dataclass
class RoundFigures:
    peak_rss_mb: float = 0.0
    livez_worst_ms: float = 0.0
    livez_polls: int = 0
    livez_failures: int = 0
    round_seconds: float = 0.0
    failed: int = 0
    outcome: str = ""
    latencies: list[float] = field(default_factory=list)


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/PID/status")


def poll_livez(address: str, stop: threading.Event, figures: RoundFigures) -> None:
    with httpx.Client(base_url=f"http://{address}", timeout=30) as http:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                ok = http.get("/livez").status_code == 200
            except httpx.HTTPError:
                ok = False
            figures.latencies.append(time.perf_counter() - started)
            figures.livez_failures += not ok
            stop.wait(POLL_SECONDS)


def one_round(env: dict[str, str]) -> RoundFigures:
    """Start a worker, poll its /livez through its first round, read its peak RSS, stop it."""
    figures = RoundFigures()
    child = subprocess.Popen(
        [sys.executable, "-m", "collector.main"],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    stop = threading.Event()
    poller: threading.Thread | None = None
    deadline = time.monotonic() + ROUND_TIMEOUT_SECONDS
    try:
        assert child.stderr is not None
        for raw in child.stderr:
            try:
                line = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if line.get("message") == "health port listening":
                poller = threading.Thread(target=poll_livez, args=(line["address"], stop, figures), daemon=True)
                poller.start()
            if line.get("message") == "inventory round done":
                figures.round_seconds = float(line["duration_seconds"])
                figures.failed = int(line["failed"])
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"no round within {ROUND_TIMEOUT_SECONDS} s")
        else:
            raise RuntimeError(f"the worker exited ({child.wait()}) before its round was done")
        figures.peak_rss_mb = peak_rss_mb(child.pid)
    finally:
        stop.set()
        if poller is not None:
            poller.join(30)
        child.terminate()
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    figures.livez_polls = len(figures.latencies)
    figures.livez_worst_ms = max(figures.latencies, default=0.0) * 1000
    return figures


async def victim(kubeconfig: Path, superuser_dsn: str) -> tuple[str, str]:
    """A ready cluster with a serving shoot: (cluster id, shoot key)."""
    gardener = RealGardener(await garden_client(kubeconfig, timeout_seconds=30))
    try:
        shoots = await gardener.list_shoots(label_selector=CLUSTER_ID_LABEL)
        refs = shoot_refs(shoots, CLUSTER_ID_LABEL)
    finally:
        await gardener.close()
    with psycopg.connect(superuser_dsn) as conn:
        rows = conn.execute(
            "SELECT c.id::text FROM tenant.clusters c JOIN tenant.organizations o ON o.id = c.organization_id"
            " JOIN tenant.fleet_sync_state s ON s.cluster_id = c.id"
            " WHERE tenant.cluster_is_ready(c.deleted IS NOT NULL, o.deleted IS NOT NULL, o.id, s.shoot_status)"
            " ORDER BY c.id"
        ).fetchall()
    # fleet-sim's shoot key is the technical id's tail (a project's namespace need not be `garden-<project>`).
    keys = {
        (s["metadata"]["namespace"], s["metadata"]["name"]): str(s["status"]["technicalID"]).removeprefix("shoot--")
        for s in shoots
    }
    for (cluster_id,) in rows:
        ref = refs.get(UUID(str(cluster_id)))
        if ref is not None:
            return str(cluster_id), keys[(ref.namespace, ref.name)]
    raise RuntimeError("the fleet has no ready cluster with a shoot")


def last_error(dsn: str, cluster_id: str) -> str:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT last_error FROM tenant.cluster_snapshots WHERE cluster_id = %s", (cluster_id,)
        ).fetchone()
    return "collected" if row is None or row[0] is None else str(row[0])


async def measure(admin_dsn: str, worker_dsn: str, kubeconfig: Path) -> dict[str, float]:
    cluster_id, key = await victim(kubeconfig, admin_dsn)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INVENTORY_", "GARDENER_", "DATABASE_"))}
    env.update(
        DATABASE_URL=worker_dsn,
        WORKER_MODE="inventory",
        GARDENER_MODE="real",
        GARDENER_KUBECONFIG=str(kubeconfig),
        INVENTORY_INTERVAL_SECONDS="3600",
        HEALTH_PORT="0",
        LOG_LEVEL="info",
    )
    figures: dict[str, float] = {}
    ok = True
    print(f"the bombs' shoot: {key} (cluster {cluster_id})")
    print(f"{'round':<34}{'peak RSS MB':>12}{'/livez worst ms':>16}{'polls':>7}{'round s':>9}  the shoot's cluster")
    async with ControlClient.from_state_dir(kubeconfig.parent) as control:
        baseline = one_round(env)
        print(
            f"{'no bomb (reference)':<34}{baseline.peak_rss_mb:>12.0f}{baseline.livez_worst_ms:>16.1f}"
            f"{baseline.livez_polls:>7}{baseline.round_seconds:>9.1f}  {last_error(admin_dsn, cluster_id)[:60]}"
        )
        figures.update(baseline_rss_mb=baseline.peak_rss_mb, baseline_livez_worst_ms=baseline.livez_worst_ms)
        for bomb in BOMBS:
            await control.fault(key, bomb.kind, resource=bomb.resource, seconds=ROUND_TIMEOUT_SECONDS, count=bomb.count)
            try:
                result = one_round(env)
            finally:
                await control.clear_faults()
            outcome = last_error(admin_dsn, cluster_id)
            print(
                f"{bomb.name:<34}{result.peak_rss_mb:>12.0f}{result.livez_worst_ms:>16.1f}"
                f"{result.livez_polls:>7}{result.round_seconds:>9.1f}  {outcome[:60]}"
            )
            figures[f"{bomb.kind}_{bomb.resource}_rss_mb"] = result.peak_rss_mb
            figures[f"{bomb.kind}_{bomb.resource}_livez_worst_ms"] = result.livez_worst_ms
            figures[f"{bomb.kind}_{bomb.resource}_livez_failures"] = result.livez_failures
            ok &= result.peak_rss_mb < RSS_TARGET_MB and result.livez_worst_ms < LIVEZ_TARGET_MS
            ok &= result.livez_failures == 0
    print(f"targets: peak RSS < {RSS_TARGET_MB:g} MB, worst /livez < {LIVEZ_TARGET_MS:g} ms, every poll answered")
    figures["ok"] = float(ok)
    return figures


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    return [Run("collector_hostile", "bench.collector_hostile", ("--dsn", options.dsn), timeout_seconds=1800.0)]


def read(results: Sequence[Result]) -> Reading:
    _, f = largest(results)
    rows: list[Row] = []
    for bomb in BOMBS:
        key = f"{bomb.kind}_{bomb.resource}"
        if f"{key}_rss_mb" not in f:
            continue
        rows += [
            Row(
                "collector_hostile",
                f"peak RSS of a round, one shoot: {bomb.name}",
                f[f"{key}_rss_mb"],
                "MB",
                target=Target("<", RSS_TARGET_MB),
                note=f"the same round without a bomb: {f['baseline_rss_mb']:.0f} MB",
            ),
            Row(
                "collector_hostile",
                f"worst /livez during that round: {bomb.name}",
                f[f"{key}_livez_worst_ms"],
                "ms",
                target=Target("<", LIVEZ_TARGET_MS),
                note=f"without a bomb: {f['baseline_livez_worst_ms']:.0f} ms; "
                f"unanswered polls: {f[f'{key}_livez_failures']:.0f}",
            ),
        ]
    return rows, []


BENCHMARK = Benchmark("collector_hostile", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.collector_hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", help="a superuser DSN of a server to use instead of a throwaway embedded one")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    sim = module_command("sim.main", "--fleet", "test", "--port", "0", state_flag="--state-dir")
    with (
        simulator_process(sim, name="hostile", quiet=True) as (kubeconfig, _),
        postgres(args.dsn, name="hostile") as (superuser, _),
    ):
        worker_dsn = worker_database(superuser, DATABASE, named_fleet("test"))
        admin_dsn = psycopg.conninfo.make_conninfo(superuser, dbname=DATABASE)
        figures: dict[str, Any] = asyncio.run(measure(admin_dsn, worker_dsn, kubeconfig))
    if args.json:
        args.json.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
