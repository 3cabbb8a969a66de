"""Benchmark: platform-admin-api at the scale fleet, figures measured side by side in one run.

    .venv/bin/python -m bench.fleet_api [--dsn SUPERUSER_DSN] [--rounds 21] [--seed 0] [--rebuild]

On the scale fleet (10,000 organizations, 50,000 clusters, 250,000 projects, 1,000,000 namespaces) plus
what the collector and reconcile would have written (bench/fleet_api_world.sql), the real service runs
in this process on loopback, connected as fun_platform_admin_api, and is called over gRPC with a DCIM
token. Server-side latency is what the request stack itself logs for each call (`duration_ms`: from
receiving the call to its answer, authentication and conversion included).

Targets, each a ratio of medians over rotating rounds:
- keyset paging: the 500th page of ListClusters (page size 100, deleted clusters included, so page
  500 is the last of 50,000 rows) costs at most 1.5x the first page;
- GetFleetSummary costs at most 3x a plain `SELECT count(*) FROM tenant.clusters` (as the same role,
  timed round trip) in the same run. Two figures are printed: the summary as served (the default
  SUMMARY_CACHE_SECONDS=15, so most calls share an answer read at most once per 15 s) and the
  summary read on every call (a second instance of the service with SUMMARY_CACHE_SECONDS=0). This
  world records no inventory round, so that read is the summary's fallback (the cluster listing added
  up), printed for context; bench.fleet_search measures the normal read, the latest round's totals.
Also printed: the median server-side latency of every RPC.

The scale database is built once by bench.overview_function.prepare and copied into
`fleet_bench_admin_s<seed>` with the observations (kept, and rebuilt when the seed or the migrations
change). Without `--dsn`, an embedded server with its data in `.fleet/bench-admin-pg` is started for
the run and stopped after.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import secrets
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import psycopg
from fundament.fleet.v1 import fleet_pb2
from fundament.fleet.v1.fleet_pb2_grpc import FleetServiceStub
from psycopg import sql

from bench.common import kept_postgres
from bench.overview_function import SCALE, organizations, prepare
from bench.runs import Benchmark, Options, Reading, Result, Run, largest, size_note
from bench.table import Point, Row, Target
from common.database import load_queries
from db.migrate import schema_digest
from services.common.auth import DcimTokenRules, mint_token
from services.fleet.app import running_fleet_api
from services.fleet.settings import FleetSettings

WORLD = load_queries(Path(__file__).with_name("fleet_api_world.sql"))
PAGE_TARGET = 1.5
SUMMARY_TARGET = 3.0
COUNT = "SELECT count(*) FROM tenant.clusters"
ROLE = "fun_platform_admin_api"


def _say(text: str) -> None:
    print(text, flush=True)


def _marker(seed: int) -> str:
    world = Path(__file__).with_name("fleet_api_world.sql").read_bytes()
    digest = hashlib.sha256(schema_digest().encode() + world).hexdigest()[:16]
    return f"fleet bench admin world, seed {seed}, digest {digest}"


def prepare_world(dsn: str, seed: int, *, rebuild: bool, organizations: int = SCALE.organizations) -> str:
    """The DSN of a copy of the scale fleet with observations written, built only when needed."""
    scale = prepare(dsn, seed, rebuild=rebuild, organizations=organizations)
    scale_name = psycopg.conninfo.conninfo_to_dict(scale)["dbname"]
    suffix = "" if organizations == SCALE.organizations else f"_o{organizations}"
    name = f"fleet_bench_admin_s{seed}{suffix}"
    marker = _marker(seed) + suffix
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
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(str(scale_name)))
        )
    started = time.monotonic()
    with psycopg.connect(target) as conn:
        for query in WORLD.values():
            conn.execute(query.sql)
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(name), sql.Literal(marker)))
    _say(f"wrote the observations into {name} in {time.monotonic() - started:.0f} s")
    return target


class ServerSide(logging.Handler):
    """Collects the request stack's own `duration_ms` per method."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.durations: dict[str, list[float]] = {}
        self.last: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        duration = getattr(record, "duration_ms", None)
        procedure = getattr(record, "procedure", None)
        if duration is not None and procedure is not None and getattr(record, "code", None) == "ok":
            self.durations.setdefault(str(procedure).rsplit("/", 1)[-1], []).append(float(duration))
            self.last = float(duration)


async def measured(log: ServerSide, call: Awaitable[Any]) -> float:
    """Server-side milliseconds of one call."""
    log.last = None
    await call
    if log.last is None:
        raise RuntimeError("the call logged no duration")
    return log.last


async def token_of_page(stub: FleetServiceStub, metadata: Any, page: int, request: dict[str, Any]) -> str:
    """The page token that asks for page `page` (1-based) of ListClusters."""
    token = ""
    for _ in range(page - 1):
        response = await stub.ListClusters(
            fleet_pb2.ListClustersRequest(page_token=token, **request), metadata=metadata
        )
        token = response.next_page_token
        if not token:
            raise RuntimeError(f"ListClusters has fewer than {page} pages of {request['page_size']}")
    return token


