"""The chart's `helm test` script (deploy/fleet-inventory/files/helm-test.py), run as the test pod runs it
(`python -c <the file>`, configured by its environment) against both APIs started as the processes an
operator runs: it passes when each answers as it should, and fails, naming the call, when one does not.
"""

from __future__ import annotations

import asyncio
import os
import sys

from db.embedded import free_port
from tests.fixtures.credentials import SECRET
from tests.fixtures.fleet_api import ROLE as STAFF_ROLE
from tests.fixtures.helm import CHART
from tests.fixtures.overview import ROLE as PUBLIC_ROLE
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.service_process import started

SCRIPT = (CHART / "files" / "helm-test.py").read_text()


def api_env(dsn: str, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": dsn,
        "HTTP_PORT": str(free_port()),
        "GRPC_PORT": str(free_port()),
        **extra,
    }


async def run_script(env: dict[str, str]) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SCRIPT,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    return process.returncode or 0, out.decode()


async def test_the_test_pod_calls_both_apis_on_both_protocols(database: TestDatabase) -> None:
    public = api_env(database.dsn(PUBLIC_ROLE))
    staff = api_env(database.dsn(STAFF_ROLE), JWT_SECRET=SECRET.decode())
    async with started("platform-public-api", public) as pub, started("platform-admin-api", staff) as adm:
        await pub.wait_for_log("listening")
        await adm.wait_for_log("listening")
        targets = {
            "PUBLIC_HTTP": f"127.0.0.1:{public['HTTP_PORT']}",
            "PUBLIC_GRPC": f"127.0.0.1:{public['GRPC_PORT']}",
            "STAFF_HTTP": f"127.0.0.1:{staff['HTTP_PORT']}",
            "STAFF_GRPC": f"127.0.0.1:{staff['GRPC_PORT']}",
        }
        code, out = await run_script(targets)
        assert (code, out.strip()) == (0, "4 of 4 calls answered as expected")
        # The public API where the staff API should be: it answers, but not as the staff API must.
        swapped = {**targets, "STAFF_HTTP": targets["PUBLIC_HTTP"], "STAFF_GRPC": targets["PUBLIC_GRPC"]}
        code, out = await run_script(swapped)
        assert code == 1
        assert "FAILED staff API over Connect" in out
        assert "FAILED staff API over gRPC" in out


async def test_the_test_pod_fails_without_anything_to_call() -> None:
    code, out = await run_script({})
    assert code == 1
    assert "no API to call" in out
