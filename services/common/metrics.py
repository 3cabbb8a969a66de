"""Prometheus metrics of the request stack, shared by both APIs (one set per process).

Service-specific metrics (the overview cache, database reads) live beside their services; all of them
register in the default registry and are served on `/metrics`.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

RPC_REQUESTS = Counter(
    "fleet_rpc_requests",
    "RPCs answered, by procedure, protocol and status code.",
    ["service", "method", "protocol", "code"],
)
RPC_DURATION = Histogram(
    "fleet_rpc_duration_seconds",
    "Time from receiving an RPC to its answer, by procedure and protocol.",
    ["service", "method", "protocol"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
