"""Benchmark: one inventory round over 2,000 shoots with 50 ms per API call, split over 1, 2 and 4
shard processes.

    .venv/bin/python -m bench.collector_shards [--shoots 2000] [--workers 8] [--latency 0.05] [--dsn DSN]

Each shard is a process of its own, as a StatefulSet's pods are (`INVENTORY_SHARD=i/N`: the clusters of
the jump consistent hash's shard i): it opens the worker's pool and garden client, runs a cold round
over its clusters (minting credentials), reports ready, and on the driver's word runs the measured
round, all shards at once. The round takes as long as its slowest shard. The ideal of N shards is
clusters x calls per cluster x latency / (workers x N): every call waits out its latency, the shards
split the fleet evenly, and nothing else costs time. The target is a ratio of at most 1.3 for each N.
The fleet and fleet-sim are those of bench/collector_fanout.py (one simulator process for every shard).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from bench.collector_fanout import DATABASE, bench_fleet, cpu_seconds, process_cpu_seconds, serve_sim
from bench.common import module_command, postgres, simulator_process, worker_database
from bench.runs import Benchmark, Options, Reading, Result, Run, largest, size_note
from bench.table import Point, Row, Target
from bench.worker_side import clusters_with_a_shoot, worker_side
from collector.inventory.garden_reader import GardenReader
from collector.inventory.loop import InventoryLoop
from collector.inventory.shards import in_shard
from collector.inventory.shoot import DEFAULT_LEDGER_MAX_PER_TYPE
from collector.inventory.sources import SOURCES
from collector.kube.credential_cache import CredentialCache, renew_margin
from collector.kube.limits import DEFAULT_LIMITS
from collector.settings import InventorySettings, Shard
from common import eventloop
from common.eventloop import DEFAULT_EVENT_LOOP
from common.garbage_collection import DEFAULT_GC_THRESHOLD

TARGET_RATIO = 1.3
SHARD_COUNTS = (1, 2, 4)
PROJECT = Path(__file__).resolve().parents[1]


async def shard_round(dsn: str, kubeconfig: Path, shard: Shard, shoots: int, workers: int) -> dict[str, float]:
    """One shard's process: a cold round, then (on the driver's word) the measured round; its figures."""
    async with worker_side(dsn, kubeconfig, workers=workers, application_name=f"bench-shard-{shard}") as side:
        timeout = 60.0
        credentials = CredentialCache(
            side.gardener, kind="admin", lifetime_seconds=3600, renew_before=renew_margin(timeout)
        )
        reader = GardenReader(
            side.gardener,
            credentials,
            sources=SOURCES,
            timeout_seconds=timeout,
            limits=DEFAULT_LIMITS,
            ledger_max_per_type=DEFAULT_LEDGER_MAX_PER_TYPE,
        )
        settings = InventorySettings(interval_seconds=900, workers=workers, timeout_seconds=timeout, shard=shard)
        loop = InventoryLoop(pool=side.pool, reader=reader, settings=settings, checks=side.checks)
        _, taken = await clusters_with_a_shoot(side, shoots)
        mine = [c for c in taken if in_shard(c.id, shard)]
        await loop.run_once(mine)  # cold: every credential minted
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        started, cpu = time.perf_counter(), cpu_seconds()
        summary = await loop.run_once(mine)
        wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
        collected = [r for r in summary.results if r.ok and r.reading is not None]
        requests = sum(r.reading.requests for r in collected if r.reading is not None)
        return {
            "clusters": len(summary.results),
            "failed": summary.failed,
            "requests": requests,
            "collected": len(collected),
            "seconds": wall,
            "cpu_seconds": cpu,
        }


def run_shards(count: int, dsn: str, kubeconfig: Path, shoots: int, workers: int, sim_pid: int) -> dict[str, float]:
    """`count` shard processes started together, released together; the round's figures."""
    children = [
        subprocess.Popen(
            [
                sys.executable,
                *("-m", "bench.collector_shards", "--shard", f"{i}/{count}", "--dsn", dsn),
                *("--kubeconfig", str(kubeconfig), "--shoots", str(shoots), "--workers", str(workers)),
            ],
            cwd=PROJECT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(count)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            if child.stdout.readline().strip() != "ready":
                raise RuntimeError(f"a shard process of {count} did not get ready")
        sim_cpu = process_cpu_seconds(sim_pid)
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        shards = []
        for child in children:
            out, _ = child.communicate(timeout=1200)
            if child.returncode != 0:
                raise RuntimeError(f"a shard process of {count} exited with {child.returncode}")
            shards.append(orjson.loads(out.strip().splitlines()[-1]))
        sim_cpu = process_cpu_seconds(sim_pid) - sim_cpu
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    return {
        "clusters": sum(s["clusters"] for s in shards),
        "failed": sum(s["failed"] for s in shards),
        "requests": sum(s["requests"] for s in shards),
        "collected": sum(s["collected"] for s in shards),
        "seconds": max(s["seconds"] for s in shards),
        "smallest_shard": min(s["clusters"] for s in shards),
        "largest_shard": max(s["clusters"] for s in shards),
        "shards_cpu_seconds": sum(s["cpu_seconds"] for s in shards),
        "simulator_cpu_seconds": sim_cpu,
    }


def measure(dsn: str, kubeconfig: Path, shoots: int, workers: int, latency: float, sim_pid: int) -> dict[str, float]:
    figures: dict[str, float] = {"workers": workers, "latency_seconds": latency}
    cores = os.cpu_count() or 1
    for count in SHARD_COUNTS:
        found = run_shards(count, dsn, kubeconfig, shoots, workers, sim_pid)
        calls = found["requests"] / max(1, found["collected"])
        ideal = found["clusters"] * calls * latency / (workers * count)
        ratio = found["seconds"] / ideal
        # Where the machine bounds the ratio: the one simulator process (one core at most) serves every
        # shard, and the shards and the simulator share the machine's cores (PostgreSQL not counted).
        sim_floor = found["simulator_cpu_seconds"] / ideal
        machine_floor = (found["shards_cpu_seconds"] + found["simulator_cpu_seconds"]) / min(cores, count + 1) / ideal
        print(
            f"{count} shard(s): {found['clusters']:.0f} clusters ({found['smallest_shard']:.0f} to "
            f"{found['largest_shard']:.0f} a shard), {found['failed']:.0f} failed, {calls:.2f} calls/cluster, "
            f"ideal {ideal:.2f} s, measured {found['seconds']:.2f} s, ratio {ratio:.2f}\n"
            f"       CPU: shards {found['shards_cpu_seconds']:.2f} s, simulator {found['simulator_cpu_seconds']:.2f} s;"
            f" CPU floor of the ratio: the simulator alone {sim_floor:.2f}, shards and simulator over"
            f" {min(cores, count + 1)} cores {machine_floor:.2f}"
        )
        figures.update(
            {
                f"shards{count}_clusters": found["clusters"],
                f"shards{count}_failed": found["failed"],
                f"shards{count}_ideal_seconds": ideal,
                f"shards{count}_seconds": found["seconds"],
                f"shards{count}_ratio": ratio,
                f"shards{count}_simulator_cpu_floor_ratio": sim_floor,
                f"shards{count}_machine_cpu_floor_ratio": machine_floor,
            }
        )
    print(f"target: ratio <= {TARGET_RATIO} (measured / ideal) for each shard count")
    return figures


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    return [
        Run("collector_shards", "bench.collector_shards", ("--shoots", str(2000 * p // 100), "--dsn", options.dsn), p)
        for p in options.percents
        if p >= 10
    ]


def read(results: Sequence[Result]) -> Reading:
    run, f = largest(results)
    workers = int(f["workers"])
    note = size_note(run) or f"{f['shards1_clusters']:,.0f} shoots, {workers} workers a shard, 50 ms per call"
    rows = [
        Row(
            "collector_shards",
            f"one round, {count} shard process{'es' if count > 1 else ''}",
            f[f"shards{count}_seconds"],
            "s",
            f"ideal: clusters x calls x latency / ({workers} workers x {count})",
            f[f"shards{count}_ideal_seconds"],
            Target("<=", TARGET_RATIO),
            note + cpu_floor_note(f, count),
        )
        for count in SHARD_COUNTS
    ]
    points = []
    panel = f"collector round by shard processes, {workers} workers each, 50 ms per call (s)"
    for _, g in results:
        points += [
            Point(f"{count} shard(s)", panel, g["shards1_clusters"], g[f"shards{count}_seconds"], "s", "shoots")
            for count in SHARD_COUNTS
        ]
    return rows, points


def cpu_floor_note(f: Mapping[str, Any], count: int) -> str:
    floor = f.get(f"shards{count}_machine_cpu_floor_ratio")
    return "" if floor is None else f"; CPU floor of the ratio on this machine {floor:.2f}"


BENCHMARK = Benchmark("collector_shards", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.collector_shards", description=__doc__.split("\n\n")[0])
    parser.add_argument("--shoots", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=16, help="of each shard process")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the simulator adds to every answer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dsn", help="a superuser DSN of a server to use instead of a throwaway embedded one")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--serve-sim", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--shard", help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_sim is not None:
        serve_sim(args.serve_sim, args.shoots, args.seed, args.latency, DEFAULT_EVENT_LOOP, DEFAULT_GC_THRESHOLD)
        return 0
    logging.basicConfig(level=logging.ERROR)
    if args.shard is not None:
        # A shard's process: --dsn is the worker's own DSN here.
        shard = Shard.parse("--shard", args.shard)
        found = eventloop.run(shard_round(args.dsn, args.kubeconfig, shard, args.shoots, args.workers))
        print(orjson.dumps(found).decode())
        return 0
    fleet = bench_fleet(args.shoots, args.seed)
    with (
        postgres(args.dsn, name="shards") as (superuser, _),
        simulator_process(
            module_command(
                "bench.collector_shards",
                "--shoots",
                str(args.shoots),
                "--seed",
                str(args.seed),
                "--latency",
                str(args.latency),
            ),
            name="shards",
        ) as (kubeconfig, sim_pid),
    ):
        worker_dsn = worker_database(superuser, DATABASE, fleet)
        figures = measure(worker_dsn, kubeconfig, args.shoots, args.workers, args.latency, sim_pid)
    if args.json:
        args.json.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
    ok = all(figures[f"shards{count}_ratio"] <= TARGET_RATIO for count in SHARD_COUNTS)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
