"""platform-public-api while its database goes away and comes back (a throwaway server of its own).

The database is stopped under a running service: every call answers UNAVAILABLE, each one tries the
database again (a failure is never kept), /readyz stays ready, and once the server is started again
the very next call succeeds, without restarting the service.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from prometheus_client import REGISTRY

from db.embedded import EmbeddedPostgres, runtime_root
from db.migrate import fresh_database
from tests.fixtures.overview import PATH, PROTOCOLS, ROLE, CallFailed, World, serving

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture
def own_server() -> Iterator[EmbeddedPostgres]:
    """A migrated PostgreSQL of this test alone, holding one listed organization; removed afterwards."""
    server = EmbeddedPostgres(runtime_root(PROJECT) / f"overview-outage-{os.getpid()}", fast=True)
    server.start()
    try:
        with psycopg.connect(fresh_database(server.dsn, "fleet"), autocommit=True) as conn:
            World(conn).organization("acme", alias="Acme Corp")
        yield server
    finally:
        server.destroy()


def reads(outcome: str) -> float:
    return REGISTRY.get_sample_value("fleet_overview_database_reads_total", {"outcome": outcome}) or 0.0


@pytest.mark.slow
async def test_database_stopped_is_unavailable_uncached_and_restarted_serves_the_next_call(
    own_server: EmbeddedPostgres,
) -> None:
    dsn = own_server.dsn_for("fleet", ROLE)
    async with serving(dsn, READ_TIMEOUT_SECONDS="1", DATABASE_CONNECT_TIMEOUT_SECONDS="0.5") as (running, endpoints):
        assert (await endpoints.http.get("/readyz")).status_code == 200

        await asyncio.to_thread(own_server.stop)
        failed_before = reads("error") + reads("cancelled")
        for name in ("connect-get-json", "grpc", "connect-post-proto"):
            with pytest.raises(CallFailed) as caught:
                await PROTOCOLS[name](endpoints, None)
            assert caught.value.code == "unavailable"
        response = await endpoints.http.get(PATH, params={"encoding": "json", "message": "{}"})
        assert response.status_code == 503
        assert response.headers.get("cache-control") == "no-store"
        # Each of the four calls went to the database again: nothing failed was kept.
        assert reads("error") + reads("cancelled") - failed_before == 4
        assert not running.cache.reading
        # An outage is no verdict on the role: the replica stays ready, even once its check runs again.
        assert not (await running.readiness.check_now()).ready
        assert (await endpoints.http.get("/readyz")).status_code == 200

        await asyncio.to_thread(own_server.start)
        for name in ("connect-get-json", "grpc"):
            reply = await PROTOCOLS[name](endpoints, None)
            assert [organization.name for organization in reply.response.organizations] == ["acme"]
            assert reply.cache_control.startswith("public, max-age=")
