"""`python -m bench` (`make bench`): every benchmark, one table, its JSON and a growth plot.

    python -m bench [--only NAME ... [--publish]] [--quick] [--dsn SUPERUSER_DSN] [--rebuild] [--results DIR] [--list]

One PostgreSQL (embedded, data kept in `.fleet/bench-pg` between runs, unless `--dsn` names a
server) serves every benchmark, so the scale fleet (10,000 organizations, 50,000 clusters, 1,000,000
namespaces) is built once and reused while its seed and the migrations are unchanged
(bench.overview_function.prepare; fleet_api copies it).
Each benchmark runs as a process of its own (`python -m bench.<name> ... --json FILE`), one after
the other so none measures another's load; its own report goes to `<results>/logs/<run>.log`.
The costs that grow with the fleet run at 1%, 10% and 100% of the scale fleet (`--quick`: 1% and
10%, fewer rounds, no 150,000-pod shoot) for the growth plot.

Writes `<results>/bench-<time>.json` and `latest.json` (the table, the growth points, the run's
duration, the machine and its load), and `growth.png`; prints the table. A full run (neither
`--quick` nor `--only`) also publishes: `bench/results.json`, the page `docs/results.md` rendered
from it (bench/results_page.py) and `docs/results-growth.png`, the only place the repository keeps
measured figures. `--only NAME ... --publish` replaces just those benchmarks' rows and growth points
in the published figures, and the page lists each run the figures come from (a benchmark's figures
are always from one run of it, side by side). Exits 1 when a benchmark could not run; a missed
target is reported in the table, not as a failure of the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import plot, results_page, suite
from bench.common import kept_postgres
from bench.runs import Benchmark, Options, Result, Run
from bench.table import Point, Row, render, rows_from_json, to_json

PROJECT = Path(__file__).resolve().parents[1]
RESULTS = PROJECT / "bench" / "results"


def say(text: str) -> None:
    print(text, flush=True)


def run_one(run: Run, logs: Path, rebuild: bool) -> tuple[dict[str, Any] | None, float, str]:
    """Run one benchmark process; its figures (None if it failed), wall seconds and what went wrong."""
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{run.label.replace('@', '-').replace('%', 'pct')}.log"
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        out = Path(tmp) / "figures.json"
        args = [sys.executable, "-m", run.module, *run.args, "--json", str(out)]
        if rebuild and "--dsn" in run.args and run.module in ("bench.overview_function", "bench.fleet_api"):
            args.append("--rebuild")
        started = time.monotonic()
        with log.open("w") as output:
            try:
                completed = subprocess.run(
                    args, cwd=PROJECT, stdout=output, stderr=subprocess.STDOUT, timeout=run.timeout_seconds, check=False
                )
                problem = "" if completed.returncode in (0, 1) else f"exit code {completed.returncode}"
            except subprocess.TimeoutExpired:
                problem = f"still running after {run.timeout_seconds:.0f} s (stopped)"
        seconds = time.monotonic() - started
        if not out.exists():
            return None, seconds, problem or f"wrote no figures; see {log}"
        data = json.loads(out.read_text())
    # A benchmark exits 1 when it misses a target; that is a result, reported in the table.
    return ({"figures": data} if isinstance(data, list) else data), seconds, problem


def run_all(
    benchmarks: Sequence[Benchmark], options: Options, results: Path, rebuild: bool
) -> tuple[list[Row], list[Point], list[str], dict[str, float]]:
    rows: list[Row] = []
    points: list[Point] = []
    failures: list[str] = []
    durations: dict[str, float] = {}
    for benchmark in benchmarks:
        done: list[Result] = []
        for run in benchmark.plan(options):
            say(f"running {run.label} ...")
            figures, seconds, problem = run_one(run, results / "logs", rebuild)
            durations[run.label] = round(seconds, 1)
            say(f"  {run.label}: {seconds:.0f} s" + (f" ({problem})" if problem else ""))
            if figures is None:
                failures.append(f"{run.label}: {problem}")
                continue
            done.append((run, figures))
        if done:
            try:
                more_rows, more_points = benchmark.read(done)
            except KeyError as missing:
                failures.append(f"{benchmark.name}: its figures lack {missing}")
                continue
            rows += more_rows
            points += [replace(point, benchmark=benchmark.name) for point in more_points]
    return rows, points, failures, durations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=suite.NAMES, metavar="NAME", help="run only these benchmarks")
    parser.add_argument("--quick", action="store_true", help="1%% and 10%% sizes, fewer rounds, no huge shoot")
    parser.add_argument("--dsn", help="superuser DSN of a PostgreSQL to use (default: embedded, .fleet/bench-pg)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached scale databases")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where JSON, plot and logs go")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and the runs they make, then exit")
    parser.add_argument(
        "--publish", action="store_true", help="with --only: replace those benchmarks' figures in the published ones"
    )
    args = parser.parse_args(argv)
    if args.publish and (args.quick or not args.only):
        parser.error("--publish goes with --only and without --quick (a full run always publishes)")
    chosen = [b for b in suite.BENCHMARKS if not args.only or b.name in args.only]
    if args.list:
        for benchmark in chosen:
            for run in benchmark.plan(Options(dsn="DSN", quick=args.quick)):
                say(f"{run.label:<24} python -m {run.module} {' '.join(run.args)}")
        return 0
    started, load_before = time.monotonic(), os.getloadavg()
    began = datetime.now(UTC)
    with kept_postgres(args.dsn, data_dir_name="bench-pg") as dsn:
        rows, points, failures, durations = run_all(chosen, Options(dsn, args.quick), args.results, args.rebuild)
    seconds = time.monotonic() - started
    say("")
    say(render(rows))
    growth = plot.describe(points)
    if growth:
        say("\ngrowth with fleet size (log-log slope from the smallest to the largest size; 1 = linear):")
        for line in growth:
            say(f"  {line}")
    meta = {
        "started": began.isoformat(timespec="seconds"),
        "seconds": round(seconds),
        "quick": args.quick,
        "only": args.only or list(suite.NAMES),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "run_seconds": durations,
        "failures": failures,
        "machine": results_page.this_machine(),
    }
    args.results.mkdir(parents=True, exist_ok=True)
    document = to_json(rows, points, meta)
    stamp = began.strftime("%Y%m%dT%H%M%SZ")
    (args.results / f"bench-{stamp}.json").write_text(document)
    (args.results / "latest.json").write_text(document)
    picture = args.results / "growth.png"
    plot.draw(points, picture, f"fleet inventory benchmarks, {began:%Y-%m-%d %H:%M} UTC")
    say(f"\n{len(rows)} figures in {seconds / 60:.1f} min; written to {args.results}/latest.json and {picture.name}")
    if failures:
        say("some benchmarks could not run: docs/results.md and bench/results.json are left as they are")
    elif args.publish:
        merged = results_page.merge(results_page.RESULTS_JSON.read_text(), document, suite.NAMES)
        _, all_points = rows_from_json(merged)
        plot.draw(all_points, results_page.GROWTH_PICTURE, f"fleet inventory benchmarks, {began:%Y-%m-%d %H:%M} UTC")
        results_page.publish(merged)
        say(f"published {', '.join(args.only)} into {results_page.RESULTS_JSON.name} and the page: commit them")
    elif args.quick or args.only:
        say("a partial run: docs/results.md and bench/results.json are left as they are (--publish to merge)")
    else:
        plot.draw(points, results_page.GROWTH_PICTURE, f"fleet inventory benchmarks, {began:%Y-%m-%d %H:%M} UTC")
        results_page.publish(document)
        say(f"published {results_page.RESULTS_JSON.name} and {results_page.RESULTS_PAGE.name}: commit them")
    for failure in failures:
        say(f"FAILED TO RUN: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
