"""The cluster, its worker pools, extensions and add-ons as ledger rows, through the real reconcile loop.

fleet-sim serves its shoots over TLS to the garden client; reconcile lists them and writes the
`gardener.*` rows into a real PostgreSQL as the worker role. The control API then changes a shoot's
spec (a pool scaled in its bounds, added, removed; an extension asked for, turned off; an add-on
enabled; the shoot re-created) and the next pass must show it: rows appear, follow and close, and a
re-created shoot starts new rows. A part the garden answers in a shape Gardener never gives leaves its
rows as they were. The staff API lists each pool's machine type and bounds, typed, over gRPC.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from fundament.fleet.v1 import fleet_pb2
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from collector.kube.client import garden_client
from collector.kube.garden import RealGardener
from collector.reconcile.loop import ReconcileLoop, ReconcileSummary
from collector.reconcile.shoot_parts import MAX_ENTRIES
from common.clock import utc_now
from sim.world.shoots import ShootState
from tests.fixtures.collector import shoot_key_of, write_kubeconfig
from tests.fixtures.fleet_api import serving_fleet
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest

INTERVAL = timedelta(seconds=300)


class Passes:
    """Reconcile passes on a fake clock, one interval apart."""

    def __init__(self, pool: AsyncConnectionPool[Any], kubeconfig: Path) -> None:
        self.pool, self.kubeconfig = pool, kubeconfig
        self.now = utc_now()

    async def next(self) -> ReconcileSummary:
        self.now += INTERVAL
        at = self.now
        gardener = RealGardener(await garden_client(self.kubeconfig, timeout_seconds=10))
        try:
            loop = ReconcileLoop(
                pool=self.pool,
                gardener=gardener,
                interval_seconds=INTERVAL.total_seconds(),
                deletion_timeout_seconds=10**9,
                clock=lambda: at,
            )
            return await loop.run_once()
        finally:
            await gardener.close()


@pytest.fixture
def passes(sim: SimUnderTest, sim_worker_pool: AsyncConnectionPool[Any], tmp_path: Path) -> Passes:
    return Passes(sim_worker_pool, write_kubeconfig(tmp_path / "garden.yaml", sim.garden_kubeconfig))


def rows(database: TestDatabase, cluster_id: UUID, *, active: bool = True) -> list[dict[str, Any]]:
    with database.admin() as admin, admin.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT * FROM tenant.infrastructure_resources WHERE cluster_id = %s AND resource_type LIKE 'gardener.%%'"
            " AND (destroyed IS NULL) = %s ORDER BY resource_type, name, created",
            (cluster_id, active),
        ).fetchall()


def expected(cluster_id: UUID, shoot: ShootState) -> set[tuple[str, str, str, bool, object]]:
    """(type, name, resource_id, billable, details) of every row the shoot implies."""
    return {
        ("gardener.cluster", str(cluster_id), shoot.uid, True, None),
        *(
            (
                "gardener.workerpool",
                w.name,
                shoot.uid,
                False,
                (("machine_type", w.machine_type), ("maximum", w.maximum), ("minimum", w.minimum)),
            )
            for w in shoot.workers
        ),
        *(("gardener.extension", e.type, shoot.uid, False, None) for e in shoot.extensions if not e.disabled),
        *(("gardener.addon", name, shoot.uid, False, None) for name in shoot.addons),
    }


def shown(database: TestDatabase, cluster_id: UUID) -> set[tuple[str, str, str, bool, object]]:
    return {
        (
            r["resource_type"],
            r["name"],
            r["resource_id"],
            r["billable"],
            None if r["details"] is None else tuple(sorted(r["details"].items())),
        )
        for r in rows(database, cluster_id)
    }


@pytest.fixture
def cluster(sim: SimUnderTest) -> UUID:
    """Organization 0's first running cluster: several pools, among them the planted names."""
    return UUID(sim.fleet.notes["planted.pool_names"])


