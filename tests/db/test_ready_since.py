"""The sync state's `ready_since`: when a cluster entered the collected set.

The grace FUN-23 grants before a snapshot may be called stale runs from "turned ready", not from any
status change: a cluster ready for hours whose shoot flips ready -> unhealthy keeps its ready_since,
so a snapshot two hours old is stale at once. Fundament's poller writes both as status `ready` (the
unhealthy one with its own message) and moves the status time only when the status changes, so the
view's ready_since is the time the cluster turned ready. The provisioning side's status poller drives
the flips here through fleet-sim's garden (real HTTPS, the official client); the staff queries and the
Python definition judge the same rows alike.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

import psycopg
import pytest

from common import clusterstatus
from db import provisioning
from db.seed.write import write_fleet
from fleet_description.model import Fleet
from fleet_description.scenarios import Scenario
from fleetctl.status_poller.poller import StatusPoller
from services.fleet.queries import clusters
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest


@pytest.fixture
def seeded(database: TestDatabase, sim_fleet: Fleet) -> TestDatabase:
    with psycopg.connect(database.dsn()) as conn:
        write_fleet(conn, sim_fleet)
    return database


def running_cluster(sim: SimUnderTest) -> tuple[UUID, str]:
    by_label = {s.cluster_label: s.key for s in sim.shoots(lambda s: s.serving and not s.deleting)}
    for value in sim.fleet.notes[f"scenario.{Scenario.RUNNING.value}"].split(","):
        if value in by_label:
            return UUID(value), by_label[value]
    raise LookupError("no running cluster with a shoot")


def sync_row(db: TestDatabase, cluster_id: UUID) -> tuple[str, datetime | None, datetime]:
    with db.admin() as conn:
        row = conn.execute(
            "SELECT shoot_status, ready_since, shoot_status_changed FROM tenant.fleet_sync_state WHERE cluster_id = %s",
            (cluster_id,),
        ).fetchone()
    assert row is not None
    status, since, changed = row
    assert isinstance(status, str) and isinstance(changed, datetime)
    assert since is None or isinstance(since, datetime)
    return status, since, changed


async def test_ready_since_follows_the_ready_set_as_the_poller_writes_it(
    sim: SimUnderTest, seeded: TestDatabase
) -> None:
    cluster_id, key = running_cluster(sim)
    poller = StatusPoller(seeded.dsn(), sim.garden_kubeconfig, interval_seconds=1)
    await poller.run_once()
    status, since, changed = sync_row(seeded, cluster_id)
    assert status == "ready" and since is not None and since <= changed

    sim.control.set_control_plane_healthy(key, False)  # ready -> unhealthy: still in the set
    await poller.run_once()
    status, still, changed_now = sync_row(seeded, cluster_id)
    assert status == "unhealthy" and changed_now == changed, "both are `ready` to Fundament's poller"
    assert still == since, "a move within the ready set keeps ready_since"

    sim.control.set_control_plane_healthy(key, True)
    sim.control.set_last_operation(key, "Reconcile", "Processing")  # out of the set
    await poller.run_once()
    status, gone, _ = sync_row(seeded, cluster_id)
    assert status == "progressing" and gone is None

    sim.control.set_last_operation(key, "Reconcile", "Succeeded")  # back in: the grace starts again
    await poller.run_once()
    status, again, changed_again = sync_row(seeded, cluster_id)
    assert status == "ready" and again == changed_again and again > since


NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
INTERVAL = 900  # three intervals: 45 minutes of grace


async def test_a_flip_to_unhealthy_does_not_excuse_an_old_snapshot(seeded: TestDatabase, sim_fleet: Fleet) -> None:
    cluster_id = UUID(sim_fleet.notes[f"scenario.{Scenario.RUNNING.value}"].split(",")[0])
    with seeded.admin() as conn:
        conn.execute(
            "INSERT INTO tenant.worker_heartbeats (loop, last_completed, interval_seconds, first_completed)"
            " VALUES ('inventory', %s, %s, %s)",
            (NOW, INTERVAL, NOW - timedelta(days=1)),
        )
        conn.execute(
            "INSERT INTO tenant.cluster_snapshots (cluster_id, observed) VALUES (%s, %s)",
            (cluster_id, NOW - timedelta(hours=2)),
        )
        # Ready for a long time (the seed's running cluster); a minute ago its shoot turned unhealthy.
        provisioning.record_shoot_status(conn, cluster_id, "unhealthy", at=NOW - timedelta(minutes=1))
    async with await psycopg.AsyncConnection.connect(seeded.dsn("fun_platform_admin_api")) as conn:
        row = await clusters.get_cluster(conn, cluster_id=cluster_id)
        assert row is not None
        stale = await clusters.list_clusters(
            conn, filters=clusters.ClusterFilters(stale=True), now=NOW, after=None, limit=1000
        )
    assert row.shoot_status == "unhealthy"
    assert row.ready_since is not None and row.ready_since < NOW - timedelta(days=1)
    assert cluster_id in {c.id for c in stale}, "SQL: stale at once"
    assert clusterstatus.is_stale(
        ready=True,
        observed=row.observed,
        ready_since=row.ready_since,
        interval_seconds=row.inventory_interval_seconds,
        collector_since=row.inventory_since,
        now=NOW,
    ), "Python: stale at once"
