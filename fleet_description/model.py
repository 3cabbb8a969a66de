"""The fleet description shared by the database seed and the simulator (`fleet-sim`).

Plain frozen dataclasses, no I/O. The database side writes organizations, clusters, node pools,
projects, namespaces and sync states; the simulator serves one shoot per `ShootSpec` and one Gardener
project per `GardenProjectSpec`, with nodes per node pool and pods per namespace derived
deterministically from the same rows. Drift is planted on
purpose through `ShootSpec` fields that disagree with the database (a shoot with no cluster, a shoot
of a deleted cluster, a version or organization label that differs, a cluster without a shoot).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID


@dataclass(frozen=True, slots=True)
class OrganizationSpec:
    id: UUID
    name: str
    alias: str
    listed_publicly: bool
    created: datetime
    deleted: datetime | None = None


@dataclass(frozen=True, slots=True)
class SyncSpec:
    """A `tenant.cluster_sync_state` row (what the provisioning side last recorded)."""

    sync_status: str  # pending | retrying | completed | failed
    # pending | progressing | ready | unhealthy | error | missing | hibernating | hibernated | deleting | deleted
    shoot_status: str
    shoot_operation: str | None  # create | reconcile | delete | migrate | restore
    first_completed: datetime | None
    sync_updated: datetime
    shoot_status_changed: datetime
    sync_attempts: int = 1
    sync_error: str | None = None
    shoot_message: str | None = None


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    id: UUID
    organization_id: UUID
    name: str
    region: str
    kubernetes_version: str
    created: datetime
    deleted: datetime | None = None
    sync: SyncSpec | None = None


@dataclass(frozen=True, slots=True)
class NodePoolSpec:
    id: UUID
    cluster_id: UUID
    name: str
    machine_type: str
    autoscale_min: int
    autoscale_max: int
    created: datetime
    deleted: datetime | None = None


@dataclass(frozen=True, slots=True)
class ProjectSpec:
    id: UUID
    cluster_id: UUID
    name: str
    alias: str
    created: datetime
    deleted: datetime | None = None


@dataclass(frozen=True, slots=True)
class NamespaceSpec:
    id: UUID
    project_id: UUID
    name: str
    created: datetime
    deleted: datetime | None = None


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """An active `tenant.infrastructure_resources` row: what the collector had recorded of a cluster."""

    id: UUID
    cluster_id: UUID
    resource_type: str
    resource_id: str | None
    name: str
    namespace: str
    billable: bool
    created: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class ShootSpec:
    """One shoot in the simulated garden.

    `cluster_label` and `organization_label` are the raw values of the labels
    `fundament.io/cluster-id` and `fundament.io/organization-id`: normally the cluster's ids, but a
    planted drift may make them point nowhere, at a deleted cluster, or at another organization (and
    `cluster_label` may even be a string that is not a UUID).
    """

    uid: UUID
    name: str
    project: str  # the Gardener project; the shoot lives in its namespace (`namespace` below)
    cluster_label: str
    organization_label: str
    kubernetes_version: str
    region: str
    created: datetime
    hibernated: bool = False
    last_operation: str = "Reconcile"  # Create | Reconcile | Delete | Migrate | Restore
    last_operation_state: str = "Succeeded"  # Processing | Succeeded | Error | Failed | Pending | Aborted
    has_certificates_crd: bool = True
    cluster_labelled: bool = True
    """False: the shoot carries no `fundament.io/cluster-id` label at all (made by hand; drift kind
    unlabeled_shoot), whatever `cluster_label` says."""
    namespace: str = ""
    """The garden namespace the shoot lives in: its project's `spec.namespace`; empty means Gardener's
    default, `garden-<project>`."""

    def __post_init__(self) -> None:
        if not self.namespace:
            object.__setattr__(self, "namespace", f"garden-{self.project}")


@dataclass(frozen=True, slots=True)
class GardenProjectSpec:
    """A Gardener Project (`core.gardener.cloud/v1beta1`, cluster-scoped) in the simulated garden.

    Fundament's provisioning side makes one per organization, named `common.naming.project_name` of
    the organization's name and labelled `fundament.io/organization-id`; its shoots live in
    `namespace` (`spec.namespace`), which is `garden-<name>` unless the project adopted another one.
    """

    name: str
    namespace: str
    organization_label: str | None
    """The raw value of label `fundament.io/organization-id`; None: a project Fundament does not manage."""
    created: datetime


@dataclass(frozen=True, slots=True)
class Fleet:
    """A whole platform: the database's rows and the garden's shoots."""

    seed: int
    organizations: tuple[OrganizationSpec, ...] = ()
    clusters: tuple[ClusterSpec, ...] = ()
    node_pools: tuple[NodePoolSpec, ...] = ()
    projects: tuple[ProjectSpec, ...] = ()
    namespaces: tuple[NamespaceSpec, ...] = ()
    shoots: tuple[ShootSpec, ...] = ()
    garden_projects: tuple[GardenProjectSpec, ...] = ()  # a shoot whose project is not here gets a default one
    resources: tuple[ResourceSpec, ...] = ()  # ledger rows left by a planted deletion (see generate.py)
    notes: dict[str, str] = field(default_factory=dict)  # what was planted where, for people and tests
