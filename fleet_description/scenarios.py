"""What a generated cluster is like: its status, its sync state, its shoot and the drift it plants.

A scenario is one named situation a platform team meets (a running cluster, one being upgraded, a
shoot that vanished, a shoot that outlived its cluster, ...). `fleet_description/generate.py` gives every
cluster one scenario; this module turns a scenario into the cluster's `SyncSpec` (what the
provisioning side last recorded) and into how its shoot looks in Gardener, consistently: no shoot
where the sync state says it is missing, pending or deleted, a shoot being deleted for a cluster
being deleted, a hibernated shoot for a stopped cluster. The drift scenarios make the two sides
disagree on purpose, one per drift kind (docs/reconcile.md, 'The five kinds').
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from common.clusterstatus import ClusterStatus
from fleet_description.model import SyncSpec


class Scenario(StrEnum):
    RUNNING = "running"
    PATCH_DIFFERS = "patch_differs"  # running; the shoot's patch version differs, which is no drift
    DELETED_PROJECT_LIVE_NAMESPACE = "deleted_project_live_namespace"  # running; a hand-edited leftover
    PROVISIONING = "provisioning"  # no sync state row yet
    PROVISIONING_PENDING = "provisioning_pending"  # first sync queued, no shoot yet
    STARTING = "starting"
    UPGRADING = "upgrading"  # shoot progressing on a reconcile after the first completed sync
    UPGRADING_SYNC = "upgrading_sync"  # shoot ready, a newer sync pending
    UNHEALTHY = "unhealthy"
    ERROR = "error"  # the shoot's last operation failed
    ERROR_SYNC_FAILED = "error_sync_failed"  # the sync ran out of retries, the shoot is fine
    LOST = "lost"  # the provisioning side noticed the shoot is gone
    STOPPING = "stopping"
    STOPPED = "stopped"
    DELETING = "deleting"
    DELETING_LIVE_CHILDREN = "deleting_live_children"  # deleted cluster whose projects are still live
    DELETED = "deleted"
    # Drift: the garden disagrees with the database.
    MISSING_SHOOT = "missing_shoot"  # ready and completed in the database, no shoot in the garden
    VERSION_MISMATCH = "version_mismatch"  # the shoot runs another minor version
    ORGANIZATION_MISMATCH = "organization_mismatch"  # the shoot's organization label names another one
    SHOOT_OF_DELETED_CLUSTER = "shoot_of_deleted_cluster"  # deleted and confirmed, yet the shoot is listed


@dataclass(frozen=True, slots=True)
class Shape:
    """How one scenario looks on both sides."""

    status: ClusterStatus
    deleted: bool
    has_sync: bool
    sync_status: str = "completed"
    shoot_status: str = "ready"
    shoot_operation: str | None = "reconcile"
    ever_completed: bool = True
    has_shoot: bool = True
    last_operation: str = "Reconcile"
    last_operation_state: str = "Succeeded"
    hibernated: bool = False
    live_children: bool = False  # a deleted cluster whose projects and namespaces stay live


SHAPES: dict[Scenario, Shape] = {
    Scenario.RUNNING: Shape(ClusterStatus.RUNNING, False, True),
    Scenario.PATCH_DIFFERS: Shape(ClusterStatus.RUNNING, False, True),
    Scenario.DELETED_PROJECT_LIVE_NAMESPACE: Shape(ClusterStatus.RUNNING, False, True),
    Scenario.PROVISIONING: Shape(ClusterStatus.PROVISIONING, False, False, has_shoot=False, ever_completed=False),
    Scenario.PROVISIONING_PENDING: Shape(
        ClusterStatus.PROVISIONING,
        False,
        True,
        sync_status="pending",
        shoot_status="pending",
        shoot_operation=None,
        ever_completed=False,
        has_shoot=False,
    ),
    Scenario.STARTING: Shape(
        ClusterStatus.STARTING,
        False,
        True,
        sync_status="completed",
        shoot_status="progressing",
        shoot_operation="create",
        last_operation="Create",
        last_operation_state="Processing",
    ),
    Scenario.UPGRADING: Shape(
        ClusterStatus.UPGRADING, False, True, shoot_status="progressing", last_operation_state="Processing"
    ),
    Scenario.UPGRADING_SYNC: Shape(ClusterStatus.UPGRADING, False, True, sync_status="retrying"),
    Scenario.UNHEALTHY: Shape(ClusterStatus.UNHEALTHY, False, True, shoot_status="unhealthy"),
    Scenario.ERROR: Shape(ClusterStatus.ERROR, False, True, shoot_status="error", last_operation_state="Failed"),
    Scenario.ERROR_SYNC_FAILED: Shape(ClusterStatus.ERROR, False, True, sync_status="failed"),
    Scenario.LOST: Shape(
        ClusterStatus.LOST, False, True, shoot_status="missing", shoot_operation=None, has_shoot=False
    ),
    Scenario.STOPPING: Shape(
        ClusterStatus.STOPPING,
        False,
        True,
        shoot_status="hibernating",
        last_operation_state="Processing",
        hibernated=True,
    ),
    Scenario.STOPPED: Shape(ClusterStatus.STOPPED, False, True, shoot_status="hibernated", hibernated=True),
    Scenario.DELETING: Shape(
        ClusterStatus.DELETING,
        True,
        True,
        shoot_status="deleting",
        shoot_operation="delete",
        last_operation="Delete",
        last_operation_state="Processing",
    ),
    Scenario.DELETING_LIVE_CHILDREN: Shape(
        ClusterStatus.DELETING,
        True,
        True,
        shoot_status="deleting",
        shoot_operation="delete",
        last_operation="Delete",
        last_operation_state="Processing",
        live_children=True,
    ),
    Scenario.DELETED: Shape(
        ClusterStatus.DELETED, True, True, shoot_status="deleted", shoot_operation="delete", has_shoot=False
    ),
    Scenario.MISSING_SHOOT: Shape(ClusterStatus.RUNNING, False, True, has_shoot=False),
    Scenario.VERSION_MISMATCH: Shape(ClusterStatus.RUNNING, False, True),
    Scenario.ORGANIZATION_MISMATCH: Shape(ClusterStatus.RUNNING, False, True),
    Scenario.SHOOT_OF_DELETED_CLUSTER: Shape(
        ClusterStatus.DELETED, True, True, shoot_status="deleted", shoot_operation="delete"
    ),
}

# Every scenario once, in this order, at the start of every planted fleet.
PLANTED: tuple[Scenario, ...] = tuple(Scenario)

# How often each scenario occurs among the clusters after the planted ones.
WEIGHTS: dict[Scenario, float] = {
    Scenario.RUNNING: 80.0,
    Scenario.PATCH_DIFFERS: 2.0,
    Scenario.DELETED_PROJECT_LIVE_NAMESPACE: 0.2,
    Scenario.PROVISIONING: 1.0,
    Scenario.PROVISIONING_PENDING: 1.0,
    Scenario.STARTING: 1.0,
    Scenario.UPGRADING: 2.0,
    Scenario.UPGRADING_SYNC: 1.0,
    Scenario.UNHEALTHY: 2.0,
    Scenario.ERROR: 1.0,
    Scenario.ERROR_SYNC_FAILED: 0.5,
    Scenario.LOST: 0.3,
    Scenario.STOPPING: 0.5,
    Scenario.STOPPED: 2.0,
    Scenario.DELETING: 1.0,
    Scenario.DELETING_LIVE_CHILDREN: 0.1,
    Scenario.DELETED: 3.0,
    Scenario.MISSING_SHOOT: 0.3,
    Scenario.VERSION_MISMATCH: 0.5,
    Scenario.ORGANIZATION_MISMATCH: 0.2,
    Scenario.SHOOT_OF_DELETED_CLUSTER: 0.2,
}

_MESSAGES = {
    "pending": "Shoot not found in Gardener",
    "progressing": "Reconcile: reconciling the shoot",
    "ready": "Shoot is ready",
    "unhealthy": "Shoot reconciled but not all conditions healthy",
    "error": "Reconcile: infrastructure quota exceeded",
    "missing": "Shoot not found in Gardener",
    "hibernating": "Hibernating the shoot",
    "hibernated": "Shoot is hibernated",
    "deleting": "Shoot is being deleted",
    "deleted": "Shoot confirmed deleted",
}


def sync_spec(scenario: Scenario, *, created: datetime, changed: datetime) -> SyncSpec | None:
    """The cluster's sync state row in this scenario, or None when it has none.

    `created` is the cluster's creation; `changed` when its shoot status last changed.
    """
    shape = SHAPES[scenario]
    if not shape.has_sync:
        return None
    attempts = {"pending": 0, "retrying": 3, "completed": 1, "failed": 10}[shape.sync_status]
    message = "Create: creating the shoot" if scenario is Scenario.STARTING else _MESSAGES[shape.shoot_status]
    return SyncSpec(
        sync_status=shape.sync_status,
        shoot_status=shape.shoot_status,
        shoot_operation=shape.shoot_operation,
        first_completed=created + timedelta(minutes=12) if shape.ever_completed else None,
        sync_updated=changed,
        shoot_status_changed=changed,
        sync_attempts=attempts,
        sync_error="apply shoot: admission webhook denied the request"
        if shape.sync_status in ("retrying", "failed")
        else None,
        shoot_message=message,
    )
