"""The pool's connection check (common/database.py): skipped for a connection that came back a moment
ago, run for one that was idle longer, and what that means for a connection that died meanwhile.

A real pool on a real server as the worker's role; the server ends a backend with
pg_terminate_backend, as a restart or an idle timeout would.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from common.database import CheckUnlessRecent, make_pool
from common.settings import DatabaseSettings
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.waiting import eventually_async

ROLE = "fun_cluster_worker"


def _pool(database: TestDatabase, checks: CheckUnlessRecent) -> AsyncConnectionPool[Any]:
    settings = DatabaseSettings(url=database.dsn(ROLE), pool_min=1, pool_max=1, connect_timeout_seconds=5)
    return make_pool(settings, application_name="pool-test", reconnect_timeout_seconds=0, checks=checks)


async def _backend_pid(pool: AsyncConnectionPool[Any]) -> int:
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT pg_backend_pid()")).fetchone()
        await conn.rollback()
    assert row is not None
    return int(row[0])


def _terminate(database: TestDatabase, pid: int) -> None:
    with database.admin() as conn:
        conn.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])


async def test_a_connection_back_a_moment_ago_is_not_checked_again(database: TestDatabase) -> None:
    checks = CheckUnlessRecent(window_seconds=60.0)
    async with _pool(database, checks) as pool:
        first = await _backend_pid(pool)  # a new connection: checked
        assert checks.checks == 1
        for _ in range(3):
            assert await _backend_pid(pool) == first
        assert checks.checks == 1


async def test_a_connection_idle_past_the_window_is_checked_and_a_dead_one_replaced(database: TestDatabase) -> None:
    checks = CheckUnlessRecent(window_seconds=0.2)
    async with _pool(database, checks) as pool:
        first = await _backend_pid(pool)
        _terminate(database, first)
        await asyncio.sleep(0.3)
        # The check finds it dead; the pool hands out a new connection instead of the broken one.
        second = await _backend_pid(pool)
        assert second != first
        assert checks.checks >= 2


async def test_within_the_window_a_dead_connection_fails_its_caller_once(database: TestDatabase) -> None:
    # The price of skipping the check: a backend that died within the window is found by the query.
    checks = CheckUnlessRecent(window_seconds=60.0)
    async with _pool(database, checks) as pool:
        first = await _backend_pid(pool)
        _terminate(database, first)
        with pytest.raises(psycopg.OperationalError):
            await _backend_pid(pool)
        # The broken connection is not put back: the next caller gets a working one.
        assert await _backend_pid(pool) != first


async def _returned(pool: AsyncConnectionPool[Any]) -> None:
    await eventually_async(lambda: pool.get_stats().get("pool_available") == 1, "the connection back in the pool")


async def test_the_check_says_which_connection_it_lent_unchecked_and_distrust_checks_the_next(
    database: TestDatabase,
) -> None:
    checks = CheckUnlessRecent(window_seconds=60.0)
    async with _pool(database, checks) as pool:
        async with pool.connection() as conn:  # new: checked
            assert not checks.lent_unchecked(conn)
        async with pool.connection() as conn:  # back a moment ago: lent unchecked
            assert checks.lent_unchecked(conn)
            first = conn
        await _returned(pool)  # a pool with a reset callback takes a connection back in a task of its own
        checks.distrust()
        async with pool.connection() as conn:  # the same connection, checked again
            assert conn is first
            assert not checks.lent_unchecked(conn)
        assert checks.checks == 2
