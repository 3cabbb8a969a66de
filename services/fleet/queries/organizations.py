"""The staff API's queries of organizations (organizations.sql): ListOrganizations' pages in each
order, GetOrganization's one organization and its listing changes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from functools import partial
from typing import Any, LiteralString, NamedTuple
from uuid import UUID

import psycopg
from psycopg.rows import RowMaker
from psycopg.types.numeric import Int8BinaryLoader

from common.timestamps import clamp_postgres_micros
from services.fleet.queries.base import fetch_all, load, order_params, ordered

QUERIES = load("organizations.sql")

# The zero of a timestamptz's binary form (OrganizationRow's times count from it).
POSTGRES_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


class OrganizationRow(NamedTuple):
    """An organization as ListOrganizations sends it, in the forms a page of up to 500 is cheapest to
    read and convert in: the id as its canonical text (organizations.sql casts it) and the times as
    integer microseconds since 2000-01-01 UTC, PostgreSQL's epoch (a timestamptz's binary form is that
    int8, and `_organization_rows` loads it as one), so no UUID and datetime objects are built per row
    only to be turned back into text and integers; and a named tuple, made from psycopg's tuple of the
    values in one C call (a frozen dataclass's __init__ costs 1.3 us for twelve fields). `uuid` and
    `created` give the typed values, for the page key (one row a page)."""

    id: str
    name: str
    alias: str
    listed_publicly: bool
    created_micros: int
    deleted_micros: int | None
    clusters: int
    projects: int
    namespaces: int
    ready_nodes: int
    pods: int
    clusters_needing_attention: int

    @property
    def uuid(self) -> UUID:
        return UUID(self.id)

    @property
    def created(self) -> datetime:
        return from_postgres_micros(self.created_micros)


def from_postgres_micros(micros: int) -> datetime:
    """The aware datetime `micros` microseconds after 2000-01-01 UTC (PostgreSQL's epoch)."""
    return POSTGRES_EPOCH + timedelta(microseconds=clamp_postgres_micros(micros))


class OrganizationOrder(StrEnum):
    """ListOrganizations' sort keys; each ends in (name, id)."""

    NAME = "name"
    ALIAS = "alias"
    CREATED = "created"


@dataclass(frozen=True, slots=True)
class OrganizationFilters:
    """ListOrganizations' query and order, normalized (a page token is bound to all of them)."""

    pattern: str | None = None
    order: OrganizationOrder = OrganizationOrder.NAME
    descending: bool = False


_ORGANIZATION_STATEMENTS = {
    (order, descending): ordered(QUERIES["list_organizations"], f"organizations_by_{order.value}_{direction}")
    for order in OrganizationOrder
    for descending, direction in ((False, "asc"), (True, "desc"))
}


def organization_page_statement(filters: OrganizationFilters) -> LiteralString:
    """ListOrganizations' statement for the order and direction of `filters`."""
    return _ORGANIZATION_STATEMENTS[(filters.order, filters.descending)]


async def list_organizations(
    conn: psycopg.AsyncConnection[Any],
    *,
    filters: OrganizationFilters = OrganizationFilters(),
    after: tuple[Any, ...] | None,
    limit: int,
) -> list[OrganizationRow]:
    """Organizations matching `filters` in their order after `after` (the order's key), at most `limit`."""
    params = {"pattern": filters.pattern, "organization_id": None, "limit": limit, **order_params(after)}
    return await _organization_rows(conn, organization_page_statement(filters), params)


async def get_organization(conn: psycopg.AsyncConnection[Any], *, organization_id: UUID) -> OrganizationRow | None:
    """One organization (live or deleted) but the system one; None when there is none (the list's block)."""
    params = {"pattern": None, "organization_id": organization_id, "limit": 1, **order_params(None)}
    rows = await _organization_rows(conn, _ORGANIZATION_STATEMENTS[(OrganizationOrder.NAME, False)], params)
    return rows[0] if rows else None


def _organization_row(cursor: psycopg.AsyncCursor[Any]) -> RowMaker[OrganizationRow]:
    # Each row is psycopg's tuple of its values made an OrganizationRow by position (the block's
    # columns are its fields in order, a test checks), in one C call: args_row would add two Python
    # calls per row, its own and the named tuple's __new__, for up to 500 rows a page.
    return partial(tuple.__new__, OrganizationRow)


async def _organization_rows(
    conn: psycopg.AsyncConnection[Any], statement: LiteralString, params: Mapping[str, object]
) -> list[OrganizationRow]:
    # Binary results, with the times loaded as the int8 they are on the wire.
    async with conn.cursor(row_factory=_organization_row, binary=True) as cur:
        cur.adapters.register_loader("timestamptz", Int8BinaryLoader)
        await cur.execute(statement, params, prepare=False)
        return await cur.fetchall()


@dataclass(frozen=True, slots=True)
class ListingChangeRow:
    id: UUID
    listed_publicly: bool
    previously_listed: bool
    changed_by: str
    reason: str
    changed: datetime


async def organization_listing_changes(
    conn: psycopg.AsyncConnection[Any], *, organization_id: UUID, limit: int
) -> list[ListingChangeRow]:
    """An organization's listing changes, newest first, at most `limit`."""
    return await fetch_all(
        conn,
        QUERIES["organization_listing_changes"].sql,
        ListingChangeRow,
        {"organization_id": organization_id, "limit": limit},
    )
