"""The ledger rows a complete garden listing implies: each cluster, its worker pools, extensions and add-ons.

    Observed (shoots with their clusters) ──> desired_rows() ──> LedgerRows ──> store.store_gardener_ledger

Reconcile is the source of the `gardener.*` types, as the inventory is of the `kubernetes.*` ones:
per cluster its shoot says what exists, and store.sql compares that with the active rows. Keys:

- `gardener.cluster`: the cluster, by Fundament's cluster id (the row's name is the id);
- `gardener.workerpool`: (cluster, pool name), with machine type, minimum and maximum in `details`;
- `gardener.extension`: (cluster, extension type), enabled `spec.extensions` only;
- `gardener.addon`: (cluster, add-on name), enabled `spec.addons` only.

Every row's `resource_id` is the uid of the Shoot it was read from, so a shoot deleted and created
again (a new uid, even unnoticed between two passes) starts new rows. `status.technicalID` is never a
key: Gardener reuses it when a shoot is re-created, which would merge two lifetimes into one row.
A cluster claimed by several shoots (drift of its own) is read from its oldest shoot only. Clusters
of the system organization are left out, as the inventory leaves them out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from uuid import UUID

from collector.reconcile.observed import ClusterFacts, ShootObservation
from common.organizations import SYSTEM_ORGANIZATION_ID

CLUSTER = "gardener.cluster"
WORKER_POOL = "gardener.workerpool"
EXTENSION = "gardener.extension"
ADDON = "gardener.addon"

BILLABLE: Mapping[str, bool] = {
    # The shoot's control plane (run by the seed) and its infrastructure (network, gateways) cost money
    # per cluster, whatever its nodes.
    CLUSTER: True,
    # A pool costs nothing of its own: its machines are the kubernetes.node rows.
    WORKER_POOL: False,
    # Extensions and add-ons run on the seed or on the shoot's own nodes; what they provision of the
    # cloud's (a load balancer, a volume) has rows of its own.
    EXTENSION: False,
    ADDON: False,
}
TYPES: tuple[str, ...] = tuple(BILLABLE)


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One row a listed shoot implies (namespace is always '': these are cluster-wide)."""

    cluster_id: UUID
    resource_type: str
    name: str
    resource_id: str
    details: Mapping[str, str | int] | None = None

    @property
    def billable(self) -> bool:
        return BILLABLE[self.resource_type]


@dataclass(frozen=True, slots=True)
class LedgerRows:
    """What one listing says exists, and which (cluster, type) pairs it could read."""

    rows: tuple[LedgerRow, ...]
    listed: tuple[tuple[UUID, str], ...]
    """(cluster, type) read this pass: only their active rows are compared; the rest are left alone."""
    unreadable: Mapping[str, int]
    """Shoots whose part could not be read, per part (`workers`, `extensions`, `addons`)."""


def _shoot_rows(cluster_id: UUID, shoot: ShootObservation) -> tuple[list[LedgerRow], list[str]]:
    uid = str(shoot.uid)
    rows = [LedgerRow(cluster_id, CLUSTER, str(cluster_id), uid)]
    listed = [CLUSTER]
    parts = shoot.parts
    if parts.pools is not None:
        listed.append(WORKER_POOL)
        rows += [
            LedgerRow(
                cluster_id,
                WORKER_POOL,
                pool.name,
                uid,
                {"machine_type": pool.machine_type, "minimum": pool.minimum, "maximum": pool.maximum},
            )
            for pool in parts.pools
        ]
    if parts.extensions is not None:
        listed.append(EXTENSION)
        rows += [LedgerRow(cluster_id, EXTENSION, kind, uid) for kind in parts.extensions]
    if parts.addons is not None:
        listed.append(ADDON)
        rows += [LedgerRow(cluster_id, ADDON, name, uid) for name in parts.addons]
    return rows, listed


def desired_rows(
    shoots_of_clusters: Iterable[tuple[ClusterFacts, tuple[ShootObservation, ...]]],
) -> LedgerRows:
    """The rows every cluster's listed shoot implies (clusters without a listed shoot imply none)."""
    rows: list[LedgerRow] = []
    listed: list[tuple[UUID, str]] = []
    unreadable: dict[str, int] = {}
    for cluster, shoots in shoots_of_clusters:
        if not shoots or cluster.organization_id == SYSTEM_ORGANIZATION_ID:
            continue
        shoot = min(shoots, key=lambda s: (s.created, s.uid.int))
        these, types = _shoot_rows(cluster.id, shoot)
        rows += these
        listed += [(cluster.id, t) for t in types]
        for part in shoot.parts.unreadable:
            unreadable[part] = unreadable.get(part, 0) + 1
    return LedgerRows(rows=tuple(rows), listed=tuple(listed), unreadable=unreadable)
