"""Benchmark: the two collection sources side by side, on one 2,000-shoot fleet, 50 ms per call, 64 workers.

    .venv/bin/python -m bench.collector_sources [--shoots 2000] [--workers 64] [--latency 0.05] [--dsn DSN]

One fleet-sim process (the fan-out benchmark's fleet and profile, the latency added to every answer
of the garden, of every shoot's API server and of every shoot's Prometheus) and one database. The
same clusters are collected four times, each round timed with the CPU of the worker, the simulator
and PostgreSQL: the API-server source (INVENTORY_SOURCE=apiserver) cold (every credential minted)
and warm (credentials cached), then the Prometheus source (INVENTORY_SOURCE=prometheus, split as the
worker's default: the nodes from fleet-sim's stock Gardener shoot Prometheus, the rest from the API
server with viewerkubeconfig) cold (every monitoring secret read and viewer credential minted) and
warm (both cached). Per source it reports the round against its
ideal (clusters x requests per cluster x latency / workers), the worker's CPU per cluster, the
requests and body bytes per cluster, and the credentials minted (and secrets read) per round. Then
it compares what the two stored: every cluster, node pool and namespace snapshot number, printing
each difference. Exits non-zero when the two disagree in any number.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import psycopg

from bench.collector_fanout import (
    TARGET_RATIO,
    GcTimer,
    bench_fleet,
    cpu_seconds,
    process_cpu_seconds,
    server_cpu_seconds,
)
from bench.common import module_command, postgres, simulator_process, worker_database
from bench.runs import Benchmark, Options, Reading, Result, Run, largest, size_note
from bench.table import Row, Target
from bench.worker_side import clusters_with_a_shoot, worker_side
from collector.inventory.garden_reader import GardenReader
from collector.inventory.loop import InventoryLoop
from collector.inventory.monitoring_reader import MonitoringReader
from collector.inventory.reading import ClusterReader, ClusterRow
from collector.inventory.results import RoundSummary
from collector.inventory.sources import SOURCES
from collector.inventory.split import Split
from collector.kube.credential_cache import CredentialCache, renew_margin
from collector.kube.limits import DEFAULT_LIMITS
from collector.prometheus.address import AddressPolicy
from collector.prometheus.http import tls_context
from collector.prometheus.resolve import MonitoringResolver
from collector.settings import InventorySettings
from common import eventloop
from common.eventloop import DEFAULT_EVENT_LOOP
from common.garbage_collection import DEFAULT_GC_THRESHOLD, set_gc_threshold
from sim.control.statedir import CA_FILE

DATABASE = "fleet_bench_sources"
SOURCE_NAMES = ("apiserver", "prometheus")
Snapshots = dict[str, dict[str, tuple[Any, ...]]]


def snapshots(admin_dsn: str) -> Snapshots:
    """Every snapshot number stored (not when, not from where), by table and row id."""
    with psycopg.connect(admin_dsn) as conn:
        clusters = conn.execute(
            "SELECT cluster_id::text, nodes, ready_nodes, pods, allocatable_pods, cpu_allocatable_millicores,"
            " memory_allocatable_bytes, last_error IS NOT NULL FROM tenant.cluster_snapshots"
        ).fetchall()
        pools = conn.execute("SELECT node_pool_id::text, nodes, ready_nodes FROM tenant.node_pool_snapshots").fetchall()
        namespaces = conn.execute("SELECT namespace_id::text, pods FROM tenant.namespace_snapshots").fetchall()
    return {
        "cluster": {r[0]: tuple(r[1:]) for r in clusters},
        "node pool": {r[0]: tuple(r[1:]) for r in pools},
        "namespace": {r[0]: tuple(r[1:]) for r in namespaces},
    }


def differences(a: Snapshots, b: Snapshots) -> list[str]:
    out: list[str] = []
    for table, rows_a in a.items():
        rows_b = b[table]
        for key in sorted(set(rows_a) | set(rows_b)):
            if rows_a.get(key) != rows_b.get(key):
                out.append(f"{table} {key}: apiserver {rows_a.get(key)} prometheus {rows_b.get(key)}")
    return out


def report(
    name: str,
    summary: RoundSummary,
    wall: float,
    cpu: tuple[float, float, float],
    garbage: GcTimer,
    extra_requests: int,
    minted: int,
    secrets: int,
    workers: int,
    latency: float,
    figures: dict[str, float],
) -> float:
    collected = [r.reading for r in summary.results if r.ok and r.reading is not None]
    clusters = len(summary.results)
    requests = (sum(r.requests for r in collected) + extra_requests) / max(1, len(collected))
    read = sum(r.bytes_read for r in collected) / max(1, len(collected))
    ideal = clusters * requests * latency / workers
    ratio = wall / ideal
    cpu_ms = cpu[0] / max(1, clusters) * 1000
    print(
        f"{name:<16} {clusters:>5} clusters {summary.failed:>3} failed  ideal {ideal:6.2f} s  measured {wall:6.2f} s"
        f"  ratio {ratio:4.2f}\n"
        f"                 worker CPU {cpu[0]:6.2f} s ({cpu_ms:.1f} ms per cluster), simulator {cpu[1]:6.2f} s,"
        f" PostgreSQL {cpu[2]:6.2f} s; GC {garbage.collections} collections {garbage.seconds:.2f} s\n"
        f"                 {requests:.2f} requests and {read / 1024:.1f} KiB read per cluster;"
        f" {minted} credentials minted, {secrets} monitoring secrets read this round"
    )
    for failure, count in Counter(f"{r.reason}: {r.error}" for r in summary.results if not r.ok).most_common(3):
        print(f"                 {count} x {failure}")
    figures.update(
        {
            f"{name}_clusters": clusters,
            f"{name}_failed": summary.failed,
            f"{name}_seconds": wall,
            f"{name}_ideal_seconds": ideal,
            f"{name}_ratio": ratio,
            f"{name}_worker_cpu_ms_per_cluster": cpu_ms,
            f"{name}_simulator_cpu_seconds": cpu[1],
            f"{name}_postgres_cpu_seconds": cpu[2],
            f"{name}_requests_per_cluster": requests,
            f"{name}_kib_read_per_cluster": read / 1024,
            f"{name}_credentials_minted": minted,
            f"{name}_secrets_read": secrets,
        }
    )
    return ratio


async def measure(
    worker_dsn: str,
    admin_dsn: str,
    kubeconfig: Path,
    pids: tuple[int, int | None],
    shoots: int,
    workers: int,
    latency: float,
    figures: dict[str, float],
) -> bool:
    async with worker_side(worker_dsn, kubeconfig, workers=workers, application_name="bench-sources") as side:
        gardener = side.gardener
        timeout = 60.0
        settings = InventorySettings(interval_seconds=900, workers=workers, timeout_seconds=timeout)
        credentials = CredentialCache(gardener, kind="admin", lifetime_seconds=3600, renew_before=renew_margin(timeout))
        viewers = CredentialCache(gardener, kind="viewer", lifetime_seconds=3600, renew_before=renew_margin(timeout))
        # fleet-sim's Prometheus is on loopback: opted in as PROMETHEUS_ALLOW_LOOPBACK does.
        resolver = MonitoringResolver(gardener, ttl_seconds=3600, policy=AddressPolicy(allow_loopback=True))
        split = Split()  # the worker's default: the nodes from the Prometheus, the rest with viewerkubeconfig
        readers: dict[str, ClusterReader] = {
            # Both with the worker's own bounds (its defaults).
            "apiserver": GardenReader(
                gardener, credentials, sources=SOURCES, timeout_seconds=timeout, limits=DEFAULT_LIMITS
            ),
            "prometheus": MonitoringReader(
                gardener,
                resolver,
                sources=SOURCES,
                timeout_seconds=timeout,
                context=tls_context(kubeconfig.parent / CA_FILE),
                split=split,
                apiserver=GardenReader(
                    gardener,
                    viewers,
                    sources=split.apiserver_sources(SOURCES),
                    timeout_seconds=timeout,
                    limits=DEFAULT_LIMITS,
                    nodes=False,
                ),
                limits=DEFAULT_LIMITS,
            ),
        }
        minting = {"apiserver": credentials, "prometheus": viewers}
        stored: dict[str, Snapshots] = {}
        ratios: list[float] = []
        _, clusters = await clusters_with_a_shoot(side, shoots)
        print(f"{len(clusters)} clusters with a shoot; {workers} workers, {latency * 1000:g} ms per call")
        for source in SOURCE_NAMES:
            loop = InventoryLoop(pool=side.pool, reader=readers[source], settings=settings, checks=side.checks)
            for phase in ("cold", "warm"):
                ratios.append(
                    await one_round(
                        f"{source}_{phase}", loop, clusters, minting[source], resolver, pids, workers, latency, figures
                    )
                )
            stored[source] = snapshots(admin_dsn)
    found = differences(stored["apiserver"], stored["prometheus"])
    figures["differences"] = len(found)
    figures["compared_numbers"] = sum(
        len(rows) * len(next(iter(rows.values()), ())) for rows in stored["apiserver"].values()
    )
    print(f"agreement: {len(found)} differences in {figures['compared_numbers']:.0f} stored numbers")
    for line in found[:20]:
        print(f"  {line}")
    print(f"target: ratio <= {TARGET_RATIO} for each round (reported), no difference (required)")
    return not found


async def one_round(
    name: str,
    loop: InventoryLoop,
    clusters: Sequence[ClusterRow],
    credentials: CredentialCache,
    resolver: MonitoringResolver,
    pids: tuple[int, int | None],
    workers: int,
    latency: float,
    figures: dict[str, float],
) -> float:
    sim_pid, postmaster = pids
    minted, secrets = sum(credentials.minted.values()), resolver.reads
    cpu, sim_cpu, pg_cpu = cpu_seconds(), process_cpu_seconds(sim_pid), server_cpu_seconds(postmaster)
    started = time.perf_counter()
    with GcTimer() as garbage:
        summary = await loop.run_once(list(clusters))
    wall = time.perf_counter() - started
    spent = (cpu_seconds() - cpu, process_cpu_seconds(sim_pid) - sim_cpu, server_cpu_seconds(postmaster) - pg_cpu)
    minted = sum(credentials.minted.values()) - minted
    secrets = resolver.reads - secrets
    return report(name, summary, wall, spent, garbage, minted + secrets, minted, secrets, workers, latency, figures)


# -- in the table of `python -m bench` --------------------------------------------------------------


SOURCE_LABELS = {"apiserver": "API-server source", "prometheus": "Prometheus source"}


def plan(options: Options) -> list[Run]:
    # One fleet for both sources; the quick mode takes a tenth of it.
    percent = 10 if options.quick else 100
    shoots = 2000 * percent // 100
    return [
        Run(
            "collector_sources",
            "bench.collector_sources",
            ("--shoots", str(shoots), "--dsn", options.dsn),
            percent,
            timeout_seconds=1800.0,
        )
    ]


def read(results: Sequence[Result]) -> Reading:
    run, f = largest(results)
    note = size_note(run) or f"{f['apiserver_warm_clusters']:,.0f} shoots, 64 workers, 50 ms per call, one run"
    rows: list[Row] = []
    for source, label in SOURCE_LABELS.items():
        warm_label = "credentials cached" if source == "apiserver" else "secrets and viewer credentials cached"
        for phase, cached in (("cold", "nothing cached"), ("warm", warm_label)):
            key = f"{source}_{phase}"
            rows.append(
                Row(
                    "collector_sources",
                    f"one round, {label}, {cached}",
                    f[f"{key}_seconds"],
                    "s",
                    "ideal: clusters x requests x latency / workers",
                    f[f"{key}_ideal_seconds"],
                    Target("<=", TARGET_RATIO),
                    note,
                )
            )
        warm, cold = f"{source}_warm", f"{source}_cold"
        rows += [
            Row("collector_sources", f"worker CPU per cluster, {label}", f[f"{warm}_worker_cpu_ms_per_cluster"], "ms"),
            Row(
                "collector_sources",
                f"requests per cluster, {label}",
                f[f"{warm}_requests_per_cluster"],
                "requests",
                note=f"{f[f'{cold}_requests_per_cluster']:.2f} with nothing cached",
            ),
            Row(
                "collector_sources",
                f"bytes read per cluster, {label}",
                f[f"{warm}_kib_read_per_cluster"],
                "KiB",
                note="body bytes of the answers the reading used",
            ),
            Row(
                "collector_sources",
                f"shoot credentials minted per round, {label}",
                f[f"{cold}_credentials_minted"],
                "credentials",
                note=f"nothing cached; {f[f'{warm}_credentials_minted']:.0f} once cached; "
                f"monitoring secrets read: {f[f'{cold}_secrets_read']:.0f} and {f[f'{warm}_secrets_read']:.0f}",
            ),
        ]
    rows.append(
        Row(
            "collector_sources",
            "numbers the two sources stored differently",
            f["differences"],
            "numbers",
            target=Target("==", 0),
            note=f"of {f['compared_numbers']:,.0f} cluster, node pool and namespace numbers of the same world",
        )
    )
    return rows, []


BENCHMARK = Benchmark("collector_sources", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.collector_sources", description=__doc__.split("\n\n")[0])
    parser.add_argument("--shoots", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the simulator adds to every answer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dsn", help="a superuser DSN of a server to use instead of a throwaway embedded one")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    fleet = bench_fleet(args.shoots, args.seed)
    with (
        postgres(args.dsn, name="sources") as (superuser, postmaster),
        # The fan-out benchmark's simulator: the same fleet and content profile.
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
                DEFAULT_EVENT_LOOP,
                "--gc-threshold",
                str(DEFAULT_GC_THRESHOLD),
            ),
            name="sources",
        ) as (kubeconfig, sim_pid),
    ):
        worker_dsn = worker_database(superuser, DATABASE, fleet)
        admin_dsn = psycopg.conninfo.make_conninfo(superuser, dbname=DATABASE)
        figures: dict[str, float] = {"workers": args.workers, "latency_seconds": args.latency, "shoots": args.shoots}
        set_gc_threshold(DEFAULT_GC_THRESHOLD)
        ok = eventloop.run(
            measure(
                worker_dsn,
                admin_dsn,
                kubeconfig,
                (sim_pid, postmaster),
                args.shoots,
                args.workers,
                args.latency,
                figures,
            ),
            event_loop=DEFAULT_EVENT_LOOP,
        )
    if args.json:
        args.json.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
