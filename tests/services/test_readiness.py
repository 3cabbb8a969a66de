"""An API's readiness proves its database role (services/common/startup.py, services/common/role_check.py).

Each API is ready only while its role may do what its SQL runs (the public API: execute its one
function and nothing else), says why when not, logs each change once, and never queries per probe.
The checks run as the role itself, against a database of the test's own whose grants the test
changes (grants live in the database, so no other test sees them).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY
from starlette.applications import Starlette

from common.database import make_pool
from common.health import ReadyState, operations_routes
from common.settings import DatabaseSettings
from services.common.role_check import RoleNeeds
from services.common.startup import DatabaseReadiness, Reason
from services.fleet.app import SHAPE as STAFF_SHAPE
from services.overview.app import SHAPE as PUBLIC_SHAPE
from tests.fixtures.overview import serving
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.waiting import eventually_async

PUBLIC_ROLE = "fun_platform_public_api"
STAFF_ROLE = "fun_platform_admin_api"
# Long enough that no background check runs during a test: the test checks by hand.
BY_HAND = 3600.0
LOGGER = "services.common.startup"


@asynccontextmanager
async def checking(dsn: str, needs: RoleNeeds, every: float = BY_HAND) -> AsyncIterator[DatabaseReadiness]:
    """A started `DatabaseReadiness` over a pool of its own, as `serving_api` runs it, checking again
    `every` seconds whatever the last verdict."""
    pool = make_pool(
        DatabaseSettings(dsn, connect_timeout_seconds=1.0),
        application_name="readiness-test",
        reconnect_timeout_seconds=0.0,
    )
    await pool.open(wait=False)
    readiness = DatabaseReadiness(pool, needs, recheck_seconds=every, retry_seconds=every, retry_max_seconds=every)
    try:
        await readiness.start()
        yield readiness
    finally:
        await readiness.stop()
        await pool.close()


def verdicts_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == LOGGER]


def failures(reason: Reason) -> float:
    return REGISTRY.get_sample_value("fleet_api_readiness_failures_total", {"reason": reason.value}) or 0.0


def test_each_api_needs_what_its_sql_names(tmp_path: Path) -> None:
    assert PUBLIC_SHAPE.role_needs == RoleNeeds(
        reads=frozenset(), executes=frozenset({"tenant.platform_overview"}), nothing_else=True
    )
    staff = STAFF_SHAPE.role_needs
    assert {"tenant.staff_clusters", "tenant.cluster_listing", "tenant.organizations"} <= staff.reads
    assert {"tenant.system_organization_id", "tenant.namespace_name_prefix"} <= staff.executes
    assert not staff.nothing_else and not staff.reads & staff.executes
    sql = tmp_path / "q.sql"
    sql.write_text("-- reads tenant.not_this\nSELECT c.name FROM tenant.clusters AS c WHERE tenant.f (c.id)")
    assert RoleNeeds.of_queries([sql]) == RoleNeeds(frozenset({"tenant.clusters"}), frozenset({"tenant.f"}))


async def test_the_public_role_loses_and_regains_readiness_with_its_grant(
    database: TestDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    async with checking(database.dsn(PUBLIC_ROLE), PUBLIC_SHAPE.role_needs) as readiness:
        assert await readiness.status() == ReadyState(True)
        with database.admin() as conn:
            conn.execute(f"REVOKE EXECUTE ON FUNCTION tenant.platform_overview() FROM {PUBLIC_ROLE}")
        missing_before = failures(Reason.ROLE_MISSING_PRIVILEGE)
        for _ in range(2):
            verdict = await readiness.check_now()
            assert verdict.reasons == (Reason.ROLE_MISSING_PRIVILEGE,)
        assert await readiness.status() == ReadyState(
            False, f"role {PUBLIC_ROLE} cannot execute tenant.platform_overview()"
        )
        assert failures(Reason.ROLE_MISSING_PRIVILEGE) - missing_before == 2
        with database.admin() as conn:
            conn.execute(f"GRANT EXECUTE ON FUNCTION tenant.platform_overview() TO {PUBLIC_ROLE}")
        await readiness.check_now()
        assert await readiness.status() == ReadyState(True)
    # Once per change, not once per check.
    assert verdicts_logged(caplog) == ["ready", "not ready", "ready"]


async def test_the_public_role_may_execute_no_other_function_of_ours(database: TestDatabase) -> None:
    with database.admin() as conn:
        conn.execute(f"GRANT EXECUTE ON FUNCTION tenant.system_organization_id() TO {PUBLIC_ROLE}")
    async with checking(database.dsn(PUBLIC_ROLE), PUBLIC_SHAPE.role_needs) as readiness:
        assert await readiness.status() == ReadyState(
            False, f"role {PUBLIC_ROLE} may execute what it must not: tenant.system_organization_id()"
        )


async def test_a_probe_reads_the_last_verdict_and_runs_no_check(database: TestDatabase) -> None:
    with database.admin() as conn:
        conn.execute(f"GRANT SELECT (name) ON tenant.organizations TO {PUBLIC_ROLE}")
    async with checking(database.dsn(PUBLIC_ROLE), PUBLIC_SHAPE.role_needs) as readiness:
        app = Starlette(routes=operations_routes(readiness))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api") as client:
            answers = {(r.status_code, r.text) for r in [await client.get("/readyz") for _ in range(20)]}
        assert readiness.checks == 1
    # A column grant counts as much as a table grant.
    assert answers == {
        (503, f"not ready: role {PUBLIC_ROLE} has privileges it must not have on tenant.organizations\n")
    }


async def test_the_staff_role_must_read_what_the_staff_api_reads(database: TestDatabase) -> None:
    async with checking(database.dsn(STAFF_ROLE), STAFF_SHAPE.role_needs) as readiness:
        assert await readiness.status() == ReadyState(True)
        with database.admin() as conn:
            conn.execute(f"REVOKE SELECT ON tenant.staff_clusters FROM {STAFF_ROLE}")
        await readiness.check_now()
        assert await readiness.status() == ReadyState(False, f"role {STAFF_ROLE} cannot read tenant.staff_clusters")


async def test_an_outage_leaves_a_ready_api_ready_and_one_not_yet_ready_says_so(
    database: TestDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    async with checking(database.dsn(PUBLIC_ROLE), PUBLIC_SHAPE.role_needs) as readiness:
        # The role may no longer connect, and its open connection is gone: the database is out of reach.
        with database.admin() as conn:
            conn.execute(f'REVOKE CONNECT ON DATABASE "{database.name}" FROM PUBLIC')
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'readiness-test' AND datname = current_database()"
            )
        unreachable_before = failures(Reason.DATABASE_UNREACHABLE)
        verdict = await readiness.check_now()
        assert verdict.reasons == (Reason.DATABASE_UNREACHABLE,)
        assert failures(Reason.DATABASE_UNREACHABLE) - unreachable_before == 1
        assert await readiness.status() == ReadyState(True)
        with database.admin() as conn:
            conn.execute(f'GRANT CONNECT ON DATABASE "{database.name}" TO PUBLIC')

        async def checked_ready() -> bool:
            return (await readiness.check_now()).ready

        # The pool connects again in its own time (it backs off after failed attempts; on a loaded machine
        # the first check may still find it waiting).
        await eventually_async(checked_ready, "ready again once the role may connect")
    assert verdicts_logged(caplog) == ["ready"]
    closed = database.server.dsn(database.name, PUBLIC_ROLE).replace(f":{database.server.port}/", ":1/")
    async with checking(closed, PUBLIC_SHAPE.role_needs) as readiness:
        assert await readiness.status() == ReadyState(False, "the database did not answer the readiness check")


async def test_the_background_check_finds_a_grant_revoked_and_given_back(database: TestDatabase) -> None:
    async with checking(database.dsn(PUBLIC_ROLE), PUBLIC_SHAPE.role_needs, every=0.1) as readiness:
        assert (await readiness.status()).ready
        with database.admin() as conn:
            conn.execute(f"GRANT SELECT ON tenant.clusters TO {PUBLIC_ROLE}")

        async def ready() -> bool:
            return (await readiness.status()).ready

        async def not_ready() -> bool:
            return not await ready()

        await eventually_async(not_ready, "not ready after the grant, without a probe or a restart")
        with database.admin() as conn:
            conn.execute(f"REVOKE SELECT ON tenant.clusters FROM {PUBLIC_ROLE}")
        await eventually_async(ready, "ready again once the grant is gone")


async def test_grpc_health_and_readyz_follow_readiness_both_ways(database: TestDatabase) -> None:
    async with serving(database.dsn(PUBLIC_ROLE)) as (running, endpoints):
        health = health_pb2_grpc.HealthStub(endpoints.channel)

        async def health_is(status: int) -> bool:
            reply = await health.Check(health_pb2.HealthCheckRequest(service="fundament.overview.v1.OverviewService"))
            return bool(reply.status == status)

        await eventually_async(lambda: health_is(health_pb2.HealthCheckResponse.SERVING), "SERVING at first")
        with database.admin() as conn:
            conn.execute(f"REVOKE EXECUTE ON FUNCTION tenant.platform_overview() FROM {PUBLIC_ROLE}")
        await running.readiness.check_now()
        readyz = await endpoints.http.get("/readyz")
        assert (readyz.status_code, readyz.text) == (
            503,
            f"not ready: role {PUBLIC_ROLE} cannot execute tenant.platform_overview()\n",
        )
        await eventually_async(lambda: health_is(health_pb2.HealthCheckResponse.NOT_SERVING), "NOT_SERVING")
        with database.admin() as conn:
            conn.execute(f"GRANT EXECUTE ON FUNCTION tenant.platform_overview() TO {PUBLIC_ROLE}")
        await running.readiness.check_now()
        assert (await endpoints.http.get("/readyz")).status_code == 200
        await eventually_async(lambda: health_is(health_pb2.HealthCheckResponse.SERVING), "SERVING again")
