"""Benchmark: a reconcile pass with no change against just listing the shoots.

    .venv/bin/python -m bench.reconcile [--organizations 10610] [--rounds 3] [--dsn SUPERUSER_DSN]

Builds one fleet (about 53,000 clusters, 50,000 shoots: five clusters per organization, the
generator's mix of statuses and drift) into PostgreSQL (a throwaway embedded server unless `--dsn`
names one) and into fleet-sim, which runs in a process of its own so the figures are the worker's.
After one warm-up pass (which fills the mirror and opens the planted findings) it measures, side by
side and alternating, (a) `list_shoots` alone and (b) `ReconcileLoop.run_once()` with nothing
changed, and prints both, the ratio (target ≤ 3) and the finding rows written (target 0). Exits
non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import module_command, postgres, simulator_process, worker_database
from bench.runs import Benchmark, Options, Reading, Result, Run, largest, size_note
from bench.table import Point, Row, Target
from collector.kube.client import garden_client
from collector.kube.garden import RealGardener
from collector.kube.limits import ResponseLimits
from collector.reconcile.loop import ReconcileLoop
from common.database import make_pool
from common.labels import CLUSTER_ID_LABEL
from common.settings import DatabaseSettings
from fleet_description.generate import FleetSize, generate
from fleet_description.model import Fleet

DATABASE = "fleet_bench_reconcile"
TARGET_RATIO = 3.0
# Five clusters per organization; about 94% of the generator's clusters have a shoot, so 10,610
# organizations give about 53,000 clusters and 50,000 shoots.
DEFAULT_ORGANIZATIONS = 10_610

# The scale fleet's 50,000 shoots hold more values than GARDENER_MAX_LIST_VALUES' default admits
# (sized for the chart's memory limit): the benchmark raises it, as a landscape that large would.
SCALE_LIMITS = ResponseLimits(max_list_values=40_000_000)


def bench_fleet(organizations: int, seed: int) -> Fleet:
    """The benchmark's fleet: the generator's mix, one node pool, project and namespace per cluster."""
    return generate(FleetSize("bench", organizations, 5, 1, 1, 1, 0.3), seed)


def serve_sim(state_dir: Path, organizations: int, seed: int) -> None:
    """Run fleet-sim with the benchmark's fleet until terminated (the child process)."""
    from sim.runner import SimServer  # noqa: PLC0415 - only the child process serves the simulator

    async def serve() -> None:
        server = SimServer(bench_fleet(organizations, seed), state_dir=state_dir)
        await server.start()
        await asyncio.Event().wait()

    asyncio.run(serve())


async def counts(pool: Any) -> tuple[int, int]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT (SELECT count(*) FROM tenant.drift_findings), (SELECT count(*) FROM tenant.gardener_shoots)"
        )
        row = await cur.fetchone()
    return int(row[0]), int(row[1])


