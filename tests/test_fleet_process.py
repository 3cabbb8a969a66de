"""`platform-admin-api` as the process an operator runs: bad configuration, the schema check, JSON
logs with the subject and request id, and a graceful SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
from psycopg import sql

from db.embedded import free_port
from tests.fixtures.credentials import SECRET
from tests.fixtures.fleet_api import ROLE, STAFF, FleetApiUnderTest, staff_token
from tests.fixtures.postgres import PgServer, TestDatabase, drop_database

BIN = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "platform-admin-api"
SUMMARY_PATH = "/fundament.fleet.v1.FleetService/GetFleetSummary"


@dataclass
class Process:
    process: asyncio.subprocess.Process
    http: str
    log: list[dict[str, object]] = field(default_factory=list)

    async def wait_for_log(self, message: str) -> dict[str, object]:
        """Read JSON log lines from stderr until one has `message`."""
        assert self.process.stderr is not None
        while line := await asyncio.wait_for(self.process.stderr.readline(), timeout=60):
            entry: dict[str, object] = json.loads(line)
            self.log.append(entry)
            if str(entry["message"]).startswith(message):
                return entry
        raise AssertionError(f"the process ended without logging {message!r}: {self.log}")


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


@asynccontextmanager
async def started(env: dict[str, str]) -> AsyncIterator[Process]:
    process = await asyncio.create_subprocess_exec(
        str(BIN), env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    try:
        yield Process(process, f"http://127.0.0.1:{env['HTTP_PORT']}")
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def run_to_exit(env: dict[str, str]) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        str(BIN), env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    _, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    return process.returncode or 0, stderr.decode()


async def test_serves_logs_the_subject_and_stops_on_sigterm(shared_fleet_api: FleetApiUnderTest) -> None:
    env = environment(shared_fleet_api.database.dsn(ROLE))
    async with started(env) as proc:
        await proc.wait_for_log("listening")
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
        entry = await proc.wait_for_log("rpc fundament.fleet.v1.FleetService/GetFleetSummary")
        assert entry["subject"] == str(STAFF)
        assert entry["request_id"] == "req-process-1"
        assert entry["code"] == "ok" and entry["protocol"] == "connect"
        proc.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.process.wait(), timeout=30) == 0
    assert staff_token()[:30] not in json.dumps(proc.log)


async def test_bad_configuration_exits_2_naming_the_variable() -> None:
    env = environment("postgresql://nobody@127.0.0.1:1/none", JWT_SECRET="short")
    rc, stderr = await run_to_exit(env)
    assert rc == 2
    assert "JWT_SECRET: the secret must be at least 32 bytes" in stderr


async def test_refuses_to_start_against_an_unmigrated_database(pg_server: PgServer) -> None:
    empty = TestDatabase(pg_server, f"fleet_empty_{os.getpid()}")
    with psycopg.connect(pg_server.dsn("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(empty.name)))
    try:
        rc, stderr = await run_to_exit(environment(empty.dsn(ROLE)))
    finally:
        drop_database(empty)
    assert rc == 1
    assert "schema is at version 0" in stderr
