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
from contextlib import contextmanager
from dataclasses import dataclass, fields
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


def _copy(cur: psycopg.Cursor[Any], table: str, rows: Iterable[tuple[Any, ...]]) -> int:
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier("tenant", table), sql.SQL(", ").join(map(sql.Identifier, COLUMNS[table]))
    )
    written = 0
    with cur.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)
            written += 1
    return written


def _write_batch(cur: psycopg.Cursor[Any], batch: Sequence[FleetPart]) -> WrittenCounts:
    counts: dict[str, int] = {}
    for table in COLUMNS:
        counts[table] = _copy(cur, table, (row for part in batch for row in ROWS[table](part)))
        # Fundament's row triggers on the next tables look this one up through plans cached in the session;
        # statistics from before the write call it empty (ANALYZE counts this transaction's own rows).
        _analyze(cur, [table])
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
        batch: list[FleetPart] = []
        with _listing_refreshed_once(cur):
            for part in parts:
                batch.append(part)
                if len(batch) >= batch_organizations:
                    total += _write_batch(cur, batch)
                    batch.clear()
                    logger.info("seeded organizations", extra={"organizations": total.organizations})
            if batch:
                total += _write_batch(cur, batch)
    return total


# The listing's triggers that Fundament's own row triggers fire once per cluster row, several times each
# (the outbox row a new cluster gets, the status it copies back onto the cluster).
PER_ROW_LISTING_TRIGGERS = (
    ("clusters", "fleet_cluster_listing_insert"),
    ("clusters", "fleet_cluster_listing_update"),
    ("cluster_outbox", "fleet_cluster_listing_insert"),
    ("cluster_outbox", "fleet_cluster_listing_update"),
)
# What the listing's upkeep writes, analyzed with the model once it is written.
LISTING_TABLES = ("cluster_listing", "cluster_search", "organization_totals", "namespace_names")


def _set_triggers(cur: psycopg.Cursor[Any], state: str) -> None:
    for table, trigger in PER_ROW_LISTING_TRIGGERS:
        statement = sql.SQL("ALTER TABLE {} {} TRIGGER {}").format(
            sql.Identifier("tenant", table), sql.SQL(state), sql.Identifier(trigger)
        )
        cur.execute(statement)


def _analyze(cur: psycopg.Cursor[Any], tables: Iterable[str]) -> None:
    for table in tables:
        cur.execute(sql.SQL("ANALYZE {}").format(sql.Identifier("tenant", table)))


@contextmanager
def _listing_refreshed_once(cur: psycopg.Cursor[Any]) -> Iterator[None]:
    """Refresh the listing once for every cluster written, instead of from each of those triggers.

    Through them each cluster cost about eight refreshes of its listing row and its organization's
    totals, planned on statistics that still called the tables empty: a fleet's time grew with the
    square of its size (10,000 clusters took 4 minutes). They are switched off for this transaction only
    (the seed owns the model it writes, which is empty; ALTER TABLE is transactional), and the refresh
    they call runs once over every cluster at the end, so the listing is what they would have left.
    The model's tables were analyzed batch by batch (`_write_batch`); the listing's are analyzed after
    the refresh, so whatever the caller writes next in this session plans with the fleet's real sizes.
    """
    _set_triggers(cur, "DISABLE")
    yield
    _set_triggers(cur, "ENABLE")
    cur.execute("SELECT tenant.refresh_cluster_listing(ARRAY(SELECT c.id FROM tenant.clusters AS c))")
    _analyze(cur, LISTING_TABLES)


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
