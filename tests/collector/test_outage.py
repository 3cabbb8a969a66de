"""A database outage in the middle of a store: nothing partial is written, and the next round recovers.

The outage is real: this test runs its own PostgreSQL server (the session's server is shared) and
stops it while every collection of a round waits inside its store transaction.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from collector.inventory.loop import InventoryLoop
from collector.inventory.sources import SOURCES
from collector.mock import MockReader
from collector.settings import InventorySettings
from common.database import make_pool
from common.settings import DatabaseSettings
from db.embedded import EmbeddedPostgres, free_port, runtime_root
from db.migrate import fresh_database
from tests.collector.test_process import Worker
from tests.fixtures.collector import T0, WORKER_ROLE, make_world, mock_worker_env
from tests.fixtures.slowloris import status_of
from tests.fixtures.waiting import eventually, eventually_async

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def own_server() -> AsyncIterator[EmbeddedPostgres]:
    # Not `fast`: the outage below is a crash, and with `fast`'s synchronous_commit=off a crash loses
    # the commits of the last moments (round one's, even the migrations) whose WAL was not yet written.
    server = EmbeddedPostgres(runtime_root(PROJECT) / f"test-outage-{os.getpid()}")
    await asyncio.to_thread(server.start)
    try:
        await asyncio.to_thread(fresh_database, server.dsn, "fleet")
        yield server
    finally:
        await asyncio.to_thread(server.destroy)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> Any:
        return self.now


def observed(server: EmbeddedPostgres) -> list[Any]:
    with psycopg.connect(server.dsn_for("fleet"), autocommit=True) as conn:
        return [r[0] for r in conn.execute("SELECT observed FROM tenant.cluster_snapshots ORDER BY cluster_id")]


async def test_an_outage_during_the_store_writes_nothing_partial_and_the_next_round_recovers(
    own_server: EmbeddedPostgres,
) -> None:
    with psycopg.connect(own_server.dsn_for("fleet"), autocommit=True) as admin:
        make_world(admin, clusters=3)
    pool: AsyncConnectionPool[Any] = make_pool(
        DatabaseSettings(
            url=own_server.dsn_for("fleet", WORKER_ROLE), pool_min=1, pool_max=5, connect_timeout_seconds=2
        ),
        application_name="outage-test",
        reconnect_timeout_seconds=0,
    )
    await pool.open(wait=True)
    clock = Clock()
    loop = InventoryLoop(
        pool=pool,
        reader=MockReader(pool, sources=SOURCES),
        settings=InventorySettings(interval_seconds=60, workers=3, timeout_seconds=20, failure_grace_seconds=2),
        clock=clock,
    )
    try:
        assert (await loop.run_once()).collected == 3
        assert observed(own_server) == [T0] * 3

        # Every store of the next round stops at the namespace snapshots, after the cluster
        # snapshot was already written in the same transaction; then the server goes away.
        # Immediate, as in a crash: a fast shutdown ends the lock holder first, and a store could
        # take the freed lock and commit before its own backend is told to end.
        locker = psycopg.connect(own_server.dsn_for("fleet"))
        locker.execute("LOCK TABLE tenant.namespace_snapshots IN EXCLUSIVE MODE")
        clock.now = T0 + timedelta(minutes=15)
        round_two = asyncio.create_task(loop.run_once())
        await _until_waiting_on_locks(own_server, 3)
        await asyncio.to_thread(own_server.stop, "immediate")
        summary = await round_two
        locker.close()
        assert summary.failed == 3
        assert {r.reason for r in summary.results} == {"database"}
        assert not any(r.failure_recorded for r in summary.results), "nowhere to record it during the outage"

        await asyncio.to_thread(own_server.start)
        assert observed(own_server) == [T0] * 3, "the half-done stores were rolled back"

        clock.now = T0 + timedelta(minutes=30)
        recovered = await loop.run_once()
        assert recovered.collected == 3
        assert observed(own_server) == [T0 + timedelta(minutes=30)] * 3
    finally:
        await pool.close()


async def _until_waiting_on_locks(server: EmbeddedPostgres, count: int) -> None:
    with psycopg.connect(server.dsn_for("fleet"), autocommit=True) as conn:

        def waiting() -> bool:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND wait_event_type = 'Lock'", (WORKER_ROLE,)
            ).fetchone()
            return bool(row and row[0] >= count)

        await eventually_async(waiting, f"the stores waiting on the lock ({count} expected)")


def health_port(worker: Worker) -> int:
    return int(str(worker.wait_for_log("health port listening")["address"]).rsplit(":", 1)[1])


def round_collecting(worker: Worker, clusters: int) -> None:
    """Until the worker logs a round that collected `clusters` clusters."""
    eventually(lambda: worker.wait_for_log("inventory round done")["collected"] == clusters, every=0)


@pytest.mark.slow
def test_the_worker_starts_while_the_database_is_down_and_survives_it_going_and_coming_back() -> None:
    """`cluster-worker run` with no database: alive and not ready, waiting; ready once it answers; a
    database that goes away (a crash) and comes back costs the rounds in between, not the process."""
    server = EmbeddedPostgres(runtime_root(PROJECT) / f"test-down-{os.getpid()}", port=free_port())
    server.start()
    worker: Worker | None = None
    try:
        fresh_database(server.dsn, "fleet")
        with psycopg.connect(server.dsn_for("fleet"), autocommit=True) as admin:
            make_world(admin, clusters=3)
        server.stop()
        worker = Worker(mock_worker_env(server.dsn_for("fleet", WORKER_ROLE)))
        port = health_port(worker)
        worker.wait_for_log("waiting for the database")
        assert (status_of(port, "/livez"), status_of(port, "/readyz")) == (200, 503)

        server.start()
        worker.wait_for_log("the database answers")
        round_collecting(worker, 3)
        eventually(lambda: status_of(port, "/readyz") == 200, "ready once the first round is done")

        server.stop("immediate")
        worker.wait_for_log("inventory round failed")
        assert status_of(port, "/livez") == 200
        server.start()
        round_collecting(worker, 3)
        assert worker.process.poll() is None, "the worker carried on without a restart"
        assert status_of(port, "/readyz") == 200
    finally:
        if worker is not None:
            worker.stop()
        server.destroy()