def _settings(target: str, secret: str, **extra: str) -> FleetSettings:
    return FleetSettings.from_env(
        {
            "DATABASE_URL": psycopg.conninfo.make_conninfo(target, user=ROLE),
            "HTTP_PORT": "0",
            "GRPC_PORT": "0",
            "JWT_SECRET": secret,
            "DATABASE_STATEMENT_TIMEOUT_MS": "60000",
            "SUMMARY_READ_TIMEOUT_SECONDS": "60",
            "DATABASE_POOL_MIN": "2",
            **extra,
        }
    )


def staff_caller(secret: str) -> tuple[DcimTokenRules, tuple[tuple[str, str], ...], ServerSide]:
    """Token rules of `secret`, the gRPC metadata of a staff token (an hour), and the handler that
    collects the serving stack's per-call durations (the server side of every figure)."""
    rules = DcimTokenRules(secret.encode())
    token = mint_token(rules, subject=uuid.uuid4(), ttl=timedelta(hours=1), now=datetime.now(UTC))
    log = ServerSide()
    serving = logging.getLogger("services.common.serving")
    serving.setLevel(logging.INFO)
    serving.addHandler(log)
    serving.propagate = False
    return rules, (("authorization", f"Bearer {token}"),), log


async def run(target: str, rounds: int, deep_page: int = 500) -> dict[str, float]:
    secret = secrets.token_urlsafe(48)
    served_settings = _settings(target, secret)
    uncached_settings = _settings(target, secret, SUMMARY_CACHE_SECONDS="0")
    rules, metadata, log = staff_caller(secret)
    async with (
        running_fleet_api(served_settings, rules=rules) as served,
        running_fleet_api(uncached_settings, rules=rules) as uncached,
    ):
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{served.server.grpc_port}")
        uncached_channel = grpc.aio.insecure_channel(f"127.0.0.1:{uncached.server.grpc_port}")
        stub = FleetServiceStub(channel)
        uncached_stub = FleetServiceStub(uncached_channel)
        count_conn = await psycopg.AsyncConnection.connect(served_settings.database.url, autocommit=True)
        try:
            page_request: dict[str, Any] = {"page_size": 100, "include_deleted": True}
            deep = await token_of_page(stub, metadata, deep_page, page_request)
            last = await stub.ListClusters(
                fleet_pb2.ListClustersRequest(page_token=deep, **page_request), metadata=metadata
            )
            more = bool(last.next_page_token)
            _say(f"page {deep_page} of ListClusters holds {len(last.clusters)} clusters; more after it: {more}")
            some_cluster = last.clusters[0].id

            async def count() -> float:
                started = time.perf_counter()
                await (await count_conn.execute(COUNT)).fetchone()
                return (time.perf_counter() - started) * 1000

            calls: dict[str, Callable[[], Awaitable[float]]] = {
                "ListClusters page 1": lambda: measured(
                    log, stub.ListClusters(fleet_pb2.ListClustersRequest(**page_request), metadata=metadata)
                ),
                "ListClusters page 500": lambda: measured(
                    log,
                    stub.ListClusters(
                        fleet_pb2.ListClustersRequest(page_token=deep, **page_request), metadata=metadata
                    ),
                ),
                "GetFleetSummary (served)": lambda: measured(
                    log, stub.GetFleetSummary(fleet_pb2.GetFleetSummaryRequest(), metadata=metadata)
                ),
                "GetFleetSummary (uncached)": lambda: measured(
                    log, uncached_stub.GetFleetSummary(fleet_pb2.GetFleetSummaryRequest(), metadata=metadata)
                ),
                "count(*) clusters": count,
                "ListOrganizations": lambda: measured(
                    log, stub.ListOrganizations(fleet_pb2.ListOrganizationsRequest(), metadata=metadata)
                ),
                "ListDriftFindings": lambda: measured(
                    log, stub.ListDriftFindings(fleet_pb2.ListDriftFindingsRequest(), metadata=metadata)
                ),
                "GetCluster": lambda: measured(
                    log, stub.GetCluster(fleet_pb2.GetClusterRequest(id=some_cluster), metadata=metadata)
                ),
                "ListInfrastructureResources": lambda: measured(
                    log,
                    stub.ListInfrastructureResources(fleet_pb2.ListInfrastructureResourcesRequest(), metadata=metadata),
                ),
            }
            times: dict[str, list[float]] = {name: [] for name in calls}
            for call in calls.values():  # warm-up: caches and the pool's connections
                for _ in range(2):
                    await call()
            names = list(calls)
            for i in range(rounds):
                # Rotate the order so no call always follows the same one.
                for name in names[i % len(names) :] + names[: i % len(names)]:
                    times[name].append(await calls[name]())
        finally:
            await count_conn.close()
            await channel.close()
            await uncached_channel.close()
    return report(times)


