"""The inventory loop against real PostgreSQL as fun_cluster_worker, with the database-backed mock reader.

These tests need no simulator: GARDENER_MODE=mock reads the database (collector/mock.py), and readers that
fail on purpose stand in for broken shoots. tests/collector/test_sim.py drives the same loop through
fleet-sim's Kubernetes APIs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from collector.inventory.loop import InventoryLoop
from collector.inventory.metrics import REGISTRY
from collector.inventory.reading import ClusterRow, Reading
from collector.inventory.results import ClusterResult
from collector.inventory.shards import in_shard, shard_of
from collector.inventory.sources import SOURCES, Discovered
from collector.kube.errors import Forbidden
from collector.mock import MockReader, mock_pod_count
from collector.settings import InventorySettings, Shard
from common.database import CheckUnlessRecent, make_pool
from common.naming import worker_name
from common.settings import DatabaseSettings
from db import provisioning
from tests.fixtures.collector import T0, WORKER_ROLE, World, make_world
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.waiting import eventually_async


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> Any:
        return self.now


class ScriptedReader:
    """The mock reader, except for clusters told to fail, hang or return a given reading."""

    def __init__(self, inner: MockReader) -> None:
        self.inner = inner
        self.fail: dict[UUID, Exception] = {}
        self.hang: set[UUID] = set()
        self.replace: dict[UUID, Reading] = {}
        self.released = asyncio.Event()
        self.reading_now = 0
        self.most_at_once = 0

    async def prepare(self, clusters: Sequence[ClusterRow], *, full_round: bool) -> None:
        return None

    async def read(self, cluster: ClusterRow) -> Reading:
        self.reading_now += 1
        self.most_at_once = max(self.most_at_once, self.reading_now)
        try:
            if cluster.id in self.hang:
                await self.released.wait()
            if cluster.id in self.fail:
                raise self.fail[cluster.id]
            if cluster.id in self.replace:
                return self.replace[cluster.id]
            return await self.inner.read(cluster)
        finally:
            self.reading_now -= 1


def settings(**changes: Any) -> InventorySettings:
    return replace(InventorySettings(interval_seconds=60, workers=3, timeout_seconds=5), **changes)


def snapshot(database: TestDatabase, cluster_id: UUID) -> dict[str, Any]:
    with database.admin() as admin, admin.cursor(row_factory=dict_row) as cur:
        row = cur.execute("SELECT * FROM tenant.cluster_snapshots WHERE cluster_id = %s", (cluster_id,)).fetchone()
    assert row is not None
    return row


def all_rows(database: TestDatabase, table: str, cluster_id: UUID) -> list[dict[str, Any]]:
    with database.admin() as admin, admin.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            f"SELECT * FROM tenant.{table} WHERE cluster_id = %s ORDER BY 1",
            (cluster_id,),
        ).fetchall()


@pytest.fixture
def world(database: TestDatabase) -> World:
    with database.admin() as admin:
        return make_world(admin, clusters=4, pools=(("System Pool", 1), ("workers", 3)), namespaces=("api", "jobs"))


# What another shard's store of the cluster holds until it commits (collector/inventory/store.sql).
LOCK_CLUSTER = "SELECT 1 FROM tenant.cluster_snapshots WHERE cluster_id = %s FOR UPDATE"


def loop_over(pool: AsyncConnectionPool[Any], reader: Any, clock: Clock, **changes: Any) -> InventoryLoop:
    return InventoryLoop(pool=pool, reader=reader, settings=settings(**changes), clock=clock)


async def test_a_mock_round_stores_what_the_database_describes(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    clock = Clock()
    loop = loop_over(worker_pool, MockReader(worker_pool, sources=SOURCES), clock)
    summary = await loop.run_once()
    assert summary.failed == 0
    assert {r.cluster.id for r in summary.results} == {c.id for c in world.clusters}
    for cluster in world.clusters:
        snap = snapshot(database, cluster.id)
        assert (snap["observed"], snap["nodes"], snap["ready_nodes"]) == (T0, 4, 4)
        assert snap["pods"] == mock_pod_count("api") + mock_pod_count("jobs")
        assert snap["last_error"] is None
        pools = {r["node_pool_id"]: r["nodes"] for r in all_rows(database, "node_pool_snapshots", cluster.id)}
        assert pools == {cluster.node_pools["System Pool"]: 1, cluster.node_pools["workers"]: 3}
        namespaces = {r["namespace_id"]: r["pods"] for r in all_rows(database, "namespace_snapshots", cluster.id)}
        assert namespaces == {cluster.namespaces[n]: mock_pod_count(n) for n in ("api", "jobs")}
        nodes = all_rows(database, "infrastructure_resources", cluster.id)
        assert sorted(r["name"] for r in nodes) == sorted(
            [f"{worker_name('System Pool')}-0", *(f"{worker_name('workers')}-{i}" for i in range(3))]
        )
    with database.admin() as admin:
        beat = admin.execute(
            "SELECT last_completed, interval_seconds FROM tenant.worker_heartbeats WHERE loop = 'inventory'"
        ).fetchone()
        # The round's totals went into the fleet history (trends), the pods it collected included.
        recorded = admin.execute(
            "SELECT at, clusters, pods FROM tenant.fleet_history WHERE resolution = 'round'"
        ).fetchall()
    assert beat == (T0, 60)
    pods = len(world.clusters) * (mock_pod_count("api") + mock_pod_count("jobs"))
    assert recorded == [(T0, len(world.clusters), pods)]


async def test_only_ready_clusters_of_live_tenant_organizations_are_queued(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    with database.admin() as admin:
        hibernated = make_world(admin, shoot_status="hibernated").clusters[0].id
        unhealthy = make_world(admin, shoot_status="unhealthy").clusters[0].id
        gone_org = make_world(admin)
        admin.execute("UPDATE tenant.organizations SET deleted = %s WHERE id = %s", (T0, gone_org.organization_id))
        deleted = world.clusters[3].id
        provisioning.delete_cluster(admin, deleted, at=T0)
        system = uuid4()
        admin.execute(
            "INSERT INTO tenant.clusters (id, organization_id, name, region, kubernetes_version)"
            " VALUES (%s, tenant.system_organization_id(), 'sys', 'eu', '1.31.0')",
            (system,),
        )
        provisioning.write_state(admin, system, at=T0)
    summary = await loop_over(worker_pool, MockReader(worker_pool, sources=SOURCES), Clock()).run_once()
    queued = {r.cluster.id for r in summary.results}
    assert queued == {c.id for c in world.clusters[:3]} | {unhealthy}
    assert not queued & {hibernated, deleted, system, gone_org.clusters[0].id}


async def test_a_failed_read_keeps_the_previous_numbers_and_observed(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    clock = Clock()
    reader = ScriptedReader(MockReader(worker_pool, sources=SOURCES))
    loop = loop_over(worker_pool, reader, clock)
    await loop.run_once()
    broken = world.clusters[1].id
    before = snapshot(database, broken)
    pools_before = all_rows(database, "node_pool_snapshots", broken)
    reader.fail[broken] = Forbidden("GET /api/v1/nodes: 403 Forbidden: nodes is forbidden", status=403)
    clock.now = T0 + timedelta(minutes=15)
    summary = await loop.run_once()
    failed = [r for r in summary.results if not r.ok]
    assert [(r.cluster.id, r.reason, r.failure_recorded) for r in failed] == [(broken, "forbidden", True)]
    after = snapshot(database, broken)
    assert {k: after[k] for k in after if not k.startswith("last_error")} == {
        k: before[k] for k in before if not k.startswith("last_error")
    }
    assert after["last_error_at"] == T0 + timedelta(minutes=15)
    assert "403 Forbidden" in after["last_error"]
    assert all_rows(database, "node_pool_snapshots", broken) == pools_before
    for other in world.clusters:
        if other.id != broken:
            assert snapshot(database, other.id)["observed"] == T0 + timedelta(minutes=15)
    # The next good collection clears the error.
    del reader.fail[broken]
    clock.now = T0 + timedelta(minutes=30)
    await loop.run_once()
    recovered = snapshot(database, broken)
    assert (recovered["observed"], recovered["last_error"], recovered["last_error_at"]) == (clock.now, None, None)


async def test_a_first_collection_that_fails_records_only_the_error(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    reader = ScriptedReader(MockReader(worker_pool, sources=SOURCES))
    reader.fail[world.clusters[0].id] = Forbidden("nope", status=403)
    await loop_over(worker_pool, reader, Clock()).run_once()
    snap = snapshot(database, world.clusters[0].id)
    assert (snap["observed"], snap["nodes"], snap["last_error_at"]) == (None, 0, T0)


async def test_a_hung_cluster_times_out_alone(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    reader = ScriptedReader(MockReader(worker_pool, sources=SOURCES))
    hung = world.clusters[2].id
    reader.hang.add(hung)
    summary = await loop_over(worker_pool, reader, Clock(), timeout_seconds=0.3, workers=2).run_once()
    by_id = {r.cluster.id: r for r in summary.results}
    assert by_id[hung].reason == "timeout"
    assert "timed out after 0.3 s (INVENTORY_TIMEOUT_SECONDS) while reading" in (by_id[hung].error or "")
    assert all(r.ok for cid, r in by_id.items() if cid != hung)
    assert "INVENTORY_TIMEOUT_SECONDS" in snapshot(database, hung)["last_error"]


async def test_a_store_that_fails_half_way_writes_nothing(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    clock = Clock()
    reader = ScriptedReader(MockReader(worker_pool, sources=SOURCES))
    loop = loop_over(worker_pool, reader, clock)
    await loop.run_once()
    target = world.clusters[0]
    before = {t: all_rows(database, t, target.id) for t in ("node_pool_snapshots", "namespace_snapshots")}
    ledger_before = all_rows(database, "infrastructure_resources", target.id)
    good = await MockReader(worker_pool, sources=SOURCES).read(
        ClusterRow(target.id, target.name, world.organization_id, world.organization_name)
    )
    # The snapshots are written first; the ledger's CHECK (name of 1..255 characters) then fails.
    bad_node = Discovered("kubernetes.node", "", "n" * 300, "p", True)
    reader.replace[target.id] = replace(
        good, nodes=99, ready_nodes=98, ledger={**good.ledger, "kubernetes.node": (bad_node,)}
    )
    clock.now = T0 + timedelta(minutes=15)
    summary = await loop.run_once()
    result = next(r for r in summary.results if r.cluster.id == target.id)
    assert result.reason == "database"
    snap = snapshot(database, target.id)
    assert (snap["observed"], snap["nodes"]) == (T0, 4)
    assert "database error" in snap["last_error"]
    assert {t: all_rows(database, t, target.id) for t in before} == before
    assert all_rows(database, "infrastructure_resources", target.id) == ledger_before


async def test_workers_bound_the_clusters_read_at_once(
    worker_pool: AsyncConnectionPool[Any], database: TestDatabase
) -> None:
    with database.admin() as admin:
        make_world(admin, clusters=9)
    reader = ScriptedReader(MockReader(worker_pool, sources=SOURCES))
    results: list[ClusterResult] = []
    summary = await loop_over(worker_pool, reader, Clock(), workers=2).run_once(on_result=results.append)
    assert len(summary.results) == 9 == len(results)
    assert reader.most_at_once == 2


def test_shards_split_the_clusters_without_overlap() -> None:
    ids = [uuid4() for _ in range(300)]
    shards = [Shard(i, 3) for i in range(3)]
    owners = [[s for s in shards if in_shard(cid, s)] for cid in ids]
    assert all(len(o) == 1 for o in owners)
    sizes = [sum(1 for o in owners if o[0] is s) for s in shards]
    assert min(sizes) > 50, f"a stable hash should spread clusters, got {sizes}"
    assert all(in_shard(cid, Shard(0, 1)) for cid in ids)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_a_change_of_the_shard_count_moves_clusters_only_to_or_from_the_new_shard(count: int) -> None:
    ids = [uuid4() for _ in range(2000)]
    before = {cid: shard_of(cid, count) for cid in ids}
    after = {cid: shard_of(cid, count + 1) for cid in ids}
    moved = [cid for cid in ids if before[cid] != after[cid]]
    # Growing: a cluster stays or goes to the new shard; shrinking is the same read backwards.
    assert all(after[cid] == count for cid in moved)
    # About 1/(count+1) of them move (a modulo hash would move about count/(count+1)).
    share = len(moved) / len(ids)
    assert abs(share - 1 / (count + 1)) < 0.05, share
    # Stable: the same answer every time, from the id alone.
    assert all(shard_of(cid, count + 1) == after[cid] for cid in ids[:50])


async def test_two_writers_of_one_cluster_take_turns(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    """While another transaction holds a cluster's write lock (another shard storing it), a store of
    that cluster waits for it, then writes; a store of another cluster does not wait."""
    clock = Clock()
    loop = loop_over(worker_pool, MockReader(worker_pool, sources=SOURCES), clock)
    assert (await loop.run_once()).collected == len(world.clusters)
    first, second = world.clusters[:2]
    rows = {c.id: ClusterRow(c.id, c.name, world.organization_id, world.organization_name) for c in (first, second)}
    clock.now = T0 + timedelta(minutes=15)
    with psycopg.connect(database.dsn(WORKER_ROLE)) as other:
        with other.transaction():
            other.execute(LOCK_CLUSTER, [first.id])
            assert (await loop.run_once([rows[second.id]])).collected == 1
            collecting = asyncio.create_task(loop.run_once([rows[first.id]]))
            with database.admin() as admin:

                def waiting_on_the_lock() -> bool:
                    found = admin.execute(
                        "SELECT count(*) FROM pg_catalog.pg_stat_activity"
                        " WHERE usename = %s AND wait_event_type = 'Lock' AND state = 'active'",
                        [WORKER_ROLE],
                    ).fetchone()
                    return bool(found and found[0] == 1)

                await eventually_async(waiting_on_the_lock, "the store waiting on the lock", watch=[collecting])
            assert not collecting.done()
            assert snapshot(database, first.id)["observed"] == T0
        summary = await collecting
    assert summary.collected == 1
    assert snapshot(database, first.id)["observed"] == T0 + timedelta(minutes=15)


async def test_a_shard_collects_only_its_clusters(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    shard = Shard(1, 2)
    summary = await loop_over(worker_pool, MockReader(worker_pool, sources=SOURCES), Clock(), shard=shard).run_once()
    assert {r.cluster.id for r in summary.results} == {c.id for c in world.clusters if in_shard(c.id, shard)}


def _counter(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


async def test_an_overrunning_round_is_reported_and_never_stacked(
    worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    reader = ScriptedReader(MockReader(worker_pool, sources=SOURCES))
    reader.hang.add(world.clusters[0].id)
    loop = loop_over(worker_pool, reader, Clock(), interval_seconds=0.05, timeout_seconds=5, workers=4)
    overruns = _counter("fleet_inventory_rounds_overrun_total")
    rounds: list[int] = []
    in_flight: list[int] = []  # how many rounds ran at once, as each round started
    running = 0
    original = loop.run_once

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal running
        rounds.append(1)
        running += 1
        in_flight.append(running)
        try:
            return await original(*args, **kwargs)
        finally:
            running -= 1

    loop.run_once = counted  # type: ignore[method-assign]
    stop = asyncio.Event()
    runner = asyncio.create_task(loop.run(stop))
    # The first round hangs on one cluster until released, for well past the interval (six of them).
    await eventually_async(lambda: reader.reading_now >= 1, "the first round reading")
    await asyncio.sleep(0.3)  # six intervals pass while it hangs: a loop that stacked rounds would start more
    reader.released.set()
    await loop.first_round_done.wait()
    await eventually_async(lambda: len(rounds) >= 2, "a second round")
    stop.set()
    await runner
    assert _counter("fleet_inventory_rounds_overrun_total") >= overruns + 1
    # Never stacked: every round started with no other round running, the second only after the first.
    assert in_flight[:2] == [1, 1] and set(in_flight) == {1}


async def test_stop_cancels_a_round_and_rolls_back(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    reader = ScriptedReader(MockReader(worker_pool, sources=SOURCES))
    for cluster in world.clusters:
        reader.hang.add(cluster.id)
    loop = loop_over(worker_pool, reader, Clock(), workers=4)
    stop = asyncio.Event()
    runner = asyncio.create_task(loop.run(stop))
    await eventually_async(lambda: reader.reading_now == 4, "four clusters being read")
    stop.set()
    await asyncio.wait_for(runner, timeout=10)
    with database.admin() as admin:
        assert admin.execute("SELECT count(*) FROM tenant.cluster_snapshots").fetchone() == (0,)


async def test_database_rows_are_never_deleted_by_the_worker(database: TestDatabase) -> None:
    with (
        psycopg.connect(database.dsn("fun_cluster_worker")) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute("DELETE FROM tenant.cluster_snapshots")


async def test_a_connection_that_died_in_the_pool_costs_a_retry_not_a_cluster(
    database: TestDatabase, world: World
) -> None:
    # As the worker's own pool: a connection back within the window is lent unchecked, so connections
    # whose backends ended after the last round are found by the stores, which then go out again.
    checks = CheckUnlessRecent(window_seconds=60.0)
    pool = make_pool(
        DatabaseSettings(url=database.dsn(WORKER_ROLE), pool_min=3, pool_max=3),
        application_name="test-dead-in-pool",
        checks=checks,
    )
    await pool.open(wait=True)
    try:
        reader = ScriptedReader(MockReader(pool, sources=SOURCES))
        clusters = [ClusterRow(c.id, c.name, world.organization_id, world.organization_name) for c in world.clusters]
        for cluster in clusters:  # read now: after the backends end, only the stores touch the pool
            reader.replace[cluster.id] = await reader.inner.read(cluster)
        clock = Clock()
        loop = InventoryLoop(pool=pool, reader=reader, settings=settings(), clock=clock, checks=checks)
        assert (await loop.run_once(clusters)).failed == 0
        with database.admin() as admin:
            ended = admin.execute(
                "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_catalog.pg_stat_activity"
                " WHERE application_name = 'test-dead-in-pool'"
            ).fetchone()
        assert ended == (3,)
        retried = retries()
        clock.now = T0 + timedelta(minutes=15)
        summary = await loop.run_once(clusters)
        assert [r.error for r in summary.results if not r.ok] == []
        assert retries() > retried
        for row in clusters:
            assert snapshot(database, row.id)["observed"] == clock.now
    finally:
        await pool.close()


def retries() -> float:
    return REGISTRY.get_sample_value("fleet_inventory_stores_retried_total") or 0.0


async def test_without_the_pools_check_a_dead_connection_fails_its_cluster_once(
    database: TestDatabase, world: World
) -> None:
    # A loop that is not told of the pool's check does not retry: the dead connections fail their
    # clusters' stores, and the next round, on new connections, collects them.
    pool = make_pool(
        DatabaseSettings(url=database.dsn(WORKER_ROLE), pool_min=1, pool_max=1),
        application_name="test-dead-no-retry",
        checks=CheckUnlessRecent(window_seconds=60.0),
    )
    await pool.open(wait=True)
    try:
        reader = ScriptedReader(MockReader(pool, sources=SOURCES))
        target = world.clusters[0]
        row = ClusterRow(target.id, target.name, world.organization_id, world.organization_name)
        reader.replace[target.id] = await reader.inner.read(row)
        clock = Clock()
        loop = InventoryLoop(pool=pool, reader=reader, settings=settings(), clock=clock)
        assert (await loop.run_once([row])).failed == 0
        with database.admin() as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid, 5000) FROM pg_catalog.pg_stat_activity"
                " WHERE application_name = 'test-dead-no-retry'"
            )
        retried = retries()
        summary = await loop.run_once([row])
        assert [r.reason for r in summary.results] == ["database"]
        assert retries() == retried
        assert (await loop.run_once([row])).failed == 0
    finally:
        await pool.close()


async def test_a_store_that_fails_for_another_reason_is_not_sent_again(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], world: World
) -> None:
    # A working connection lent unchecked, and writes the database refuses: a CHECK constraint, and
    # a statement timeout (an OperationalError on a connection that is still alive). Neither is sent again.
    checks = CheckUnlessRecent(window_seconds=60.0)
    pool = make_pool(
        DatabaseSettings(url=database.dsn(WORKER_ROLE), pool_min=1, pool_max=1, statement_timeout_ms=300),
        application_name="test-refused-store",
        checks=checks,
    )
    await pool.open(wait=True)
    try:
        reader = ScriptedReader(MockReader(worker_pool, sources=SOURCES))
        target = world.clusters[0]
        row = ClusterRow(target.id, target.name, world.organization_id, world.organization_name)
        good = await reader.inner.read(row)
        bad_node = Discovered("kubernetes.node", "", "n" * 300, "p", True)
        reader.replace[target.id] = replace(good, ledger={**good.ledger, "kubernetes.node": (bad_node,)})
        loop = InventoryLoop(pool=pool, reader=reader, settings=settings(), clock=Clock(), checks=checks)
        retried = retries()
        refused = await loop.run_once([row])
        assert [r.reason for r in refused.results] == ["database"]
        assert "CheckViolation" in str(refused.results[0].error)

        reader.replace[target.id] = good
        with database.admin() as admin:
            admin.autocommit = False
            admin.execute("LOCK TABLE tenant.cluster_snapshots IN ACCESS EXCLUSIVE MODE")
            slow = await loop.run_once([row])  # the store waits on the lock past its statement timeout
            admin.rollback()
        assert [r.reason for r in slow.results] == ["database"]
        assert "QueryCanceled" in str(slow.results[0].error)
        assert retries() == retried
    finally:
        await pool.close()
