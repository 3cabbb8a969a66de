"""ListOrganizations reads its times as PostgreSQL's integer microseconds since 2000 and sets its
Timestamps from them in integers (queries.organizations.OrganizationRow); they must equal protobuf's own
FromDatetime of the stored time, and the page key's values the stored ones."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from services.fleet import convert, queries
from services.fleet.convert.organizations import _set_time
from tests.fixtures.postgres import TestDatabase

ROLE = "fun_platform_admin_api"
MICROSECOND = timedelta(microseconds=1)

TIMES = {
    "now": datetime(2026, 12, 1, 13, 14, 15, 123456, tzinfo=UTC),
    "unix-epoch": datetime(1970, 1, 1, tzinfo=UTC),
    "just-before-unix-epoch": datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    "postgres-epoch": datetime(2000, 1, 1, tzinfo=UTC),
    "just-before-postgres-epoch": datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    "long-ago-east": datetime(1901, 5, 6, 7, 8, 9, 1, tzinfo=timezone(timedelta(hours=2))),
    "far-future-east": datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone(timedelta(hours=11))),
}


def _expected(value: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


@pytest.mark.parametrize("value", list(TIMES.values()), ids=list(TIMES))
def test_set_time_is_from_datetime(value: datetime) -> None:
    micros = (value - queries.organizations.POSTGRES_EPOCH) // MICROSECOND
    got = Timestamp()
    _set_time(got, micros)
    assert got == _expected(value)
    assert got.ToDatetime(tzinfo=UTC) == value
    assert queries.organizations.from_postgres_micros(micros) == value


@pytest.fixture
async def conn(database: TestDatabase) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    # Each time as an organization's creation; every other one deleted a microsecond later.
    with database.admin() as admin:
        for i, created in enumerate(TIMES.values()):
            admin.execute(
                "INSERT INTO tenant.organizations (id, name, alias, created, deleted) VALUES (%s, %s, 'Times', %s, %s)",
                [uuid.uuid4(), f"times-{i}", created, created + MICROSECOND if i % 2 else None],
            )
    async with await psycopg.AsyncConnection.connect(database.dsn(ROLE)) as connection:
        yield connection


async def test_listed_times_are_the_stored_ones(conn: psycopg.AsyncConnection[Any]) -> None:
    filters = queries.organizations.OrganizationFilters(order=queries.organizations.OrganizationOrder.CREATED)
    rows = await queries.organizations.list_organizations(conn, filters=filters, after=None, limit=len(TIMES) + 1)
    assert [row.created for row in rows] == sorted(TIMES.values())  # the page key's time
    response = convert.organizations.list_organizations_response(rows, "")
    assert len(response.organizations) == len(TIMES)
    for i, created in enumerate(TIMES.values()):
        (item,) = [o for o in response.organizations if o.name == f"times-{i}"]
        assert item.created == _expected(created)
        if i % 2:
            assert item.deleted == _expected(created + MICROSECOND)
        else:
            assert not item.HasField("deleted")


async def test_get_organization_shows_the_listed_fields(conn: psycopg.AsyncConnection[Any]) -> None:
    rows = await queries.organizations.list_organizations(conn, after=None, limit=len(TIMES) + 1)
    listed = convert.organizations.list_organizations_response(rows, "")
    for row, item in zip(rows, listed.organizations, strict=True):
        assert str(row.uuid) == row.id == item.id
        got = await queries.organizations.get_organization(conn, organization_id=row.uuid)
        assert got == row
        assert got is not None and convert.organizations.organization_summary(got) == item
