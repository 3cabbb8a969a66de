"""A span per database statement, when tracing is on (common/tracing.py).

psycopg 3 has no statement hook, so the pool's connections get a cursor class whose `execute` and
`executemany` run inside a CLIENT span named by the statement's operation (`SELECT`, ...), with the
statement's text (ours, from the `.sql` files: parameters are never recorded), the database and the
server. Loaded only once tracing is on; while off, connections keep psycopg's own cursor.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from weakref import WeakKeyDictionary

import psycopg
from opentelemetry.trace import SpanKind
from psycopg import sql

from common import tracing
from common.text import truncate

_OPERATION = re.compile(r"(?:\s*(?:--[^\n]*(?:\n|$)|/\*.*?\*/))*\s*([A-Za-z]+)", re.DOTALL)
# A statement's text on a span: enough to tell which one it was, never a whole batch.
MAX_STATEMENT_CHARS = 2000


def _text(cursor: psycopg.AsyncCursor[Any], query: Any) -> str:
    if isinstance(query, str):
        return query
    if isinstance(query, bytes):
        return query.decode(errors="replace")
    if isinstance(query, sql.Composable):
        return query.as_string(cursor.connection)
    return type(query).__name__


# What a statement's text becomes on its span, worked out once per distinct text: our statements come
# from the .sql files (and the keyset orders assembled from them), a few dozen in all. Bounded anyway.
_STATEMENTS: dict[str, tuple[str, dict[str, Any]]] = {}
MAX_KNOWN_STATEMENTS = 512
# The connection's part of every span (database, role, server), read from libpq once per connection.
_CONNECTIONS: WeakKeyDictionary[psycopg.AsyncConnection[Any], dict[str, Any]] = WeakKeyDictionary()


def _statement(text: str) -> tuple[str, dict[str, Any]]:
    known = _STATEMENTS.get(text)
    if known is None:
        # The statement's first word past its leading comments (our .sql blocks start with one).
        match = _OPERATION.match(text)
        operation = match.group(1).upper() if match else "STATEMENT"
        known = operation, {"db.operation.name": operation, "db.query.text": truncate(text, MAX_STATEMENT_CHARS)}
        if len(_STATEMENTS) < MAX_KNOWN_STATEMENTS:
            _STATEMENTS[text] = known
    return known


def _connection(conn: psycopg.AsyncConnection[Any]) -> dict[str, Any]:
    known = _CONNECTIONS.get(conn)
    if known is None:
        info = conn.info
        known = {
            "db.system.name": "postgresql",
            "db.namespace": info.dbname,
            "db.user": info.user,
            "server.address": info.host,
            "server.port": info.port,
        }
        _CONNECTIONS[conn] = known
    return known


def _attributes(cursor: psycopg.AsyncCursor[Any], text: str) -> tuple[str, dict[str, Any]]:
    name, statement = _statement(text)
    return name, {**_connection(cursor.connection), **statement}


class TracedCursor(psycopg.AsyncCursor[Any]):
    """psycopg's cursor, each statement inside a span of its own."""

    async def execute(self, query: Any, params: Any = None, **kwargs: Any) -> TracedCursor:
        tracer = tracing.tracer()
        # The pool's check of a connection before it lends it is an empty query: no statement of ours.
        if tracer is None or query == "":
            await super().execute(query, params, **kwargs)
            return self
        name, attributes = _attributes(self, _text(self, query))
        with tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attributes) as span:
            try:
                await super().execute(query, params, **kwargs)
            except psycopg.Error as e:
                tracing.set_error(span, type(e).__name__, e.sqlstate or type(e).__name__)
                raise
        return self

    async def executemany(
        self, query: Any, params_seq: Iterable[Sequence[Any] | Mapping[str, Any]], **kwargs: Any
    ) -> None:
        tracer = tracing.tracer()
        if tracer is None:
            await super().executemany(query, params_seq, **kwargs)
            return
        name, attributes = _attributes(self, _text(self, query))
        with tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attributes) as span:
            try:
                await super().executemany(query, params_seq, **kwargs)
            except psycopg.Error as e:
                tracing.set_error(span, type(e).__name__, e.sqlstate or type(e).__name__)
                raise


def trace_connection(conn: psycopg.AsyncConnection[Any]) -> None:
    """From now on, every cursor of `conn` traces its statements."""
    conn.cursor_factory = TracedCursor
