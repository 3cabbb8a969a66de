"""How Fundament's provisioning side records a cluster's syncs and its shoot's status, for the writers
that stand in for it here: the seed, the demo's status poller and the tests.

Fundament keeps both on its own tables: the status poller writes `shoot_status`, its message and its
time on `tenant.clusters`, and every sync is a row of `tenant.cluster_outbox`, whose latest status a
trigger copies onto the cluster. Fleet inventory reads them through its view `tenant.fleet_sync_state`
in FUN-23's vocabulary (db/migrations/0001_baseline.sql). This module writes that vocabulary the way
Fundament does, so that the view reads back what was written; `tests/db/test_provisioning.py` holds the
two to each other for every status and operation.

Two of FUN-23's shoot statuses are only messages to Fundament's poller: an `unhealthy` shoot is `ready`
with "Shoot reconciled but not all conditions healthy", a `missing` one `pending` with "Shoot not found
in Gardener". An operation in progress is the message's prefix ("Create: …"). The status time moves only
when Fundament's status value changes, as its poller stops polling a ready cluster: ready and unhealthy
are both `ready` to it, so a flip between them keeps the time the cluster turned ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg

from common.database import load_queries
from fleet_description.model import SyncSpec

UNHEALTHY_MESSAGE = "Shoot reconciled but not all conditions healthy"
NOT_FOUND_MESSAGE = "Shoot not found in Gardener"
OPERATIONS = ("create", "reconcile", "delete", "migrate", "restore")

QUERIES = load_queries(Path(__file__).with_name("provisioning.sql"))


@dataclass(frozen=True, slots=True)
class ShootColumns:
    """`tenant.clusters.shoot_status` and `shoot_status_message` as Fundament's poller writes them."""

    status: str
    message: str


def shoot_columns(status: str, operation: str | None, message: str | None) -> ShootColumns:
    """FUN-23's shoot status, operation and message in Fundament's columns."""
    if status in ENCODED:
        return ShootColumns(*ENCODED[status])
    if status == "progressing":
        return ShootColumns("progressing", _progress_message(operation, message or "in progress"))
    if status == "ready" and (not message or message == UNHEALTHY_MESSAGE):
        message = "Shoot is ready"
    if status == "pending" and message == NOT_FOUND_MESSAGE:
        # Fundament's "no shoot yet"; after a completed sync the view would read it as missing.
        message = "Shoot creation initiated"
    defaults = {"deleting": "Shoot is being deleted", "deleted": "Shoot confirmed deleted"}
    return ShootColumns(status, message or defaults.get(status, status))


# The FUN-23 statuses Fundament's poller writes as another status with a message of its own.
ENCODED = {"unhealthy": ("ready", UNHEALTHY_MESSAGE), "missing": ("pending", NOT_FOUND_MESSAGE)}


def _progress_message(operation: str | None, detail: str) -> str:
    """The message of a progressing shoot: "<Operation>: <detail>", the way the view reads it back."""
    if operation in OPERATIONS:
        return f"{operation.title()}: {detail}"
    # An operation Fundament's poller did not name: a message the view reads no operation from.
    if detail == "Shoot is being created" or detail.split(":", 1)[0].strip().lower() in OPERATIONS:
        return f"Processing: {detail}"
    return detail


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """One `tenant.cluster_outbox` row of a cluster: one sync, as the outbox worker left it."""

    event: str
    status: str
    retries: int
    status_info: str | None
    created: datetime
    processed: datetime | None
    failed: datetime | None


def outbox_rows(sync: SyncSpec) -> list[OutboxRow]:
    """The syncs that leave a cluster in `sync`: the first completed one (if any), then the latest."""
    rows: list[OutboxRow] = []
    if sync.first_completed is not None:
        first = sync.first_completed
        rows.append(OutboxRow("created", "completed", 0, None, first, first, None))
        if sync.sync_status == "completed" and sync.sync_updated <= first:
            return rows
    status = sync.sync_status
    processed = sync.sync_updated if status == "completed" else None
    failed = sync.sync_updated if status == "failed" else None
    event = "created" if not rows else "updated"
    rows.append(OutboxRow(event, status, sync.sync_attempts, sync.sync_error, sync.sync_updated, processed, failed))
    return rows


