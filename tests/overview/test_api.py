"""platform-public-api over real sockets against real PostgreSQL, as role fun_platform_public_api.

Every protocol a client may use (Connect GET and POST in JSON and binary, gRPC) reaches the same
cached answer; the database itself counts the queries (pg_stat_statements); time for the cache is a
clock the test moves, and a query is stalled by locking the table the function reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager

import grpc
import psycopg
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from fundament.overview.v1 import overview_pb2
from fundament.overview.v1.overview_pb2_grpc import OverviewServiceStub
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from db.embedded import free_port
from services.overview import queries
from tests.fixtures.overview import (
    CONSOLE,
    PATH,
    PROTOCOLS,
    ROLE,
    CallFailed,
    FakeClock,
    World,
    overview_queries,
    serving,
    start_counting_queries,
)
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.waiting import eventually_async

REQUEST = overview_pb2.GetPlatformOverviewRequest()
MAX_AGE = re.compile(r"^public, max-age=(\d+)$")
PROCEDURE = {"service": "fundament.overview.v1.OverviewService", "method": "GetPlatformOverview"}
UUID_TEXT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

STACK_LOGGER = "services.common.serving.request_stack"


def max_age(cache_control: str) -> int:
    match = MAX_AGE.match(cache_control)
    assert match, f"unexpected Cache-Control {cache_control!r}"
    return int(match.group(1))


@contextmanager
def holding_lock(database: TestDatabase) -> Iterator[None]:
    """Stall tenant.platform_overview(): hold an exclusive lock on a table it reads until the block ends."""
    with psycopg.connect(database.dsn(), autocommit=False) as conn:
        conn.execute("LOCK TABLE tenant.organizations IN ACCESS EXCLUSIVE MODE")
        yield
        conn.rollback()


def active_overview_queries(database: TestDatabase) -> int:
    with database.admin() as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND datname = current_database()"
            " AND state = 'active' AND query LIKE '%%platform_overview%%'",
            (ROLE,),
        ).fetchone()
    assert row is not None
    return int(str(row[0]))


def metric_samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


@pytest.fixture
def world(database: TestDatabase) -> Iterator[World]:
    with database.admin() as conn:
        yield World(conn)


def arrange_platform(world: World) -> list[str]:
    """Two listed organizations with live and deleted things, plus everything that must stay hidden.

    Returns every id written, so a test can look for any of them in an answer.
    """
    acme = world.organization("acme", alias="Acme Corp")
    live = world.cluster(acme, "prod")
    web = world.project(live, "web")
    world.namespace(web, "frontend")
    world.namespace(web, "backend")
    world.namespace(web, "old", deleted=True)
    gone_project = world.project(live, "gone", deleted=True)
    world.namespace(gone_project, "orphaned")  # live namespace of a deleted project: not counted
    world.project(live, "empty")
    second = world.cluster(acme, "staging")
    world.namespace(world.project(second, "api"), "api")
    dead = world.cluster(acme, "retired", deleted=True)
    world.namespace(world.project(dead, "legacy"), "legacy")  # under a deleted cluster: not counted
    beta = world.organization("beta", alias="Beta Ltd")  # listed, with nothing yet
    hidden = world.organization("hidden", listed=False)
    world.namespace(world.project(world.cluster(hidden, "secret"), "x"), "y")
    closed = world.organization("closed", deleted=True)
    world.cluster(closed, "leftover")
    ids = [acme, live, web, gone_project, second, dead, beta, hidden, closed]
    return [str(i) for i in ids]


EXPECTED = overview_pb2.GetPlatformOverviewResponse(
    organizations=[
        overview_pb2.OrganizationOverview(name="acme", alias="Acme Corp", clusters=2, projects=3, namespaces=3),
        overview_pb2.OrganizationOverview(name="beta", alias="Beta Ltd", clusters=0, projects=0, namespaces=0),
    ],
    totals=overview_pb2.OverviewTotals(organizations=2, clusters=2, projects=3, namespaces=3),
)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
async def test_listed_organizations_and_their_live_counts_on_every_protocol(
    database: TestDatabase, world: World, protocol: str
) -> None:
    arrange_platform(world)
    async with serving(database.dsn(ROLE)) as (_, endpoints):
        reply = await PROTOCOLS[protocol](endpoints, None)
    answer = overview_pb2.GetPlatformOverviewResponse()
    answer.CopyFrom(reply.response)
    assert answer.HasField("read")
    answer.ClearField("read")
    assert answer == EXPECTED
    assert reply.cache_control == "public, max-age=60"


async def test_json_is_compact_lists_zero_counts_and_carries_no_id(database: TestDatabase, world: World) -> None:
    ids = arrange_platform(world)
    async with serving(database.dsn(ROLE)) as (_, endpoints):
        response = await endpoints.http.get(PATH, params={"encoding": "json", "message": "{}"})
    body = response.text
    document = json.loads(body)
    assert body == json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    assert document["organizations"][1] == {
        "name": "beta",
        "alias": "Beta Ltd",
        "clusters": 0,
        "projects": 0,
        "namespaces": 0,
    }

    def keys(value: object) -> Iterator[str]:
        if isinstance(value, dict):
            for key, inner in value.items():
                yield key
                yield from keys(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from keys(inner)

    assert not [key for key in keys(document) if key.lower() == "id" or key.endswith(("Id", "_id", "Ids"))]
    assert not UUID_TEXT.search(body)
    assert not [i for i in ids if i in body]
    for hidden in ("hidden", "closed", "system", "secret", "prod", "frontend"):
        assert f'"{hidden}"' not in body


@pytest.mark.parametrize("protocol", ["connect-post-json", "connect-get-proto", "grpc"])
async def test_an_authorization_header_is_accepted_and_ignored(
    database: TestDatabase, world: World, protocol: str
) -> None:
    world.organization("acme")
    async with serving(database.dsn(ROLE)) as (_, endpoints):
        reply = await PROTOCOLS[protocol](endpoints, {"authorization": "Bearer not-a-token-at-all"})
    assert [organization.name for organization in reply.response.organizations] == ["acme"]


async def test_grpc_clients_find_cache_control_and_their_request_id_in_trailing_metadata(
    database: TestDatabase,
) -> None:
    async with serving(database.dsn(ROLE)) as (_, endpoints):
        reply = await PROTOCOLS["grpc"](endpoints, {"x-request-id": "probe-42"})
    assert reply.headers["cache-control"] == "public, max-age=60"
    assert reply.headers["x-request-id"] == "probe-42"


async def test_500_concurrent_cold_requests_cost_exactly_one_query(database: TestDatabase, world: World) -> None:
    start_counting_queries(database)
    world.organization("acme")
    mix = ["connect-get-json", "connect-post-json", "connect-get-proto", "connect-post-proto", "grpc"]
    async with serving(database.dsn(ROLE), READ_TIMEOUT_SECONDS="120") as (running, endpoints):
        # The lock holds the one read open until every caller is waiting for it: all 500 are cold.
        with holding_lock(database):
            calls = [asyncio.create_task(PROTOCOLS[mix[i % len(mix)]](endpoints, None)) for i in range(500)]
            await eventually_async(lambda: running.cache.waiting == 500, "500 callers waiting", within=120, watch=calls)
            assert overview_queries(database) == 0
        replies = await asyncio.gather(*calls)
    assert overview_queries(database) == 1
    assert {reply.response.SerializeToString() for reply in replies} == {replies[0].response.SerializeToString()}
    assert [organization.name for organization in replies[0].response.organizations] == ["acme"]
    assert {max_age(reply.cache_control) for reply in replies} <= set(range(61))


async def test_max_age_falls_as_the_answer_ages_and_a_new_answer_is_read_after_the_ttl(
    database: TestDatabase, world: World
) -> None:
    start_counting_queries(database)
    clock = FakeClock()
    world.organization("acme")
    protocols = ["connect-get-json", "connect-post-proto", "grpc"]
    async with serving(database.dsn(ROLE), clock=clock) as (_, endpoints):
        ages: list[list[int]] = []
        first_read = None
        # Exact binary fractions, so the clock lands on exactly 60 s: ages 0, 0.5, 15.5, 45.5, 59.5 s.
        for step in (0.0, 0.5, 15.0, 30.0, 14.0):
            clock.advance(step)
            replies = [await PROTOCOLS[name](endpoints, None) for name in protocols]
            ages.append([max_age(reply.cache_control) for reply in replies])
            first_read = first_read or replies[0].response.read
            assert all(reply.response.read == first_read for reply in replies)
        assert ages == [[60] * 3, [59] * 3, [44] * 3, [14] * 3, [0] * 3]

        world.organization("newco")  # the cached answer does not know it yet
        stale = await PROTOCOLS["grpc"](endpoints, None)
        assert [organization.name for organization in stale.response.organizations] == ["acme"]
        assert overview_queries(database) == 1

        clock.advance(0.5)  # 60 s after the first read started: a new read
        fresh = await PROTOCOLS["connect-get-json"](endpoints, None)
    assert [organization.name for organization in fresh.response.organizations] == ["acme", "newco"]
    assert max_age(fresh.cache_control) == 60
    assert fresh.response.read.ToDatetime() > stale.response.read.ToDatetime()
    assert overview_queries(database) == 2


async def test_a_stalled_query_answers_unavailable_to_every_waiter_by_the_read_deadline(
    database: TestDatabase, world: World
) -> None:
    start_counting_queries(database)
    world.organization("acme")
    async with serving(database.dsn(ROLE), READ_TIMEOUT_SECONDS="1") as (running, endpoints):
        with holding_lock(database):
            calls = [asyncio.create_task(PROTOCOLS[name](endpoints, None)) for name in PROTOCOLS for _ in range(5)]
            results = await asyncio.gather(*calls, return_exceptions=True)
            # Every caller has its answer while the query is still held by the lock: the deadline released them.
            assert all(isinstance(result, CallFailed) for result in results), results
            assert {result.code for result in results if isinstance(result, CallFailed)} == {"unavailable"}
            assert {result.message for result in results if isinstance(result, CallFailed)} == {
                "the platform overview is unavailable right now, try again later"
            }
            # And the query itself was cancelled, not left waiting on the lock.
            await eventually_async(
                lambda: not running.cache.reading and active_overview_queries(database) == 0, "the read cancelled"
            )
        reply = await PROTOCOLS["grpc"](endpoints, None)  # the failure was not kept
    assert [organization.name for organization in reply.response.organizations] == ["acme"]
    assert overview_queries(database) == 1


async def test_callers_that_give_up_do_not_cancel_the_read_for_the_others(database: TestDatabase, world: World) -> None:
    start_counting_queries(database)
    world.organization("acme")
    async with serving(database.dsn(ROLE), READ_TIMEOUT_SECONDS="60") as (running, endpoints):
        before = metric_samples((await endpoints.http.get("/metrics")).text)
        with holding_lock(database):
            patient = asyncio.create_task(PROTOCOLS["connect-get-json"](endpoints, None))
            await eventually_async(lambda: running.cache.waiting == 1, "the patient caller waiting", watch=[patient])
            with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
                await OverviewServiceStub(endpoints.channel).GetPlatformOverview(REQUEST, timeout=0.3)
            assert over_grpc.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            with pytest.raises(ConnectError) as over_connect:
                await endpoints.connect_proto.get_platform_overview(REQUEST, timeout_ms=300)
            assert over_connect.value.code == Code.DEADLINE_EXCEEDED
            assert running.cache.reading
            assert not patient.done()
        reply = await patient
        assert [organization.name for organization in reply.response.organizations] == ["acme"]
        assert overview_queries(database) == 1

        # The callers that gave up are counted as cancelled, each on its own protocol, once their handlers
        # find them gone (when the shared read they waited on ends, about when the patient caller's answer goes).
        async def cancelled() -> dict[str, float]:
            after = metric_samples((await endpoints.http.get("/metrics")).text)
            counted = {}
            for protocol in ("grpc", "connect"):
                labels = tuple(sorted({**PROCEDURE, "protocol": protocol, "code": "canceled"}.items()))
                key = ("fleet_rpc_requests_total", labels)
                counted[protocol] = after.get(key, 0.0) - before.get(key, 0.0)
            return counted

        counted = await eventually_async(lambda: _when_both_counted(cancelled()), "both cancelled calls counted")
    assert counted == {"grpc": 1, "connect": 1}


async def _when_both_counted(counts: Awaitable[dict[str, float]]) -> dict[str, float] | None:
    counted = await counts
    return counted if all(counted.values()) else None


async def test_cors_allows_the_console_origin_without_credentials_and_nobody_else(database: TestDatabase) -> None:
    async with serving(database.dsn(ROLE)) as (_, endpoints):
        preflight = {
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type,connect-protocol-version,connect-timeout-ms,authorization",
        }
        allowed = await endpoints.http.options(PATH, headers={"origin": CONSOLE, **preflight})
        denied = await endpoints.http.options(PATH, headers={"origin": "https://elsewhere.example", **preflight})
        get_from_console = await endpoints.http.get(
            PATH, params={"encoding": "json", "message": "{}"}, headers={"origin": CONSOLE}
        )
        get_from_elsewhere = await endpoints.http.get(
            PATH, params={"encoding": "json", "message": "{}"}, headers={"origin": "https://elsewhere.example"}
        )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == CONSOLE
    assert {"GET", "POST"} <= {m.strip() for m in allowed.headers["access-control-allow-methods"].split(",")}
    assert "access-control-allow-credentials" not in allowed.headers
    assert denied.status_code == 400
    assert "access-control-allow-origin" not in denied.headers
    assert get_from_console.headers["access-control-allow-origin"] == CONSOLE
    assert "cache-control" in get_from_console.headers["access-control-expose-headers"]
    assert "access-control-allow-credentials" not in get_from_console.headers
    assert "access-control-allow-origin" not in get_from_elsewhere.headers


async def test_metrics_count_cache_results_and_database_reads(database: TestDatabase, world: World) -> None:
    world.organization("acme")
    clock = FakeClock()
    async with serving(database.dsn(ROLE), clock=clock) as (_, endpoints):
        before = metric_samples((await endpoints.http.get("/metrics")).text)
        await PROTOCOLS["grpc"](endpoints, None)  # miss: one read
        await PROTOCOLS["connect-get-json"](endpoints, None)  # hit
        await PROTOCOLS["connect-post-json"](endpoints, None)  # hit
        after = metric_samples((await endpoints.http.get("/metrics")).text)

    def delta(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert delta("fleet_overview_cache_lookups_total", result="miss") == 1
    assert delta("fleet_overview_cache_lookups_total", result="hit") == 2
    assert delta("fleet_overview_database_reads_total", outcome="ok") == 1
    assert delta("fleet_overview_database_read_duration_seconds_count") == 1
    assert delta("fleet_rpc_requests_total", **PROCEDURE, protocol="grpc", code="ok") == 1
    assert delta("fleet_rpc_requests_total", **PROCEDURE, protocol="connect", code="ok") == 2


async def test_ready_and_serving_once_the_database_answered(database: TestDatabase) -> None:
    async with serving(database.dsn(ROLE)) as (_, endpoints):
        assert (await endpoints.http.get("/readyz")).status_code == 200
        health = health_pb2_grpc.HealthStub(endpoints.channel)
        statuses: list[int] = []

        async def serving_now() -> bool:
            reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
            statuses.append(reply.status)
            return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

        # The health service is polled, as a kubelet does.
        await eventually_async(serving_now, "the health service answering SERVING")


async def test_an_unreachable_database_means_not_ready_and_unavailable_without_caching(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="services.common.serving")
    nowhere = f"postgresql://{ROLE}@127.0.0.1:{free_port()}/fleet"
    async with serving(nowhere, READ_TIMEOUT_SECONDS="0.5", DATABASE_CONNECT_TIMEOUT_SECONDS="0.2") as (_, endpoints):
        assert (await endpoints.http.get("/livez")).status_code == 200
        assert (await endpoints.http.get("/readyz")).status_code == 503
        health = await health_pb2_grpc.HealthStub(endpoints.channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.NOT_SERVING
        response = await endpoints.http.get(PATH, params={"encoding": "json", "message": "{}"})
        assert response.status_code == 503
        assert response.json()["code"] == "unavailable"
        assert "public" not in response.headers.get("cache-control", "")
        for name in ("grpc", "connect-post-proto"):
            with pytest.raises(CallFailed) as caught:
                await PROTOCOLS[name](endpoints, None)
            assert caught.value.code == "unavailable"
    failures = [
        r
        for r in caplog.records
        if r.name == "services.common.serving.request_stack" and r.getMessage().endswith("unavailable")
    ]
    assert len(failures) == 3 and all(r.levelno == logging.INFO for r in failures)


async def test_successful_calls_are_logged_at_debug_only(
    database: TestDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="services.common.serving")
    async with serving(database.dsn(ROLE)) as (_, endpoints):
        await PROTOCOLS["grpc"](endpoints, None)
        caplog.set_level(logging.DEBUG, logger="services.common.serving")
        await PROTOCOLS["connect-get-json"](endpoints, None)
    calls = [
        r
        for r in caplog.records
        if r.name == "services.common.serving.request_stack" and r.getMessage().startswith("rpc ")
    ]
    assert [(r.levelno, getattr(r, "protocol", None)) for r in calls] == [(logging.DEBUG, "connect")]


async def test_every_query_runs_against_the_migrated_schema_as_the_service_role(database: TestDatabase) -> None:
    async with await psycopg.AsyncConnection.connect(database.dsn(ROLE)) as conn:
        for query in queries.QUERIES.values():
            async with conn.cursor() as cur:
                await cur.execute(query.sql)
                assert cur.description is not None
        rows = await queries.platform_overview(conn)
    assert rows == []
    with psycopg.connect(database.dsn(ROLE)) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SELECT name FROM tenant.organizations")
