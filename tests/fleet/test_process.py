"""`platform-admin-api` as the process an operator runs: bad configuration, the schema check, JSON
logs with the subject and request id, a graceful SIGTERM, and its client bounds set from the environment.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal

import httpx
import psycopg
from psycopg import sql

from db.embedded import free_port
from tests.fixtures.credentials import SECRET
from tests.fixtures.fleet_api import ROLE, STAFF, FleetApiUnderTest, staff_token
from tests.fixtures.postgres import PgServer, TestDatabase, drop_database
from tests.fixtures.service_process import run_to_exit, started
from tests.fixtures.slowloris import slowloris, status_of, trickle
from tests.fixtures.waiting import eventually_async

SCRIPT = "platform-admin-api"
SUMMARY_PATH = "/fundament.fleet.v1.FleetService/GetFleetSummary"


def environment(dsn: str, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": dsn,
        "HTTP_PORT": str(free_port()),
        "GRPC_PORT": str(free_port()),
        "JWT_SECRET": SECRET.decode(),
        "DCIM_ORIGINS": "https://dcim.example",
        **extra,
    }


async def test_serves_logs_the_subject_and_stops_on_sigterm(shared_fleet_api: FleetApiUnderTest) -> None:
    env = environment(shared_fleet_api.database.dsn(ROLE))
    async with started(SCRIPT, env) as proc:
        await proc.wait_for_log("listening", prefix=True)
        async with httpx.AsyncClient(base_url=proc.http, timeout=30) as client:
            response = await client.post(
                SUMMARY_PATH,
                content=b"{}",
                headers={
                    "content-type": "application/json",
                    "authorization": f"Bearer {staff_token()}",
                    "x-request-id": "req-process-1",
                },
            )
            assert response.status_code == 200, response.text
            assert response.headers["x-request-id"] == "req-process-1"
            assert (await client.get("/readyz")).status_code == 200
        entry = await proc.wait_for_log("rpc fundament.fleet.v1.FleetService/GetFleetSummary", prefix=True)
        assert entry["subject"] == str(STAFF)
        assert entry["request_id"] == "req-process-1"
        assert entry["code"] == "ok" and entry["protocol"] == "connect"
        proc.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.process.wait(), timeout=30) == 0
    assert staff_token()[:30] not in json.dumps(proc.log)


async def test_bad_configuration_exits_2_naming_the_variable() -> None:
    env = environment("postgresql://nobody@127.0.0.1:1/none", JWT_SECRET="short")
    rc, stderr = await run_to_exit(SCRIPT, env)
    assert rc == 2
    assert "JWT_SECRET: the secret must be at least 32 bytes" in stderr


async def test_refuses_to_start_against_an_unmigrated_database(pg_server: PgServer) -> None:
    empty = TestDatabase(pg_server, f"fleet_empty_{os.getpid()}")
    with psycopg.connect(pg_server.dsn("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(empty.name)))
    try:
        rc, stderr = await run_to_exit(SCRIPT, environment(empty.dsn(ROLE)))
    finally:
        drop_database(empty)
    assert rc == 1
    assert "schema is at version 0" in stderr


async def test_the_process_takes_its_bounds_from_the_environment(shared_fleet_api: FleetApiUnderTest) -> None:
    """HTTP_HEAD_TIMEOUT_SECONDS and HTTP_MAX_CONNECTIONS as an operator sets them: a slow head is cut off with
    408 and logged once; connections over the limit get 503; bad headers are 400, logged once."""
    env = environment(shared_fleet_api.database.dsn(ROLE), HTTP_HEAD_TIMEOUT_SECONDS="0.5", HTTP_MAX_CONNECTIONS="3")
    port = int(env["HTTP_PORT"])
    async with started(SCRIPT, env) as proc:
        await proc.wait_for_log("listening", prefix=True)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /livez HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: never-ends")
        assert (await asyncio.wait_for(reader.read(), timeout=30)).startswith(b"HTTP/1.1 408 ")
        writer.close()
        await proc.wait_for_log("closed a connection whose request head took too long")
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /readyz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        assert (await asyncio.wait_for(reader.readline(), timeout=30)).startswith(b"HTTP/1.1 503 ")
        for _, w in [*held, (reader, writer)]:
            w.close()
        bad_header = f"POST {SUMMARY_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\n".encode()
        bad_header += b"content-type: application/json\r\nx-odd: caf\xe9\r\n\r\n{}"

        async def answer_once_served() -> bytes | None:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(bad_header)
            answer = await asyncio.wait_for(reader.read(), timeout=30)
            writer.close()
            return None if answer.startswith(b"HTTP/1.1 503 ") else answer

        # Until the server has noticed the held connections are gone.
        answer = await eventually_async(answer_once_served, "an answer other than 503", every=0.1)
        assert answer.startswith(b"HTTP/1.1 400 ")
        entry = await proc.wait_for_log("refused invalid_argument: a header value is not UTF-8")
        assert entry["procedure"] == SUMMARY_PATH and entry["http_status"] == 400


async def test_liveness_answers_through_a_slowloris_above_the_connection_limit(
    shared_fleet_api: FleetApiUnderTest,
) -> None:
    """More unfinished heads than HTTP_MAX_CONNECTIONS: every other request is 503, /livez stays 200."""
    env = environment(shared_fleet_api.database.dsn(ROLE), HTTP_MAX_CONNECTIONS="4", HTTP_HEAD_TIMEOUT_SECONDS="300")
    port = int(env["HTTP_PORT"])
    async with started(SCRIPT, env) as proc:
        await proc.wait_for_log("listening", prefix=True)
        with slowloris(port, 12) as held:
            assert status_of(port, "/metrics") == 503
            for _ in range(5):
                trickle(held)
                assert status_of(port, "/livez") == 200
        # The control: the flood gone, the rest is served again.
        await eventually_async(lambda: status_of(port, "/metrics") == 200, "/metrics served after the flood")


async def test_started_with_the_public_role_it_is_not_ready_and_says_why(database: TestDatabase) -> None:
    """Before, /readyz was 200 with a role that can read none of what the staff API reads."""
    public_role = "fun_platform_public_api"
    async with started(SCRIPT, environment(database.dsn(public_role))) as proc:
        await proc.wait_for_log("listening", prefix=True)
        async with httpx.AsyncClient(base_url=proc.http, timeout=30) as client:
            readyz = await client.get("/readyz")
            metrics = (await client.get("/metrics")).text
    assert readyz.status_code == 503
    verdicts = [entry for entry in proc.log if entry["message"] in ("ready", "not ready")]
    assert [entry["message"] for entry in verdicts] == ["not ready"]
    assert readyz.text.startswith(f"not ready: role {public_role} cannot read tenant.cluster_listing, ")
    for needed in ("tenant.staff_clusters", "tenant.organizations", "tenant.namespace_name_prefix(text,uuid)"):
        assert needed in readyz.text
    assert verdicts[0]["reasons"] == ["role_missing_privilege"]
    assert "\nfleet_api_ready 0.0\n" in metrics


async def test_started_correctly_it_is_ready(database: TestDatabase) -> None:
    async with started(SCRIPT, environment(database.dsn(ROLE))) as proc:
        await proc.wait_for_log("listening", prefix=True)
        async with httpx.AsyncClient(base_url=proc.http, timeout=30) as client:
            readyz = await client.get("/readyz")
    assert (readyz.status_code, readyz.text) == (200, "ready\n")
    assert [entry["role"] for entry in proc.log if entry["message"] == "ready"] == [ROLE]
