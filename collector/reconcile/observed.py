"""What one reconcile pass observed: the listed shoots, the cluster rows, indexed once for the rules.

    loop.py ──> observe_shoots(listing) ─────────────> ShootObservation ──┐
    loop.py ──> observe_unlabeled_shoots(listing) ───> UnlabeledShoot ────┤
                store.read_clusters ─────────────────> ClusterFacts ──────┤
    loop.py ──> projects.observe_projects(listing) ──> GardenProject ─────┤
                store.read_garden_organizations ─────> OrganizationFacts ─┴─> Observed ──> drift.find_drift

A listed shoot that lacks what every shoot has (a uid, a creation time), or disagrees with the
selector of its listing (the cluster-id label missing from the first, present in the second),
makes the whole listing untrusted (`MalformedShoot`): reconcile then records nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from collector.reconcile.projects import GardenProject, OrganizationFacts, ProjectOwner, project_owners
from collector.reconcile.shoot_parts import ShootParts, parse_parts
from common import drift_kinds
from common.clusterstatus import cluster_status, is_ready, is_updating
from common.labels import CLUSTER_ID_LABEL, ORGANIZATION_ID_LABEL, parse_id_label

logger = logging.getLogger(__name__)

NO_PARTS = ShootParts(pools=(), extensions=(), addons=())


@dataclass(frozen=True, slots=True)
class ShootObservation:
    """One shoot as the garden listed it: what reconcile mirrors into `tenant.gardener_shoots`."""

    uid: UUID
    name: str
    namespace: str
    cluster_label: str
    """The raw value of label fundament.io/cluster-id (listing selects on it, so it is always there)."""
    organization_label: str | None
    """The raw value of label fundament.io/organization-id; None when the shoot lacks the label."""
    kubernetes_version: str
    """spec.kubernetes.version verbatim; '' when the shoot has none."""
    region: str
    """spec.region verbatim; '' when the shoot has none."""
    created: datetime
    parts: ShootParts = NO_PARTS
    """Its worker pools, extensions and add-ons (the ledger's gardener.* rows), each part None if unreadable."""
    cluster_id: UUID | None = field(init=False)
    """The cluster label parsed as a UUID; None when it is not one."""
    organization_id: UUID | None = field(init=False)
    """The organization label parsed as a UUID; None when absent or not one."""

    def __post_init__(self) -> None:
        # Parsed once here so the rules and the store agree on what "the cluster id" of a shoot is.
        object.__setattr__(self, "cluster_id", parse_id_label(self.cluster_label))
        object.__setattr__(self, "organization_id", parse_id_label(self.organization_label))


@dataclass(frozen=True, slots=True)
class ClusterFacts:
    """What the rules need to know of one cluster row: the cluster, its organization and its sync state."""

    id: UUID
    organization_id: UUID
    kubernetes_version: str
    deleted: datetime | None
    organization_deleted: datetime | None
    has_sync_state: bool
    sync_status: str | None
    shoot_status: str | None
    shoot_operation: str | None
    first_completed: datetime | None

    @property
    def latest_sync_completed(self) -> bool:
        return self.has_sync_state and self.sync_status == "completed"

    @property
    def ever_synced(self) -> bool:
        return self.first_completed is not None

    @property
    def deletion_under_way(self) -> bool:
        """A deleted cluster whose shoot the provisioning side is still deleting (neither confirmed nor failed)."""
        return (
            self.deleted is not None
            and self.has_sync_state
            and self.sync_status != "failed"
            and self.shoot_status != "deleted"
        )

    @property
    def ready(self) -> bool:
        """Ready: a live cluster of a live, non-system organization whose shoot is ready or unhealthy."""
        return is_ready(
            cluster_deleted=self.deleted is not None,
            organization_deleted=self.organization_deleted is not None,
            organization_id=self.organization_id,
            shoot_status=self.shoot_status,
        )

    @property
    def updating(self) -> bool:
        """Updating: status STARTING or UPGRADING."""
        status = cluster_status(
            deleted=self.deleted is not None,
            sync_status=self.sync_status if self.has_sync_state else None,
            shoot_status=self.shoot_status,
            shoot_operation=self.shoot_operation,
            ever_completed=self.ever_synced,
        )
        return is_updating(status)


class Observed:
    """One pass's inputs, indexed once for the rules: each shoot with its cluster, each cluster with its shoots.

    Both sides are in a fixed order (by uid, by cluster id), so the rules' output does not depend on
    the listing's order. Indexes are keyed by the UUIDs' integers: at 50,000 shoots, hashing and
    comparing `uuid.UUID` objects (Python code) would cost more than the rules themselves.
    """

    __slots__ = (
        "clusters",
        "deletion_timeout",
        "garden_projects",
        "now",
        "shoots",
        "shoots_of_clusters",
        "unlabeled",
        "with_clusters",
    )

    def __init__(
        self,
        shoots: Sequence[ShootObservation],
        clusters: Mapping[UUID, ClusterFacts],
        *,
        now: datetime | None = None,
        deletion_timeout: timedelta | None = None,
        unlabeled: Sequence[UnlabeledShoot] = (),
        organizations: Iterable[OrganizationFacts] = (),
        projects: Iterable[GardenProject] | None = None,
    ) -> None:
        self.now = now
        """The pass's time; with `deletion_timeout`, it bounds how long a deletion may be under way."""
        self.deletion_timeout = deletion_timeout
        """How long a deletion may be under way before its leftover shoot is drift (None: no bound)."""
        self.unlabeled: tuple[UnlabeledShoot, ...] = tuple(sorted(unlabeled, key=lambda s: s.uid.int))
        """The shoots of the garden that carry no cluster-id label, wherever they are."""
        self.garden_projects: dict[str, ProjectOwner] | None = (
            None if projects is None else project_owners(projects, organizations)
        )
        """Fundament's garden project namespaces (`Project.spec.namespace`) of live organizations, with their
        owner; None when the projects could not be listed, so the unlabeled-shoot rule cannot be evaluated."""
        self.shoots: tuple[ShootObservation, ...] = tuple(sorted(shoots, key=lambda s: s.uid.int))
        self.clusters: tuple[ClusterFacts, ...] = tuple(sorted(clusters.values(), key=lambda c: c.id.int))
        by_id = {c.id.int: c for c in self.clusters}
        claims: dict[int, list[ShootObservation]] = {}
        with_clusters: list[tuple[ShootObservation, ClusterFacts | None]] = []
        for shoot in self.shoots:
            if shoot.cluster_id is None:
                with_clusters.append((shoot, None))
                continue
            with_clusters.append((shoot, by_id.get(shoot.cluster_id.int)))
            claims.setdefault(shoot.cluster_id.int, []).append(shoot)
        self.with_clusters: tuple[tuple[ShootObservation, ClusterFacts | None], ...] = tuple(with_clusters)
        """Every listed shoot with the cluster row its label names (None: not a UUID, or no such row)."""
        self.shoots_of_clusters: tuple[tuple[ClusterFacts, tuple[ShootObservation, ...]], ...] = tuple(
            (c, tuple(claims.get(c.id.int, ()))) for c in self.clusters
        )
        """Every cluster row with the shoots whose label names it (often none, normally one)."""

    @property
    def not_evaluated(self) -> tuple[str, ...]:
        """The kinds this pass cannot decide: their open findings are neither seen again nor resolved."""
        return (drift_kinds.UNLABELED_SHOOT,) if self.garden_projects is None else ()

    def deletion_overdue(self, cluster: ClusterFacts) -> timedelta | None:
        """How long the cluster's deletion has been under way, when that is longer than the bound; else None."""
        if self.now is None or self.deletion_timeout is None or cluster.deleted is None:
            return None
        under_way = self.now - cluster.deleted
        return under_way if under_way > self.deletion_timeout else None

    def duplicate_claims(self) -> dict[UUID, tuple[UUID, ...]]:
        """Clusters claimed by more than one shoot, with the claiming shoots' uids."""
        return {c.id: tuple(s.uid for s in shoots) for c, shoots in self.shoots_of_clusters if len(shoots) > 1}


class MalformedShoot(ValueError):
    """A listed shoot lacks what every shoot has (a uid, a creation time): the listing is not trusted."""


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class _Meta:
    """What every listed shoot has, checked: its identity, creation time and labels."""

    uid: UUID
    name: str
    namespace: str
    created: datetime
    labels: Mapping[str, Any]


def _meta(obj: Mapping[str, Any]) -> _Meta:
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        raise MalformedShoot("a listed shoot has no metadata")
    name = _text(metadata.get("name")) or ""
    namespace = _text(metadata.get("namespace")) or ""
    uid = parse_id_label(_text(metadata.get("uid")))
    if uid is None or not name or not namespace:
        raise MalformedShoot(f"shoot {namespace}/{name}: no usable uid, name or namespace")
    created_raw = _text(metadata.get("creationTimestamp"))
    try:
        created = datetime.fromisoformat(created_raw) if created_raw else None
    except ValueError:
        created = None
    if created is None or created.tzinfo is None:
        raise MalformedShoot(f"shoot {namespace}/{name}: creationTimestamp {created_raw!r} is not an RFC 3339 time")
    labels = metadata.get("labels")
    return _Meta(uid, name, namespace, created, labels if isinstance(labels, Mapping) else {})


def observe_shoot(obj: Mapping[str, Any]) -> ShootObservation:
    """One listed shoot object as the mirror stores it; raises MalformedShoot when it is not a usable shoot."""
    meta = _meta(obj)
    cluster_label = _text(meta.labels.get(CLUSTER_ID_LABEL))
    if cluster_label is None:
        # The list selects on this label; a shoot without it means the server ignored the selector.
        raise MalformedShoot(f"shoot {meta.namespace}/{meta.name}: listed without label {CLUSTER_ID_LABEL}")
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    kubernetes = spec.get("kubernetes")
    kubernetes = kubernetes if isinstance(kubernetes, Mapping) else {}
    return ShootObservation(
        uid=meta.uid,
        name=meta.name,
        namespace=meta.namespace,
        cluster_label=cluster_label,
        organization_label=_text(meta.labels.get(ORGANIZATION_ID_LABEL)),
        kubernetes_version=_text(kubernetes.get("version")) or "",
        region=_text(spec.get("region")) or "",
        created=meta.created,
        parts=parse_parts(spec),
    )


@dataclass(frozen=True, slots=True)
class UnlabeledShoot:
    """A listed shoot that carries no `fundament.io/cluster-id` label: nobody claims it for a cluster."""

    uid: UUID
    name: str
    namespace: str
    organization_label: str | None
    created: datetime


def observe_unlabeled_shoot(obj: Mapping[str, Any]) -> UnlabeledShoot:
    """One shoot of the unlabeled listing; raises MalformedShoot when it is unusable or does carry the label."""
    meta = _meta(obj)
    if CLUSTER_ID_LABEL in meta.labels:
        # This list selects on the label's absence; a shoot with it means the server ignored the selector.
        raise MalformedShoot(f"shoot {meta.namespace}/{meta.name}: listed as unlabeled, yet has {CLUSTER_ID_LABEL}")
    return UnlabeledShoot(
        uid=meta.uid,
        name=meta.name,
        namespace=meta.namespace,
        organization_label=_text(meta.labels.get(ORGANIZATION_ID_LABEL)),
        created=meta.created,
    )


def observe_unlabeled_shoots(objects: Iterable[Mapping[str, Any]]) -> list[UnlabeledShoot]:
    """Every shoot of the unlabeled listing, each uid once, by uid."""
    by_uid: dict[UUID, UnlabeledShoot] = {}
    for obj in objects:
        shoot = observe_unlabeled_shoot(obj)
        by_uid.setdefault(shoot.uid, shoot)
    return sorted(by_uid.values(), key=lambda s: s.uid.int)


def observe_shoots(objects: Iterable[Mapping[str, Any]]) -> list[ShootObservation]:
    """Every listed shoot, each uid once (a uid listed twice is kept once, as the API guarantees anyway)."""
    by_uid: dict[object, ShootObservation] = {}
    for obj in objects:
        shoot = observe_shoot(obj)
        if shoot.uid in by_uid:
            logger.warning("shoot listed twice", extra={"shoot_uid": str(shoot.uid)})
            continue
        by_uid[shoot.uid] = shoot
    return list(by_uid.values())