def cluster_values(sync: SyncSpec | None) -> tuple[str | None, str | None, datetime | None]:
    """(shoot_status, shoot_status_message, shoot_status_updated) of a cluster row carrying `sync`."""
    if sync is None:
        return None, None, None
    columns = shoot_columns(sync.shoot_status, sync.shoot_operation, sync.shoot_message)
    return columns.status, columns.message, sync.shoot_status_changed


def outbox_values(cluster_id: UUID | str, row: OutboxRow) -> tuple[Any, ...]:
    """A cluster outbox row in the column order of `OUTBOX_COLUMNS` (for COPY)."""
    return (
        cluster_id,
        row.event,
        "trigger",
        row.status,
        row.retries,
        row.status_info,
        row.created,
        row.processed,
        row.failed,
    )


OUTBOX_COLUMNS = ("cluster_id", "event", "source", "status", "retries", "status_info", "created", "processed", "failed")


def write_sync_state(conn: psycopg.Connection[Any], cluster_id: UUID | str, sync: SyncSpec) -> None:
    """Record `sync` for an existing cluster as Fundament would: its shoot columns, then its syncs."""
    status, message, updated = cluster_values(sync)
    conn.execute(
        QUERIES["record_shoot_status"].sql,
        {"cluster_id": cluster_id, "shoot_status": status, "message": message, "at": updated},
    )
    for row in outbox_rows(sync):
        conn.execute(QUERIES["record_sync"].sql, dict(zip(OUTBOX_COLUMNS, outbox_values(cluster_id, row), strict=True)))


def write_state(
    conn: psycopg.Connection[Any],
    cluster_id: UUID | str,
    *,
    sync_status: str = "completed",
    shoot_status: str = "ready",
    shoot_operation: str | None = None,
    first_completed: datetime | None = None,
    at: datetime,
    sync_attempts: int = 0,
    sync_error: str | None = None,
    shoot_message: str | None = None,
) -> None:
    """`write_sync_state` from keywords (what the tests write): the state as of `at`; a completed sync
    has completed first at `first_completed` (default: `at`). Write node pools first: Fundament copies a
    node pool's sync status onto its cluster too."""
    if sync_status == "completed" and first_completed is None:
        first_completed = at
    write_sync_state(
        conn,
        cluster_id,
        SyncSpec(
            sync_status=sync_status,
            shoot_status=shoot_status,
            shoot_operation=shoot_operation,
            first_completed=first_completed,
            sync_updated=at,
            shoot_status_changed=at,
            sync_attempts=sync_attempts,
            sync_error=sync_error,
            shoot_message=shoot_message,
        ),
    )


def record_shoot_status(
    conn: psycopg.Connection[Any],
    cluster_id: UUID | str,
    status: str,
    *,
    at: datetime,
    operation: str | None = None,
    message: str | None = None,
) -> None:
    """The status poller's write: the shoot's status moved (its time moves only if Fundament's value did)."""
    columns = shoot_columns(status, operation, message)
    conn.execute(
        QUERIES["record_shoot_status"].sql,
        {"cluster_id": cluster_id, "shoot_status": columns.status, "message": columns.message, "at": at},
    )


def record_sync(
    conn: psycopg.Connection[Any],
    cluster_id: UUID | str,
    status: str,
    *,
    at: datetime,
    retries: int = 0,
    error: str | None = None,
) -> None:
    """One more sync of the cluster, as the outbox worker leaves it (`completed`, `retrying`, ...)."""
    row = OutboxRow(
        "updated", status, retries, error, at, at if status == "completed" else None, at if status == "failed" else None
    )
    conn.execute(QUERIES["record_sync"].sql, dict(zip(OUTBOX_COLUMNS, outbox_values(cluster_id, row), strict=True)))


def delete_cluster(conn: psycopg.Connection[Any], cluster_id: UUID | str, *, at: datetime) -> None:
    """Soft-delete a cluster as Fundament does, leaves first (its delete-order triggers refuse anything
    else): the cluster's live namespaces, then its live projects, then the cluster."""
    params = {"cluster_id": cluster_id, "at": at}
    for name in ("delete_cluster_namespaces", "delete_cluster_projects", "delete_cluster"):
        conn.execute(QUERIES[name].sql, params)
