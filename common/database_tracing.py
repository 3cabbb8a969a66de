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


def _attributes(cursor: psycopg.AsyncCursor[Any], text: str) -> tuple[str, dict[str, Any]]:
    info = cursor.connection.info
    if not text.strip():
        # The pool's check of a connection before it lends it (psycopg sends an empty query).
        return "connection check", {"db.system.name": "postgresql", "db.system": "postgresql", "db.user": info.user}
    # The statement's first word past its leading comments (our .sql blocks start with one).
    match = _OPERATION.match(text)
    operation = match.group(1).upper() if match else "STATEMENT"
    return operation, {
        "db.system.name": "postgresql",
        "db.system": "postgresql",
        "db.namespace": info.dbname,
        "db.operation.name": operation,
        "db.query.text": truncate(text, MAX_STATEMENT_CHARS),
        "db.user": info.user,
        "server.address": info.host,
        "server.port": info.port,
    }


class TracedCursor(psycopg.AsyncCursor[Any]):
    """psycopg's cursor, each statement inside a span of its own."""

    async def execute(self, query: Any, params: Any = None, **kwargs: Any) -> TracedCursor:
        tracer = tracing.tracer()
        if tracer is None:
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
