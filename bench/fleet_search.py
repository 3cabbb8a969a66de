"""Benchmark: search and sort of the staff API, figures measured side by side in one run.

    .venv/bin/python -m bench.fleet_search [--dsn SUPERUSER_DSN] [--rounds 7] [--organizations 10000]
                                           [--depth 100] [--json FILE]

On the same world as bench.fleet_api (built or reused by its prepare_world), the real service runs in
this process on loopback and is called over gRPC; each figure is the server-side `duration_ms` the
request stack logs, the median over rotating rounds. Printed:
- the ListClusters matrix: every filter (those tests/fleet/test_plans.py checks the plans of) x order x
  direction at page `--depth` of 100 (or the list's last page when it has fewer), each cell a ratio to
  unfiltered page 1 by name; the worst cell is the figure (target <= 2);
- a search for a unique cluster name, for a namespace name every fourth namespace has, and for a
  namespace by its unique Kubernetes name (the name an alert shows), each against ListClusters page 1
  (target <= 2);
- ListOrganizations with 500 per page against 100 per page (target <= 2);
- GetFleetSummary read fresh (SUMMARY_CACHE_SECONDS=0, a second instance of the service) against a
  plain `SELECT count(*) FROM tenant.clusters` as the same role, timed round trip (target <= 3);
- GetFleetTrends over 30 days at hourly steps, fleet-wide and for one organization, against
  ListClusters page 1 (target <= 2), on 30 days of hourly history and 2 days of 15-minute rounds
  made by copying one real recording back in time; the history's storage per day is printed beside.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import psycopg
from fundament.fleet.v1 import fleet_pb2
from fundament.fleet.v1.fleet_pb2_grpc import FleetServiceStub

from bench.common import kept_postgres
from bench.fleet_api import _settings, measured, prepare_world, staff_caller
from bench.overview_function import SCALE
from bench.runs import Benchmark, Options, Reading, Result, Run, largest, size_note
from bench.table import Row, Target
from collector.inventory import history_store
from common import naming
from services.fleet.app import running_fleet_api

MATRIX_TARGET = 2.0
SEARCH_TARGET = 2.0
ORGANIZATIONS_TARGET = 2.0
TRENDS_TARGET = 2.0
HISTORY_DAYS = 30
ROUND_DAYS = 2
ORDERS = {name.removeprefix("CLUSTER_ORDER_").lower(): value for name, value in fleet_pb2.ClusterOrder.items() if value}
SUMMARY_TARGET = 3.0
COUNT = "SELECT count(*) FROM tenant.clusters"
DIRECTIONS = {"asc": False, "desc": True}
# The filters of tests/fleet/test_plans.py (the organization and its query are picked from the world).
FILTERS: dict[str, dict[str, Any]] = {
    "none": {},
    "organization": {"organization_id": "ORG"},
    "running": {"statuses": [fleet_pb2.CLUSTER_STATUS_RUNNING]},
    "lost": {"statuses": [fleet_pb2.CLUSTER_STATUS_LOST]},
    "error+unhealthy": {"statuses": [fleet_pb2.CLUSTER_STATUS_ERROR, fleet_pb2.CLUSTER_STATUS_UNHEALTHY]},
    "running+region": {"statuses": [fleet_pb2.CLUSTER_STATUS_RUNNING], "region": "eu-west-1"},
    "running+organization": {"statuses": [fleet_pb2.CLUSTER_STATUS_RUNNING], "organization_id": "ORG"},
    "attention": {"needs_attention": True},
    "stale": {"stale": True},
    "region": {"region": "eu-west-1"},
    "deleted": {"include_deleted": True},
    "query": {"query": "prod-1"},
    "organization/cluster": {"query": "acme/pr"},
}


def _say(text: str) -> None:
    print(text, flush=True)


async def _token_at(stub: FleetServiceStub, metadata: Any, depth: int, request: dict[str, Any]) -> tuple[str, int]:
    """The token of page `depth` of ListClusters with `request`, or of its last page: (token, page)."""
    token, page = "", 1
    while page < depth:
        response = await stub.ListClusters(
            fleet_pb2.ListClustersRequest(page_token=token, **request), metadata=metadata
        )
        if not response.next_page_token:
            break
        token, page = response.next_page_token, page + 1
    return token, page


@dataclass(frozen=True)
class Names:
    """What the searches look for, and the organization of the matrix's organization filters."""

    unique_cluster: str
    common_namespace: str
    kubernetes_name: str
    organization_id: str


