"""One parse of `fundament.io/cluster-id`: the collector and reconcile agree on which shoot claims a cluster.

Against fleet-sim over TLS with the official client and real PostgreSQL: a shoot whose label spells
its cluster's id in upper case or in braces is read by the collector (a round and a single
`collect`) and counts as the cluster's shoot for reconcile (no missing_shoot, no orphan_shoot); a
label that is no UUID claims nothing for either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from psycopg_pool import AsyncConnectionPool

from collector.kube.client import garden_client
from collector.kube.garden import RealGardener
from collector.reconcile.loop import ReconcileLoop
from common import drift_kinds
from tests.fixtures.collector import Collector, shoot_key_of, write_kubeconfig
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest


async def open_findings(database: TestDatabase) -> set[tuple[str, str]]:
    with database.admin() as admin:
        rows = admin.execute("SELECT kind, subject FROM tenant.drift_findings WHERE resolved IS NULL").fetchall()
    return {(str(kind), str(subject)) for kind, subject in rows}


async def reconcile_once(sim: SimUnderTest, pool: AsyncConnectionPool[Any], tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "garden-reconcile.yaml", sim.garden_kubeconfig)
    gardener = RealGardener(await garden_client(kubeconfig, timeout_seconds=10))
    try:
        await ReconcileLoop(pool=pool, gardener=gardener, interval_seconds=300).run_once()
    finally:
        await gardener.close()


@pytest.mark.parametrize("spelling", [str.upper, lambda text: "{" + text + "}", lambda text: f"  {text} "])
async def test_another_spelling_of_the_id_claims_the_cluster_for_both(
    spelling: Any,
    sim_collector: Collector,
    sim: SimUnderTest,
    sim_database: TestDatabase,
    sim_worker_pool: AsyncConnectionPool[Any],
    tmp_path: Path,
) -> None:
    [cluster, _] = await sim_collector.few(2)
    key = shoot_key_of(sim, cluster.id)
    shoot_uid = str(sim.control.shoot(key).uid)
    sim.control.set_labels(key, cluster_label=spelling(str(cluster.id)))

    summary = await sim_collector.round([cluster])  # one cluster: its own lookup
    assert [r.ok for r in summary.results] == [True], summary.results[0].error
    round_summary = await sim_collector.round()  # a whole round: one listing of the garden
    [result] = [r for r in round_summary.results if r.cluster.id == cluster.id]
    assert result.ok, result.error

    await reconcile_once(sim, sim_worker_pool, tmp_path)
    found = await open_findings(sim_database)
    assert (drift_kinds.MISSING_SHOOT, str(cluster.id)) not in found
    assert (drift_kinds.ORPHAN_SHOOT, shoot_uid) not in found
    with sim_database.admin() as admin:
        [(claimed,)] = admin.execute(
            "SELECT cluster_id FROM tenant.gardener_shoots WHERE uid = %s", (UUID(shoot_uid),)
        ).fetchall()
    assert claimed == cluster.id


async def test_a_label_that_is_no_uuid_claims_nothing_for_either(
    sim_collector: Collector,
    sim: SimUnderTest,
    sim_database: TestDatabase,
    sim_worker_pool: AsyncConnectionPool[Any],
    tmp_path: Path,
) -> None:
    [cluster] = await sim_collector.few(1)
    key = shoot_key_of(sim, cluster.id)
    shoot_uid = str(sim.control.shoot(key).uid)
    sim.control.set_labels(key, cluster_label=f"{cluster.id}-x")
    summary = await sim_collector.round([cluster])
    assert [r.reason for r in summary.results] == ["no_shoot"]
    await reconcile_once(sim, sim_worker_pool, tmp_path)
    found = await open_findings(sim_database)
    assert (drift_kinds.ORPHAN_SHOOT, shoot_uid) in found
