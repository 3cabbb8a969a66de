"""The staff API's query of SearchNamespaces (search.sql): namespaces by their name or the name they
have on their shoot, a page at a time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, LiteralString
from uuid import UUID

import psycopg

from services.fleet.queries.base import BEFORE_ANY_TEXT, NIL_UUID, fetch_all, load

QUERIES = load("search.sql")


@dataclass(frozen=True, slots=True)
class NamespaceMatchRow:
    id: UUID
    name: str
    project_id: UUID
    project_name: str
    cluster_id: UUID
    cluster_name: str
    organization_id: UUID
    organization_name: str
    organization_alias: str


@dataclass(frozen=True, slots=True)
class NamespaceSearch:
    """SearchNamespaces' patterns (services/fleet/parse/search.py, NamespacePatterns); a page token is bound
    to them."""

    name: str
    name_start: str | None = None
    project: str | None = None
    project_names: str | None = None


async def search_namespaces(
    conn: psycopg.AsyncConnection[Any], *, search: NamespaceSearch, after: tuple[str, UUID] | None, limit: int
) -> list[NamespaceMatchRow]:
    """Live namespaces whose name or Kubernetes name matches, by (name, id), after `after`, at most `limit`."""
    statement, params = namespace_search_query(search, after=after, limit=limit)
    return await fetch_all(conn, statement, NamespaceMatchRow, params)


def namespace_search_query(
    search: NamespaceSearch, *, after: tuple[str, UUID] | None, limit: int
) -> tuple[LiteralString, dict[str, object]]:
    """The statement and parameters of one SearchNamespaces page (tests EXPLAIN them as they run)."""
    name, id_ = after or (BEFORE_ANY_TEXT, NIL_UUID)
    params: dict[str, object] = {
        "pattern": search.name,
        "name_start": search.name_start,
        "project_pattern": search.project,
        "project_names": search.project_names,
        "after_name": name,
        "after_id": id_,
        "limit": limit,
    }
    return QUERIES["search_namespaces"].sql, params