def _names(target: str) -> Names:
    """A unique "organization/cluster" of a live cluster, the most common live namespace name, the
    Kubernetes name of one live namespace, and an organization with clusters."""
    with psycopg.connect(target) as conn:
        cluster = conn.execute(
            "SELECT o.name || '/' || c.name, o.id::text FROM tenant.clusters c"
            " JOIN tenant.organizations o ON o.id = c.organization_id"
            " WHERE c.deleted IS NULL AND o.deleted IS NULL ORDER BY c.id LIMIT 1"
        ).fetchone()
        common = conn.execute(
            "SELECT name FROM tenant.namespaces WHERE deleted IS NULL GROUP BY name ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()
        namespace = conn.execute(
            "SELECT p.name, p.id, n.name FROM tenant.namespaces n JOIN tenant.projects p ON p.id = n.project_id"
            " JOIN tenant.clusters c ON c.id = p.cluster_id JOIN tenant.organizations o ON o.id = c.organization_id"
            " WHERE n.deleted IS NULL AND p.deleted IS NULL AND c.deleted IS NULL AND o.deleted IS NULL"
            " ORDER BY n.id LIMIT 1"
        ).fetchone()
    assert cluster is not None and common is not None and namespace is not None
    return Names(
        unique_cluster=str(cluster[0]),
        common_namespace=str(common[0]),
        kubernetes_name=naming.namespace_name(str(namespace[0]), namespace[1], str(namespace[2])),
        organization_id=str(cluster[1]),
    )


async def fill_history(target: str, at: datetime) -> tuple[str, float]:
    """30 days of hourly rows and 2 days of 15-minute rounds ending at `at`, copied from one real
    recording; returns an organization's id and the history's bytes per day (table and indexes)."""
    keep = {"round_retention": timedelta(days=ROUND_DAYS + 1), "hour_retention": timedelta(days=HISTORY_DAYS + 1)}
    async with await psycopg.AsyncConnection.connect(target) as conn:
        await conn.execute("TRUNCATE tenant.fleet_history")
        await conn.commit()
        await history_store.record_round(conn, at=at, **keep)
        await conn.execute(
            "INSERT INTO tenant.fleet_history SELECT h.resolution, h.organization_id,"
            " h.at - make_interval(hours => n),"
            " h.clusters, h.clusters_by_status, h.nodes, h.ready_nodes, h.pods, h.cpu_allocatable_millicores,"
            " h.memory_allocatable_bytes, h.open_findings_by_kind FROM tenant.fleet_history AS h,"
            " generate_series(1, %s) AS n WHERE h.resolution = 'hour'",
            [HISTORY_DAYS * 24 - 1],
        )
        await conn.execute(
            "INSERT INTO tenant.fleet_history SELECT h.resolution, h.organization_id,"
            " h.at - make_interval(mins => 15 * n),"
            " h.clusters, h.clusters_by_status, h.nodes, h.ready_nodes, h.pods, h.cpu_allocatable_millicores,"
            " h.memory_allocatable_bytes, h.open_findings_by_kind FROM tenant.fleet_history AS h,"
            " generate_series(1, %s) AS n WHERE h.resolution = 'round'",
            [ROUND_DAYS * 96 - 1],
        )
        await conn.commit()
        await conn.set_autocommit(True)
        await conn.execute("VACUUM (ANALYZE) tenant.fleet_history")
        row = await (await conn.execute("SELECT pg_total_relation_size('tenant.fleet_history')")).fetchone()
        organization = await (
            await conn.execute(
                "SELECT organization_id::text FROM tenant.fleet_history WHERE resolution = 'hour'"
                " AND organization_id <> '00000000-0000-0000-0000-000000000000' LIMIT 1"
            )
        ).fetchone()
    assert row is not None and organization is not None
    return str(organization[0]), float(row[0]) / HISTORY_DAYS


async def run(target: str, rounds: int, depth: int) -> dict[str, float]:
    secret = secrets.token_urlsafe(48)
    settings = _settings(target, secret)
    uncached_settings = _settings(target, secret, SUMMARY_CACHE_SECONDS="0")
    rules, metadata, log = staff_caller(secret)
    names = _names(target)
    _say(f"searches: {names.unique_cluster!r}, {names.common_namespace!r}, {names.kubernetes_name!r}")
    now = datetime.now(UTC)
    organization_id, bytes_per_day = await fill_history(target, now)
    _say(f"fleet history: {bytes_per_day / 2**20:.1f} MiB per day (table and indexes, hourly rows dominate)")
    async with (
        running_fleet_api(settings, rules=rules) as served,
        running_fleet_api(uncached_settings, rules=rules) as uncached,
    ):
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{served.server.grpc_port}")
        uncached_channel = grpc.aio.insecure_channel(f"127.0.0.1:{uncached.server.grpc_port}")
        stub = FleetServiceStub(channel)
        uncached_stub = FleetServiceStub(uncached_channel)
        count_conn = await psycopg.AsyncConnection.connect(settings.database.url, autocommit=True)
        try:
            calls: dict[str, Callable[[], Awaitable[float]]] = {}

            def list_call(request: dict[str, Any], page_token: str) -> Callable[[], Awaitable[float]]:
                message = fleet_pb2.ListClustersRequest(page_token=page_token, **request)
                return lambda: measured(log, stub.ListClusters(message, metadata=metadata))

            calls["ListClusters page 1"] = list_call({"page_size": 100}, "")
            for filter_name, template in FILTERS.items():
                fields = dict(template)
                if fields.get("organization_id") == "ORG":
                    fields["organization_id"] = names.organization_id
                for order_name, order in ORDERS.items():
                    for direction, descending in DIRECTIONS.items():
                        request = {"page_size": 100, "order": order, "descending": descending, **fields}
                        page_token, page = await _token_at(stub, metadata, depth, request)
                        cell = f"matrix {filter_name} x {order_name} {direction} (page {page})"
                        calls[cell] = list_call(request, page_token)
            calls["search unique cluster"] = list_call({"page_size": 100, "query": names.unique_cluster}, "")

            def namespace_call(query: str) -> Callable[[], Awaitable[float]]:
                message = fleet_pb2.SearchNamespacesRequest(query=query, page_size=100)
                return lambda: measured(log, stub.SearchNamespaces(message, metadata=metadata))

            calls["search namespace"] = namespace_call(names.common_namespace)
            calls["search namespace by Kubernetes name"] = namespace_call(names.kubernetes_name)

            async def count() -> float:
                started = time.perf_counter()
                await (await count_conn.execute(COUNT)).fetchone()
                return (time.perf_counter() - started) * 1000

            calls["count(*) clusters"] = count
            calls["GetFleetSummary (fresh)"] = lambda: measured(
                log, uncached_stub.GetFleetSummary(fleet_pb2.GetFleetSummaryRequest(), metadata=metadata)
            )

            def organizations_call(size: int) -> Callable[[], Awaitable[float]]:
                message = fleet_pb2.ListOrganizationsRequest(page_size=size)
                return lambda: measured(log, stub.ListOrganizations(message, metadata=metadata))

            for size in (100, 500):
                calls[f"ListOrganizations size {size}"] = organizations_call(size)

            def trends_call(organization: str) -> Callable[[], Awaitable[float]]:
                message = fleet_pb2.GetFleetTrendsRequest(step_seconds=3600, organization_id=organization)
                message.start.FromDatetime(now - timedelta(days=HISTORY_DAYS))
                message.end.FromDatetime(now + timedelta(minutes=1))
                return lambda: measured(log, stub.GetFleetTrends(message, metadata=metadata))

            calls["GetFleetTrends 30 days hourly, fleet"] = trends_call("")
            calls["GetFleetTrends 30 days hourly, one organization"] = trends_call(organization_id)
            times: dict[str, list[float]] = {name: [] for name in calls}
            for call in calls.values():  # warm-up
                await call()
            labels = list(calls)
            for i in range(rounds):
                for label in labels[i % len(labels) :] + labels[: i % len(labels)]:
                    times[label].append(await calls[label]())
        finally:
            await count_conn.close()
            await channel.close()
            await uncached_channel.close()
    figures = report(times)
    figures["history bytes per day"] = bytes_per_day
    return figures


def report(times: dict[str, list[float]]) -> dict[str, float]:
    figures = {name: statistics.median(values) for name, values in times.items()}
    base = figures["ListClusters page 1"]
    _say(f"{'ListClusters page 1 (by name)':<52} {base:8.2f} ms")
    worst_name, worst = "", 0.0
    for name, value in figures.items():
        if name.startswith("matrix "):
            ratio = value / base
            _say(f"{name:<52} {value:8.2f} ms  x{ratio:5.2f}")
            if ratio > worst:
                worst_name, worst = name, ratio
    ratios = {
        f"matrix worst cell / page 1 ({worst_name.removeprefix('matrix ')})": (worst, MATRIX_TARGET),
        "search unique cluster / page 1": (figures["search unique cluster"] / base, SEARCH_TARGET),
        "search namespace / page 1": (figures["search namespace"] / base, SEARCH_TARGET),
        "search namespace by Kubernetes name / page 1": (
            figures["search namespace by Kubernetes name"] / base,
            SEARCH_TARGET,
        ),
        "ListOrganizations size 500 / size 100": (
            figures["ListOrganizations size 500"] / figures["ListOrganizations size 100"],
            ORGANIZATIONS_TARGET,
        ),
        "GetFleetSummary fresh / count(*)": (
            figures["GetFleetSummary (fresh)"] / figures["count(*) clusters"],
            SUMMARY_TARGET,
        ),
    }
    for trend in ("fleet", "one organization"):
        name = f"GetFleetTrends 30 days hourly, {trend}"
        ratios[f"{name} / page 1"] = (figures[name] / base, TRENDS_TARGET)
    for name in (
        "search unique cluster",
        "search namespace",
        "search namespace by Kubernetes name",
        "count(*) clusters",
        "GetFleetSummary (fresh)",
        "ListOrganizations size 100",
        "ListOrganizations size 500",
        "GetFleetTrends 30 days hourly, fleet",
        "GetFleetTrends 30 days hourly, one organization",
    ):
        _say(f"{name:<52} {figures[name]:8.2f} ms")
    for label, (ratio, target) in ratios.items():
        _say(f"ratio {label}: {ratio:.2f} (target <= {target:g}: {'met' if ratio <= target else 'NOT met'})")
        figures[label.split(" (")[0]] = ratio
    return figures


# -- in the table of `python -m bench` --------------------------------------------------------------


PAGE1 = "ListClusters page 1"
TRENDS = "GetFleetTrends 30 days hourly"
WORST = "matrix worst cell"
# The table's rows: (figure, its key, reference, its key, target), each target a ratio of medians in ms.
RATIOS = (
    ("ListClusters filter x order, worst cell", WORST, PAGE1, PAGE1, MATRIX_TARGET),
    ("ListClusters unique-name search", "search unique cluster", PAGE1, PAGE1, SEARCH_TARGET),
    ("SearchNamespaces by a common name", "search namespace", PAGE1, PAGE1, SEARCH_TARGET),
    ("SearchNamespaces by Kubernetes name", "search namespace by Kubernetes name", PAGE1, PAGE1, SEARCH_TARGET),
    (
        "GetFleetSummary read fresh",
        "GetFleetSummary (fresh)",
        "count(*) of clusters",
        "count(*) clusters",
        SUMMARY_TARGET,
    ),
    (
        "ListOrganizations 500 per page",
        "ListOrganizations size 500",
        "ListOrganizations 100 per page",
        "ListOrganizations size 100",
        ORGANIZATIONS_TARGET,
    ),
    *(
        (f"{TRENDS}, {scope}", f"{TRENDS}, {scope}", PAGE1, PAGE1, TRENDS_TARGET)
        for scope in ("fleet", "one organization")
    ),
)


def plan(options: Options) -> list[Run]:
    # At the scale fleet only: the targets compare cells of one run, and the matrix is long.
    rounds = "3" if options.quick else "7"
    return [
        Run(
            "fleet_search",
            "bench.fleet_search",
            ("--organizations", str(SCALE.organizations), "--rounds", rounds, "--dsn", options.dsn),
        )
    ]


def read(results: Sequence[Result]) -> Reading:
    run, f = largest(results)
    worst = next(name for name in f if name.startswith("matrix worst cell"))
    rows = []
    for figure, key, reference, reference_key, target in RATIOS:
        value = f[worst] * f[PAGE1] if key == WORST else f[key]  # the worst cell is reported as a ratio to page 1
        note = size_note(run)
        if not note and figure.startswith(TRENDS):
            note = f"history storage {f['history bytes per day'] / 2**20:.1f} MiB per day"
        rows.append(Row("fleet_search", figure, value, "ms", reference, f[reference_key], Target("<=", target), note))
    return rows, []


BENCHMARK = Benchmark("fleet_search", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fleet_search", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=None, help="superuser DSN of a server to use (default: an embedded one)")
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds per call (default 7)")
    parser.add_argument("--seed", type=int, default=0, help="fleet seed (default 0)")
    parser.add_argument("--organizations", type=int, default=SCALE.organizations, help="fleet size (default 10000)")
    parser.add_argument("--depth", type=int, default=100, help="the matrix's page (default 100)")
    parser.add_argument("--json", type=Path, help="also write the figures (medians in ms, ratios) to this file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.depth < 1 or not 100 <= args.organizations <= SCALE.organizations:
        parser.error(f"--rounds >= 1, --depth >= 1 and --organizations in 100..{SCALE.organizations}")
    with kept_postgres(args.dsn, data_dir_name="bench-admin-pg") as dsn:
        target = prepare_world(dsn, args.seed, rebuild=False, organizations=args.organizations)
        figures = asyncio.run(run(target, args.rounds, args.depth))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
