"""Typed functions for the named blocks of `queries.sql`, the only SQL `platform-public-api` runs.

Each takes a connection (the caller owns the transaction scope) and returns frozen rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import class_row

from common.database import load_queries

PATH = Path(__file__).with_name("queries.sql")
QUERIES = load_queries(PATH)


@dataclass(frozen=True, slots=True)
class OrganizationCounts:
    """One listed organization as `tenant.platform_overview()` returns it: names and counts, no id."""

    name: str
    alias: str
    clusters: int
    projects: int
    namespaces: int


async def platform_overview(conn: psycopg.AsyncConnection[Any]) -> list[OrganizationCounts]:
    """Every listed, live, non-system organization with its live counts, ordered by name."""
    async with conn.cursor(row_factory=class_row(OrganizationCounts)) as cur:
        await cur.execute(QUERIES["platform_overview"].sql)
        return await cur.fetchall()