async def measure(worker_dsn: str, kubeconfig: Path, rounds: int, figures: dict[str, float] | None = None) -> bool:
    settings = DatabaseSettings(url=worker_dsn, pool_min=1, pool_max=2, statement_timeout_ms=120_000)
    pool = make_pool(settings, application_name="bench-reconcile")
    await pool.open(wait=True)
    gardener = RealGardener(await garden_client(kubeconfig, timeout_seconds=120, limits=SCALE_LIMITS))
    try:
        loop = ReconcileLoop(pool=pool, gardener=gardener, interval_seconds=300)
        started = time.perf_counter()
        warm = await loop.run_once()
        print(
            f"warm-up pass: {time.perf_counter() - started:.2f} s, {warm.shoots_listed} shoots listed, "
            f"{sum(warm.opened.values())} findings opened, "
            f"{sum(warm.gardener_ledger.get('created', {}).values())} cluster, pool and extension ledger rows created"
        )
        findings_before, shoots_before = await counts(pool)
        lists: list[float] = []
        passes: list[float] = []
        stores: list[float] = []
        changes = 0
        for round_no in range(rounds):
            # Alternate the order so neither side always runs on a warmer cache.
            for step in ("list", "pass") if round_no % 2 == 0 else ("pass", "list"):
                gc.collect()
                started = time.perf_counter()
                if step == "list":
                    listed = await gardener.list_shoots(label_selector=CLUSTER_ID_LABEL, page_size=500)
                    lists.append(time.perf_counter() - started)
                    del listed
                else:
                    summary = await loop.run_once()
                    passes.append(time.perf_counter() - started)
                    stores.append(summary.duration_seconds - summary.list_seconds)
                    changes += sum(summary.opened.values()) + sum(summary.resolved.values())
                    changes += summary.shoots_new + summary.shoots_gone
                    # The cluster, pool and extension rows: a pass with no change only moves last_seen.
                    changes += sum(
                        sum(summary.gardener_ledger.get(change, {}).values())
                        for change in ("created", "changed", "destroyed")
                    )
        findings_after, shoots_after = await counts(pool)
    finally:
        await gardener.close()
        await pool.close()
    list_s, pass_s = statistics.median(lists), statistics.median(passes)
    ratio = pass_s / list_s
    rows_written = findings_after - findings_before
    print(f"shoots mirrored: {shoots_after} (before the measured passes: {shoots_before})")
    print(f"open and resolved findings kept: {findings_after} rows")
    print(f"{'':<34}{'median':>9}{'runs':>40}")
    print(f"{'list_shoots alone':<34}{list_s:>8.2f}s{'  '.join(f'{x:.2f}' for x in lists):>40}")
    print(f"{'reconcile pass, no change':<34}{pass_s:>8.2f}s{'  '.join(f'{x:.2f}' for x in passes):>40}")
    store_runs = "  ".join(f"{x:.2f}" for x in stores)
    print(f"{'  of which the transaction':<34}{statistics.median(stores):>8.2f}s{store_runs:>40}")
    print(f"ratio pass / list: {ratio:.2f} (target <= {TARGET_RATIO})")
    print(
        f"finding rows written by the measured passes: {rows_written} (target 0); opened/resolved/new/gone: {changes}"
    )
    if figures is not None:  # for `--json` (the benchmark table of `python -m bench`)
        figures.update(
            list_seconds=list_s, pass_seconds=pass_s, ratio=ratio, rows_written=rows_written, changes=changes
        )
        figures.update(shoots=shoots_after, store_seconds=statistics.median(stores))
    return ratio <= TARGET_RATIO and rows_written == 0 and changes == 0


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    rounds = "2" if options.quick else "3"
    return [
        Run(
            "reconcile",
            "bench.reconcile",
            (
                "--organizations",
                str(DEFAULT_ORGANIZATIONS * p // 100),
                "--rounds",
                rounds,
                "--dsn",
                options.dsn,
            ),
            p,
        )
        for p in options.percents
    ]


def read(results: Sequence[Result]) -> Reading:
    run, f = largest(results)
    shoots = f"{f['shoots']:,.0f} shoots, {f['clusters']:,.0f} clusters"
    rows = [
        Row(
            "reconcile",
            "pass with no change",
            f["pass_seconds"],
            "s",
            "list_shoots alone",
            f["list_seconds"],
            Target("<=", TARGET_RATIO),
            size_note(run) or shoots,
        ),
        Row(
            "reconcile",
            "finding rows written by passes with no change",
            f["rows_written"],
            "rows",
            target=Target("==", 0),
        ),
    ]
    points = []
    for _, g in results:
        points += [
            Point("reconcile pass, no change", "reconcile (s)", g["shoots"], g["pass_seconds"], "s", "shoots"),
            Point("list_shoots alone", "reconcile (s)", g["shoots"], g["list_seconds"], "s", "shoots"),
        ]
    return rows, points


BENCHMARK = Benchmark("reconcile", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reconcile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--organizations", type=int, default=DEFAULT_ORGANIZATIONS, help="five clusters each")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="measured list/pass pairs (median reported)")
    parser.add_argument("--dsn", help="a superuser DSN of a server to use instead of a throwaway embedded one")
    parser.add_argument("--serve-sim", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help="also write the figures (seconds, ratio, rows) to this file")
    args = parser.parse_args(argv)
    if args.serve_sim is not None:
        serve_sim(args.serve_sim, args.organizations, args.seed)
        return 0
    if args.rounds < 1 or args.organizations < 2:
        parser.error("--rounds must be at least 1 and --organizations at least 2")
    logging.basicConfig(level=logging.WARNING)
    started = time.perf_counter()
    fleet = bench_fleet(args.organizations, args.seed)
    clusters = len(fleet.clusters)
    print(f"fleet: {clusters} clusters, {len(fleet.shoots)} shoots ({time.perf_counter() - started:.1f} s)")
    sim = module_command("bench.reconcile", "--organizations", str(args.organizations), "--seed", str(args.seed))
    with (
        simulator_process(sim, name="reconcile") as (kubeconfig, _),
        postgres(args.dsn, name="reconcile") as (superuser_dsn, _),
    ):
        started = time.perf_counter()
        worker_dsn = worker_database(superuser_dsn, DATABASE, fleet)
        del fleet
        gc.collect()
        print(f"database written ({time.perf_counter() - started:.1f} s)")
        figures: dict[str, float] = {"clusters": clusters}
        ok = asyncio.run(measure(worker_dsn, kubeconfig, args.rounds, figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