def report(times: dict[str, list[float]]) -> dict[str, float]:
    """Print the table and the two target ratios; return the medians and ratios."""
    figures: dict[str, float] = {}
    for name, values in times.items():
        figures[name] = statistics.median(values)
        kind = "client round trip" if name.startswith("count") else "server-side"
        _say(f"{name:<30} median {figures[name]:9.2f} ms   min {min(values):9.2f} ms   ({kind}, {len(values)} rounds)")
    ratios = {
        "ListClusters page 500 / page 1": (
            figures["ListClusters page 500"] / figures["ListClusters page 1"],
            PAGE_TARGET,
        ),
        "GetFleetSummary (served) / count(*)": (
            figures["GetFleetSummary (served)"] / figures["count(*) clusters"],
            SUMMARY_TARGET,
        ),
    }
    figures["GetFleetSummary (uncached) / count(*)"] = (
        figures["GetFleetSummary (uncached)"] / figures["count(*) clusters"]
    )
    fallback = figures["GetFleetSummary (uncached) / count(*)"]
    _say(f"ratio GetFleetSummary (uncached, no round recorded) / count(*): {fallback:.2f} (context, no target)")
    for label, (ratio, target) in ratios.items():
        _say(f"ratio {label}: {ratio:.2f} (target <= {target:g}: {'met' if ratio <= target else 'NOT met'})")
        figures[label] = ratio
    return figures


# -- in the table of `python -m bench` --------------------------------------------------------------


def deep_page(percent: int) -> int:
    """The last page of 100 of ListClusters (deleted included) at that size: 500 at full scale."""
    return max(2, organizations(percent) * SCALE.clusters_per_organization // 100)


def plan(options: Options) -> list[Run]:
    rounds = "7" if options.quick else "21"
    return [
        Run(
            "fleet_api",
            "bench.fleet_api",
            (
                "--organizations",
                str(organizations(p)),
                "--deep-page",
                str(deep_page(p)),
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
    page1, deep = f["ListClusters page 1"], f["ListClusters page 500"]  # the deep page, whatever its number
    count = f["count(*) clusters"]
    note = size_note(run)
    rows = [
        Row(
            "fleet_api",
            f"ListClusters page {deep_page(run.percent)}",
            deep,
            "ms",
            "ListClusters page 1",
            page1,
            Target("<=", PAGE_TARGET),
            note,
        ),
        Row(
            "fleet_api",
            "GetFleetSummary as served",
            f["GetFleetSummary (served)"],
            "ms",
            "count(*) clusters",
            count,
            Target("<=", SUMMARY_TARGET),
            note or "one shared answer per SUMMARY_CACHE_SECONDS (15 s)",
        ),
        Row(
            "fleet_api",
            "GetFleetSummary read every call, no round recorded",
            f["GetFleetSummary (uncached)"],
            "ms",
            "count(*) clusters",
            count,
            None,
            "this world has no recorded inventory round, so the summary adds up the cluster listing (its fallback "
            "when the collector recorded none for three intervals); the normal read, the latest round's totals, "
            "is fleet_search's 'GetFleetSummary read fresh', which carries the target",
        ),
    ]
    for name in ("ListOrganizations", "ListDriftFindings", "GetCluster", "ListInfrastructureResources"):
        rows.append(Row("fleet_api", f"{name} median, server-side", f[name], "ms", note=note))
    points = []
    panel = "staff API, server-side (ms)"
    for r, g in results:
        clusters = organizations(r.percent) * SCALE.clusters_per_organization
        points += [
            Point("ListClusters page 1", panel, clusters, g["ListClusters page 1"], "ms"),
            Point("ListClusters last page", panel, clusters, g["ListClusters page 500"], "ms"),
            Point("GetFleetSummary read every call, no round", panel, clusters, g["GetFleetSummary (uncached)"], "ms"),
            Point("count(*) clusters", panel, clusters, g["count(*) clusters"], "ms"),
        ]
    return rows, points


BENCHMARK = Benchmark("fleet_api", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fleet_api", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=None, help="superuser DSN of a server to use (default: an embedded one)")
    parser.add_argument("--rounds", type=int, default=21, help="measured rounds per call (default 21)")
    parser.add_argument("--seed", type=int, default=0, help="fleet seed (default 0)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the databases even if cached")
    parser.add_argument("--organizations", type=int, default=SCALE.organizations, help="fleet size (default 10000)")
    parser.add_argument("--deep-page", type=int, default=500, help="the deep page compared with page 1 (default 500)")
    parser.add_argument("--json", type=Path, help="also write the figures (medians in ms, ratios) to this file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.deep_page < 2 or not 100 <= args.organizations <= SCALE.organizations:
        parser.error(f"--rounds >= 1, --deep-page >= 2 and --organizations in 100..{SCALE.organizations}")
    with kept_postgres(args.dsn, data_dir_name="bench-admin-pg") as dsn:
        target = prepare_world(dsn, args.seed, rebuild=args.rebuild, organizations=args.organizations)
        figures = asyncio.run(run(target, args.rounds, args.deep_page))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
