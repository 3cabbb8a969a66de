"""Prometheus metrics of the overview's cache and its database reads (requests by code come from the
shared request stack, `services.common.metrics`). All register in the default registry, served on /metrics.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

CACHE_LOOKUPS = Counter(
    "fleet_overview_cache_lookups",
    "Overview lookups by result: hit (a fresh answer), miss (started the shared read), shared (waited for it).",
    ["result"],
)
DATABASE_READS = Counter(
    "fleet_overview_database_reads",
    "Reads of tenant.platform_overview() by outcome: ok, error, or cancelled (read deadline or shutdown).",
    ["outcome"],
)
DATABASE_READ_DURATION = Histogram(
    "fleet_overview_database_read_duration_seconds",
    "Time one read of tenant.platform_overview() took, from asking the pool to the last row, any outcome.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
