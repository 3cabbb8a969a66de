"""Benchmark: one inventory round over 2,000 shoots with 50 ms per API call and 64 workers.

    .venv/bin/python -m bench.collector_fanout [--shoots 2000] [--workers 64] [--latency 0.05] [--dsn DSN]
        [--event-loop uvloop|asyncio] [--gc-threshold 10000]

The ideal round takes clusters x calls per cluster x latency / workers: every call waits out its
latency and nothing else costs time. This builds a fleet of about 2,500 clusters into PostgreSQL (a
throwaway embedded server unless `--dsn` names one) and into fleet-sim, which runs in a process of
its own with the latency added to every answer, then times `InventoryLoop.run_once()` over the first
`--shoots` ready clusters that have a shoot: a cold round (every credential minted) and a warm one
(credentials cached). Calls per cluster are counted, not assumed. Prints both rounds against their
ideal; the target is a ratio of at most 1.5. Exits non-zero when it is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import orjson

from bench.common import module_command, postgres, simulator_process, worker_database
from bench.runs import Benchmark, Options, Reading, Result, Run, largest, size_note
from bench.table import Point, Row, Target
from bench.worker_side import clusters_with_a_shoot, worker_side
from collector.inventory.garden_reader import GardenReader
from collector.inventory.loop import InventoryLoop
from collector.inventory.results import RoundSummary
from collector.inventory.shoot import DEFAULT_LEDGER_MAX_PER_TYPE
from collector.inventory.sources import SOURCES
from collector.kube.credential_cache import CredentialCache, renew_margin
from collector.kube.limits import DEFAULT_LIMITS
from collector.settings import InventorySettings
from common import eventloop
from common.eventloop import DEFAULT_EVENT_LOOP, EVENT_LOOPS
from common.garbage_collection import DEFAULT_GC_THRESHOLD, PYTHON_GC_THRESHOLD, set_gc_threshold
from fleet_description.generate import FleetSize, generate
from fleet_description.model import Fleet

DATABASE = "fleet_bench_fanout"
TARGET_RATIO = 1.5
# Five clusters per organization; about 84% of the generator's clusters are ready with a shoot.
CLUSTERS_PER_ORGANIZATION = 5
READY_SHARE = 0.8


def bench_fleet(shoots: int, seed: int) -> Fleet:
    organizations = int(shoots / READY_SHARE / CLUSTERS_PER_ORGANIZATION) + 1
    return generate(FleetSize("fanout", organizations, CLUSTERS_PER_ORGANIZATION, 1, 1, 1, 0.3), seed)


def serve_sim(state_dir: Path, shoots: int, seed: int, latency: float, event_loop: str, gc_threshold: int) -> None:
    """Run fleet-sim with the benchmark's fleet until terminated (the child process), set up as `fleet-sim` sets
    itself up."""
    from sim.api.simulator import SimSettings  # noqa: PLC0415
    from sim.runner import SimServer  # noqa: PLC0415
    from sim.world.generate import ContentProfile  # noqa: PLC0415 - only the child process serves the simulator

    # Few pods per namespace: this measures waiting on many API servers, not parsing big lists.
    profile = ContentProfile(tenant_pods=lambda _name: 1, daemon_pods_per_node=0, system_pods=0)

    async def serve() -> None:
        server = SimServer(
            bench_fleet(shoots, seed),
            SimSettings(port=0, latency_seconds=latency),
            profile=profile,
            state_dir=state_dir,
        )
        set_gc_threshold(gc_threshold)  # after the fleet is built, as in fleet-sim's main
        await server.start()
        await asyncio.Event().wait()

    eventloop.run(serve(), event_loop=event_loop)


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds a process has used so far (Linux /proc), 0 where that cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_cpu_seconds(postmaster: int | None) -> float:
    """CPU seconds of a PostgreSQL server's processes alive now (its backends hold the pool's sessions)."""
    if postmaster is None:
        return 0.0
    total = process_cpu_seconds(postmaster)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int(Path(entry, "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent == postmaster:
                total += process_cpu_seconds(int(entry.name))
    return total


class GcTimer:
    """Collections of Python's cyclic garbage collector in this process, and the time they took."""

    def __init__(self) -> None:
        self.collections = 0
        self.seconds = 0.0
        self._started = 0.0

    def __enter__(self) -> GcTimer:
        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.collections += 1
            self.seconds += time.perf_counter() - self._started


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def report(
    name: str,
    summary: RoundSummary,
    wall: float,
    cpu: tuple[float, float, float],
    collected_garbage: GcTimer,
    minted: int,
    workers: int,
    latency: float,
    figures: dict[str, float],
) -> float:
    collected = [r for r in summary.results if r.ok and r.reading is not None]
    requests = sum(r.reading.requests for r in collected if r.reading is not None) + minted
    clusters = len(summary.results)
    calls = requests / max(1, len(collected))
    ideal = clusters * calls * latency / workers
    ratio = wall / ideal
    durations = sorted(r.duration_seconds for r in summary.results)
    # Where the machine itself bounds the ratio: the worker is one process (one core at most), and the
    # three processes share the machine's cores. A ratio near either floor is bound by CPU, not waiting.
    cores = os.cpu_count() or 1
    worker_floor, machine_floor = cpu[0] / ideal, sum(cpu) / min(cores, 3) / ideal
    print(
        f"{name:<6} {clusters:>6} clusters {summary.failed:>3} failed  {calls:5.2f} calls/cluster  "
        f"ideal {ideal:6.2f} s  measured {wall:6.2f} s  ratio {ratio:4.2f}\n"
        f"       CPU: worker {cpu[0]:6.2f} s, simulator {cpu[1]:6.2f} s, PostgreSQL {cpu[2]:6.2f} s; "
        f"per cluster: median {durations[len(durations) // 2]:.2f} s, max {durations[-1]:.2f} s\n"
        f"       worker's garbage collector: {collected_garbage.collections} collections, "
        f"{collected_garbage.seconds:.2f} s\n"
        f"       worker CPU per cluster: {cpu[0] / max(1, clusters) * 1000:.1f} ms (every bound of kube/limits.py on)\n"
        f"       CPU floor of the ratio: the worker's CPU alone {worker_floor:4.2f}, "
        f"all three processes over {min(cores, 3)} cores {machine_floor:4.2f}"
    )
    figures.update(
        {
            f"{name}_clusters": clusters,
            f"{name}_failed": summary.failed,
            f"{name}_calls_per_cluster": calls,
            f"{name}_ideal_seconds": ideal,
            f"{name}_seconds": wall,
            f"{name}_ratio": ratio,
            f"{name}_worker_cpu_seconds": cpu[0],
            f"{name}_worker_cpu_ms_per_cluster": cpu[0] / max(1, clusters) * 1000,
            f"{name}_simulator_cpu_seconds": cpu[1],
            f"{name}_postgres_cpu_seconds": cpu[2],
            f"{name}_worker_gc_collections": collected_garbage.collections,
            f"{name}_worker_gc_seconds": collected_garbage.seconds,
            f"{name}_worker_cpu_floor_ratio": worker_floor,
            f"{name}_machine_cpu_floor_ratio": machine_floor,
        }
    )
    failures = Counter(f"{r.reason}: {r.error}" for r in summary.results if not r.ok)
    for failure, count in failures.most_common(3):
        print(f"       {count} x {failure}")
    return ratio


