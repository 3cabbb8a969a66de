"""The gauge FleetClustersStale reads, `fleet_inventory_clusters_stale`: after each round the first shard
sets it to the stale clusters the staff view counts at that round (the round's fleet history row,
judged by tenant.snapshot_is_stale over the listing); other shards leave it alone.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from collector.inventory import history_store, metrics
from collector.inventory.loop import InventoryLoop
from collector.inventory.sources import SOURCES
from collector.mock import MockReader
from collector.settings import InventorySettings, Shard
from services.fleet.queries.summary import fleet_totals
from tests.fixtures.collector import T0, make_world
from tests.fixtures.fleet_api import NOW
from tests.fixtures.postgres import TestDatabase

KEEP = {"round_retention": timedelta(hours=48), "hour_retention": timedelta(days=35)}
SENTINEL = 99.0


async def test_the_rounds_stale_count_is_the_staff_views(fleet_database: TestDatabase) -> None:
    async with await psycopg.AsyncConnection.connect(fleet_database.dsn("fun_cluster_worker")) as worker:
        await history_store.record_round(worker, at=NOW, **KEEP)
        stale = await history_store.round_clusters_stale(worker, at=NOW)
        never_recorded = await history_store.round_clusters_stale(worker, at=NOW + timedelta(seconds=1))
    async with await psycopg.AsyncConnection.connect(fleet_database.dsn("fun_platform_admin_api")) as admin:
        totals = await fleet_totals(admin, now=NOW)
    assert stale == totals.clusters_stale
    assert stale, "the staff world must hold stale clusters at NOW"
    assert never_recorded is None


def loop(pool: AsyncConnectionPool[Any], shard: Shard) -> InventoryLoop:
    settings = InventorySettings(interval_seconds=60, workers=2, timeout_seconds=5, shard=shard)
    return InventoryLoop(pool=pool, reader=MockReader(pool, sources=SOURCES), settings=settings, clock=lambda: T0)


async def test_the_first_shard_sets_the_gauge_after_a_round_and_the_others_do_not(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any]
) -> None:
    with database.admin() as admin:
        make_world(admin, clusters=2)
    metrics.CLUSTERS_STALE.set(SENTINEL)
    await loop(worker_pool, Shard(1, 2)).run_once()
    assert metrics.REGISTRY.get_sample_value("fleet_inventory_clusters_stale") == SENTINEL
    await loop(worker_pool, Shard(0, 2)).run_once()
    with database.admin() as admin:
        row = admin.execute(
            "SELECT clusters_stale FROM tenant.fleet_history WHERE resolution = 'round' AND at = %s", (T0,)
        ).fetchone()
    assert row is not None
    assert metrics.REGISTRY.get_sample_value("fleet_inventory_clusters_stale") == row[0]
