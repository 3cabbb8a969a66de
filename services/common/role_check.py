"""Whether an API's database role may do what the API runs, and (for the public API) nothing more.

A role that cannot run the API's queries would make every call answer UNAVAILABLE behind a ready
/readyz; a public role that can read tables is a leak waiting for a bug. Readiness
(`services.common.startup`) asks this module, as the API's own role, through the catalog only
(`role_check.sql`): no table grant is needed to ask, and none of the API's own reads runs.

`RoleNeeds.of_queries` takes what an API needs from its own `.sql` files, so the check follows the
queries as they change: every `tenant.name(` is a function it must execute, every other
`tenant.name` a relation it must read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import tuple_row

from common.database import load_queries

QUERIES = load_queries(Path(__file__).with_name("role_check.sql"))

# The schemas whose objects an API's SQL names (the platform's tenant schema holds all of them).
SCHEMAS = ("tenant",)
_COMMENT = re.compile(r"--[^\n]*")
# How many names of what a role holds but must not a reason lists before it says "and N more"; what
# it lacks is listed in full (those are the grants to add).
SHOWN_EXCESS = 5


@dataclass(frozen=True, slots=True)
class RoleNeeds:
    """What an API's role must be able to do; schema-qualified names (`tenant.staff_clusters`)."""

    reads: frozenset[str] = frozenset()
    """Relations it must SELECT."""
    executes: frozenset[str] = frozenset()
    """Functions it must EXECUTE (any argument list)."""
    nothing_else: bool = False
    """And no privilege on any other relation, nor EXECUTE on any other function, outside
    PostgreSQL's own schemas (extensions' functions aside)."""

    @classmethod
    def of_queries(cls, paths: Iterable[Path], *, nothing_else: bool = False) -> RoleNeeds:
        """What the SQL in `paths` names in `SCHEMAS`; comments are not read."""
        reads: set[str] = set()
        executes: set[str] = set()
        schemas = "|".join(re.escape(schema) for schema in SCHEMAS)
        name = re.compile(rf"\b((?:{schemas})\.[a-z_][a-z0-9_]*)\b(\s*\()?")
        for path in paths:
            for match in name.finditer(_COMMENT.sub("", path.read_text())):
                (executes if match.group(2) else reads).add(match.group(1))
        return cls(frozenset(reads), frozenset(executes), nothing_else)


class Finding(Enum):
    """One kind of thing wrong with a role, as `role_findings` in role_check.sql names it."""

    CANNOT_READ = "cannot_read"
    CANNOT_EXECUTE = "cannot_execute"
    MAY_USE = "may_use"
    MAY_EXECUTE = "may_execute"

    @property
    def missing(self) -> bool:
        """The role lacks something the API runs (else it holds something it must not)."""
        return self in (Finding.CANNOT_READ, Finding.CANNOT_EXECUTE)


_SAYS = {
    Finding.CANNOT_EXECUTE: "cannot execute",
    Finding.CANNOT_READ: "cannot read",
    Finding.MAY_USE: "has privileges it must not have on",
    Finding.MAY_EXECUTE: "may execute what it must not:",
}


@dataclass(frozen=True, slots=True)
class RoleFindings:
    """What `role_findings` found wrong with `role`: nothing when `ok`."""

    role: str
    found: dict[Finding, tuple[str, ...]]

    @property
    def ok(self) -> bool:
        return not self.found

    @property
    def missing(self) -> bool:
        return any(finding.missing for finding in self.found)

    @property
    def excess(self) -> bool:
        return any(not finding.missing for finding in self.found)

    def reason(self) -> str:
        """One line for /readyz and the log, e.g. `role fun_x cannot execute tenant.platform_overview()`."""
        parts = []
        for finding in Finding:
            names = self.found.get(finding, ())
            if names:
                limit = len(names) if finding.missing else SHOWN_EXCESS
                more = f" and {len(names) - limit} more" if len(names) > limit else ""
                parts.append(f"{_SAYS[finding]} {', '.join(names[:limit])}{more}")
        return f"role {self.role} " + "; ".join(parts)


async def role_findings(conn: psycopg.AsyncConnection[Any], needs: RoleNeeds) -> RoleFindings:
    """What is wrong with the role of `conn` for `needs`, read from the catalog as that role."""
    params = {
        "reads": sorted(needs.reads),
        "executes": sorted(needs.executes),
        "nothing_else": needs.nothing_else,
    }
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(QUERIES["current_role"].sql)
        row = await cur.fetchone()
        role = str(row[0]) if row else "?"
        await cur.execute(QUERIES["role_findings"].sql, params)
        rows = await cur.fetchall()
    found: dict[Finding, list[str]] = {}
    for finding, name in rows:
        found.setdefault(Finding(finding), []).append(str(name))
    return RoleFindings(role, {finding: tuple(names) for finding, names in found.items()})
