"""What every query module of the staff API shares: the loader, the keyset assembly, the sentinels.

The staff API's SQL is filed by entity (organizations, clusters, findings, ledger, summary, search,
trends), one `.sql` file of named blocks beside each module, and runs as `fun_platform_admin_api`
(read only). Each typed function takes a connection (the caller owns the transaction scope) and
keyword arguments and returns frozen rows. Statements run unprepared (`prepare=False`): their
optional filters are `(%(x)s IS NULL OR ...)`, and only a plan made for the actual values drops the
unused ones and picks the index that serves the used ones. A generic prepared plan would keep every
branch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, LiteralString, TypeVar
from uuid import UUID

import psycopg
from psycopg.rows import class_row

from common.database import Query, load_queries

HERE = Path(__file__).parent
# The keyset condition and ORDER BY of each sort order of the two sortable lists: fragments that
# complete a list's block, not statements of their own.
ORDERS_FILE = "orders.sql"
KEYSET_LINE = "-- keyset --"
ORDER_LINE = "-- order --"

# Sentinel keys that sort before every row: the first page is "after" them (see base.sql).
NIL_UUID = UUID(int=0)
BEFORE_ANY_TEXT = ""
BEFORE_ANY_TIME = "-infinity"
# How a missing time sorts in an order by it: '-infinity' in SQL, this in a page token.
NEVER = datetime.min.replace(tzinfo=UTC)

R = TypeVar("R")


def load(filename: str) -> dict[str, Query]:
    """The named blocks of one `.sql` file of this package (each module loads its own, once)."""
    return load_queries(HERE / filename)


QUERIES = load("base.sql")
ORDERS = load(ORDERS_FILE)


async def fetch_all(
    conn: psycopg.AsyncConnection[Any], statement: LiteralString, row: type[R], params: Mapping[str, object]
) -> list[R]:
    """Every row of `statement`, each made a `row`, planned for these parameters."""
    async with conn.cursor(row_factory=class_row(row)) as cur:
        await cur.execute(statement, params, prepare=False)
        return await cur.fetchall()


async def begin_consistent_read(conn: psycopg.AsyncConnection[Any]) -> None:
    """Make the rest of the transaction one read-only snapshot (call before any other query)."""
    await conn.execute(QUERIES["begin_consistent_read"].sql, prepare=False)


def ordered(template: Query, order_block: str) -> LiteralString:
    """A list's block with the keyset condition and ORDER BY of one order in place of its keyset line,
    and that ORDER BY again in place of its order line when it has one (ListClusters sorts the page it
    chose once more after reading its rows)."""
    if KEYSET_LINE not in template.sql:
        raise ValueError(f"{template.name} has no keyset line")
    block = ORDERS[order_block].sql
    order_by = [line for line in block.splitlines() if line.startswith("ORDER BY ")]
    if len(order_by) != 1:
        raise ValueError(f"{order_block} has no single ORDER BY line")
    return template.sql.replace(KEYSET_LINE, block).replace(ORDER_LINE, order_by[0])


def _sql_time(value: datetime) -> datetime | str:
    return BEFORE_ANY_TIME if value == NEVER else value


def order_params(after: tuple[Any, ...] | None) -> dict[str, object]:
    """The keyset parameters of an order block: (value, name, id) or (name, id); first_page without one."""
    if after is None:
        return {"first_page": True, "after_value": None, "after_name": None, "after_id": None}
    *value, name, id_ = after
    after_value = value[0] if value else None
    if isinstance(after_value, datetime):
        after_value = _sql_time(after_value)
    return {"first_page": False, "after_value": after_value, "after_name": name, "after_id": id_}


def query_names() -> Sequence[str]:
    """Every named statement of the package's `.sql` files, the order fragments left out (a test
    prepares each one against the migrated schema). Read from the files themselves, so a block is
    counted whether or not a module loads it."""
    names: list[str] = []
    for path in sorted(HERE.glob("*.sql")):
        if path.name != ORDERS_FILE:
            names.extend(load_queries(path))
    return tuple(names)
