"""GetFleetSummary behind its single flight: one database read per SUMMARY_CACHE_SECONDS per replica.

The summary is the same for every staff member and costs a pass over the whole platform, so the
service shares one answer for a while; its `read` field says when the database was read. Concurrent
callers during a miss share one read, an expired answer is read again, and a failed read is not kept.
The cache ages by a monotonic clock the test moves by hand.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from fundament.fleet.v1 import fleet_pb2

from services.fleet.app import RunningFleetApi
from tests.fixtures.fleet_api import NOW, ROLE, CallFailed, FixedClock, serving_fleet
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.waiting import eventually_async

SUMMARY = fleet_pb2.GetFleetSummaryRequest()


class HandClock:
    """A monotonic clock that only moves when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def reads(running_pool_stats: dict[str, int]) -> int:
    return int(running_pool_stats.get("requests_num", 0))


async def test_one_read_serves_every_caller_until_it_expires(fleet_database: TestDatabase) -> None:
    monotonic = HandClock()
    wall = FixedClock()
    async with serving_fleet(fleet_database.dsn(ROLE), clock=wall, monotonic=monotonic, SUMMARY_CACHE_SECONDS="15") as (
        running,
        clients,
    ):
        before = reads(running.pool.get_stats())
        first = await clients.call("grpc", "GetFleetSummary", SUMMARY)
        assert reads(running.pool.get_stats()) == before + 1
        # Twenty callers at once, over both protocols, while the answer is fresh: no read at all.
        answers = await asyncio.gather(
            *(clients.call("grpc" if i % 2 else "connect", "GetFleetSummary", SUMMARY) for i in range(20))
        )
        assert reads(running.pool.get_stats()) == before + 1
        assert all(a == first for a in answers)
        # Rows change and the wall clock moves; within the TTL the shared answer (and its `read`) stays.
        with fleet_database.admin() as conn:
            conn.execute("INSERT INTO tenant.organizations (name, alias) VALUES ('newcomer', 'Newcomer')")
        wall.now = NOW + timedelta(seconds=10)
        monotonic.now += 14.9
        same = await clients.call("grpc", "GetFleetSummary", SUMMARY)
        assert same.organizations == first.organizations and same.read == first.read
        monotonic.now += 0.2
        fresh = await clients.call("connect", "GetFleetSummary", SUMMARY)
        assert fresh.organizations == first.organizations + 1
        assert fresh.read.ToDatetime(NOW.tzinfo) == wall.now
        assert reads(running.pool.get_stats()) == before + 2


async def test_concurrent_misses_share_one_read(fleet_database: TestDatabase) -> None:
    async with serving_fleet(fleet_database.dsn(ROLE), SUMMARY_CACHE_SECONDS="60") as (running, clients):
        before = reads(running.pool.get_stats())
        # Hold the read up behind a lock so every caller arrives while it runs.
        with fleet_database.admin() as conn, conn.transaction():
            conn.execute("LOCK TABLE tenant.worker_heartbeats IN ACCESS EXCLUSIVE MODE")
            calls = [
                asyncio.ensure_future(clients.call("grpc" if i % 2 else "connect", "GetFleetSummary", SUMMARY))
                for i in range(12)
            ]
            await eventually_async(lambda: running.service.summary_waiting >= len(calls), "every caller waiting")
            assert not any(call.done() for call in calls), "the read must be held by the lock"
        answers = await asyncio.gather(*calls)
        assert len({a.SerializeToString() for a in answers}) == 1
        assert reads(running.pool.get_stats()) == before + 1


async def wait_until_no_read_runs(running: RunningFleetApi) -> None:
    """The timed-out read unwinds (psycopg cancels its query) before a new one can start."""
    await eventually_async(lambda: not running.service.summary_reading, "the timed-out read unwound")


async def test_a_failed_read_is_not_kept(fleet_database: TestDatabase) -> None:
    # The deadline is long enough for a read on a loaded machine: the second call must not time out.
    async with serving_fleet(
        fleet_database.dsn(ROLE), SUMMARY_CACHE_SECONDS="60", SUMMARY_READ_TIMEOUT_SECONDS="2"
    ) as (running, clients):
        with fleet_database.admin() as conn, conn.transaction():
            conn.execute("LOCK TABLE tenant.worker_heartbeats IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(CallFailed) as caught:
                await clients.call("grpc", "GetFleetSummary", SUMMARY)
        assert caught.value.code == "unavailable"
        assert "SELECT" not in caught.value.message
        await wait_until_no_read_runs(running)
        # The next caller reads again, and gets an answer.
        answer = await clients.call("connect", "GetFleetSummary", SUMMARY)
        assert answer.clusters > 0
