"""The reconcile loop, `WORKER_MODE=reconcile`: mirror Gardener's shoots and persist drift.

On one side sits the garden, read through a `GardenLister` (kube/garden.py or the mock garden: a
complete, paged list of every shoot carrying `fundament.io/cluster-id`, then one of every shoot
without it, or an error; then every Gardener Project, whose failure only leaves the unlabeled-shoot
rule unevaluated, because "could not list the projects" must never read as "there are none");
on the other
the database, written through store.py in ONE transaction per pass: the mirror, the ledger rows of
clusters that are gone (deleted, no shoot left in this complete listing), the findings of drift.py,
the heartbeat. The garden is read first and completely; only then does the transaction
open, so a failed or partial list records nothing at all, not even the heartbeat (whose age then
shows how old the last good pass is; docs/architecture.md, 'Reconcile records a pass whole or not
at all'). Reconcile never creates or deletes shoots: provisioning is another system's job.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from psycopg_pool import AsyncConnectionPool

from collector.kube.errors import KubeError
from collector.kube.liststream import gc_paused
from collector.reconcile import metrics, store
from collector.reconcile.drift import KIND_IDS, JsonValue, find_drift
from collector.reconcile.ledger_rows import desired_rows
from collector.reconcile.observed import Observed, observe_shoots, observe_unlabeled_shoots
from collector.reconcile.projects import GardenProject, MalformedProject, observe_projects
from collector.settings import DELETION_TIMEOUT_INTERVALS, LIVENESS_INTERVALS
from common import drift_kinds, tracing
from common.clock import Clock, rfc3339, utc_now
from common.health import Liveness
from common.labels import CLUSTER_ID_LABEL
from common.text import truncate

logger = logging.getLogger(__name__)

UNLABELED_SELECTOR = f"!{CLUSTER_ID_LABEL}"
"""The second listing of a pass: shoots without the cluster-id label (drift kind unlabeled_shoot)."""


class GardenLister(Protocol):
    """The Gardener calls reconcile needs (kube/garden.py's Gardener and the mock garden have them)."""

    async def list_shoots(self, *, label_selector: str, page_size: int = 500) -> Sequence[Mapping[str, Any]]:
        """Every shoot matching `label_selector` across the garden; raises on any failure, never a partial list."""
        ...

    async def list_projects(self, *, page_size: int = 500) -> Sequence[Mapping[str, Any]]:
        """Every Gardener Project; raises KubeError on any failure, never a partial list."""
        ...


def _by_kind(counts: Mapping[str, int]) -> dict[str, int]:
    return {kind: counts.get(kind, 0) for kind in KIND_IDS}


@dataclass(frozen=True, slots=True)
class ReconcileSummary:
    """What one stored pass did: shoots listed and mirrored, findings per kind."""

    completed: datetime
    duration_seconds: float
    """The whole pass: listing the garden, then storing."""
    list_seconds: float
    """The part of the pass spent listing the garden (the rest is the transaction)."""
    shoots_listed: int
    shoots_new: int
    shoots_gone: int
    duplicate_claims: Mapping[str, list[str]]
    shoots_unlabeled: int = 0
    """Shoots the second listing found without the cluster-id label (anywhere in the garden)."""
    projects_listed: int | None = None
    """Gardener Projects the third listing found; None when it failed (see `not_evaluated`)."""
    not_evaluated: Mapping[str, str] = field(default_factory=dict)
    """Kinds whose rule this pass could not evaluate, with why; their open findings were kept as they were."""
    opened: Mapping[str, int] = field(default_factory=dict)
    """Findings opened by this pass, per kind (every kind present, zero or more)."""
    still_open: Mapping[str, int] = field(default_factory=dict)
    """Findings open before and seen again, per kind."""
    resolved: Mapping[str, int] = field(default_factory=dict)
    """Findings this pass no longer saw, now resolved, per kind."""
    open_now: Mapping[str, int] = field(default_factory=dict)
    """Every open finding after this pass, per kind."""
    ledger_closed: Mapping[str, int] = field(default_factory=dict)
    """Ledger rows of gone clusters this pass recorded as destroyed, per reason."""
    gardener_ledger: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """gardener.* rows this pass `created`, `changed` and `destroyed`, per resource type; and per part the
    shoots whose part was `unreadable` (its rows left as they were)."""

    def as_details(self) -> dict[str, JsonValue]:
        """The summary as JSON (the heartbeat's details and `reconcile --once --json`)."""
        return {
            "completed": rfc3339(self.completed),
            "duration_seconds": round(self.duration_seconds, 3),
            "list_seconds": round(self.list_seconds, 3),
            "shoots": {
                "listed": self.shoots_listed,
                "new": self.shoots_new,
                "gone": self.shoots_gone,
                "unlabeled": self.shoots_unlabeled,
            },
            "projects": {"listed": self.projects_listed},
            "not_evaluated": dict(self.not_evaluated),
            "duplicate_claims": {k: list(v) for k, v in self.duplicate_claims.items()},
            "findings": {
                "opened": dict(self.opened),
                "still_open": dict(self.still_open),
                "resolved": dict(self.resolved),
                "open": dict(self.open_now),
            },
            "ledger_closed": dict(self.ledger_closed),
            "gardener_ledger": {change: dict(counts) for change, counts in self.gardener_ledger.items()},
        }

    def render(self) -> str:
        """A small table for people: one row per kind."""
        lines = [
            f"shoots listed {self.shoots_listed} (new {self.shoots_new}, gone {self.shoots_gone}, "
            f"unlabeled {self.shoots_unlabeled}); "
            f"pass took {self.duration_seconds:.2f} s (listing {self.list_seconds:.2f} s)",
            f"{'kind':<26}{'opened':>8}{'still open':>12}{'resolved':>10}",
        ]
        for kind in KIND_IDS:
            lines.append(
                f"{kind:<26}{self.opened.get(kind, 0):>8}{self.still_open.get(kind, 0):>12}"
                f"{self.resolved.get(kind, 0):>10}"
            )
        lines.append(
            f"{'total':<26}{sum(self.opened.values()):>8}{sum(self.still_open.values()):>12}"
            f"{sum(self.resolved.values()):>10}"
        )
        for kind, reason in sorted(self.not_evaluated.items()):
            lines.append(f"{kind} not evaluated, its open findings kept: {reason}")
        if self.ledger_closed:
            closed = ", ".join(f"{reason} {count}" for reason, count in sorted(self.ledger_closed.items()))
            lines.append(f"ledger rows of gone clusters closed: {closed}")
        for change in ("created", "changed", "destroyed", "unreadable"):
            counts = self.gardener_ledger.get(change, {})
            if counts:
                listed = ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items()))
                lines.append(f"gardener ledger rows {change}: {listed}")
        if self.duplicate_claims:
            lines.append(f"clusters claimed by more than one shoot: {len(self.duplicate_claims)}")
        return "\n".join(lines)


