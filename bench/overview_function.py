"""Benchmark: `tenant.platform_overview()` against a plain count of live namespaces, at the scale fleet.

    .venv/bin/python -m bench.overview_function [--dsn SUPERUSER_DSN] [--rounds 15] [--seed 0] [--rebuild]

The target: at 10,000 organizations / 50,000 clusters / 250,000 projects / 1,000,000
namespaces, the function costs at most 3x `SELECT count(*) FROM tenant.namespaces WHERE deleted IS
NULL` measured in the same run. The queries run on the same server, on warm caches, in alternating
rounds (so load from anything else on the machine hits each alike); the figures are the median and
the minimum of each and their ratios. The function runs as `fun_platform_public_api`, exactly as the
public API calls it; the count runs as the superuser, the cheapest possible reader, twice: with the
server's defaults (PostgreSQL may run it as a parallel query, which a SQL function cannot use) and
with parallel workers off, which compares the two on the same CPU budget. On a busy machine the
parallel count draws three processes' share of the CPU against the function's one, so there the
serial ratio is the one that says what each query costs.

The scale database is slow to build, so it is kept: without `--dsn` an embedded server
with its data in `.fleet/bench-pg` is started for the run (and stopped after; the data stays), and the
database `fleet_bench_scale_s<seed>` is reused while its recorded seed and migrations still match.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from bench.common import kept_postgres
from bench.runs import Benchmark, Options, Reading, Result, Run, largest, size_note
from bench.table import Point, Row, Target
from db.migrate import apply_platform_model, apply_roles, migrate, schema_digest
from db.seed.write import analyze, write_parts
from fleet_description.generate import SIZES, FleetSize, iter_parts

TARGET_RATIO = 3.0
OVERVIEW = "SELECT name, alias, clusters, projects, namespaces FROM tenant.platform_overview()"
COUNT = "SELECT count(*) FROM tenant.namespaces WHERE deleted IS NULL"
SCALE = SIZES["scale"]


def _say(text: str) -> None:
    print(text, flush=True)


def _marker(seed: int) -> str:
    """What the cached database was built from: the seed, the platform model and every migration."""
    digest = schema_digest()[:16]
    return f"fleet bench scale fleet, seed {seed}, migrations {digest}"


def _with_database(dsn: str, name: str) -> str:
    return psycopg.conninfo.make_conninfo(dsn, dbname=name)


def _cached(admin: psycopg.Connection[Any], name: str, marker: str) -> bool:
    row = admin.execute(
        "SELECT pg_catalog.shobj_description(oid, 'pg_database') FROM pg_catalog.pg_database WHERE datname = %s",
        [name],
    ).fetchone()
    return row is not None and row[0] == marker


def scale_size(organizations: int = SCALE.organizations) -> FleetSize:
    """The scale fleet's shape with `organizations` organizations (the table's growth plot uses 1% and 10%)."""
    return SCALE if organizations == SCALE.organizations else replace(SCALE, organizations=organizations)


def prepare(dsn: str, seed: int, *, rebuild: bool, organizations: int = SCALE.organizations) -> str:
    """The DSN of a migrated database holding the scale fleet of `seed`, built only when needed."""
    size = scale_size(organizations)
    suffix = "" if size is SCALE else f"_o{organizations}"
    name = f"fleet_bench_scale_s{seed}{suffix}"
    marker = _marker(seed) + suffix
    with psycopg.connect(dsn, autocommit=True) as admin:
        apply_roles(admin)
        if not rebuild and _cached(admin, name, marker):
            _say(f"reusing database {name}")
            return _with_database(dsn, name)
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    target = _with_database(dsn, name)
    started = time.monotonic()
    apply_platform_model(target)
    migrate(target)
    with psycopg.connect(target) as conn:
        counts = write_parts(conn, iter_parts(size, seed))
    with psycopg.connect(target, autocommit=True) as conn:
        analyze(conn)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(name), sql.Literal(marker)))
    _say(
        f"built database {name} in {time.monotonic() - started:.0f} s: {counts.organizations} organizations, "
        f"{counts.clusters} clusters, {counts.projects} projects, {counts.namespaces} namespaces"
    )
    return target


def _timed(conn: psycopg.Connection[Any], query: str) -> tuple[float, list[tuple[Any, ...]]]:
    started = time.perf_counter()
    rows = conn.execute(query).fetchall()
    return time.perf_counter() - started, rows


OVERVIEW_LABEL = "platform_overview()"
COUNT_LABEL = "count(*)"
SERIAL_COUNT_LABEL = "count(*), serial"


def measure(target: str, rounds: int) -> dict[str, list[float]]:
    """Seconds per call of each query, over `rounds` alternating rounds after two warm-up calls each."""
    public = psycopg.conninfo.make_conninfo(target, user="fun_platform_public_api")
    times: dict[str, list[float]] = {OVERVIEW_LABEL: [], COUNT_LABEL: [], SERIAL_COUNT_LABEL: []}
    with (
        psycopg.connect(public, autocommit=True) as public_conn,
        psycopg.connect(target, autocommit=True) as su_conn,
        psycopg.connect(target, autocommit=True) as serial_conn,
    ):
        serial_conn.execute("SET max_parallel_workers_per_gather = 0")
        order = [(public_conn, OVERVIEW, OVERVIEW_LABEL), (su_conn, COUNT, COUNT_LABEL)]
        order.append((serial_conn, COUNT, SERIAL_COUNT_LABEL))
        for _ in range(2):
            for conn, query, _label in order:
                _timed(conn, query)
        _, rows = _timed(public_conn, OVERVIEW)
        _, count_rows = _timed(su_conn, COUNT)
        listed = sum(int(row[4]) for row in rows)
        _say(f"{len(rows)} listed organizations holding {listed} of {count_rows[0][0]} live namespaces")
        for i in range(rounds):
            # Rotate which query goes first, so none always follows another's cache effects.
            shift = i % len(order)
            for conn, query, label in order[shift:] + order[:shift]:
                seconds, _ = _timed(conn, query)
                times[label].append(seconds)
    return times


def report(times: dict[str, list[float]]) -> dict[str, float]:
    """Print the figures and the ratios against both counts; return the medians (ms) and ratios."""
    figures = {f"{label} ms": statistics.median(values) * 1000 for label, values in times.items()}
    for label, values in times.items():
        _say(
            f"{label:<22} median {statistics.median(values) * 1000:8.1f} ms   "
            f"min {min(values) * 1000:8.1f} ms   ({len(values)} rounds)"
        )
    overview = times[OVERVIEW_LABEL]
    for label in (COUNT_LABEL, SERIAL_COUNT_LABEL):
        ratio = statistics.median(overview) / statistics.median(times[label])
        ratio_min = min(overview) / min(times[label])
        verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
        _say(
            f"ratio {OVERVIEW_LABEL} / {label}: median {ratio:.2f}, min {ratio_min:.2f} "
            f"(target <= {TARGET_RATIO:g}: {verdict})"
        )
        figures[f"ratio / {label}"] = ratio
    return figures


# -- in the table of `python -m bench` --------------------------------------------------------------


def organizations(percent: int) -> int:
    """The organizations of `percent`% of the scale fleet."""
    return SCALE.organizations * percent // 100


def plan(options: Options) -> list[Run]:
    rounds = "5" if options.quick else "15"
    return [
        Run(
            "overview_function",
            "bench.overview_function",
            ("--organizations", str(organizations(p)), "--rounds", rounds, "--dsn", options.dsn),
            p,
        )
        for p in options.percents
    ]


def read(results: Sequence[Result]) -> Reading:
    run, f = largest(results)
    overview, serial = f["platform_overview() ms"], f["count(*), serial ms"]
    rows = [
        Row(
            "overview_function",
            "platform_overview()",
            overview,
            "ms",
            "count(*) live namespaces, serial",
            serial,
            Target("<=", TARGET_RATIO),
            size_note(run),
        ),
        Row(
            "overview_function",
            "platform_overview()",
            overview,
            "ms",
            "count(*) live namespaces, parallel",
            f["count(*) ms"],
            None,
            "a SQL function never runs in parallel: the serial count is the fair reference",
        ),
    ]
    points = []
    for r, g in results:
        clusters = organizations(r.percent) * SCALE.clusters_per_organization
        points += [
            Point("platform_overview()", "database: public overview (ms)", clusters, g["platform_overview() ms"], "ms"),
            Point(
                "count(*) namespaces, serial",
                "database: public overview (ms)",
                clusters,
                g["count(*), serial ms"],
                "ms",
            ),
        ]
    return rows, points


BENCHMARK = Benchmark("overview_function", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overview_function", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=None, help="superuser DSN of a server to use (default: an embedded one)")
    parser.add_argument("--rounds", type=int, default=15, help="measured rounds per query (default 15)")
    parser.add_argument("--seed", type=int, default=0, help="fleet seed (default 0)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the scale database even if cached")
    parser.add_argument("--organizations", type=int, default=SCALE.organizations, help="fleet size (default 10000)")
    parser.add_argument("--json", type=Path, help="also write the figures (medians in ms, ratios) to this file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or not 100 <= args.organizations <= SCALE.organizations:
        parser.error(f"--rounds must be at least 1 and --organizations in 100..{SCALE.organizations}")
    with kept_postgres(args.dsn, data_dir_name="bench-pg") as dsn:
        target = prepare(dsn, args.seed, rebuild=args.rebuild, organizations=args.organizations)
        figures = report(measure(target, args.rounds))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