async def measure(
    worker_dsn: str,
    kubeconfig: Path,
    pids: tuple[int, int | None],
    shoots: int,
    workers: int,
    latency: float,
    figures: dict[str, float],
) -> bool:
    async with worker_side(worker_dsn, kubeconfig, workers=workers, application_name="bench-fanout") as side:
        gardener = side.gardener
        timeout = 60.0
        credentials = CredentialCache(gardener, kind="admin", lifetime_seconds=3600, renew_before=renew_margin(timeout))
        # The worker's own bounds (its defaults): the fan-out is measured with every cap on.
        reader = GardenReader(
            gardener,
            credentials,
            sources=SOURCES,
            timeout_seconds=timeout,
            limits=DEFAULT_LIMITS,
            ledger_max_per_type=DEFAULT_LEDGER_MAX_PER_TYPE,
        )
        settings = InventorySettings(interval_seconds=900, workers=workers, timeout_seconds=timeout)
        loop = InventoryLoop(pool=side.pool, reader=reader, settings=settings, checks=side.checks)
        ready, clusters = await clusters_with_a_shoot(side, shoots)
        print(f"{ready} ready clusters, {len(clusters)} with a shoot taken; {workers} workers, {latency * 1000:g} ms")
        ratios = []
        for name in ("cold", "warm"):
            before_minted = sum(credentials.minted.values())
            sim_pid, postmaster = pids
            cpu, sim_cpu, pg_cpu = cpu_seconds(), process_cpu_seconds(sim_pid), server_cpu_seconds(postmaster)
            started = time.perf_counter()
            with GcTimer() as collected_garbage:
                summary = await loop.run_once(clusters)
            wall = time.perf_counter() - started
            minted = sum(credentials.minted.values()) - before_minted
            spent = (
                cpu_seconds() - cpu,
                process_cpu_seconds(sim_pid) - sim_cpu,
                server_cpu_seconds(postmaster) - pg_cpu,
            )
            ratios.append(report(name, summary, wall, spent, collected_garbage, minted, workers, latency, figures))
    print(f"target: ratio <= {TARGET_RATIO} (measured / ideal)")
    return all(r <= TARGET_RATIO for r in ratios)


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    return [
        Run("collector_fanout", "bench.collector_fanout", ("--shoots", str(2000 * p // 100), "--dsn", options.dsn), p)
        for p in options.percents
    ]


def read(results: Sequence[Result]) -> Reading:
    run, f = largest(results)
    note = size_note(run) or f"{f['warm_clusters']:,.0f} shoots, 64 workers, 50 ms per call"
    rows = [
        Row(
            "collector_fanout",
            f"one round, {name} credentials",
            f[f"{name}_seconds"],
            "s",
            "ideal: clusters x calls x latency / workers",
            f[f"{name}_ideal_seconds"],
            Target("<=", TARGET_RATIO),
            note,
        )
        for name in ("cold", "warm")
    ]
    rows += [
        Row(
            "collector_fanout",
            f"worker CPU per cluster, {name} credentials",
            f[f"{name}_worker_cpu_ms_per_cluster"],
            "ms",
            note=f"beside the ratio {f[f'{name}_ratio']:.2f}; every response bound on (INVENTORY_MAX_*, ledger cap)",
        )
        for name in ("cold", "warm")
        if f"{name}_worker_cpu_ms_per_cluster" in f
    ]
    points = []
    panel = "collector round, 64 workers, 50 ms per call (s)"
    for _, g in results:
        points += [
            Point("round, credentials cached", panel, g["warm_clusters"], g["warm_seconds"], "s", "shoots"),
            Point("ideal", panel, g["warm_clusters"], g["warm_ideal_seconds"], "s", "shoots"),
        ]
    return rows, points


BENCHMARK = Benchmark("collector_fanout", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.collector_fanout", description=__doc__.split("\n\n")[0])
    parser.add_argument("--shoots", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the simulator adds to every answer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--event-loop", choices=EVENT_LOOPS, default=DEFAULT_EVENT_LOOP, help="of the worker and the simulator"
    )
    parser.add_argument(
        "--gc-threshold",
        type=int,
        default=DEFAULT_GC_THRESHOLD,
        help=f"of the worker and the simulator, as GC_THRESHOLD (Python's own: {PYTHON_GC_THRESHOLD})",
    )
    parser.add_argument("--dsn", help="a superuser DSN of a server to use instead of a throwaway embedded one")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--serve-sim", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.gc_threshold < 1:
        parser.error(f"--gc-threshold {args.gc_threshold}: must be at least 1")
    if args.serve_sim is not None:
        serve_sim(args.serve_sim, args.shoots, args.seed, args.latency, args.event_loop, args.gc_threshold)
        return 0
    logging.basicConfig(level=logging.ERROR)
    fleet = bench_fleet(args.shoots, args.seed)
    with (
        postgres(args.dsn, name="fanout") as (superuser, postmaster),
        simulator_process(
            module_command(
                "bench.collector_fanout",
                "--shoots",
                str(args.shoots),
                "--seed",
                str(args.seed),
                "--latency",
                str(args.latency),
                "--event-loop",
                args.event_loop,
                "--gc-threshold",
                str(args.gc_threshold),
            ),
            name="fanout",
        ) as (kubeconfig, sim_pid),
    ):
        worker_dsn = worker_database(superuser, DATABASE, fleet)
        figures: dict[str, float] = {"workers": args.workers, "latency_seconds": args.latency}
        figures["uvloop"] = float(args.event_loop == "uvloop")
        figures["gc_threshold"] = args.gc_threshold
        set_gc_threshold(args.gc_threshold)  # as cluster-worker sets itself up; the fleet was built before
        ok = eventloop.run(
            measure(worker_dsn, kubeconfig, (sim_pid, postmaster), args.shoots, args.workers, args.latency, figures),
            event_loop=args.event_loop,
        )
    if args.json:
        args.json.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
