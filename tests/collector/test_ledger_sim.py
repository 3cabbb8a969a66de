"""The ledger end to end: fleet-sim's world changes between rounds and the rows follow."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from psycopg.rows import dict_row

from tests.fixtures.collector import Collector, shoot_key_of
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest


def ledger(database: TestDatabase, cluster_id: UUID) -> list[dict[str, Any]]:
    with database.admin() as admin, admin.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT * FROM tenant.infrastructure_resources WHERE cluster_id = %s ORDER BY created, name",
            (cluster_id,),
        ).fetchall()


def active_keys(rows: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(r["resource_type"], r["namespace"], r["name"]) for r in rows if r["destroyed"] is None}


async def test_a_tenant_namespace_removed_destroys_its_resources_and_nothing_else(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    clusters = await sim_collector.few(8)
    first = await sim_collector.round(clusters)
    # A cluster with a tenant namespace that holds more than pods (a volume, a load balancer, ...).
    for result in first.results:
        key = shoot_key_of(sim, result.cluster.id)
        expected = sim.control.expected(key)
        owned = [e for e in expected.ledger if e.tenant and e.resource_type != "kubernetes.node"]
        if owned:
            break
    else:
        raise AssertionError("the test fleet has no tenant namespace with resources")
    target = result.cluster.id
    namespace = next(e.namespace for e in owned if e.namespace)
    before = ledger(sim_database, target)
    sim.control.remove_namespace(key, namespace)
    sim.control.advance_clock(900)
    second = await sim_collector.round(clusters)
    after = ledger(sim_database, target)
    gone = active_keys(before) - active_keys(after)
    assert gone, "the namespace's resources are recorded destroyed"
    assert all(k[1] in {namespace, ""} for k in gone)
    assert len(after) == len(before), "destroyed rows stay; nothing new appeared"
    counts = next(r for r in second.results if r.cluster.id == target).ledger
    assert counts is not None
    assert sum(c.destroyed for c in counts.by_type.values()) == len(gone)
    assert sum(c.created for c in counts.by_type.values()) == 0


async def test_a_node_removed_and_added_again_gets_a_new_row(
    sim_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    [cluster] = await sim_collector.few(1)
    await sim_collector.round([cluster])
    key = shoot_key_of(sim, cluster.id)
    worker = sim.control.shoot(key).workers[0]
    nodes_before = {r["name"] for r in ledger(sim_database, cluster.id) if r["resource_type"] == "kubernetes.node"}
    sim.control.scale_pool(key, worker.name, worker.minimum + 1)
    sim.control.advance_clock(900)
    grown = await sim_collector.round([cluster])
    assert grown.ledger["kubernetes.node"].created == 1
    [added] = {
        r["name"] for r in ledger(sim_database, cluster.id) if r["resource_type"] == "kubernetes.node"
    } - nodes_before
    sim.control.scale_pool(key, worker.name, worker.minimum)
    sim.control.advance_clock(900)
    shrunk = await sim_collector.round([cluster])
    assert shrunk.ledger["kubernetes.node"].destroyed == 1
    sim.control.scale_pool(key, worker.name, worker.minimum + 1)
    sim.control.advance_clock(900)
    await sim_collector.round([cluster])
    lifetimes = [r for r in ledger(sim_database, cluster.id) if r["name"] == added]
    assert [r["destroyed"] is None for r in lifetimes] == [False, True]
    assert lifetimes[1]["created"] > lifetimes[0]["destroyed"] >= lifetimes[0]["created"]
    # A round with nothing changed moves last_seen only.
    sim.control.advance_clock(900)
    quiet = await sim_collector.round([cluster])
    assert sum(c.created + c.destroyed for c in quiet.ledger.values()) == 0
