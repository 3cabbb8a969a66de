"""Which benchmarks `python -m bench` runs, in this order: the registry of the table.

Each benchmark module declares its own `BENCHMARK` (bench/runs.py): the runs to make and how their
figures become table rows and growth points. The order here is the order of the run and of the table;
the names are what `--only` takes.
"""

from __future__ import annotations

from bench import (
    collector_fanout,
    collector_hostile,
    collector_huge,
    collector_shards,
    collector_sources,
    dcim_pages,
    fleet_api,
    fleet_search,
    fleet_usage,
    overview_api,
    overview_function,
    rapid_reset,
    reconcile,
    sim_scale,
    tracing_overhead,
)
from bench.runs import Benchmark

BENCHMARKS: tuple[Benchmark, ...] = (
    overview_function.BENCHMARK,
    fleet_api.BENCHMARK,
    fleet_search.BENCHMARK,
    fleet_usage.BENCHMARK,
    dcim_pages.BENCHMARK,
    overview_api.BENCHMARK,
    tracing_overhead.BENCHMARK,
    collector_huge.BENCHMARK,
    collector_fanout.BENCHMARK,
    collector_shards.BENCHMARK,
    collector_sources.BENCHMARK,
    collector_hostile.BENCHMARK,
    reconcile.BENCHMARK,
    sim_scale.BENCHMARK,
    rapid_reset.BENCHMARK,
)
NAMES = tuple(b.name for b in BENCHMARKS)
