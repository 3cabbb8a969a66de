"""Prometheus metrics of the request stack, shared by both APIs (one set per process).

Service-specific metrics (the overview cache, database reads) live beside their services; all of them
register in the default registry and are served on `/metrics`.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

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
API_READY = Gauge(
    "fleet_api_ready",
    "1 while the API is ready (/readyz 200, gRPC health SERVING), else 0: its database answered with a new enough "
    "schema and its role may do what the API runs (the public API's role: that and nothing else).",
)
READINESS_FAILURES = Counter(
    "fleet_api_readiness_failures",
    "Readiness checks that did not pass, by reason: database_unreachable, schema_too_old, role_missing_privilege, "
    "role_excess_privilege (one check may count two). An unreachable database leaves a ready API ready.",
    ["reason"],
)
