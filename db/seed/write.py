"""Store a generated fleet in the database with COPY: the rows of the tenant model and the sync states.

The platform model and its sync state (the shoot columns of `tenant.clusters` and the rows of
`tenant.cluster_outbox`, written as Fundament's provisioning side writes them: db/provisioning.py)
are written by other systems in production, so no service role may write them (a planted deletion's
ledger rows, which the collector would have written, come along); this runs on a privileged
(superuser) connection, as `fleet db seed`, the test fixtures and the simulator's demo do. Shoots
are not written: they live in the simulated garden, and reconcile mirrors them. A fleet is written
once into an empty model (only the system organization present); a second write is refused rather
than half-applied.

Rows go in batches of organizations, parents before children, each table with one COPY per batch,
all in one transaction: the scale fleet (1,000,000 namespaces) streams through in bounded memory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import psycopg
from psycopg import sql

from db import provisioning
from fleet_description.generate import FleetPart
from fleet_description.model import Fleet

logger = logging.getLogger(__name__)

SEED_AUTHOR = "fleet db seed"

# Table -> columns, in the order parents come before children (foreign keys hold after every COPY).
COLUMNS: dict[str, tuple[str, ...]] = {
    "organizations": ("id", "name", "alias", "listed_publicly", "created", "deleted"),
    "clusters": (
        "id",
        "organization_id",
        "name",
        "region",
        "kubernetes_version",
        "created",
        "deleted",
        "shoot_status",
        "shoot_status_message",
        "shoot_status_updated",
    ),
    "node_pools": ("id", "cluster_id", "name", "machine_type", "autoscale_min", "autoscale_max", "created", "deleted"),
    # After the node pools: Fundament copies a node pool's sync status onto its cluster too, so a
    # cluster's own latest sync is written last.
    "cluster_outbox": provisioning.OUTBOX_COLUMNS,
    "projects": ("id", "cluster_id", "name", "alias", "created", "deleted"),
    "namespaces": ("id", "project_id", "name", "created", "deleted"),
    "infrastructure_resources": (
        "id",
        "cluster_id",
        "resource_type",
        "resource_id",
        "name",
        "namespace",
        "billable",
        "created",
        "last_seen",
    ),
}


class SeedError(RuntimeError):
    """The fleet cannot be written into this database."""


@dataclass(frozen=True, slots=True)
class WrittenCounts:
    """Rows written per table."""

    organizations: int = 0
    clusters: int = 0
    node_pools: int = 0
    cluster_outbox: int = 0
    projects: int = 0
    namespaces: int = 0
    infrastructure_resources: int = 0

    def __add__(self, other: WrittenCounts) -> WrittenCounts:
        return WrittenCounts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


def _organizations(part: FleetPart) -> Iterator[tuple[Any, ...]]:
    for o in part.organizations:
        yield (o.id, o.name, o.alias, o.listed_publicly, o.created, o.deleted)


def _clusters(part: FleetPart) -> Iterator[tuple[Any, ...]]:
    for c in part.clusters:
        yield (
            c.id,
            c.organization_id,
            c.name,
            c.region,
            c.kubernetes_version,
            c.created,
            c.deleted,
            *provisioning.cluster_values(c.sync),
        )


def _syncs(part: FleetPart) -> Iterator[tuple[Any, ...]]:
    for c in part.clusters:
        if c.sync is not None:
            for row in provisioning.outbox_rows(c.sync):
                yield provisioning.outbox_values(c.id, row)


def _node_pools(part: FleetPart) -> Iterator[tuple[Any, ...]]:
    for n in part.node_pools:
        yield (n.id, n.cluster_id, n.name, n.machine_type, n.autoscale_min, n.autoscale_max, n.created, n.deleted)


def _projects(part: FleetPart) -> Iterator[tuple[Any, ...]]:
    for p in part.projects:
        yield (p.id, p.cluster_id, p.name, p.alias, p.created, p.deleted)


def _namespaces(part: FleetPart) -> Iterator[tuple[Any, ...]]:
    for ns in part.namespaces:
        yield (ns.id, ns.project_id, ns.name, ns.created, ns.deleted)


def _resources(part: FleetPart) -> Iterator[tuple[Any, ...]]:
    for r in part.resources:
        yield (
            r.id,
            r.cluster_id,
            r.resource_type,
            r.resource_id,
            r.name,
            r.namespace,
            r.billable,
            r.created,
            r.last_seen,
        )


# Each table's rows, in the column order of COLUMNS.
ROWS: dict[str, Callable[[FleetPart], Iterator[tuple[Any, ...]]]] = {
    "organizations": _organizations,
    "clusters": _clusters,
    "node_pools": _node_pools,
    "cluster_outbox": _syncs,
    "projects": _projects,
    "namespaces": _namespaces,
    "infrastructure_resources": _resources,
}


# What the triggers on the model grow as a seed writes it: the listing's upkeep and Fundament's outbox.
GROWN_BY_TRIGGERS = ("cluster_listing", "cluster_search", "organization_totals", "cluster_outbox", "namespace_names")
# Rows written between two ANALYZEs, at first; the gap doubles after each, so a write of n rows pays for
# about log2(n) of them.
FIRST_ANALYZE_ROWS = 1000


@dataclass
class _Statistics:
    """When the seed next refreshes the planner's statistics, by rows written so far.

    Triggers on these tables look rows up through plans their session caches, made from the statistics
    of the moment. Statistics from before this transaction call every table empty (ANALYZE counts a
    transaction's own rows, autovacuum cannot see them), so those plans scan the organizations or the
    listing whole for each row written: a fleet's time grows with the square of its size (10,000
    clusters took 4 minutes). An ANALYZE makes the cached plans plan again, as lookups by key.
    """

    written: int = 0
    next_analyze: int = field(default_factory=lambda: FIRST_ANALYZE_ROWS)

    def due(self) -> bool:
        return self.written >= self.next_analyze

    def analyzed(self) -> None:
        self.next_analyze = 2 * max(self.written, self.next_analyze)


def _analyze(cur: psycopg.Cursor[Any], table: str) -> None:
    for name in (table, *GROWN_BY_TRIGGERS):
        cur.execute(sql.SQL("ANALYZE {}").format(sql.Identifier("tenant", name)))


def _copy(cur: psycopg.Cursor[Any], table: str, rows: Iterable[tuple[Any, ...]], statistics: _Statistics) -> int:
    """COPY the rows into `table`, in pieces cut where the statistics are due a refresh."""
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier("tenant", table), sql.SQL(", ").join(map(sql.Identifier, COLUMNS[table]))
    )
    written = 0
    pending = iter(rows)
    while True:
        with cur.copy(statement) as copy:
            for row in pending:
                copy.write_row(row)
                written += 1
                statistics.written += 1
                if statistics.due():
                    break
            else:
                return written
        _analyze(cur, table)
        statistics.analyzed()


def _write_batch(
    cur: psycopg.Cursor[Any], batch: Sequence[FleetPart], statistics: dict[str, _Statistics]
) -> WrittenCounts:
    counts = {
        table: _copy(cur, table, (row for part in batch for row in ROWS[table](part)), statistics[table])
        for table in COLUMNS
    }
    return WrittenCounts(**counts)


def _require_empty(conn: psycopg.Connection[Any]) -> None:
    row = conn.execute(
        "SELECT count(*) FROM tenant.organizations WHERE id <> tenant.system_organization_id()"
    ).fetchone()
    if row is not None and row[0] > 0:
        raise SeedError(
            f"the database already holds {row[0]} organizations; seed a fresh database "
            "(for the local one: `fleet db down --remove`, then `fleet db up` and `fleet db migrate --platform-model`)"
        )


def write_parts(
    conn: psycopg.Connection[Any], parts: Iterable[FleetPart], *, batch_organizations: int = 500
) -> WrittenCounts:
    """Write a fleet given part by part, in one transaction; raises SeedError unless the model is empty."""
    if batch_organizations < 1:
        raise ValueError("batch_organizations must be at least 1")
    total = WrittenCounts()
    with conn.transaction(), conn.cursor() as cur:
        _require_empty(conn)
        # The listing audit's trigger records the organizations written listed; this names who.
        cur.execute(
            "SELECT set_config('fleet.listing_changed_by', %s, true), set_config('fleet.listing_reason', %s, true)",
            (SEED_AUTHOR, "listed in the generated fleet"),
        )
        statistics = {table: _Statistics() for table in COLUMNS}
        batch: list[FleetPart] = []
        for part in parts:
            batch.append(part)
            if len(batch) >= batch_organizations:
                total += _write_batch(cur, batch, statistics)
                batch.clear()
                logger.info("seeded organizations", extra={"organizations": total.organizations})
        if batch:
            total += _write_batch(cur, batch, statistics)
    return total


def write_fleet(conn: psycopg.Connection[Any], fleet: Fleet) -> WrittenCounts:
    """Write a whole in-memory fleet, in one transaction; raises SeedError unless the model is empty."""
    part = FleetPart(
        organizations=list(fleet.organizations),
        clusters=list(fleet.clusters),
        node_pools=list(fleet.node_pools),
        projects=list(fleet.projects),
        namespaces=list(fleet.namespaces),
        resources=list(fleet.resources),
    )
    return write_parts(conn, [part])


def analyze(conn: psycopg.Connection[Any]) -> None:
    """VACUUM (ANALYZE) the model after a large write: planner statistics and the visibility map.

    Needs an autocommit connection (VACUUM cannot run in a transaction).
    """
    if not conn.autocommit:
        raise SeedError("analyze() needs an autocommit connection")
    for table in COLUMNS:
        conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier("tenant", table)))