async def test_rows_appear_follow_and_close_as_the_shoot_changes(
    sim: SimUnderTest, sim_database: TestDatabase, passes: Passes, cluster: UUID
) -> None:
    key = shoot_key_of(sim, cluster)
    shoot = initial = sim.control.shoot(key)
    assert len(shoot.workers) >= 2
    first = await passes.next()
    assert shown(sim_database, cluster) == expected(cluster, shoot)
    assert first.gardener_ledger["created"]["gardener.cluster"] >= 1
    assert all(r["created"] == passes.now == r["last_seen"] for r in rows(sim_database, cluster))
    ids = {(r["resource_type"], r["name"]): r["id"] for r in rows(sim_database, cluster)}

    # Nothing changed: the same rows, seen again.
    again = await passes.next()
    assert again.gardener_ledger["created"] == again.gardener_ledger["destroyed"] == {}
    assert {(r["resource_type"], r["name"]): r["id"] for r in rows(sim_database, cluster)} == ids
    assert {r["last_seen"] for r in rows(sim_database, cluster)} == {passes.now}

    # A pool's bounds and machine type change: the same row follows.
    pool = shoot.workers[0].name
    sim.control.set_worker(key, pool, machine_type="m5.2xlarge", minimum=4, maximum=12)
    # A pool is added, another removed; an extension asked for, one turned off; an add-on enabled.
    sim.control.set_worker(key, "gpu-burst", machine_type="p3.2xlarge", minimum=0, maximum=2)
    removed = shoot.workers[1].name
    sim.control.remove_worker(key, removed)
    sim.control.set_extension(key, "shoot-oidc-service")
    [turned_off, *_] = [e.type for e in initial.extensions if not e.disabled]
    sim.control.set_extension(key, turned_off, disabled=True)
    sim.control.set_addon(key, "nginxIngress", True)
    changed_at = passes.now + INTERVAL
    summary = await passes.next()
    shoot = sim.control.shoot(key)
    assert shown(sim_database, cluster) == expected(cluster, shoot)
    assert summary.gardener_ledger["changed"] == {"gardener.workerpool": 1}
    [followed] = [r for r in rows(sim_database, cluster) if r["name"] == pool]
    assert followed["id"] == ids[("gardener.workerpool", pool)]
    assert followed["details"] == {"machine_type": "m5.2xlarge", "minimum": 4, "maximum": 12}
    assert summary.gardener_ledger["created"]["gardener.workerpool"] == 1
    assert summary.gardener_ledger["created"]["gardener.extension"] == 1
    assert summary.gardener_ledger["created"]["gardener.addon"] == 1
    closed = {(r["resource_type"], r["name"]): r for r in rows(sim_database, cluster, active=False)}
    assert set(closed) >= {("gardener.workerpool", removed)}
    assert all(r["destroyed"] == changed_at and r["destroyed_reason"] == "not_found" for r in closed.values())
    assert set(closed) == {("gardener.workerpool", removed), ("gardener.extension", turned_off)}

    # The add-on is switched off again, then the pool comes back: a new row, never the old one reopened.
    sim.control.set_addon(key, "nginxIngress", False)
    sim.control.set_worker(key, removed, minimum=1, maximum=3)
    await passes.next()
    assert [r["name"] for r in rows(sim_database, cluster) if r["resource_type"] == "gardener.addon"] == []
    [back] = [r for r in rows(sim_database, cluster) if r["name"] == removed]
    assert back["id"] != ids[("gardener.workerpool", removed)] and back["created"] == passes.now

    # The staff API lists the pools with their machine type and bounds, typed.
    async with serving_fleet(sim_database.dsn("fun_platform_admin_api")) as (_, clients):
        answer = await clients.call(
            "grpc",
            "ListInfrastructureResources",
            fleet_pb2.ListInfrastructureResourcesRequest(cluster_id=str(cluster), resource_type="gardener.workerpool"),
        )
    pools = {r.name: r.worker_pool for r in answer.resources}
    assert pools[pool] == fleet_pb2.WorkerPoolSpec(machine_type="m5.2xlarge", minimum=4, maximum=12)
    assert pools["gpu-burst"] == fleet_pb2.WorkerPoolSpec(machine_type="p3.2xlarge", minimum=0, maximum=2)
    assert set(pools) == {w.name for w in sim.control.shoot(key).workers}


async def test_a_recreated_shoot_starts_new_rows_and_a_vanished_one_closes_them(
    sim: SimUnderTest, sim_database: TestDatabase, passes: Passes, cluster: UUID
) -> None:
    key = shoot_key_of(sim, cluster)
    await passes.next()
    old = {r["id"] for r in rows(sim_database, cluster)}
    # Deleted and created again between two passes: same name, same technical id, a new uid.
    new_uid = sim.control.recreate_shoot(key)
    await passes.next()
    fresh = rows(sim_database, cluster)
    assert {r["resource_id"] for r in fresh} == {new_uid}
    assert not old & {r["id"] for r in fresh}
    assert {r["id"] for r in rows(sim_database, cluster, active=False)} == old

    # The shoot leaves the garden while the cluster lives (lost): the complete listing is the evidence.
    sim.control.delete_shoot(key)
    summary = await passes.next()
    assert rows(sim_database, cluster) == []
    assert sum(summary.gardener_ledger["destroyed"].values()) == len(fresh)
    assert {r["destroyed"] for r in rows(sim_database, cluster, active=False) if r["id"] not in old} == {passes.now}


async def test_a_part_in_a_shape_gardener_never_gives_leaves_its_rows_alone(
    sim: SimUnderTest, sim_database: TestDatabase, passes: Passes, cluster: UUID
) -> None:
    key = shoot_key_of(sim, cluster)
    await passes.next()
    pools_before = {r["id"]: r["last_seen"] for r in rows(sim_database, cluster) if r["resource_type"].endswith("pool")}
    assert pools_before
    sim.control.set_worker(key, sim.control.shoot(key).workers[0].name, minimum=-1)  # no count at all
    summary = await passes.next()
    assert summary.gardener_ledger["unreadable"] == {"workers": 1}
    assert summary.gardener_ledger["destroyed"] == {}
    after = {r["id"]: r["last_seen"] for r in rows(sim_database, cluster) if r["resource_type"].endswith("pool")}
    assert after == pools_before, "not read is not gone: the pool rows are left exactly as they were"
    [row] = [r for r in rows(sim_database, cluster) if r["resource_type"] == "gardener.cluster"]
    assert row["last_seen"] == passes.now, "the rest of the shoot is read as usual"

    # More pools than any shoot has (the bound): not read either, the rows still as they were.
    sim.control.set_worker(key, sim.control.shoot(key).workers[0].name, minimum=1)
    for i in range(MAX_ENTRIES):
        sim.control.set_worker(key, f"flood-{i}")
    summary = await passes.next()
    assert summary.gardener_ledger["unreadable"] == {"workers": 1}
    assert summary.gardener_ledger["created"] == {}
    assert {r["id"]: r["last_seen"] for r in rows(sim_database, cluster) if r["resource_type"].endswith("pool")} == (
        pools_before
    )
