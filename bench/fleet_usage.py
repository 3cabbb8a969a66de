"""Benchmark: ListUsage over a ledger of realistic size, against ListClusters page 1 in the same run.

    .venv/bin/python -m bench.fleet_usage [--dsn SUPERUSER_DSN] [--rounds 7] [--churn 2] [--rebuild]
                                          [--organizations 10000] [--build-only] [--json FILE]

On a copy of bench.fleet_api's world (the scale fleet: 10,000 organizations, 50,000 clusters), the
ledger is replaced by three months of autoscaling churn on every cluster (bench/fleet_usage_ledger.sql:
19 + 92 x churn rows per cluster, about 10 million at the default churn of 2 autoscaled nodes a day),
written in SQL with generate_series and kept between runs (`fleet_bench_usage_s<seed>_c<churn>`,
rebuilt when the migrations, the world or the ledger's SQL change). The real service runs in this
process on loopback and is called over gRPC; each figure is the server-side `duration_ms` the request
stack logs, the median over rotating rounds. Targets, ratios of medians:

- usage for the last full calendar month of the history, every organization, by organization
  (page 1 of 100 groups, one step): at most 3x ListClusters page 1;
- one organization's usage for that month by cluster (every group, one step): at most 2x.

Also printed: the ledger's rows, rows per cluster per month, its size (table and indexes) and bytes per
row, and one organization's month at daily steps, for context. `--organizations 100` or `1000` runs on
1% or 10% of the scale fleet (built in seconds instead of the quarter of an hour the scale world and its
ledger take): a page's cost depends on its organizations' rows, not on the fleet's size.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import secrets
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import grpc
import psycopg
from fundament.fleet.v1 import fleet_pb2
from fundament.fleet.v1.fleet_pb2_grpc import FleetServiceStub
from psycopg import sql

from bench.common import kept_postgres
from bench.fleet_api import _settings, measured, prepare_world, staff_caller
from bench.overview_function import SCALE
from bench.runs import Benchmark, Options, Reading, Result, Run, largest
from bench.table import Row, Target
from common.database import load_queries
from db.migrate import schema_digest
from services.fleet.app import running_fleet_api

LEDGER_FILE = Path(__file__).with_name("fleet_usage_ledger.sql")
LEDGER = load_queries(LEDGER_FILE)
ALL_TARGET = 3.0
ONE_TARGET = 2.0
DEFAULT_CHURN = 2
PAGE1 = "ListClusters page 1"
ALL = "ListUsage month, every organization, by organization, page 1"
ONE = "ListUsage month, one organization, by cluster"
DAILY = "ListUsage month, one organization, by cluster, daily steps"


def _say(text: str) -> None:
    print(text, flush=True)


def _marker(seed: int, churn: int) -> str:
    ledger = hashlib.sha256(LEDGER_FILE.read_bytes()).hexdigest()[:16]
    return f"fleet_usage seed={seed} churn={churn} schema={schema_digest()[:16]} ledger={ledger}"


def prepare_ledger(dsn: str, seed: int, churn: int, *, rebuild: bool, organizations: int = SCALE.organizations) -> str:
    """The DSN of a copy of the admin world with the churned ledger, built only when needed."""
    world = prepare_world(dsn, seed, rebuild=rebuild, organizations=organizations)
    world_name = psycopg.conninfo.conninfo_to_dict(world)["dbname"]
    suffix = "" if organizations == SCALE.organizations else f"_o{organizations}"
    name = f"fleet_bench_usage_s{seed}_c{churn}{suffix}"
    marker = _marker(seed, churn) + suffix
    target = psycopg.conninfo.make_conninfo(dsn, dbname=name)
    with psycopg.connect(dsn, autocommit=True) as admin:
        row = admin.execute(
            "SELECT pg_catalog.shobj_description(oid, 'pg_database') FROM pg_catalog.pg_database WHERE datname = %s",
            [name],
        ).fetchone()
        if not rebuild and row is not None and row[0] == marker:
            _say(f"reusing database {name}")
            return target
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(str(world_name)))
        )
    started = time.monotonic()
    params = {"built": datetime.now(UTC), "churn": churn, "seed": (seed % 1000) / 1000}
    with psycopg.connect(target) as conn:
        for block in ("begin", "seed", "empty", "long_lived", "base_nodes", "churn", "end"):
            conn.execute(LEDGER[block].sql, {k: v for k, v in params.items() if f"%({k})s" in LEDGER[block].sql})
            _say(f"ledger: {block} done after {time.monotonic() - started:.0f} s")
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) tenant.infrastructure_resources")
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(name), sql.Literal(marker)))
    _say(f"wrote the churned ledger into {name} in {time.monotonic() - started:.0f} s")
    return target


@dataclass(frozen=True)
class LedgerFacts:
    rows: int
    clusters: int
    bytes: int
    built: datetime
    organization_id: str


def ledger_facts(target: str) -> LedgerFacts:
    with psycopg.connect(target) as conn:
        rows = conn.execute("SELECT count(*) FROM tenant.infrastructure_resources").fetchone()
        clusters = conn.execute("SELECT count(DISTINCT cluster_id) FROM tenant.infrastructure_resources").fetchone()
        size = conn.execute("SELECT pg_total_relation_size('tenant.infrastructure_resources')").fetchone()
        # The history ends at the build: the latest `created` of one cluster's rows (through the index).
        sample = conn.execute(
            "SELECT c.organization_id::text, (SELECT max(r.created) FROM tenant.infrastructure_resources r"
            " WHERE r.cluster_id = c.id AND r.resource_type = 'kubernetes.node')"
            " FROM tenant.clusters c JOIN tenant.organizations o ON o.id = c.organization_id"
            " WHERE o.deleted IS NULL AND c.deleted IS NULL AND o.id <> tenant.system_organization_id()"
            " ORDER BY o.name LIMIT 1"
        ).fetchone()
    assert rows is not None and clusters is not None and size is not None and sample is not None
    return LedgerFacts(int(rows[0]), int(clusters[0]), int(size[0]), sample[1], str(sample[0]))


def last_full_month(built: datetime) -> tuple[datetime, datetime]:
    end = built.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    start = end.replace(year=end.year - 1, month=12) if end.month == 1 else end.replace(month=end.month - 1)
    return start, end


async def run(target: str, rounds: int) -> dict[str, float]:
    facts = ledger_facts(target)
    months = 92 / 30
    per_cluster_month = facts.rows / facts.clusters / months
    _say(
        f"ledger: {facts.rows:,} rows on {facts.clusters:,} clusters, {per_cluster_month:.0f} rows per cluster"
        f" per month, {facts.bytes / 2**30:.2f} GiB with indexes ({facts.bytes / facts.rows:.0f} bytes per row)"
    )
    start, end = last_full_month(facts.built)
    _say(f"month: [{start.isoformat()}, {end.isoformat()}), one organization: {facts.organization_id}")
    secret = secrets.token_urlsafe(48)
    settings = _settings(target, secret)
    rules, metadata, log = staff_caller(secret)

    def usage(**fields: object) -> fleet_pb2.ListUsageRequest:
        message = fleet_pb2.ListUsageRequest(**fields)  # type: ignore[arg-type]
        message.start.FromDatetime(start)
        message.end.FromDatetime(end)
        return message

    async with running_fleet_api(settings, rules=rules) as served:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{served.server.grpc_port}")
        stub = FleetServiceStub(channel)
        try:
            requests: dict[str, tuple[Callable[..., Awaitable[object]], object]] = {
                PAGE1: (stub.ListClusters, fleet_pb2.ListClustersRequest(page_size=100)),
                ALL: (stub.ListUsage, usage(page_size=100, aggregate=fleet_pb2.USAGE_AGGREGATE_ORGANIZATION)),
                ONE: (
                    stub.ListUsage,
                    usage(
                        page_size=500,
                        aggregate=fleet_pb2.USAGE_AGGREGATE_CLUSTER,
                        organization_id=facts.organization_id,
                    ),
                ),
                DAILY: (
                    stub.ListUsage,
                    usage(
                        page_size=500,
                        step_seconds=86400,
                        aggregate=fleet_pb2.USAGE_AGGREGATE_CLUSTER,
                        organization_id=facts.organization_id,
                    ),
                ),
            }
            answer = await stub.ListUsage(requests[ONE][1], metadata=metadata)
            _say(f"one organization by cluster: {len(answer.groups)} groups")

            def call(method: Callable[..., Awaitable[object]], message: object) -> Callable[[], Awaitable[float]]:
                return lambda: measured(log, method(message, metadata=metadata))

            calls = {name: call(method, message) for name, (method, message) in requests.items()}
            times: dict[str, list[float]] = {name: [] for name in calls}
            for each in calls.values():  # warm-up
                await each()
            labels = list(calls)
            for i in range(rounds):
                for label in labels[i % len(labels) :] + labels[: i % len(labels)]:
                    times[label].append(await calls[label]())
        finally:
            await channel.close()
    figures = {name: statistics.median(values) for name, values in times.items()}
    base = figures[PAGE1]
    for name, value in figures.items():
        _say(f"{name:<62} {value:8.2f} ms  x{value / base:5.2f}")
    for name, target_ratio in ((ALL, ALL_TARGET), (ONE, ONE_TARGET)):
        ratio = figures[name] / base
        verdict = "met" if ratio <= target_ratio else "NOT met"
        _say(f"ratio {name} / {PAGE1}: {ratio:.2f} (target <= {target_ratio:g}: {verdict})")
    figures["ledger rows"] = float(facts.rows)
    figures["ledger rows per cluster per month"] = per_cluster_month
    figures["ledger bytes per row"] = facts.bytes / facts.rows
    return figures


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    rounds = "3" if options.quick else "7"
    return [
        Run(
            "fleet_usage",
            "bench.fleet_usage",
            ("--rounds", rounds, "--dsn", options.dsn),
            timeout_seconds=3600.0,
        )
    ]


def read(results: Sequence[Result]) -> Reading:
    _, f = largest(results)
    note = (
        f"{f['ledger rows'] / 1e6:.1f} M ledger rows, {f['ledger rows per cluster per month']:.0f} per cluster"
        " per month"
    )
    rows = [
        Row("fleet_usage", ALL, f[ALL], "ms", PAGE1, f[PAGE1], Target("<=", ALL_TARGET), note),
        Row("fleet_usage", ONE, f[ONE], "ms", PAGE1, f[PAGE1], Target("<=", ONE_TARGET), note),
    ]
    return rows, []


BENCHMARK = Benchmark("fleet_usage", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fleet_usage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=None, help="superuser DSN of a server to use (default: an embedded one)")
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds per call (default 7)")
    parser.add_argument("--seed", type=int, default=0, help="fleet seed (default 0)")
    parser.add_argument("--churn", type=int, default=DEFAULT_CHURN, help="autoscaled nodes per cluster per day")
    parser.add_argument("--rebuild", action="store_true", help="build the world and the ledger anew")
    parser.add_argument(
        "--organizations", type=int, default=SCALE.organizations, help="fleet size (default 10000: 50,000 clusters)"
    )
    parser.add_argument("--build-only", action="store_true", help="build (or reuse) the ledger, measure nothing")
    parser.add_argument("--json", type=Path, help="also write the figures (medians in ms, ratios) to this file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or not 0 <= args.churn <= 24 or not 100 <= args.organizations <= SCALE.organizations:
        parser.error(f"--rounds >= 1, --churn in 0..24 and --organizations in 100..{SCALE.organizations}")
    with kept_postgres(args.dsn, data_dir_name="bench-admin-pg") as dsn:
        target = prepare_ledger(dsn, args.seed, args.churn, rebuild=args.rebuild, organizations=args.organizations)
        if args.build_only:
            return 0
        figures = asyncio.run(run(target, args.rounds))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
