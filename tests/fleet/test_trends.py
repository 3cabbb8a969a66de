"""GetFleetTrends over real sockets, on history the inventory loop's recording wrote into the world.

Points are the last recording of each step, from the per-round rows for fleet-wide steps under an
hour and from the hourly rows otherwise or for one organization; the numbers are what the summary
counts; bad ranges and steps are INVALID_ARGUMENT.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from fundament.fleet.v1 import fleet_pb2

from collector.inventory import history_store
from tests.fixtures.fleet_api import NOW, CallFailed, FleetApiUnderTest

T0 = datetime(2026, 2, 1, 8, 0, 0, tzinfo=UTC)
ROUNDS = (T0, T0 + timedelta(minutes=15), T0 + timedelta(hours=1), T0 + timedelta(hours=2, minutes=5))
KEEP = {"round_retention": timedelta(days=30), "hour_retention": timedelta(days=35)}


async def record(api: FleetApiUnderTest) -> None:
    async with await psycopg.AsyncConnection.connect(api.database.dsn("fun_cluster_worker")) as conn:
        for at in ROUNDS:
            await history_store.record_round(conn, at=at, **KEEP)


def request(**fields: Any) -> fleet_pb2.GetFleetTrendsRequest:
    message = fleet_pb2.GetFleetTrendsRequest(**{k: v for k, v in fields.items() if k not in ("start", "end")})
    for name in ("start", "end"):
        if name in fields:
            getattr(message, name).FromDatetime(fields[name])
    return message


def times(response: Any) -> list[datetime]:
    return [p.at.ToDatetime(tzinfo=UTC) for p in response.points]


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
async def test_fleet_wide_hourly_points_are_the_hours_recorded(fleet_api: FleetApiUnderTest, protocol: str) -> None:
    await record(fleet_api)
    response = await fleet_api.call(protocol, "GetFleetTrends", request(start=T0, end=T0 + timedelta(days=1)))
    assert times(response) == [T0, T0 + timedelta(hours=1), T0 + timedelta(hours=2)]
    summary = await fleet_api.call(protocol, "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest())
    point = response.points[0]
    assert (point.clusters, point.pods, point.nodes) == (
        summary.clusters,
        summary.pods,
        summary.nodes,
    )
    assert {c.status: c.clusters for c in point.clusters_by_status} == {
        c.status: c.clusters for c in summary.clusters_by_status if c.clusters
    }
    assert {k.kind: k.findings for k in point.open_findings_by_kind} == {
        k.kind: k.findings for k in summary.open_findings_by_kind if k.findings
    }


async def test_steps_under_an_hour_read_every_round_and_keep_each_steps_last(fleet_api: FleetApiUnderTest) -> None:
    await record(fleet_api)
    response = await fleet_api.call(
        "grpc", "GetFleetTrends", request(start=T0, end=T0 + timedelta(hours=3), step_seconds=1800)
    )
    assert times(response) == [ROUNDS[1], ROUNDS[2], ROUNDS[3]]


async def test_one_organization_reads_its_hourly_rows(fleet_api: FleetApiUnderTest) -> None:
    await record(fleet_api)
    organizations = await fleet_api.call("grpc", "ListOrganizations", fleet_pb2.ListOrganizationsRequest())
    organization = next(o for o in organizations.organizations if o.clusters > 0 and not o.HasField("deleted"))
    response = await fleet_api.call(
        "grpc",
        "GetFleetTrends",
        request(start=T0, end=T0 + timedelta(hours=3), step_seconds=600, organization_id=organization.id),
    )
    assert times(response) == [T0, T0 + timedelta(hours=1), T0 + timedelta(hours=2)]
    assert {p.clusters for p in response.points} == {organization.clusters}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "start is required"),
        ({"start": T0, "end": T0}, "end must be after start"),
        ({"start": T0, "end": T0 + timedelta(hours=1), "step_seconds": 30}, "at least 60"),
        ({"start": T0, "end": T0 + timedelta(hours=1), "step_seconds": -1}, "must not be negative"),
        ({"start": T0, "end": T0 + timedelta(days=100), "step_seconds": 60}, "more than 2000 steps"),
        ({"start": T0, "end": T0 + timedelta(hours=1), "organization_id": "nope"}, "organization_id must be a UUID"),
    ],
)
async def test_bad_ranges_are_invalid_argument(
    fleet_api: FleetApiUnderTest, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(CallFailed) as failed:
        await fleet_api.call("grpc", "GetFleetTrends", request(**fields))
    assert failed.value.code == "invalid_argument"
    assert message in failed.value.message


async def test_end_defaults_to_the_services_now(fleet_api: FleetApiUnderTest) -> None:
    async with await psycopg.AsyncConnection.connect(fleet_api.database.dsn("fun_cluster_worker")) as conn:
        for at in (NOW - timedelta(hours=2), NOW - timedelta(minutes=5), NOW + timedelta(minutes=5)):
            await history_store.record_round(conn, at=at, **KEEP)
    response = await fleet_api.call("grpc", "GetFleetTrends", request(start=NOW - timedelta(hours=3), step_seconds=600))
    assert times(response) == [NOW - timedelta(hours=2), NOW - timedelta(minutes=5)]
