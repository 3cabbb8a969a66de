"""PostgreSQL access shared by every process: the pool, the named-query loader and the schema check.

SQL lives in `.sql` files beside the code that runs it, as named blocks:

    -- name: list_clusters
    -- Called by FleetApi.list_clusters: one page of clusters after a keyset position.
    SELECT ...

`load_queries()` reads such a file once; each `queries.py` wraps each block in one typed function.
Placeholders are named (`%(cluster_id)s`); nothing is ever assembled from user input.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, LiteralString
from weakref import WeakKeyDictionary, WeakSet

import psycopg
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from common import timestamps, tracing
from common.errors import SchemaTooOld
from common.settings import DatabaseSettings

# The schema version this code needs; services refuse to start against an older one. Kept in step
# with the newest file in db/migrations by a test.
SCHEMA_VERSION = 3

_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Query:
    """One named SQL block."""

    name: str
    sql: LiteralString


def load_queries(path: Path) -> dict[str, Query]:
    """Parse a `.sql` file of `-- name: x` blocks into queries by name."""
    text = path.read_text()
    marks = list(_NAME.finditer(text))
    if not marks:
        raise ValueError(f"{path}: no '-- name:' blocks")
    queries: dict[str, Query] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.end() : end].strip()
        if mark.group(1) in queries:
            raise ValueError(f"{path}: query {mark.group(1)!r} defined twice")
        # The text comes from our own files, never from a caller, so it is as literal as SQL gets.
        queries[mark.group(1)] = Query(mark.group(1), body)
    return queries


class CheckUnlessRecent:
    """The pool's `check` and `reset` callbacks: `reset` notes when a connection came back, `check`
    runs psycopg's own check only on a connection that has been idle for `window_seconds` or more.

    A connection that came back a moment ago had just answered, and the check is a round trip per
    checkout; HikariCP calls the same idea its alive-bypass window. The price: a connection that died
    within the window is found by the query that uses it. `lent_unchecked` tells the caller whether
    that is what happened, and `distrust` has every connection checked at its next checkout, so the
    caller may try once more on a connection that is known to work.
    """

    def __init__(self, window_seconds: float) -> None:
        self._window_seconds = window_seconds
        self._returned: WeakKeyDictionary[psycopg.AsyncConnection[Any], float] = WeakKeyDictionary()
        self._unchecked: WeakSet[psycopg.AsyncConnection[Any]] = WeakSet()
        self.checks = 0
        """How many connections were really checked (for tests)."""

    async def reset(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self._returned[conn] = time.monotonic()

    async def check(self, conn: psycopg.AsyncConnection[Any]) -> None:
        returned = self._returned.pop(conn, None)
        if returned is not None and time.monotonic() - returned < self._window_seconds:
            self._unchecked.add(conn)
            return
        self._unchecked.discard(conn)
        self.checks += 1
        await AsyncConnectionPool.check_connection(conn)

    def lent_unchecked(self, conn: psycopg.AsyncConnection[Any]) -> bool:
        """Whether the pool's last checkout of `conn` skipped its check."""
        return conn in self._unchecked

    def distrust(self) -> None:
        """Check every connection at its next checkout, however recently it came back."""
        self._returned.clear()


async def _configure(conn: psycopg.AsyncConnection[Any]) -> None:
    """Each new connection of a pool: times outside what Python holds (Fundament's tables do not refuse
    them) load clamped; with tracing on, each statement gets a span."""
    await timestamps.configure(conn)
    if tracing.tracer() is not None:
        from common.database_tracing import trace_connection  # noqa: PLC0415 - only once tracing is on

        trace_connection(conn)


def make_pool(
    settings: DatabaseSettings,
    *,
    application_name: str,
    reconnect_timeout_seconds: float = 300.0,
    checks: CheckUnlessRecent | None = None,
) -> AsyncConnectionPool:
    """The process's one pool, closed until the caller opens it (`await pool.open(wait=True)`).

    `reconnect_timeout_seconds` bounds how long the pool retries a lost connection in the background
    (psycopg's default: 5 minutes); 0 gives up at once and lets the next caller's request reconnect.
    Every connection is checked before it is handed out, so no caller meets one that died while it
    was idle; `checks` may skip the check for connections that came back a moment ago.
    """
    return AsyncConnectionPool(
        settings.url,
        min_size=settings.pool_min,
        max_size=settings.pool_max,
        open=False,
        timeout=settings.connect_timeout_seconds,
        check=checks.check if checks else AsyncConnectionPool.check_connection,
        reset=checks.reset if checks else None,
        configure=_configure,
        kwargs={
            "application_name": application_name,
            "connect_timeout": max(1, round(settings.connect_timeout_seconds)),
            "options": f"-c statement_timeout={settings.statement_timeout_ms}",
            "autocommit": False,
        },
        name=application_name,
        reconnect_timeout=reconnect_timeout_seconds,
    )


async def schema_version(conn: psycopg.AsyncConnection[Any]) -> int:
    """The schema version the migrations recorded, read from the catalog (every role can read it).

    The migrator writes it into the comment of schema `fleet_meta`, because the public role may read
    no table at all, not even a version table.
    """
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_catalog.pg_namespace WHERE nspname = 'fleet_meta'"
        )
        row = await cur.fetchone()
    comment = row[0] if row else None
    match = re.search(r"schema version (\d+)", comment or "")
    return int(match.group(1)) if match else 0


async def require_schema(pool: AsyncConnectionPool, needed: int = SCHEMA_VERSION) -> int:
    """Raise `SchemaTooOld` with a clear message when the database's schema is older than `needed`."""
    async with pool.connection() as conn:
        found = await schema_version(conn)
    if found < needed:
        raise SchemaTooOld(
            f"database schema is at version {found}, this release needs {needed}: run `fleet db migrate` first"
        )
    return found
