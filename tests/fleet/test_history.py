"""The fleet history (trends) as the inventory loop records it, on the paging world as fun_cluster_worker.

The fleet-wide totals agree with GetFleetSummary's (read as the staff API at the same time), the
hourly organization rows add up to the hourly fleet row, an hour is written once however many
rounds it holds, and pruning drops only rows past their retention.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from fundament.fleet.v1 import fleet_pb2

from collector.inventory import history_store
from services.fleet.convert.summary import clusters_by_status
from services.fleet.queries.summary import fleet_status_inputs, fleet_totals, open_findings_by_kind
from tests.fixtures.fleet_api import INVENTORY_INTERVAL_SECONDS, NOW, FleetApiUnderTest
from tests.fixtures.postgres import TestDatabase

HOUR = datetime(2026, 3, 1, 10, 0, 7, tzinfo=UTC)
NIL = "00000000-0000-0000-0000-000000000000"
KEEP = {"round_retention": timedelta(hours=48), "hour_retention": timedelta(days=35)}

Conn = psycopg.AsyncConnection[Any]


@pytest.fixture
async def worker(fleet_database: TestDatabase) -> AsyncIterator[Conn]:
    async with await psycopg.AsyncConnection.connect(fleet_database.dsn("fun_cluster_worker")) as conn:
        yield conn


def rows(database: TestDatabase, where: str = "true") -> list[tuple[Any, ...]]:
    with database.admin() as conn:
        return conn.execute(
            "SELECT resolution, organization_id::text, at, clusters, clusters_by_status, nodes, pods,"
            f" cpu_allocatable_millicores, memory_allocatable_bytes, open_findings_by_kind FROM tenant.fleet_history"
            f" WHERE {where} ORDER BY resolution, organization_id, at"
        ).fetchall()


async def test_a_round_writes_fleet_totals_that_agree_with_the_summary(
    fleet_database: TestDatabase, worker: Conn
) -> None:
    written, pruned = await history_store.record_round(worker, at=HOUR, **KEEP)
    async with await psycopg.AsyncConnection.connect(fleet_database.dsn("fun_platform_admin_api")) as admin:
        totals = await fleet_totals(admin, now=HOUR)
        statuses = clusters_by_status(await fleet_status_inputs(admin))
        kinds = {row.kind: row.findings for row in await open_findings_by_kind(admin)}
    organizations = totals.organizations
    assert (written, pruned) == (1 + 1 + organizations, 0)
    (fleet_round,) = rows(fleet_database, f"resolution = 'round' AND organization_id = '{NIL}'")
    assert fleet_round[2] == HOUR
    assert fleet_round[3] == totals.clusters
    assert fleet_round[5:9] == (
        totals.nodes,
        totals.pods,
        totals.cpu_allocatable_millicores,
        totals.memory_allocatable_bytes,
    )
    assert fleet_round[4] == {status.value: n for status, n in statuses.items() if n}
    assert fleet_round[9] == kinds
    assert totals.clusters > 0 and totals.pods > 0 and kinds, "the world must have clusters, pods and findings"


async def test_hourly_organization_rows_add_up_to_the_fleet_row(fleet_database: TestDatabase, worker: Conn) -> None:
    await history_store.record_round(worker, at=HOUR, **KEEP)
    hourly = rows(fleet_database, "resolution = 'hour'")
    fleet = next(r for r in hourly if r[1] == NIL)
    organizations = [r for r in hourly if r[1] != NIL]
    assert fleet[2] == HOUR.replace(minute=0, second=0)
    for column in (3, 5, 6, 7, 8):
        assert sum(r[column] for r in organizations) == fleet[column]
    by_status: dict[str, int] = {}
    for r in organizations:
        for status, n in r[4].items():
            by_status[status] = by_status.get(status, 0) + n
    assert by_status == fleet[4]


async def test_an_hour_is_written_once_and_every_round_once(fleet_database: TestDatabase, worker: Conn) -> None:
    first, _ = await history_store.record_round(worker, at=HOUR, **KEEP)
    later, _ = await history_store.record_round(worker, at=HOUR + timedelta(minutes=15), **KEEP)
    again, _ = await history_store.record_round(worker, at=HOUR + timedelta(minutes=15), **KEEP)
    assert first > 2 and (later, again) == (1, 0)
    assert len(rows(fleet_database, "resolution = 'round'")) == 2


async def test_pruning_drops_only_rows_past_their_retention(fleet_database: TestDatabase, worker: Conn) -> None:
    await history_store.record_round(worker, at=HOUR, **KEEP)
    hourly_rows = len(rows(fleet_database, "resolution = 'hour'"))
    three_days_later = HOUR + timedelta(days=3)
    written, pruned = await history_store.record_round(worker, at=three_days_later, **KEEP)
    assert pruned == 1  # the old round row; the old hour rows are kept for 35 days
    assert [r[2] for r in rows(fleet_database, "resolution = 'round'")] == [three_days_later]
    assert len(rows(fleet_database, "resolution = 'hour'")) == hourly_rows + written - 1
    _, pruned = await history_store.record_round(
        worker, at=HOUR + timedelta(days=4), round_retention=timedelta(hours=1), hour_retention=timedelta(days=2)
    )
    assert {r[2] for r in rows(fleet_database, "resolution = 'hour'")} == {
        (HOUR + timedelta(days=d)).replace(minute=0, second=0) for d in (3, 4)
    }
    assert pruned > 0


async def test_the_worker_cannot_delete_history_itself(worker: Conn) -> None:
    await history_store.record_round(worker, at=HOUR, **KEEP)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        await worker.execute("DELETE FROM tenant.fleet_history")


def _figures(response: fleet_pb2.GetFleetSummaryResponse) -> fleet_pb2.GetFleetSummaryResponse:
    """The summary without the two times that say when and how it was read."""
    copy = fleet_pb2.GetFleetSummaryResponse()
    copy.CopyFrom(response)
    copy.ClearField("read")
    copy.ClearField("totals_recorded")
    return copy


async def _summary(api: FleetApiUnderTest) -> fleet_pb2.GetFleetSummaryResponse:
    response = await api.call("grpc", "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest())
    assert isinstance(response, fleet_pb2.GetFleetSummaryResponse)
    return response


async def _record(api: FleetApiUnderTest, at: datetime) -> None:
    async with await psycopg.AsyncConnection.connect(api.database.dsn("fun_cluster_worker")) as conn:
        await history_store.record_round(conn, at=at, **KEEP)


async def test_the_summary_is_the_latest_round_recorded_and_agrees_with_adding_up_now(
    fleet_api: FleetApiUnderTest,
) -> None:
    added_up = await _summary(fleet_api)
    assert not added_up.HasField("totals_recorded")
    await _record(fleet_api, NOW)
    recorded = await _summary(fleet_api)
    assert recorded.totals_recorded.ToDatetime(UTC) == NOW
    assert _figures(recorded) == _figures(added_up)
    assert recorded.namespaces > 0 and recorded.clusters_by_status and recorded.open_findings_by_kind


async def test_a_change_shows_in_the_summary_with_the_next_round(fleet_api: FleetApiUnderTest) -> None:
    await _record(fleet_api, NOW - timedelta(seconds=30))
    before = await _summary(fleet_api)
    with fleet_api.database.admin() as conn:
        conn.execute(
            "UPDATE tenant.namespaces SET deleted = now() WHERE id = (SELECT n.id FROM tenant.namespaces n"
            " JOIN tenant.projects p ON p.id = n.project_id JOIN tenant.clusters c ON c.id = p.cluster_id"
            " JOIN tenant.organizations o ON o.id = c.organization_id WHERE n.deleted IS NULL AND p.deleted IS NULL"
            " AND c.deleted IS NULL AND o.deleted IS NULL AND o.id <> tenant.system_organization_id() LIMIT 1)"
        )
    assert (await _summary(fleet_api)).namespaces == before.namespaces
    await _record(fleet_api, NOW)
    after = await _summary(fleet_api)
    assert (after.namespaces, after.totals_recorded.ToDatetime(UTC)) == (before.namespaces - 1, NOW)


async def test_totals_older_than_three_inventory_intervals_are_added_up_again(fleet_api: FleetApiUnderTest) -> None:
    await _record(fleet_api, NOW - timedelta(seconds=3 * INVENTORY_INTERVAL_SECONDS + 1))
    with fleet_api.database.admin() as conn:
        conn.execute(
            "UPDATE tenant.organizations SET deleted = now() WHERE id = (SELECT id FROM tenant.organizations"
            " WHERE deleted IS NULL AND id <> tenant.system_organization_id() ORDER BY name LIMIT 1)"
        )
    summary = await _summary(fleet_api)
    assert not summary.HasField("totals_recorded")
    with fleet_api.database.admin() as conn:
        live = conn.execute(
            "SELECT count(*) FROM tenant.organizations WHERE deleted IS NULL AND id <> tenant.system_organization_id()"
        ).fetchone()
    assert live is not None and summary.organizations == live[0]
