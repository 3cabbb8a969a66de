"""Prometheus metrics of the staff API's own parts (requests by code come from the shared request stack,
`services.common.metrics`). All register in the default registry, served on /metrics.
"""

from __future__ import annotations

from prometheus_client import Counter

SUMMARY_CACHE_LOOKUPS = Counter(
    "fleet_admin_summary_cache_lookups",
    "GetFleetSummary lookups by result: hit (a fresh answer), miss (started the shared read), shared (waited for it).",
    ["result"],
)
