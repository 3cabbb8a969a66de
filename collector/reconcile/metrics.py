"""Prometheus metrics of the reconcile loop, served on /metrics by the reconcile worker only.

Every metric here is made in `REGISTRY`, this module's own registry, like inventory/metrics.py: only
WORKER_MODE=reconcile serves it (collector/main.py), so the inventory worker never exports them.
The open-findings gauge is set from the database after every stored pass, so it shows what the staff
view shows, not what this process happened to open.
"""

from __future__ import annotations

from functools import partial

import prometheus_client

REGISTRY = prometheus_client.CollectorRegistry()
# The constructors below make each metric in REGISTRY (never in the default registry).
Counter = partial(prometheus_client.Counter, registry=REGISTRY)
Gauge = partial(prometheus_client.Gauge, registry=REGISTRY)
Histogram = partial(prometheus_client.Histogram, registry=REGISTRY)

PASS_DURATION = Histogram(
    "fleet_reconcile_pass_duration_seconds",
    "Time of one reconcile pass, listing and storing, by outcome.",
    ["outcome"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250),
)
PASSES = Counter("fleet_reconcile_passes", "Reconcile passes, by outcome (completed or failed).", ["outcome"])
SHOOTS_LISTED = Gauge("fleet_reconcile_shoots_listed", "Shoots the last completed pass listed.")
DUPLICATE_CLAIMS = Gauge(
    "fleet_reconcile_duplicate_claims", "Clusters claimed by more than one shoot in the last completed pass."
)
OPEN_FINDINGS = Gauge("fleet_reconcile_open_findings", "Open drift findings, by kind.", ["kind"])
FINDINGS_OPENED = Counter("fleet_reconcile_findings_opened", "Drift findings opened, by kind.", ["kind"])
FINDINGS_RESOLVED = Counter("fleet_reconcile_findings_resolved", "Drift findings resolved, by kind.", ["kind"])
# The alert "reconcile is late" divides the last pass's age by this, so it holds for any interval.
INTERVAL = Gauge("fleet_reconcile_interval_seconds", "RECONCILE_INTERVAL_SECONDS the loop runs with (start to start).")
LAST_COMPLETED = Gauge(
    "fleet_reconcile_last_completed_timestamp_seconds", "Unix time the last reconcile pass was stored."
)
LEDGER_ROWS_CLOSED = Counter(
    "fleet_reconcile_ledger_rows_closed",
    "Active ledger rows of deleted clusters whose shoot is gone, recorded as destroyed, by reason.",
    ["reason"],
)
LEDGER_CHANGES = Counter(
    "fleet_reconcile_ledger_changes",
    "gardener.* ledger rows (clusters, worker pools, extensions, add-ons) created, changed and destroyed.",
    ["resource_type", "change"],
)
SHOOT_PARTS_UNREADABLE = Counter(
    "fleet_reconcile_shoot_parts_unreadable",
    "Listed shoots whose workers, extensions or add-ons could not be read (their ledger rows were left as they were).",
    ["part"],
)
