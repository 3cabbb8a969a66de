"""`fleet usage` as a real process against platform-admin-api on real sockets.

The CSV is parsed back with the csv module exactly as a spreadsheet would read RFC 4180: one header
of FOCUS column names, CRLF line ends, no byte order mark, ISO 8601 UTC times, decimal hours, integer
peaks, and the same figures ListUsage answers. The table lists the same groups. Names a spreadsheet
would run as formulas are defused.
"""

from __future__ import annotations

import asyncio
import csv
import io
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fundament.fleet.v1 import fleet_pb2

from fleetctl.usage import export
from tests.fixtures.credentials import SECRET
from tests.fixtures.fleet_api import NOW, FleetApiUnderTest

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"
START = NOW - timedelta(days=10)
END = NOW + timedelta(days=1)


async def fleet(*args: str) -> tuple[int, bytes, str]:
    process = await asyncio.create_subprocess_exec(
        str(BIN / "fleet"),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if not k.startswith("JWT_")},
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return process.returncode, out, err.decode()


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "jwt-secret"
    path.write_bytes(SECRET)
    path.chmod(0o600)
    return path


def window_args(api: FleetApiUnderTest, secret_file: Path, *more: str) -> list[str]:
    return [
        "usage",
        "--api",
        f"http://127.0.0.1:{api.running.server.http_port}",
        "--secret-file",
        str(secret_file),
        "--start",
        START.isoformat(),
        "--end",
        END.isoformat(),
        *more,
    ]


async def listed(api: FleetApiUnderTest, **fields: object) -> list[fleet_pb2.UsageGroup]:
    request = fleet_pb2.ListUsageRequest(page_size=500, **fields)  # type: ignore[arg-type]
    request.start.FromDatetime(START)
    request.end.FromDatetime(END)
    groups: list[fleet_pb2.UsageGroup] = []
    while True:
        response = await api.call("grpc", "ListUsage", request)
        groups += response.groups
        if not response.next_page_token:
            return groups
        request.page_token = response.next_page_token


def parse_iso_utc(text: str) -> datetime:
    assert text.endswith("Z"), text
    parsed = datetime.fromisoformat(text.removesuffix("Z") + "+00:00")
    assert parsed.tzinfo == UTC
    return parsed


async def test_csv_reads_back_as_typed_focus_columns_with_the_api_s_figures(
    shared_fleet_api: FleetApiUnderTest, secret_file: Path, tmp_path: Path
) -> None:
    target = tmp_path / "usage.csv"
    rc, _, err = await fleet(
        *window_args(shared_fleet_api, secret_file, "--by", "cluster", "--step", "1d", "--csv", str(target))
    )
    assert rc == 0, err
    raw = target.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf"), "no byte order mark"
    assert raw.endswith(b"\r\n") and b"\n" not in raw.replace(b"\r\n", b""), "CRLF line ends only"
    raw.decode("utf-8")
    reader = csv.DictReader(io.StringIO(raw.decode(), newline=""), strict=True)
    assert tuple(reader.fieldnames or ()) == export.COLUMNS
    rows = list(reader)
    groups = await listed(shared_fleet_api, step_seconds=86400, aggregate=fleet_pb2.USAGE_AGGREGATE_CLUSTER)
    assert groups, "the world's ledger has billable rows in the window"
    assert len(rows) == sum(len(g.steps) for g in groups)
    expected = iter((g, s) for g in groups for s in g.steps)
    for row in rows:
        group, step = next(expected)
        start, end = parse_iso_utc(row["ChargePeriodStart"]), parse_iso_utc(row["ChargePeriodEnd"])
        assert (start, end) == (step.start.ToDatetime(tzinfo=UTC), step.end.ToDatetime(tzinfo=UTC))
        assert row["SubAccountId"] == group.organization_id and row["SubAccountName"] == group.organization_name
        assert row["ResourceId"] == group.cluster_id and row["ResourceName"] == group.cluster_name
        assert row["ResourceType"] == group.resource_type
        assert row["ConsumedUnit"] == "Hours"
        lower, upper = float(row["x_ConsumedQuantityLowerBound"]), float(row["x_ConsumedQuantityUpperBound"])
        assert float(row["ConsumedQuantity"]) == lower
        assert lower == pytest.approx(step.lower_resource_seconds / 3600, abs=1e-6)
        assert upper == pytest.approx(step.upper_resource_seconds / 3600, abs=1e-6)
        assert 0 <= lower <= upper <= (end - start).total_seconds() / 3600 * max(step.peak, 0) + 1e-6
        assert int(row["x_PeakCount"]) == step.peak
    assert any(float(r["ConsumedQuantity"]) > 0 for r in rows)


async def test_the_table_lists_every_organization_and_type(
    shared_fleet_api: FleetApiUnderTest, secret_file: Path
) -> None:
    rc, out, err = await fleet(*window_args(shared_fleet_api, secret_file, "--include-non-billable"))
    assert rc == 0, err
    lines = out.decode().splitlines()
    assert lines[0].split()[:4] == ["start", "(UTC)", "end", "(UTC)"]
    groups = await listed(shared_fleet_api, include_non_billable=True)
    assert len(lines) == 1 + len(groups)
    for line, group in zip(lines[1:], groups, strict=True):
        assert group.organization_name in line.split() and group.resource_type in line.split()


async def test_a_refused_request_says_what_the_api_said(shared_fleet_api: FleetApiUnderTest, secret_file: Path) -> None:
    rc, _, err = await fleet(*window_args(shared_fleet_api, secret_file, "--type", "Not-A-Type"))
    assert rc == 1
    assert "INVALID_ARGUMENT" in err and "resource_type must look like" in err


def test_a_formula_is_defused_and_quoting_follows_rfc_4180() -> None:
    at = datetime(2026, 11, 1, tzinfo=UTC)
    row = export.UsageRow(at, at + timedelta(days=1), "id", '=cmd|"x"', "", "a,b", "kubernetes.node", 1.5, 2.0, 3)
    out = io.StringIO(newline="")
    export.write_csv([row], out)
    (parsed,) = list(csv.DictReader(io.StringIO(out.getvalue(), newline="")))
    assert parsed["SubAccountName"] == '\'=cmd|"x"'
    assert parsed["ResourceName"] == "a,b"
    assert parsed["ChargePeriodStart"] == "2026-11-01T00:00:00Z"
    assert parsed["ConsumedQuantity"] == "1.500000"
