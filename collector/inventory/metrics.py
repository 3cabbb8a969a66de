"""Prometheus metrics of the inventory loop, served on /metrics by the inventory worker only.

Every metric here is made in `REGISTRY`, this module's own registry, not in the default one: only
WORKER_MODE=inventory serves it (collector/main.py), so the reconcile worker, which imports this module
too, never exports them (a gauge it left at 0 would read as "the last round was in 1970"). The count of
minted shoot credentials is kube/garden.py's, and that of monitoring secrets read prometheus/resolve.py's,
where those happen; both are inventory metrics and join this registry. Failure reasons are the short
labels of kube/errors.py plus `credential`, `no_shoot`, `database` and `internal`, so an alert can tell a
broken shoot from a broken database.
"""

from __future__ import annotations

from functools import partial

import prometheus_client

from collector.kube.garden import CREDENTIALS_MINTED
from collector.prometheus.resolve import SECRETS_READ

REGISTRY = prometheus_client.CollectorRegistry()
# The constructors below make each metric in REGISTRY (never in the default registry).
Counter = partial(prometheus_client.Counter, registry=REGISTRY)
Gauge = partial(prometheus_client.Gauge, registry=REGISTRY)
Histogram = partial(prometheus_client.Histogram, registry=REGISTRY)

REGISTRY.register(CREDENTIALS_MINTED)
REGISTRY.register(SECRETS_READ)

CLUSTERS_COLLECTED = Counter("fleet_inventory_clusters_collected", "Clusters read and stored successfully.")
CLUSTERS_FAILED = Counter("fleet_inventory_clusters_failed", "Cluster collections that failed, by reason.", ["reason"])
CLUSTER_DURATION = Histogram(
    "fleet_inventory_cluster_duration_seconds",
    "Time to collect one cluster (credential, reading, storing), by outcome.",
    ["outcome"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60),
)
ROUND_DURATION = Histogram(
    "fleet_inventory_round_duration_seconds",
    "Time from queueing a round to its last cluster finishing.",
    buckets=(0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900, 1800),
)
ROUND_LAG = Gauge(
    "fleet_inventory_round_lag_seconds",
    "How late the last round started against its schedule (a round that overran delays the next).",
)
ROUNDS_OVERRUN = Counter(
    "fleet_inventory_rounds_overrun",
    "Rounds that took longer than INVENTORY_INTERVAL_SECONDS (the next one starts late).",
)
ROUND_CLUSTERS = Gauge("fleet_inventory_round_clusters", "Clusters queued in the last round.")
LAST_ROUND = Gauge("fleet_inventory_last_round_timestamp_seconds", "Unix time the last round was queued.")
# The alert "the inventory loop is late" divides the last round's age by this, so it holds for any interval.
INTERVAL = Gauge("fleet_inventory_interval_seconds", "INVENTORY_INTERVAL_SECONDS the loop runs with (start to start).")
STORES_RETRIED = Counter(
    "fleet_inventory_stores_retried",
    "Cluster stores sent again because their pooled connection turned out to be dead.",
)
# Fleet-wide, judged once a round by the first shard (the staff view's rule, tenant.snapshot_is_stale).
CLUSTERS_STALE = Gauge(
    "fleet_inventory_clusters_stale",
    "Ready clusters whose snapshot is older than three inventory intervals, at the last round.",
)
SKEWED_STATUS_TIMES = Gauge(
    "fleet_inventory_skewed_status_times",
    "Live clusters whose status time lies in the future of the database's clock (read as now).",
)
LEDGER_CHANGES = Counter(
    "fleet_inventory_ledger_changes",
    "Ledger rows recorded, by resource type and change (created or destroyed).",
    ["resource_type", "change"],
)
LEDGER_UNLISTED = Counter(
    "fleet_inventory_ledger_sources_unlisted",
    "Ledger sources that could not be listed in a cluster (left untouched), by resource type and reason.",
    ["resource_type", "reason"],
)
LEDGER_OVER_CAP = Counter(
    "fleet_inventory_ledger_over_cap",
    "Ledger sources not recorded in a cluster because they held more than INVENTORY_LEDGER_MAX_PER_TYPE, by type.",
    ["resource_type"],
)
NAMESPACES_UNREAD = Counter(
    "fleet_inventory_namespaces_unread",
    "Namespaces of collected clusters whose count could not be told with certainty (kept, marked unread), by reason.",
    ["reason"],
)
