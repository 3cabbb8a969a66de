"""Ledger rows of clusters that are gone: closed once, by reconcile, with how it was decided.

Against fleet-sim over TLS with the official client and real PostgreSQL: the inventory records a
cluster's resources; the cluster is deleted; while the garden still lists its shoot (the deletion
under way) the rows stay; once the shoot is gone, reconcile's next complete pass records every active
row destroyed, reason `cluster_deleted` (or `organization_deleted`), exactly once. A cluster that is
merely lost (live, shoot gone), hibernated or unreachable keeps its rows. The staff API shows the
reason over gRPC.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from fundament.fleet.v1 import fleet_pb2
from psycopg_pool import AsyncConnectionPool

from collector.kube.client import garden_client
from collector.kube.errors import ServerError
from collector.kube.garden import RealGardener
from collector.reconcile.loop import ReconcileLoop, ReconcileSummary
from common.clock import utc_now
from db import provisioning
from tests.fixtures.collector import Collector, shoot_key_of, write_kubeconfig
from tests.fixtures.fleet_api import serving_fleet
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest


class Reconcile:
    def __init__(self, sim: SimUnderTest, pool: AsyncConnectionPool[Any], kubeconfig: Path) -> None:
        self.sim, self.pool, self.kubeconfig = sim, pool, kubeconfig

    async def once(self, at: datetime | None = None) -> ReconcileSummary:
        """One pass, at `at` on a fake clock (default: now)."""
        gardener = RealGardener(await garden_client(self.kubeconfig, timeout_seconds=10))
        try:
            # No bound on deletions here: this file is about the ledger, not stuck deletions.
            loop = ReconcileLoop(
                pool=self.pool,
                gardener=gardener,
                interval_seconds=INTERVAL.total_seconds(),
                deletion_timeout_seconds=10**9,
                clock=(lambda: at) if at is not None else utc_now,
            )
            return await loop.run_once()
        finally:
            await gardener.close()


@pytest.fixture
def reconcile(sim: SimUnderTest, sim_worker_pool: AsyncConnectionPool[Any], tmp_path: Path) -> Reconcile:
    return Reconcile(sim, sim_worker_pool, write_kubeconfig(tmp_path / "garden-reconcile.yaml", sim.garden_kubeconfig))


def planted_leftovers(sim: SimUnderTest) -> dict[str, int]:
    """What a first pass closes of the seed's own: the planted deleted cluster's rows."""
    return {"cluster_deleted": len(sim.fleet.resources)}


INTERVAL = timedelta(seconds=300)


def ledger(database: TestDatabase, cluster_id: UUID) -> list[tuple[UUID, datetime | None, str | None]]:
    with database.admin() as admin:
        rows = admin.execute(
            "SELECT id, destroyed, destroyed_reason FROM tenant.infrastructure_resources WHERE cluster_id = %s"
            " ORDER BY id",
            (cluster_id,),
        ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]  # type: ignore[misc]


def active(database: TestDatabase, cluster_id: UUID, prefix: str = "") -> int:
    """Active rows of the cluster, of the types starting with `prefix` (`kubernetes.`: the inventory's)."""
    with database.admin() as admin:
        row = admin.execute(
            "SELECT count(*) FROM tenant.infrastructure_resources WHERE cluster_id = %s AND destroyed IS NULL"
            " AND starts_with(resource_type, %s)",
            (cluster_id, prefix),
        ).fetchone()
    assert row is not None and isinstance(row[0], int)
    return row[0]


def delete_cluster(database: TestDatabase, cluster_id: UUID, at: datetime | None = None) -> None:
    """What the provisioning side does first: the row is deleted, the shoot's deletion begins."""
    with database.admin() as admin:
        now = at or datetime.now(UTC)
        provisioning.delete_cluster(admin, cluster_id, at=now)
        provisioning.record_shoot_status(admin, cluster_id, "deleting", at=now)


async def test_a_deleted_clusters_rows_close_once_its_shoot_is_gone(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase, reconcile: Reconcile
) -> None:
    [cluster, bystander] = await sim_collector.few(2)
    await sim_collector.round([cluster, bystander])
    collected = active(sim_database, cluster.id)
    assert collected > 0, "the inventory recorded the cluster's resources"
    key = shoot_key_of(sim, cluster.id)

    delete_cluster(sim_database, cluster.id)
    summary = await reconcile.once()
    before = active(sim_database, cluster.id)
    assert before > collected, "reconcile recorded the cluster itself and its pools"
    assert active(sim_database, cluster.id, "kubernetes.") == collected, "the deletion is under way"
    assert summary.ledger_closed == planted_leftovers(sim), "only the seed's planted leftovers closed"

    sim.control.delete_shoot(key)
    sim.control.fault("garden", "500", resource="shoots")
    with pytest.raises(ServerError):
        await reconcile.once()
    assert active(sim_database, cluster.id) == before, "a failed listing decides nothing"
    sim.control.clear_faults()

    summary = await reconcile.once()
    assert summary.ledger_closed == {"cluster_deleted": before}
    rows = ledger(sim_database, cluster.id)
    assert all(destroyed is not None for _, destroyed, _ in rows)
    closed = [(row_id, destroyed) for row_id, destroyed, reason in rows if reason == "cluster_deleted"]
    assert len(closed) == before
    assert active(sim_database, bystander.id) > 0, "other clusters keep their rows"

    again = await reconcile.once()
    assert again.ledger_closed == {}
    assert [(r, d) for r, d, reason in ledger(sim_database, cluster.id) if reason == "cluster_deleted"] == closed

    # The staff API tells how each row's end was decided.
    async with serving_fleet(sim_database.dsn("fun_platform_admin_api")) as (_, clients):
        answer = await clients.call(
            "grpc",
            "ListInfrastructureResources",
            fleet_pb2.ListInfrastructureResourcesRequest(cluster_id=str(cluster.id), include_destroyed=True),
        )
    shown = {r.id: r for r in answer.resources}
    assert {str(row_id) for row_id, _ in closed} <= set(shown)
    assert all(shown[str(row_id)].destroyed_reason == "cluster_deleted" for row_id, _ in closed)
    assert all(shown[str(row_id)].HasField("destroyed") for row_id, _ in closed)


async def test_a_deleted_organizations_cluster_closes_as_organization_deleted(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase, reconcile: Reconcile
) -> None:
    [cluster] = await sim_collector.few(1)
    await sim_collector.round([cluster])
    collected = active(sim_database, cluster.id)
    with sim_database.admin() as admin:
        admin.execute("UPDATE tenant.organizations SET deleted = now() WHERE id = %s", (cluster.organization_id,))
    await reconcile.once()
    assert active(sim_database, cluster.id, "kubernetes.") == collected, "its shoot still runs"
    before = active(sim_database, cluster.id)
    sim.control.delete_shoot(shoot_key_of(sim, cluster.id))
    summary = await reconcile.once()
    assert summary.ledger_closed.get("organization_deleted", 0) >= before
    assert {reason for _, _, reason in ledger(sim_database, cluster.id)} == {"organization_deleted"}


async def test_lost_hibernated_and_unreachable_clusters_keep_their_rows(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase, reconcile: Reconcile
) -> None:
    lost, hibernated, unreachable = await sim_collector.few(3)
    await sim_collector.round([lost, hibernated, unreachable])
    counts = {c.id: active(sim_database, c.id, "kubernetes.") for c in (lost, hibernated, unreachable)}
    assert all(counts.values())
    sim.control.delete_shoot(shoot_key_of(sim, lost.id))  # live cluster, shoot gone: LOST, not deleted
    sim.control.hibernate(shoot_key_of(sim, hibernated.id))
    sim.control.fault(shoot_key_of(sim, unreachable.id), "500")
    summary = await reconcile.once()
    await sim_collector.round([hibernated, unreachable])
    assert summary.ledger_closed == planted_leftovers(sim)
    assert {c.id: active(sim_database, c.id, "kubernetes.") for c in (lost, hibernated, unreachable)} == counts


async def test_the_seeds_planted_deletion_leaves_rows_the_first_pass_closes(
    sim: SimUnderTest, sim_database: TestDatabase, reconcile: Reconcile
) -> None:
    cluster_id = UUID(sim.fleet.notes["planted.deleted_cluster_ledger"])
    assert active(sim_database, cluster_id) == len(sim.fleet.resources) == 3
    summary = await reconcile.once()
    assert summary.ledger_closed == {"cluster_deleted": 3}
    assert summary.as_details()["ledger_closed"] == {"cluster_deleted": 3}
    assert "ledger rows of gone clusters closed: cluster_deleted 3" in summary.render()
    rows = ledger(sim_database, cluster_id)
    assert [reason for _, _, reason in rows] == ["cluster_deleted"] * 3
    # No shoot of it was ever seen: its rows end at the cluster's deletion, not today.
    [deleted] = [c.deleted for c in sim.fleet.clusters if c.id == cluster_id]
    assert deleted is not None and deleted < summary.completed - timedelta(days=300)
    assert [destroyed for _, destroyed, _ in rows] == [deleted] * 3
    assert (await reconcile.once()).ledger_closed == {}


async def test_a_gone_clusters_rows_end_when_its_shoot_left_the_garden_however_late_the_deletion(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase, reconcile: Reconcile
) -> None:
    [cluster, bystander] = await sim_collector.few(2)
    await sim_collector.round([cluster, bystander])
    before = active(sim_database, cluster.id)
    assert before > 0
    listed_last = utc_now() + timedelta(minutes=1)
    await reconcile.once(at=listed_last)  # the mirror sees the shoot
    assert active(sim_database, cluster.id, "gardener.") > 0
    sim.control.delete_shoot(shoot_key_of(sim, cluster.id))
    first_missed = listed_last + INTERVAL
    await reconcile.once(at=first_missed)
    # The garden's listing is complete: the shoot and its pools are gone. What ran in it is not known
    # to be gone while the cluster lives (lost, not deleted).
    assert active(sim_database, cluster.id, "gardener.") == 0
    assert active(sim_database, cluster.id) == before, "a live cluster whose shoot is gone is lost, not gone"

    # Long after, Fundament deletes the cluster row; a pass much later still closes the rows.
    delete_cluster(sim_database, cluster.id, at=first_missed + timedelta(days=200))
    closing = first_missed + timedelta(days=300)
    summary = await reconcile.once(at=closing)
    assert summary.ledger_closed == {"cluster_deleted": before}
    ends = {destroyed for _, destroyed, _ in ledger(sim_database, cluster.id)}
    # The first pass that no longer listed the shoot: within one interval of its disappearance.
    assert ends == {first_missed}
    assert all(listed_last < end <= listed_last + INTERVAL for end in ends if end is not None)
    assert active(sim_database, bystander.id) > 0


async def test_a_deleted_cluster_whose_shoot_was_never_seen_ends_at_its_deletion(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase, reconcile: Reconcile
) -> None:
    [cluster] = await sim_collector.few(1)
    await sim_collector.round([cluster])
    before = active(sim_database, cluster.id)
    # Reconcile never ran while the shoot existed: the mirror has no shoot of this cluster.
    sim.control.delete_shoot(shoot_key_of(sim, cluster.id))
    with sim_database.admin() as admin:
        [(last_seen,)] = admin.execute(
            "SELECT max(last_seen) FROM tenant.infrastructure_resources WHERE cluster_id = %s", (cluster.id,)
        ).fetchall()
    assert isinstance(last_seen, datetime)
    deleted_at = last_seen + timedelta(minutes=7)
    delete_cluster(sim_database, cluster.id, at=deleted_at)
    summary = await reconcile.once(at=deleted_at + timedelta(days=330))
    assert summary.ledger_closed == {"cluster_deleted": before + planted_leftovers(sim)["cluster_deleted"]}
    assert {destroyed for _, destroyed, _ in ledger(sim_database, cluster.id)} == {deleted_at}
