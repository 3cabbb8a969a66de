"""The worker's side of the collector benchmarks: its pool and garden client, opened as cluster-worker
opens them, and the clusters a measured round takes (ready in the database, with a shoot in the garden)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psycopg_pool import AsyncConnectionPool

from collector.inventory import store
from collector.inventory.reading import ClusterRow
from collector.kube.client import garden_client
from collector.kube.garden import RealGardener, shoot_refs
from collector.kube.limits import ResponseLimits
from collector.worker import worker_checks
from common.database import CheckUnlessRecent, make_pool
from common.labels import CLUSTER_ID_LABEL
from common.settings import DatabaseSettings

# The scale fleet's 50,000 shoots hold more values than GARDENER_MAX_LIST_VALUES' default admits
# (sized for the chart's memory limit): the benchmark raises it, as a landscape that large would.
SCALE_LIMITS = ResponseLimits(max_list_values=40_000_000)


@dataclass(frozen=True)
class WorkerSide:
    pool: AsyncConnectionPool[Any]
    checks: CheckUnlessRecent
    """The pool's connection check, for the loop (as the worker hands it over)."""
    gardener: RealGardener


@asynccontextmanager
async def worker_side(
    worker_dsn: str, kubeconfig: Path, *, workers: int, application_name: str
) -> AsyncIterator[WorkerSide]:
    """A pool for `workers` workers with the worker's own connection check, and a garden client; both
    closed at the end."""
    checks = worker_checks()
    pool = make_pool(
        DatabaseSettings(url=worker_dsn, pool_min=4, pool_max=workers + 2, statement_timeout_ms=60_000),
        application_name=application_name,
        checks=checks,
    )
    await pool.open(wait=True)
    try:
        gardener = RealGardener(await garden_client(kubeconfig, timeout_seconds=120, limits=SCALE_LIMITS))
        try:
            yield WorkerSide(pool, checks, gardener)
        finally:
            await gardener.close()
    finally:
        await pool.close()


async def clusters_with_a_shoot(side: WorkerSide, shoots: int) -> tuple[int, list[ClusterRow]]:
    """How many clusters are ready, and the first `shoots` of them that have a shoot in the garden."""
    async with side.pool.connection() as conn:
        ready = await store.ready_clusters(conn)
    refs = shoot_refs(await side.gardener.list_shoots(label_selector=CLUSTER_ID_LABEL), CLUSTER_ID_LABEL)
    return len(ready), [c for c in ready if c.id in refs][:shoots]
