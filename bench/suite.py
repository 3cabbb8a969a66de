"""Which benchmarks `python -m bench` runs, with which arguments, and how their figures become table rows.

Each benchmark module of bench/ keeps its own command line and prints its own report; with `--json`
it also writes its figures as a flat JSON object. This module knows, per benchmark, the runs to
make (at three fleet sizes for the costs that grow with the fleet: 1%, 10% and 100% of the scale
fleet of 50,000 clusters; the quick mode stops at 10%), and turns the figures into `Row`s (each
target against its reference measured in the same run) and `Point`s (the growth plot). The
targets are the modules' own constants, so the table and a module's report can never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench import (
    collector_fanout,
    collector_hostile,
    collector_huge,
    dcim_pages,
    fleet_api,
    fleet_search,
    overview_function,
    rapid_reset,
    reconcile,
    sim_scale,
)
from bench.table import Point, Row, Target

SCALE_ORGANIZATIONS = overview_function.SCALE.organizations
CLUSTERS_PER_ORGANIZATION = overview_function.SCALE.clusters_per_organization
FULL = (1, 10, 100)
QUICK = (1, 10)
Figures = Mapping[str, Any]


@dataclass(frozen=True)
class Options:
    """What the whole run was asked for."""

    dsn: str
    quick: bool = False

    @property
    def percents(self) -> tuple[int, ...]:
        return QUICK if self.quick else FULL


@dataclass(frozen=True)
class Run:
    """One process of one benchmark: `python -m <module> <args> --json FILE`."""

    benchmark: str
    module: str
    args: tuple[str, ...]
    percent: int = 100  # of the scale fleet; 100 also for benchmarks that have one size
    timeout_seconds: float = 1200.0

    @property
    def label(self) -> str:
        return self.benchmark if self.percent == 100 else f"{self.benchmark}@{self.percent}%"


Result = tuple[Run, Figures]


@dataclass(frozen=True)
class Benchmark:
    name: str
    plan: Callable[[Options], list[Run]]
    read: Callable[[Sequence[Result]], tuple[list[Row], list[Point]]]


def organizations(percent: int) -> int:
    return SCALE_ORGANIZATIONS * percent // 100


def largest(results: Sequence[Result]) -> tuple[Run, Figures]:
    return max(results, key=lambda result: result[0].percent)


def size_note(run: Run) -> str:
    return "" if run.percent == 100 else f"measured at {run.percent}% of the scale fleet (quick mode)"


# -- issue 3: platform_overview() --------------------------------------------------------------------


def plan_overview_function(options: Options) -> list[Run]:
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


def read_overview_function(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
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
            Target("<=", overview_function.TARGET_RATIO),
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
        clusters = organizations(r.percent) * CLUSTERS_PER_ORGANIZATION
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


# -- issue 5: the staff API ------------------------------------------------------------------------


def deep_page(percent: int) -> int:
    """The last page of 100 of ListClusters (deleted included) at that size: 500 at full scale."""
    return max(2, organizations(percent) * CLUSTERS_PER_ORGANIZATION // 100)


def plan_fleet_api(options: Options) -> list[Run]:
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


def read_fleet_api(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
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
            Target("<=", fleet_api.PAGE_TARGET),
            note,
        ),
        Row(
            "fleet_api",
            "GetFleetSummary as served",
            f["GetFleetSummary (served)"],
            "ms",
            "count(*) clusters",
            count,
            Target("<=", fleet_api.SUMMARY_TARGET),
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
        clusters = organizations(r.percent) * CLUSTERS_PER_ORGANIZATION
        points += [
            Point("ListClusters page 1", panel, clusters, g["ListClusters page 1"], "ms"),
            Point("ListClusters last page", panel, clusters, g["ListClusters page 500"], "ms"),
            Point("GetFleetSummary read every call, no round", panel, clusters, g["GetFleetSummary (uncached)"], "ms"),
            Point("count(*) clusters", panel, clusters, g["count(*) clusters"], "ms"),
        ]
    return rows, points


# -- issue 4: the public API -------------------------------------------------------------------------


def plan_overview_api(options: Options) -> list[Run]:
    args = ("--rounds", "3", "--seconds", "1") if options.quick else ()
    return [Run("overview_api", "bench.overview_api", args, timeout_seconds=900)]


def read_overview_api(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
    _, f = largest(results)
    rows = []
    for figure in f["figures"]:
        target = None if figure["target"] is None else Target(">=", figure["target"])
        errors = f"{figure['errors']} errors" if figure["errors"] else ""
        rows.append(
            Row(
                "overview_api",
                f"{figure['name']} (cached)",
                figure["requests_per_second"],
                "req/s",
                "bare handler, same server shape",
                figure["reference_requests_per_second"],
                target,
                errors,
            )
        )
        rows.append(
            Row(
                "overview_api",
                f"{figure['name']} server CPU per call",
                figure["cpu_microseconds_per_call"],
                "us",
                "bare handler",
                figure["reference_cpu_microseconds_per_call"],
            )
        )
    return rows, []


# -- issue 7: the collector at Kubernetes' limits, and over many shoots ----------------------------


def plan_collector_huge(options: Options) -> list[Run]:
    return [] if options.quick else [Run("collector_huge", "bench.collector_huge", ("--dsn", options.dsn))]


def read_collector_huge(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
    _, f = largest(results)
    rows = [
        Row(
            "collector_huge",
            "peak RSS collecting 5,000 nodes, 150,000 pods",
            f["peak_rss_mb"],
            "MB",
            target=Target("<", collector_huge.RSS_LIMIT_MB),
            note=f"the worker after its imports: {f['baseline_rss_mb']:.0f} MB; collect exit {f['collect_exit']:.0f}",
        ),
        Row(
            "collector_huge",
            "CPU per 10,000 pods, collector path",
            f["collector_ms_per_10k"],
            "ms",
            "bare orjson.loads, GC off",
            f["bare_gc_off_ms_per_10k"],
            Target("<=", collector_huge.PARSE_TARGET),
        ),
        Row(
            "collector_huge",
            "CPU per 10,000 pods, typed client",
            f["typed_ms_per_10k"],
            "ms",
            "collector path, same 10,000 pods",
            f["slice_collector_ms_per_10k"],
            Target(">=", collector_huge.TYPED_TARGET),
        ),
    ]
    return rows, []


def plan_collector_fanout(options: Options) -> list[Run]:
    return [
        Run("collector_fanout", "bench.collector_fanout", ("--shoots", str(2000 * p // 100), "--dsn", options.dsn), p)
        for p in options.percents
    ]


def read_collector_fanout(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
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
            Target("<=", collector_fanout.TARGET_RATIO),
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


# -- issue 21: the two collection sources side by side ----------------------------------------------


def plan_collector_sources(options: Options) -> list[Run]:
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


SOURCE_LABELS = {"apiserver": "API-server source", "prometheus": "Prometheus source"}


def read_collector_sources(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
    run, f = largest(results)
    note = size_note(run) or f"{f['apiserver_warm_clusters']:,.0f} shoots, 64 workers, 50 ms per call, one run"
    rows: list[Row] = []
    for source, label in SOURCE_LABELS.items():
        warm_label = "credentials cached" if source == "apiserver" else "monitoring secrets cached"
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
                    Target("<=", collector_fanout.TARGET_RATIO),
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


# -- issue 17: the collector against hostile shoots ---------------------------------------------------


def plan_collector_hostile(options: Options) -> list[Run]:
    return [Run("collector_hostile", "bench.collector_hostile", ("--dsn", options.dsn), timeout_seconds=1800.0)]


def read_collector_hostile(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
    _, f = largest(results)
    rows: list[Row] = []
    for bomb in collector_hostile.BOMBS:
        key = f"{bomb.kind}_{bomb.resource}"
        if f"{key}_rss_mb" not in f:
            continue
        rows += [
            Row(
                "collector_hostile",
                f"peak RSS of a round, one shoot: {bomb.name}",
                f[f"{key}_rss_mb"],
                "MB",
                target=Target("<", collector_hostile.RSS_TARGET_MB),
                note=f"the same round without a bomb: {f['baseline_rss_mb']:.0f} MB",
            ),
            Row(
                "collector_hostile",
                f"worst /livez during that round: {bomb.name}",
                f[f"{key}_livez_worst_ms"],
                "ms",
                target=Target("<", collector_hostile.LIVEZ_TARGET_MS),
                note=f"without a bomb: {f['baseline_livez_worst_ms']:.0f} ms; "
                f"unanswered polls: {f[f'{key}_livez_failures']:.0f}",
            ),
        ]
    return rows, []


# -- issue 9: reconcile ----------------------------------------------------------------------------


def plan_reconcile(options: Options) -> list[Run]:
    rounds = "2" if options.quick else "3"
    return [
        Run(
            "reconcile",
            "bench.reconcile",
            (
                "--organizations",
                str(reconcile.DEFAULT_ORGANIZATIONS * p // 100),
                "--rounds",
                rounds,
                "--dsn",
                options.dsn,
            ),
            p,
        )
        for p in options.percents
    ]


def read_reconcile(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
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
            Target("<=", reconcile.TARGET_RATIO),
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


# -- issue 6: the simulator ------------------------------------------------------------------------


def plan_sim_scale(options: Options) -> list[Run]:
    args = ("--skip-huge", "--shoots", "400") if options.quick else ()
    return [Run("sim_scale", "bench.sim_scale", args)]


def read_sim_scale(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
    _, f = largest(results)
    limit = Target("<", sim_scale.RSS_LIMIT_BYTES / 1024**2)
    rows = [
        Row(
            "sim_scale", f"peak RSS serving {f['many_shoots']:,.0f} shoots", f["many_peak_rss_mib"], "MiB", target=limit
        ),
        Row(
            "sim_scale",
            "collector-like pass, requests per second",
            f["many_requests_per_second"],
            "req/s",
            note=f"{f['many_cpu_ms_per_request']:.1f} ms of simulator CPU per request",
        ),
    ]
    if "huge_peak_rss_mib" in f:
        rows.append(Row("sim_scale", "peak RSS serving 150,000 pods", f["huge_peak_rss_mib"], "MiB", target=limit))
    return rows, []


# -- issue 17: hostile input ------------------------------------------------------------------------


def plan_rapid_reset(options: Options) -> list[Run]:
    return [Run("rapid_reset", "bench.rapid_reset", ("--dsn", options.dsn), timeout_seconds=600.0)]


def read_rapid_reset(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
    _, f = largest(results)
    livez = "answered" if f["livez_ok"] else "did NOT answer"
    row = Row(
        "rapid_reset",
        f"staff API RSS after {f['streams']:,.0f} rapid-reset HTTP/2 streams",
        f["final_rss_mb"],
        "MB",
        f"RSS after {f['checkpoint_streams']:,.0f}",
        f["checkpoint_rss_mb"],
        Target("<=", rapid_reset.TARGET_RATIO),
        f"gRPC port, default limits; {f['streams_per_second']:,.0f} streams/s over {f['connections']:.0f} "
        f"connection(s); /livez {livez} afterwards",
    )
    return [row], []


# -- issue 19: search and sort of the staff API --------------------------------------------------------


def plan_fleet_search(options: Options) -> list[Run]:
    # At the scale fleet only: the targets compare cells of one run, and the matrix is long.
    return [
        Run(
            "fleet_search",
            "bench.fleet_search",
            (
                "--organizations",
                str(SCALE_ORGANIZATIONS),
                "--rounds",
                "3" if options.quick else "7",
                "--dsn",
                options.dsn,
            ),
        )
    ]


def read_fleet_search(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
    run, f = largest(results)
    page1 = f["ListClusters page 1"]
    note = size_note(run)
    worst = next(name for name in f if name.startswith("matrix worst cell"))
    rows = [
        Row(
            "fleet_search",
            "ListClusters filter x order, worst cell",
            f[worst] * page1,
            "ms",
            "ListClusters page 1",
            page1,
            Target("<=", fleet_search.MATRIX_TARGET),
            note,
        ),
        Row(
            "fleet_search",
            "ListClusters unique-name search",
            f["search unique cluster"],
            "ms",
            "ListClusters page 1",
            page1,
            Target("<=", fleet_search.SEARCH_TARGET),
            note,
        ),
        Row(
            "fleet_search",
            "SearchNamespaces by a common name",
            f["search namespace"],
            "ms",
            "ListClusters page 1",
            page1,
            Target("<=", fleet_search.SEARCH_TARGET),
            note,
        ),
        Row(
            "fleet_search",
            "SearchNamespaces by Kubernetes name",
            f["search namespace by Kubernetes name"],
            "ms",
            "ListClusters page 1",
            page1,
            Target("<=", fleet_search.SEARCH_TARGET),
            note,
        ),
        Row(
            "fleet_search",
            "GetFleetSummary read fresh",
            f["GetFleetSummary (fresh)"],
            "ms",
            "count(*) of clusters",
            f["count(*) clusters"],
            Target("<=", fleet_search.SUMMARY_TARGET),
            note,
        ),
        Row(
            "fleet_search",
            "ListOrganizations 500 per page",
            f["ListOrganizations size 500"],
            "ms",
            "ListOrganizations 100 per page",
            f["ListOrganizations size 100"],
            Target("<=", fleet_search.ORGANIZATIONS_TARGET),
            note,
        ),
    ]
    for scope in ("fleet", "one organization"):
        rows.append(
            Row(
                "fleet_search",
                f"GetFleetTrends 30 days hourly, {scope}",
                f[f"GetFleetTrends 30 days hourly, {scope}"],
                "ms",
                "ListClusters page 1",
                page1,
                Target("<=", fleet_search.TRENDS_TARGET),
                note or f"history storage {f['history bytes per day'] / 2**20:.1f} MiB per day",
            )
        )
    return rows, []


# -- issue 19: the DCIM pages in Chromium ---------------------------------------------------------------


def plan_dcim_pages(options: Options) -> list[Run]:
    # The scale fleet only; the world and its history are the ones fleet_api and fleet_search use.
    rounds = "3" if options.quick else "5"
    args = ("--organizations", str(SCALE_ORGANIZATIONS), "--rounds", rounds, "--dsn", options.dsn)
    return [Run("dcim_pages", "bench.dcim_pages", args)]


def read_dcim_pages(results: Sequence[Result]) -> tuple[list[Row], list[Point]]:
    run, f = largest(results)
    if "summary ms" not in f:
        return [], []  # no Chromium where the benchmarks ran: nothing was measured
    note = size_note(run) or "headless Chromium, fresh browser context per load; measured, not a target"
    rows = [
        Row("dcim_pages", f"DCIM {name} page, time to content", f[f"{name} ms"], "ms", note=note)
        for name in dcim_pages.PAGES
    ]
    return rows, []


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("overview_function", plan_overview_function, read_overview_function),
    Benchmark("fleet_api", plan_fleet_api, read_fleet_api),
    Benchmark("fleet_search", plan_fleet_search, read_fleet_search),
    Benchmark("dcim_pages", plan_dcim_pages, read_dcim_pages),
    Benchmark("overview_api", plan_overview_api, read_overview_api),
    Benchmark("collector_huge", plan_collector_huge, read_collector_huge),
    Benchmark("collector_fanout", plan_collector_fanout, read_collector_fanout),
    Benchmark("collector_sources", plan_collector_sources, read_collector_sources),
    Benchmark("collector_hostile", plan_collector_hostile, read_collector_hostile),
    Benchmark("reconcile", plan_reconcile, read_reconcile),
    Benchmark("sim_scale", plan_sim_scale, read_sim_scale),
    Benchmark("rapid_reset", plan_rapid_reset, read_rapid_reset),
)
NAMES = tuple(b.name for b in BENCHMARKS)
