"""A failover under every process: a real primary and streaming standby (tests/fixtures/replication.py),
reached through libpq's multi-host DSN with `target_session_attrs=read-write`.

The worker (a real process, mock mode, a round a second), the staff API and the public API run
through a switchover: the primary stops, the standby is promoted. Nothing the primary committed is
lost, the worker carries on without a restart and collects every ready cluster in its next round
on the new primary, the public API keeps answering from its cache throughout, and the staff API
answers either UNAVAILABLE or the right numbers, never a wrong answer, and soon the right ones again.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import pytest
from fundament.fleet.v1 import fleet_pb2

from services.overview.app import running_overview
from tests.collector.test_process import Worker
from tests.fixtures.collector import WORKER_ROLE, make_world, mock_worker_env
from tests.fixtures.fleet_api import ROLE as STAFF_ROLE
from tests.fixtures.fleet_api import CallFailed as StaffCallFailed
from tests.fixtures.fleet_api import serving_fleet
from tests.fixtures.overview import ROLE as PUBLIC_ROLE
from tests.fixtures.overview import Endpoints, FakeClock, overview_settings
from tests.fixtures.overview import _grpc as overview_call
from tests.fixtures.replication import Replicated
from tests.fixtures.waiting import eventually_async

pytestmark = pytest.mark.slow

CLUSTERS = 3
SUMMARY = fleet_pb2.GetFleetSummaryRequest()


def snapshots(pair: Replicated, server: Any) -> dict[str, datetime]:
    """Each cluster's latest snapshot time (a cluster's snapshot row moves on with each collection)."""
    with pair.admin(server) as admin:
        rows = admin.execute("SELECT cluster_id::text, observed FROM tenant.cluster_snapshots").fetchall()
    return {str(cluster): observed for cluster, observed in rows}


async def full_round_after(worker: Worker, after: datetime, pair: Replicated) -> None:
    """Until the worker logged a round that collected every cluster, all of them stored after `after`."""

    def collected_all() -> bool:
        line = worker.wait_for_log("inventory round done")
        return bool(line["collected"] == CLUSTERS)

    async def every_cluster_newer() -> bool:
        await asyncio.to_thread(collected_all)
        with pair.admin(pair.standby) as admin:
            row = admin.execute(
                "SELECT count(DISTINCT cluster_id) FROM tenant.cluster_snapshots WHERE observed > %s", [after]
            ).fetchone()
        return bool(row and row[0] == CLUSTERS)

    await eventually_async(every_cluster_newer, "a round on the new primary collecting every cluster", every=0)


async def test_a_failover_loses_nothing_committed_and_every_process_carries_on(replicated: Replicated) -> None:
    pair = replicated
    with pair.admin(pair.primary) as admin:
        make_world(admin, clusters=CLUSTERS)
        row = admin.execute("SELECT now()").fetchone()
    assert row is not None
    started_at: datetime = row[0]
    worker = Worker(mock_worker_env(pair.dsn(WORKER_ROLE)))
    try:
        await full_round_after_primary(worker)
        public_settings = overview_settings(pair.dsn(PUBLIC_ROLE))
        async with (
            serving_fleet(pair.dsn(STAFF_ROLE), SUMMARY_CACHE_SECONDS="0", DATABASE_CONNECT_TIMEOUT_SECONDS="2") as (
                _,
                staff,
            ),
            running_overview(public_settings, clock=FakeClock()) as public,
        ):
            endpoints = Endpoints(public.server.http_port, public.server.grpc_port)
            try:
                expected = (await staff.call("grpc", "GetFleetSummary", SUMMARY)).clusters
                assert expected >= CLUSTERS
                cached = (await overview_call(endpoints)).response

                before = snapshots(pair, pair.primary)
                assert len(before) == CLUSTERS and min(before.values()) >= started_at, "the worker wrote"
                failing_over = asyncio.create_task(asyncio.to_thread(pair.failover))
                unavailable = 0
                while not failing_over.done():
                    # The public API answers from its cache, the same answer, throughout.
                    assert (await overview_call(endpoints)).response == cached
                    try:
                        answer = await staff.call("grpc", "GetFleetSummary", SUMMARY)
                    except StaffCallFailed as e:
                        assert e.code == "unavailable", e
                        unavailable += 1
                    else:
                        assert answer.clusters == expected
                    await asyncio.wait({failing_over}, timeout=0.05)
                await failing_over

                async def staff_answers() -> bool:
                    try:
                        answer = await staff.call("grpc", "GetFleetSummary", SUMMARY)
                    except StaffCallFailed as e:
                        assert e.code == "unavailable", e
                        return False
                    assert answer.clusters == expected
                    return True

                await eventually_async(staff_answers, "the staff API answering from the new primary", every=0.1)
                assert (await overview_call(endpoints)).response == cached
            finally:
                await endpoints.aclose()

        with pair.admin(pair.standby) as admin:
            row = admin.execute("SELECT now()").fetchone()
        assert row is not None
        await full_round_after(worker, row[0], pair)
        assert worker.process.poll() is None, "the worker carried on without a restart"
    finally:
        worker.stop()
    # Nothing the old primary committed is missing on the new one: started again alone (nobody connects
    # to it any more), it shows everything it committed; each cluster's snapshot on the new primary is
    # that one or a newer one.
    await asyncio.to_thread(pair.primary.start)
    committed = snapshots(pair, pair.primary)
    kept = snapshots(pair, pair.standby)
    assert set(committed) == set(kept)
    assert all(kept[cluster] >= observed for cluster, observed in committed.items())
    assert all(committed[cluster] >= observed for cluster, observed in before.items())


async def full_round_after_primary(worker: Worker) -> None:
    def collected_all() -> bool:
        return bool(worker.wait_for_log("inventory round done")["collected"] == CLUSTERS)

    await eventually_async(lambda: asyncio.to_thread(collected_all), "a round collecting every cluster", every=0)