class ReconcileLoop:
    """Every `interval_seconds` (once at start), list the garden's shoots and store the pass in one transaction."""

    def __init__(
        self,
        *,
        pool: AsyncConnectionPool[Any],
        gardener: GardenLister,
        interval_seconds: float,
        page_size: int = 500,
        deletion_timeout_seconds: float | None = None,
        clock: Clock = utc_now,
    ) -> None:
        if interval_seconds <= 0:
            raise ValueError(f"interval_seconds={interval_seconds}: must be positive")
        if deletion_timeout_seconds is not None and deletion_timeout_seconds <= 0:
            raise ValueError(f"deletion_timeout_seconds={deletion_timeout_seconds}: must be positive")
        # A deletion under way longer than this leaves drift (default: three intervals).
        self._deletion_timeout = timedelta(
            seconds=deletion_timeout_seconds
            if deletion_timeout_seconds is not None
            else DELETION_TIMEOUT_INTERVALS * interval_seconds
        )
        self._pool = pool
        self._gardener = gardener
        self._interval_seconds = interval_seconds
        self._page_size = page_size
        self._clock = clock
        self.first_pass_done = asyncio.Event()
        """Set once a pass completed; /readyz waits for it (fundament's reconcile worker does the same)."""
        self.liveness = Liveness(LIVENESS_INTERVALS * interval_seconds)
        """Beats when a pass starts and ends (stored or failed); /livez fails after three silent intervals."""

    async def run_once(self) -> ReconcileSummary:
        """List every labelled shoot, then store mirror, findings and heartbeat together; raises on failure.

        Raises whatever the listing raises (collector.kube.errors.KubeError and subclasses), MalformedShoot
        for a listing that cannot be trusted, and psycopg errors from the store. Nothing is written
        unless everything is.
        """
        tracer = tracing.tracer()
        if tracer is None:
            return await self._run_once()
        with tracer.start_as_current_span(
            "reconcile.pass", record_exception=False, set_status_on_exception=False
        ) as span:
            try:
                summary = await self._run_once()
            except Exception as e:
                span.set_attribute("fleet.outcome", "failed")
                tracing.set_error(span, type(e).__name__, truncate(str(e), 500))
                raise
            span.set_attributes(
                {
                    "fleet.outcome": "completed",
                    "fleet.shoots_listed": summary.shoots_listed,
                    "fleet.findings_opened": sum(summary.opened.values()),
                    "fleet.findings_resolved": sum(summary.resolved.values()),
                }
            )
            return summary

    async def _run_once(self) -> ReconcileSummary:
        started = time.perf_counter()
        try:
            summary = await self._pass(started)
        except Exception:
            metrics.PASSES.labels("failed").inc()
            metrics.PASS_DURATION.labels("failed").observe(time.perf_counter() - started)
            raise
        metrics.PASSES.labels("completed").inc()
        metrics.PASS_DURATION.labels("completed").observe(summary.duration_seconds)
        metrics.SHOOTS_LISTED.set(summary.shoots_listed)
        metrics.DUPLICATE_CLAIMS.set(len(summary.duplicate_claims))
        metrics.LAST_COMPLETED.set(summary.completed.timestamp())
        for kind in KIND_IDS:
            metrics.OPEN_FINDINGS.labels(kind).set(summary.open_now.get(kind, 0))
            metrics.FINDINGS_OPENED.labels(kind).inc(summary.opened.get(kind, 0))
            metrics.FINDINGS_RESOLVED.labels(kind).inc(summary.resolved.get(kind, 0))
        for reason, count in summary.ledger_closed.items():
            metrics.LEDGER_ROWS_CLOSED.labels(reason).inc(count)
        for change in ("created", "changed", "destroyed"):
            for resource_type, count in summary.gardener_ledger.get(change, {}).items():
                metrics.LEDGER_CHANGES.labels(resource_type, change).inc(count)
        for part, count in summary.gardener_ledger.get("unreadable", {}).items():
            metrics.SHOOT_PARTS_UNREADABLE.labels(part).inc(count)
        self.first_pass_done.set()
        return summary

    async def _pass(self, started: float) -> ReconcileSummary:
        # Read Kubernetes first and completely, outside any transaction: a failure here leaves the database untouched.
        objects = await self._gardener.list_shoots(label_selector=CLUSTER_ID_LABEL, page_size=self._page_size)
        with gc_paused():
            shoots = observe_shoots(objects)
        del objects  # the raw listing (about 20 dicts per shoot) is not needed past this point
        # The blind spot: shoots nobody labelled. Listed garden-wide (one paged list, however many
        # organizations), kept only where they sit in a live organization's project (drift.py).
        unlabeled = observe_unlabeled_shoots(
            await self._gardener.list_shoots(label_selector=UNLABELED_SELECTOR, page_size=self._page_size)
        )
        # Which namespaces are Fundament's projects: Gardener's Project objects say (projects.py).
        projects, projects_failure = await self._list_projects()
        listed = time.perf_counter()
        now = self._clock()
        async with self._pool.connection() as conn, conn.transaction():
            await store.lock_pass(conn)
            await store.stage_shoots(conn, shoots)
            clusters = await store.read_clusters(conn)
            organizations = await store.read_garden_organizations(conn)
            with gc_paused():
                world = Observed(
                    shoots,
                    clusters,
                    now=now,
                    deletion_timeout=self._deletion_timeout,
                    unlabeled=unlabeled,
                    organizations=organizations,
                    projects=projects,
                )
                findings = find_drift(world)
            shoot_changes = await store.store_shoots(conn, now=now)
            ledger_closed = await store.close_ledger_of_gone_clusters(conn, now=now)
            implied = desired_rows(world.shoots_of_clusters)
            gardener = await store.store_gardener_ledger(conn, implied, now=now)
            finding_changes = await store.store_findings(conn, findings, now=now, not_evaluated=world.not_evaluated)
            open_now = await store.count_open_findings(conn)
            duplicates = {str(cid): [str(uid) for uid in uids] for cid, uids in world.duplicate_claims().items()}
            summary = ReconcileSummary(
                completed=now,
                duration_seconds=time.perf_counter() - started,
                list_seconds=listed - started,
                shoots_listed=len(shoots),
                shoots_new=shoot_changes.new,
                shoots_gone=shoot_changes.gone,
                duplicate_claims=duplicates,
                shoots_unlabeled=len(unlabeled),
                projects_listed=None if projects is None else len(projects),
                not_evaluated={kind: projects_failure or "its input could not be read" for kind in world.not_evaluated},
                opened=_by_kind(finding_changes.opened),
                still_open=_by_kind(finding_changes.still_open),
                resolved=_by_kind(finding_changes.resolved),
                open_now=_by_kind(open_now),
                ledger_closed=ledger_closed,
                gardener_ledger={
                    "created": gardener.created,
                    "changed": gardener.changed,
                    "destroyed": gardener.destroyed,
                    "unreadable": implied.unreadable,
                },
            )
            await store.record_heartbeat(
                conn,
                now=now,
                interval_seconds=math.ceil(self._interval_seconds),
                details=summary.as_details(),
            )
        # The transaction has committed: the pass's duration includes it.
        summary = replace(summary, duration_seconds=time.perf_counter() - started)
        if duplicates:
            logger.warning("clusters claimed by more than one shoot", extra={"clusters": sorted(duplicates)})
        unreadable = [s for s in shoots if s.parts.problems]
        if unreadable:
            # One line a pass, however many shoots: a few examples and the count.
            logger.warning(
                "shoot parts could not be read; their ledger rows were left as they were",
                extra={
                    "shoots": len(unreadable),
                    "examples": [f"{s.namespace}/{s.name}: {'; '.join(s.parts.problems)}" for s in unreadable[:5]],
                },
            )
        logger.info(
            "reconcile pass stored",
            extra={
                "shoots_listed": summary.shoots_listed,
                "opened": sum(summary.opened.values()),
                "resolved": sum(summary.resolved.values()),
                "open": sum(summary.open_now.values()),
                "duration_seconds": round(summary.duration_seconds, 3),
            },
        )
        return summary

    async def _list_projects(self) -> tuple[list[GardenProject] | None, str | None]:
        """Every Gardener Project, or None and why when they could not be listed (or the listing is not trusted).

        Only the unlabeled-shoot rule needs them, so a failure here does not fail the pass: the rule
        is reported as not evaluated and its open findings stay open.
        """
        try:
            objects = await self._gardener.list_projects(page_size=self._page_size)
            return observe_projects(objects), None
        except (KubeError, MalformedProject) as e:
            reason = f"could not list Gardener's projects: {truncate(str(e) or type(e).__name__)}"
            logger.warning(
                "Gardener's projects could not be listed; the unlabeled-shoot rule is not evaluated this pass",
                extra={"kind": drift_kinds.UNLABELED_SHOOT, "error": reason},
            )
            return None, reason

    async def run(self, stop: asyncio.Event) -> None:
        """Run a pass now, then one every interval (start to start) until `stop` is set.

        A failed pass is logged and counted and the loop goes on; the heartbeat's age shows how old
        the last good pass is.
        """
        loop = asyncio.get_running_loop()
        metrics.INTERVAL.set(self._interval_seconds)
        while not stop.is_set():
            started = loop.time()
            self.liveness.beat()
            try:
                await self.run_once()
            except Exception:
                logger.exception("reconcile pass failed; nothing was recorded")
            self.liveness.beat()
            wait = max(0.0, self._interval_seconds - (loop.time() - started))
            try:
                await asyncio.wait_for(stop.wait(), timeout=wait)
            except TimeoutError:
                continue
