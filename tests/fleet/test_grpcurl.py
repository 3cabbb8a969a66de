"""Every FleetService RPC called with grpcurl through server reflection, with a token from `fleet token`.

This is what an operator does by hand: mint a token with the shared secret, list the services the
gRPC port reflects, and call each method with JSON. The methods come from the generated descriptor,
so a method added to the contract without a row here fails the test.
"""

from __future__ import annotations

import asyncio
import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from fundament.fleet.v1 import fleet_pb2

from fleetctl.main import main as fleet_main
from tests.fixtures.credentials import SECRET
from tests.fixtures.fleet_api import NOW, STAFF, FleetApiUnderTest

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"
SERVICE = fleet_pb2.DESCRIPTOR.services_by_name["FleetService"]


async def run_tool(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run a command without blocking the event loop that serves the API under test."""
    process = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    return process.returncode or 0, stdout.decode(), stderr.decode()


@pytest.fixture(scope="module")
async def cli_token(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A token minted by the `fleet token` command from a secret file."""
    secret_file = tmp_path_factory.mktemp("secret") / "jwt-secret"
    secret_file.write_bytes(SECRET)
    secret_file.chmod(0o600)
    rc, out, err = await run_tool(
        str(BIN / "fleet"), "token", "--secret-file", str(secret_file), "--subject", str(STAFF), "--ttl", "10m"
    )
    assert rc == 0, err
    return out.strip()


async def grpcurl(api: FleetApiUnderTest, *args: str) -> tuple[int, str, str]:
    return await run_tool(str(BIN / "grpcurl"), "-plaintext", "-max-time", "30", *args)


async def test_reflection_lists_the_service_and_its_methods_without_a_token(
    shared_fleet_api: FleetApiUnderTest,
) -> None:
    target = shared_fleet_api.clients.grpc_target
    rc, out, err = await grpcurl(shared_fleet_api, target, "list")
    assert rc == 0, err
    assert {"fundament.fleet.v1.FleetService", "grpc.health.v1.Health"} <= set(out.split())
    rc, out, err = await grpcurl(shared_fleet_api, target, "list", SERVICE.full_name)
    assert rc == 0, err
    assert set(out.split()) == {f"{SERVICE.full_name}.{m.name}" for m in SERVICE.methods}


async def test_every_method_answers_through_grpcurl(shared_fleet_api: FleetApiUnderTest, cli_token: str) -> None:
    target = shared_fleet_api.clients.grpc_target
    some_cluster = shared_fleet_api.world.fleet.notes["scenario.running"].split(",")[0]
    requests = {
        "ListOrganizations": ({"page_size": 3}, "organizations"),
        "ListClusters": ({"page_size": 3, "statuses": ["CLUSTER_STATUS_RUNNING"]}, "clusters"),
        "ListDriftFindings": ({"page_size": 3, "kind": "DRIFT_KIND_MISSING_SHOOT"}, "findings"),
        "GetCluster": ({"id": some_cluster}, "cluster"),
        "GetFleetSummary": ({}, "clustersByStatus"),
        "ListInfrastructureResources": ({"page_size": 3, "billable": True}, "resources"),
        "SearchNamespaces": ({"page_size": 3, "query": "api"}, "namespaces"),
        # The world holds no recorded history: an empty answer (no points) is the right one.
        "GetFleetTrends": ({"start": "2025-12-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}, None),
        "GetOrganization": ({"id": str(shared_fleet_api.world.fleet.organizations[0].id)}, "listingChanges"),
        "ListUsage": ({"page_size": 3, "start": (NOW - timedelta(days=10)).isoformat()}, "groups"),
        "ListFindingHistory": ({"page_size": 3, "open_only": True}, "findings"),
    }
    assert set(requests) == {m.name for m in SERVICE.methods}
    for method, (body, field) in requests.items():
        rc, out, err = await grpcurl(
            shared_fleet_api,
            "-H",
            f"authorization: Bearer {cli_token}",
            "-d",
            json.dumps(body),
            target,
            f"{SERVICE.full_name}/{method}",
        )
        assert rc == 0, f"{method}: {err}"
        answer = json.loads(out)
        assert answer[field] if field is not None else answer == {}, method


async def test_grpcurl_without_a_token_is_unauthenticated(shared_fleet_api: FleetApiUnderTest) -> None:
    rc, _, err = await grpcurl(
        shared_fleet_api, "-d", "{}", shared_fleet_api.clients.grpc_target, f"{SERVICE.full_name}/GetFleetSummary"
    )
    assert rc != 0
    assert "Unauthenticated" in err


async def test_fleet_token_reads_the_secret_from_the_environment(shared_fleet_api: FleetApiUnderTest) -> None:
    env = {**os.environ, "JWT_SECRET": SECRET.decode()}
    env.pop("JWT_SECRET_FILE", None)
    rc, out, err = await run_tool(str(BIN / "fleet"), "token", "--subject", str(STAFF), env=env)
    assert rc == 0, err
    response = await shared_fleet_api.call(
        "grpc", "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest(), [("authorization", f"Bearer {out.strip()}")]
    )
    assert response.clusters > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--subject", "not-a-uuid"], "expected a UUID"),
        (["--subject", str(STAFF), "--ttl", "25h"], "at most 24h"),
        (["--subject", str(STAFF), "--ttl", "0s"], "more than 0"),
        (["--subject", str(STAFF), "--ttl", "soon"], "expected a duration"),
        (["--subject", str(STAFF)], "no secret"),
        (["--subject", str(STAFF), "--secret-file", "/nonexistent/secret"], "cannot read it"),
    ],
    ids=["bad-subject", "ttl-too-long", "ttl-zero", "ttl-not-a-duration", "no-secret", "missing-secret-file"],
)
def test_fleet_token_refuses_bad_input_clearly(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # In-process (the subprocess tests above prove the installed command); argparse exits with 2.
    monkeypatch.delenv("JWT_SECRET", raising=False)
    monkeypatch.delenv("JWT_SECRET_FILE", raising=False)
    try:
        rc = fleet_main(["token", *args])
    except SystemExit as exit_:
        rc = int(str(exit_.code))
    captured = capsys.readouterr()
    assert rc == 2
    assert captured.out == ""
    assert message in captured.err


def test_fleet_token_refuses_a_short_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    short = tmp_path / "short"
    short.write_text("too-short\n")
    assert fleet_main(["token", "--secret-file", str(short), "--subject", str(STAFF)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "at least 32 bytes" in captured.err
