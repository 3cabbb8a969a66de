"""The provisioning side's rules: which shoot status a cluster's sync state gets from its shoot.

The mapping follows the producer rules of Fundament's provisioning side (the system that writes
`tenant.cluster_sync_state` in production), with this project's vocabulary for the cases it adds
(unhealthy, missing, hibernating, hibernated):

| the shoot | shoot_status |
|---|---|
| carries `deletionTimestamp` (or the cluster is deleted and the shoot still exists) | deleting |
| hibernation on: finished / under way | hibernated / hibernating |
| last operation Pending or Processing | progressing |
| last operation Error, Failed or Aborted | error |
| Succeeded, APIServerAvailable + ControlPlaneHealthy + SystemComponentsHealthy True | ready |
| Succeeded, any of them not True | unhealthy |
| gone, for a live cluster that ever synced | missing |
| gone, for a deleted cluster | deleted |

A row already `deleted` is final and never polled again (as on the provisioning side), so a shoot
that outlives its confirmed deletion stays the drift it is. Pure functions, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.labels import CLUSTER_ID_LABEL
from db.provisioning import ShootColumns, shoot_columns
from fleetctl.status_poller.queries import ClusterStatusRow, StatusWrite

READY_CONDITIONS = ("APIServerAvailable", "ControlPlaneHealthy", "SystemComponentsHealthy")


@dataclass(frozen=True, slots=True)
class ShootView:
    """What the poller reads of one shoot."""

    cluster_label: str
    deleting: bool
    hibernation_enabled: bool
    is_hibernated: bool
    operation: str | None  # lastOperation.type
    state: str | None  # lastOperation.state
    description: str
    healthy: bool  # the three conditions of READY_CONDITIONS are True

    @classmethod
    def of(cls, shoot: dict[str, Any]) -> ShootView:
        metadata, spec, status = shoot.get("metadata", {}), shoot.get("spec", {}), shoot.get("status", {})
        last = status.get("lastOperation") or {}
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        return cls(
            cluster_label=(metadata.get("labels") or {}).get(CLUSTER_ID_LABEL, ""),
            deleting=bool(metadata.get("deletionTimestamp")),
            hibernation_enabled=bool((spec.get("hibernation") or {}).get("enabled")),
            is_hibernated=bool(status.get("isHibernated")),
            operation=last.get("type"),
            state=last.get("state"),
            description=str(last.get("description") or ""),
            healthy=all(conditions.get(kind) == "True" for kind in READY_CONDITIONS),
        )


@dataclass(frozen=True, slots=True)
class ShootStatus:
    status: str
    operation: str | None
    message: str


def shoot_status(shoot: ShootView | None, *, cluster_deleted: bool, ever_completed: bool) -> ShootStatus | None:
    """The shoot columns for a cluster, or None when there is nothing to say (never synced, no shoot)."""
    if shoot is None:
        if cluster_deleted:
            return ShootStatus("deleted", "delete", "Shoot confirmed deleted")
        return ShootStatus("missing", None, "Shoot not found in Gardener") if ever_completed else None
    if shoot.deleting or cluster_deleted:
        return ShootStatus("deleting", "delete", "Shoot is being deleted")
    operation = shoot.operation.lower() if shoot.operation else None
    if shoot.hibernation_enabled:
        if shoot.is_hibernated:
            return ShootStatus("hibernated", operation, "Shoot is hibernated")
        return ShootStatus("hibernating", operation, "Hibernating the shoot")
    return _by_last_operation(shoot, operation)


def _by_last_operation(shoot: ShootView, operation: str | None) -> ShootStatus:
    if shoot.state is None or shoot.state in {"Pending", "Processing"}:
        message = f"{shoot.operation}: {shoot.description}" if shoot.operation else "Shoot is being created"
        return ShootStatus("progressing", operation or "create", message)
    if shoot.state in {"Error", "Failed", "Aborted"}:
        return ShootStatus("error", operation, shoot.description or f"Operation was {shoot.state.lower()}")
    if shoot.healthy:
        return ShootStatus("ready", operation, "Shoot is ready")
    return ShootStatus("unhealthy", operation, "Shoot reconciled but not all conditions healthy")


def plan_writes(rows: list[ClusterStatusRow], shoots: dict[str, ShootView], *, now: datetime) -> list[StatusWrite]:
    """The rows whose shoot columns change this round."""
    writes = []
    for row in rows:
        if row.shoot_status == "deleted":
            continue  # final: the provisioning side stops polling a confirmed deletion
        status = shoot_status(
            shoots.get(str(row.cluster_id)), cluster_deleted=row.deleted, ever_completed=row.ever_completed
        )
        if status is None:
            continue
        if row.has_state:
            # Compared in Fundament's columns, which is what is written (an operation is only a
            # progressing shoot's, and ready and unhealthy are both `ready` there).
            if shoot_columns(status.status, status.operation, status.message) == ShootColumns(
                row.recorded_status or "", row.recorded_message or ""
            ):
                continue
            writes.append(StatusWrite(row.cluster_id, status.status, status.operation, status.message, insert=False))
            continue
        completed = status.status in {"ready", "unhealthy", "hibernated"}
        writes.append(
            StatusWrite(
                row.cluster_id,
                status.status,
                status.operation,
                status.message,
                insert=True,
                sync_status="completed" if completed else "pending",
                first_completed=now if completed else None,
            )
        )
    return writes
