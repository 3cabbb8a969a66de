"""`platform-public-api` as the process an operator runs: configuration errors, the schema check, JSON
logs, and a graceful SIGTERM that lets a call in flight finish.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket

import httpx
import psycopg
import pytest

from db.embedded import free_port
from tests.fixtures.overview import PATH, ROLE, World
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.service_process import ServiceProcess, run_to_exit, started
from tests.fixtures.slowloris import slowloris, status_of, trickle
from tests.fixtures.waiting import eventually_async

SCRIPT = "platform-public-api"
STAFF_ROLE = "fun_platform_admin_api"


def environment(dsn: str, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": dsn,
        "HTTP_PORT": str(free_port()),
        "GRPC_PORT": str(free_port()),
        "CONSOLE_ORIGINS": "https://console.example",
        **extra,
    }


@pytest.mark.parametrize(
    ("variable", "value", "complaint"),
    [
        ("CACHE_TTL_SECONDS", "120", "at most 60"),
        ("CACHE_TTL_SECONDS", "soon", "expected a whole number"),
        ("READ_TIMEOUT_SECONDS", "0", "at least 0.05"),
        ("CONSOLE_ORIGINS", "*", "is not an origin"),
        ("LOG_LEVEL", "loud", "expected one of"),
        ("MALLOC_ARENA_MAX", "0", "at least 1"),
        ("MALLOC_MMAP_THRESHOLD_", str(64 << 20), "at most 33554432"),
    ],
    ids=[
        "ttl-above-a-minute",
        "ttl-not-a-number",
        "no-read-deadline",
        "wildcard-origin",
        "bad-log-level",
        "no-arena",
        "mmap-threshold-above-glibc",
    ],
)
async def test_unusable_configuration_exits_2_naming_the_variable(variable: str, value: str, complaint: str) -> None:
    rc, stderr = await run_to_exit(SCRIPT, environment("postgresql://nobody@127.0.0.1:1/none", **{variable: value}))
    assert rc == 2
    assert f"{variable}={value!r}" in stderr
    assert complaint in stderr


async def test_an_older_schema_is_refused_at_start(database: TestDatabase) -> None:
    with database.admin() as conn:
        conn.execute("COMMENT ON SCHEMA fleet_meta IS 'fleet inventory, schema version 0'")
    rc, stderr = await run_to_exit(SCRIPT, environment(database.dsn(ROLE)))
    assert rc == 1
    refusal = [json.loads(line) for line in stderr.splitlines() if '"refusing to start"' in line]
    assert refusal and "fleet db migrate" in str(refusal[0]["error"])


async def test_sigterm_lets_the_call_in_flight_finish_and_exits_cleanly(database: TestDatabase) -> None:
    with database.admin() as conn:
        World(conn).organization("acme", alias="Acme Corp")
    # At debug level, so the successful call's own log line is written too (info logs failures only).
    async with started(
        SCRIPT, environment(database.dsn(ROLE), SHUTDOWN_GRACE_SECONDS="10", LOG_LEVEL="debug")
    ) as running:
        await running.wait_for_log("listening")
        async with httpx.AsyncClient(base_url=running.http, timeout=60) as client:
            assert (await client.get("/readyz")).status_code == 200
            with psycopg.connect(database.dsn(), autocommit=False) as lock:
                lock.execute("LOCK TABLE tenant.organizations IN ACCESS EXCLUSIVE MODE")
                in_flight = asyncio.create_task(
                    client.get(
                        PATH, params={"encoding": "json", "message": "{}"}, headers={"x-request-id": "inflight-1"}
                    )
                )
                await wait_for_blocked_overview_query(database)
                running.process.send_signal(signal.SIGTERM)
                await running.wait_for_log("stopping on signal")
                lock.rollback()  # the database answers only now, after the signal
            response = await in_flight
        rc = await asyncio.wait_for(running.process.wait(), timeout=60)
        while await running.log_line() is not None:
            pass
    assert response.status_code == 200
    assert response.json()["organizations"][0]["name"] == "acme"
    assert rc == 0
    rpc = [entry for entry in running.log if entry.get("request_id") == "inflight-1"]
    assert rpc and rpc[0]["code"] == "ok" and rpc[0]["protocol"] == "connect"
    assert running.log[-1]["message"] == "stopped"


async def wait_for_blocked_overview_query(database: TestDatabase) -> None:
    def blocked() -> bool:
        with database.admin() as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND datname = current_database()"
                " AND wait_event_type = 'Lock' AND query LIKE '%%platform_overview%%'",
                (ROLE,),
            ).fetchone()
        return bool(row and int(str(row[0])) == 1)

    await eventually_async(blocked, "the overview query waiting on the lock")


@pytest.mark.parametrize("variable", ["HTTP_PORT", "GRPC_PORT"])
async def test_a_port_in_use_is_refused_naming_it_and_the_process_exits(database: TestDatabase, variable: str) -> None:
    """Before, a taken HTTP port left the gRPC port serving and the process ended on a traceback."""
    env = environment(database.dsn(ROLE))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", int(env[variable])))
        taken.listen()
        rc, stderr = await run_to_exit(SCRIPT, env)
    assert rc == 1
    refusal = [json.loads(line) for line in stderr.splitlines() if '"refusing to start"' in line]
    assert refusal and f"{variable} 127.0.0.1:{env[variable]}: cannot listen" in str(refusal[0]["error"])


def verdict_logged(running: ServiceProcess, message: str) -> dict[str, object]:
    """The one readiness verdict the process logged before it listened: `ready` or `not ready`."""
    verdicts = [entry for entry in running.log if entry["message"] in ("ready", "not ready")]
    assert [entry["message"] for entry in verdicts] == [message]
    return verdicts[0]


async def test_started_with_the_staff_role_it_is_not_ready_and_says_why(database: TestDatabase) -> None:
    """Before, this role made /readyz 200 and every call UNAVAILABLE: it cannot run the one function."""
    async with started(SCRIPT, environment(database.dsn(STAFF_ROLE))) as running:
        await running.wait_for_log("listening")
        async with httpx.AsyncClient(base_url=running.http, timeout=30) as client:
            readyz = await client.get("/readyz")
            metrics = (await client.get("/metrics")).text
    assert readyz.status_code == 503
    verdict = verdict_logged(running, "not ready")
    assert readyz.text.startswith(f"not ready: role {STAFF_ROLE} cannot execute tenant.platform_overview();")
    # The staff role reads tables too, which the public role must not: said as well.
    assert "; has privileges it must not have on tenant." in readyz.text
    assert "; may execute what it must not: tenant." in readyz.text
    assert verdict["reason"] == readyz.text.removeprefix("not ready: ").rstrip("\n")
    assert verdict["reasons"] == ["role_missing_privilege", "role_excess_privilege"]
    assert "\nfleet_api_ready 0.0\n" in metrics
    assert 'fleet_api_readiness_failures_total{reason="role_missing_privilege"} 1.0' in metrics
    assert 'fleet_api_readiness_failures_total{reason="role_excess_privilege"} 1.0' in metrics


async def test_a_public_role_that_may_also_read_a_table_is_not_ready_and_says_why(database: TestDatabase) -> None:
    # In this test's own database only: the role can run the overview, and read one table besides.
    with database.admin() as conn:
        conn.execute(f"GRANT SELECT ON tenant.organizations TO {ROLE}")
    async with started(SCRIPT, environment(database.dsn(ROLE))) as running:
        await running.wait_for_log("listening")
        async with httpx.AsyncClient(base_url=running.http, timeout=30) as client:
            readyz = await client.get("/readyz")
            metrics = (await client.get("/metrics")).text
    assert readyz.status_code == 503
    verdict = verdict_logged(running, "not ready")
    assert readyz.text == f"not ready: role {ROLE} has privileges it must not have on tenant.organizations\n"
    assert verdict["reasons"] == ["role_excess_privilege"]
    assert 'fleet_api_readiness_failures_total{reason="role_excess_privilege"} 1.0' in metrics
    assert 'fleet_api_readiness_failures_total{reason="role_missing_privilege"} 0.0' in metrics


async def test_started_correctly_it_is_ready_and_logs_its_role(database: TestDatabase) -> None:
    async with started(SCRIPT, environment(database.dsn(ROLE))) as running:
        await running.wait_for_log("listening")
        async with httpx.AsyncClient(base_url=running.http, timeout=30) as client:
            readyz = await client.get("/readyz")
            metrics = (await client.get("/metrics")).text
    assert (readyz.status_code, readyz.text) == (200, "ready\n")
    assert verdict_logged(running, "ready")["role"] == ROLE
    assert "\nfleet_api_ready 1.0\n" in metrics
    assert 'fleet_api_readiness_failures_total{reason="role_missing_privilege"} 0.0' in metrics


async def test_liveness_answers_through_a_slowloris_above_the_connection_limit(database: TestDatabase) -> None:
    """More unfinished heads than HTTP_MAX_CONNECTIONS: every other request is 503, /livez stays 200."""
    env = environment(database.dsn(ROLE), HTTP_MAX_CONNECTIONS="4", HTTP_HEAD_TIMEOUT_SECONDS="300")
    port = int(env["HTTP_PORT"])
    async with started(SCRIPT, env) as running:
        await running.wait_for_log("listening")
        with slowloris(port, 12) as held:
            assert status_of(port, "/metrics") == 503
            for _ in range(5):
                trickle(held)
                assert status_of(port, "/livez") == 200
        await eventually_async(lambda: status_of(port, "/metrics") == 200, "/metrics served after the flood")
