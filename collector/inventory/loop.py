"""The inventory loop, `WORKER_MODE=inventory`: every ready cluster, every interval.

    run(stop) ─> run_once() ─> heartbeat ─> reader.prepare(round) ─> N workers ─> collect(cluster)
                                                                                  │
            read the cluster (ClusterReader) ─> ONE transaction: snapshots + ledger ─┘
            on failure: record last_error on its own (up to 10 s more), keep the old numbers

Each cluster is bounded by INVENTORY_TIMEOUT_SECONDS for reading and storing together (`asyncio.timeout`
cancels the read, which closes its connections, or the store, which rolls back). A failure is
recorded and never stops the round; one slow cluster holds only its own worker. The heartbeat is
written each time a round is queued, not when it ends, with the interval, so the staff view can call
snapshots stale (docs/architecture.md, 'Staleness is measured in inventory intervals'). A round that
overruns the interval is logged and counted, and the next one starts right after it: rounds never
stack.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from psycopg_pool import AsyncConnectionPool

from collector.inventory import history_store, metrics, store
from collector.inventory.reading import ClusterReader, ClusterRow, CollectError, Reading
from collector.inventory.results import ClusterResult, RoundSummary, summarize
from collector.inventory.shards import in_shard
from collector.inventory.sources import NOT_VISIBLE, OVER_CAP
from collector.kube.errors import KubeError
from collector.settings import LIVENESS_INTERVALS, InventorySettings
from common import tracing
from common.clock import Clock, utc_now
from common.database import CheckUnlessRecent
from common.health import Liveness
from common.text import truncate

logger = logging.getLogger(__name__)

# Recording a failure may itself run out of time or find the database down: logged, never raised.
_RECORDING_ERRORS: tuple[type[Exception], ...] = (TimeoutError, *store.DATABASE_ERRORS)


class InventoryLoop:
    """Every `interval_seconds` (once at start), collect every ready cluster with bounded workers."""

    def __init__(
        self,
        *,
        pool: AsyncConnectionPool[Any],
        reader: ClusterReader,
        settings: InventorySettings,
        clock: Clock = utc_now,
        checks: CheckUnlessRecent | None = None,
    ) -> None:
        """`checks`: the pool's own connection check, when it lends recent connections unchecked
        (a store that finds one dead then goes out once more)."""
        self._pool = pool
        self._checks = checks
        self._reader = reader
        self._settings = settings
        self._clock = clock
        self.first_round_done = asyncio.Event()
        """Set once a round was queued and finished; /readyz waits for it."""
        # Beats when a round starts, per cluster collected and when a round ends; a round's gaps are
        # bounded by INVENTORY_TIMEOUT_SECONDS, the waits between rounds by the interval.
        self.liveness = Liveness(
            LIVENESS_INTERVALS * settings.interval_seconds + settings.timeout_seconds + settings.failure_grace_seconds
        )
        """/livez fails once the loop has not beaten for three intervals (plus one cluster's budget)."""

    async def run_once(
        self,
        clusters: Sequence[ClusterRow] | None = None,
        *,
        on_result: Callable[[ClusterResult], None] | None = None,
    ) -> RoundSummary:
        """Collect `clusters`, or (None) queue a round of every ready cluster of this shard with a heartbeat.

        An on-demand collection (clusters given) writes no heartbeat: it is not the loop's round.
        Raises only when the clusters of a round cannot be read from the database.
        """
        started_at = self._clock()
        started = time.perf_counter()
        full_round = clusters is None
        if clusters is None:
            async with self._pool.connection() as conn:
                ready = await store.ready_clusters(conn)
            clusters = [c for c in ready if in_shard(c.id, self._settings.shard)]
            await self._heartbeat(started_at, len(clusters))
        await self._reader.prepare(clusters, full_round=full_round)
        results: list[ClusterResult] = []
        queue: asyncio.Queue[ClusterRow] = asyncio.Queue()
        for cluster in clusters:
            queue.put_nowait(cluster)

        async def worker() -> None:
            while True:
                try:
                    cluster = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                result = await self.collect(cluster)
                self.liveness.beat()
                results.append(result)
                if on_result is not None:
                    on_result(result)

        async with asyncio.TaskGroup() as workers:
            for _ in range(min(self._settings.workers, len(clusters))):
                workers.create_task(worker())
        summary = summarize(started_at, time.perf_counter() - started, results)
        if full_round:
            metrics.ROUND_DURATION.observe(summary.duration_seconds)
            metrics.ROUND_CLUSTERS.set(len(clusters))
            if self._settings.shard.index == 0:
                await self._record_history(started_at)
                await self._export_health(started_at)
            self.first_round_done.set()
        logger.info(
            "inventory round done" if full_round else "collection done",
            extra={
                "clusters": len(results),
                "collected": summary.collected,
                "failed": summary.failed,
                "duration_seconds": round(summary.duration_seconds, 3),
            },
        )
        return summary

    async def collect(self, cluster: ClusterRow) -> ClusterResult:
        """Read and store one cluster within INVENTORY_TIMEOUT_SECONDS; on failure record why. Never raises.

        With tracing on, each collection is a trace of its own (a round may hold thousands), its outcome
        and failure reason on the span and its database statements beneath it."""
        tracer = tracing.tracer()
        if tracer is None:
            return await self._collect(cluster)
        attributes = {"fleet.cluster.id": str(cluster.id), "fleet.cluster.name": str(cluster)}
        with tracer.start_as_current_span(
            "inventory.collect", attributes=attributes, record_exception=False, set_status_on_exception=False
        ) as span:
            result = await self._collect(cluster)
            span.set_attribute("fleet.outcome", "collected" if result.ok else "failed")
            if not result.ok:
                tracing.set_error(span, result.reason or "failed", result.error or "")
            return result

    async def _collect(self, cluster: ClusterRow) -> ClusterResult:
        started = time.perf_counter()
        context = {"cluster_id": str(cluster.id), "cluster": str(cluster)}
        phase = "reading"
        try:
            async with asyncio.timeout(self._settings.timeout_seconds):
                reading = await self._reader.read(cluster)
                phase = "storing"
                observed = self._clock()
                stored = await self._store(cluster, reading, observed)
        except TimeoutError:
            # A Prometheus source's timeout names the Prometheus, as its other failures do.
            where = " the shoot's Prometheus" if phase == "reading" and self._settings.source == "prometheus" else ""
            error = (
                f"timed out after {self._settings.timeout_seconds:g} s (INVENTORY_TIMEOUT_SECONDS) while {phase}{where}"
            )
            return await self._failed(cluster, started, "timeout", error, context)
        except KubeError as e:
            return await self._failed(cluster, started, e.reason, f"{phase} the shoot: {e}", context)
        except CollectError as e:
            return await self._failed(cluster, started, e.reason, str(e), context)
        except store.DATABASE_ERRORS as e:
            error = f"{phase}: database error {type(e).__name__}: {truncate(str(e))}"
            return await self._failed(cluster, started, "database", error, context)
        except Exception as e:
            logger.exception("collection failed unexpectedly", extra=context)
            return await self._failed(cluster, started, "internal", f"internal error ({type(e).__name__})", context)
        duration = time.perf_counter() - started
        metrics.CLUSTERS_COLLECTED.inc()
        metrics.CLUSTER_DURATION.labels("collected").observe(duration)
        ledger = stored.ledger
        for resource_type, counts in ledger.by_type.items():
            metrics.LEDGER_CHANGES.labels(resource_type, "created").inc(counts.created)
            metrics.LEDGER_CHANGES.labels(resource_type, "destroyed").inc(counts.destroyed)
        for resource_type, unlisted in ledger.unlisted.items():
            metrics.LEDGER_UNLISTED.labels(resource_type, unlisted.reason).inc()
            if unlisted.reason == OVER_CAP:
                metrics.LEDGER_OVER_CAP.labels(resource_type).inc()
            if unlisted.reason == NOT_VISIBLE:
                continue  # every cluster, every round, by design of the source: counted, not logged
            logger.info(
                "ledger source not listed; its type is left as it was",
                extra={**context, "resource_type": resource_type, "reason": unlisted.reason, "error": unlisted.message},
            )
        logger.debug(
            "cluster collected",
            extra={**context, "nodes": reading.nodes, "pods": reading.pods, "duration_seconds": round(duration, 3)},
        )
        self._count_unread(stored.unread_namespaces, context)
        unread = stored.unread_namespaces
        return ClusterResult(cluster, duration, reading=reading, ledger=ledger, unread_namespaces=unread)

    @staticmethod
    def _count_unread(unread: dict[UUID, str], context: dict[str, str]) -> None:
        # Never stored as a count: each one is counted and the cluster's are logged once, by reason.
        reasons = Counter(unread.values())
        for reason, count in reasons.items():
            metrics.NAMESPACES_UNREAD.labels(reason).inc(count)
        if reasons:
            logger.warning("namespaces not read; their counts are kept", extra={**context, "reasons": dict(reasons)})

    async def _store(self, cluster: ClusterRow, reading: Reading, observed: datetime) -> store.Stored:
        """Write a reading in one transaction; once more if the pool lent a dead connection unchecked.

        The worker's pool lends a connection that came back within a second without checking it
        (common/database.py, `CheckUnlessRecent`). If its backend ended meanwhile (a restart, a
        failover), this store finds it: every connection is then checked at its next checkout, and
        the store goes out once more within the same INVENTORY_TIMEOUT_SECONDS. Any other failure, a checked
        connection that broke included, is the cluster's. Should the connection have died after the
        server committed, the second write finds its rows in place and changes nothing (every write
        is an upsert or inserts what is missing); only the ledger's change counters miss that write.
        """
        checks = self._checks
        for attempt in (1, 2):
            used: store.Conn | None = None
            try:
                async with self._pool.connection() as conn:
                    used = conn
                    # Kubernetes was read first: the transaction covers the writes only, never an API
                    # call. In a pipeline, BEGIN goes out with the first query, not in a round trip of its own.
                    async with conn.pipeline(), conn.transaction():
                        return await store.store_reading(conn, cluster.id, reading, observed=observed)
            except store.DATABASE_ERRORS as e:
                if (
                    attempt == 2
                    or checks is None
                    or used is None
                    or not checks.lent_unchecked(used)
                    or not store.connection_lost(used, e)
                ):
                    raise
            metrics.STORES_RETRIED.inc()
            logger.info(
                "a connection lent unchecked was dead; storing once more on a checked one",
                extra={"cluster_id": str(cluster.id), "cluster": str(cluster)},
            )
            checks.distrust()
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def _failed(
        self, cluster: ClusterRow, started: float, reason: str, error: str, context: dict[str, str]
    ) -> ClusterResult:
        recorded = False
        message = truncate(error, 500)
        try:
            # Recording the failure has a budget of its own on top of INVENTORY_TIMEOUT_SECONDS.
            async with (
                asyncio.timeout(self._settings.failure_grace_seconds),
                self._pool.connection() as conn,
                conn.transaction(),
            ):
                await store.record_failure(conn, cluster.id, error=message, at=self._clock())
            recorded = True
        except _RECORDING_ERRORS as e:
            logger.warning(
                "cannot record the failed collection", extra={**context, "cause": type(e).__name__, "error": message}
            )
        duration = time.perf_counter() - started
        metrics.CLUSTERS_FAILED.labels(reason).inc()
        metrics.CLUSTER_DURATION.labels("failed").observe(duration)
        logger.warning("collection failed", extra={**context, "reason": reason, "error": message})
        return ClusterResult(cluster, duration, error=message, reason=reason, failure_recorded=recorded)

    async def _record_history(self, at: datetime) -> None:
        # The trends' totals of this round (collector/inventory/history_store.py); a failure costs one
        # point of history and is logged, never the round.
        try:
            async with self._pool.connection() as conn:
                written, pruned = await history_store.record_round(
                    conn,
                    at=at,
                    round_retention=timedelta(hours=self._settings.history_round_retention_hours),
                    hour_retention=timedelta(days=self._settings.history_hour_retention_days),
                )
        except _RECORDING_ERRORS as e:
            logger.warning("cannot record the fleet history", extra={"cause": type(e).__name__, "error": str(e)})
            return
        logger.info("fleet history recorded", extra={"rows": written, "pruned": pruned})

    async def _export_health(self, at: datetime) -> None:
        # The fleet-wide gauges: the stale clusters of the round's history row (the staff view's figure,
        # which FleetClustersStale reads) and the status times in the future the sync state clamped. A
        # failure leaves the last values and is logged, never the round.
        try:
            async with self._pool.connection() as conn:
                stale = await history_store.round_clusters_stale(conn, at=at)
                skewed = await store.skewed_status_times(conn)
        except _RECORDING_ERRORS as e:
            logger.warning("cannot read the fleet's health", extra={"cause": type(e).__name__, "error": str(e)})
            return
        if stale is not None:
            metrics.CLUSTERS_STALE.set(stale)
        metrics.SKEWED_STATUS_TIMES.set(skewed)
        if skewed:
            logger.warning("status times in the future were read as now", extra={"clusters": skewed})

    async def _heartbeat(self, at: datetime, clusters: int) -> None:
        metrics.LAST_ROUND.set(at.timestamp())
        details = {
            "clusters": clusters,
            "workers": self._settings.workers,
            "timeout_seconds": self._settings.timeout_seconds,
            "shard": str(self._settings.shard),
        }
        async with self._pool.connection() as conn, conn.transaction():
            await store.record_heartbeat(
                conn,
                at=at,
                interval_seconds=math.ceil(self._settings.interval_seconds),
                shard=str(self._settings.shard),
                details=details,
            )

    async def run(self, stop: asyncio.Event) -> None:
        """Queue a round now, then one every interval (start to start) until `stop` is set.

        A round still running when `stop` is set is cancelled: each cluster's transaction rolls
        back, so nothing partial is stored. A failed round (the database is down) is logged and the
        loop goes on.
        """
        loop = asyncio.get_running_loop()
        interval = self._settings.interval_seconds
        metrics.INTERVAL.set(interval)
        scheduled = loop.time()
        while not stop.is_set():
            self.liveness.beat()
            round_task = asyncio.create_task(self.run_once())
            stopping = asyncio.create_task(stop.wait())
            done, _ = await asyncio.wait({round_task, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if round_task not in done:
                round_task.cancel()
                await asyncio.gather(round_task, return_exceptions=True)
                return
            stopping.cancel()
            self.liveness.beat()
            if round_task.exception() is not None:
                logger.error("inventory round failed", exc_info=round_task.exception())
            scheduled += interval
            now = loop.time()
            metrics.ROUND_LAG.set(max(0.0, now - scheduled))
            if now > scheduled:
                metrics.ROUNDS_OVERRUN.inc()
                logger.warning(
                    "inventory round overran its interval; the next one starts now",
                    extra={"late_seconds": round(now - scheduled, 3), "interval_seconds": interval},
                )
                scheduled = now
            try:
                await asyncio.wait_for(stop.wait(), timeout=scheduled - now)
            except TimeoutError:
                continue
