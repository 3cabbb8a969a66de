"""The drift rules: which disagreements between the database and Gardener exist right now.

Pure functions over typed inputs, no I/O. On one side sit the shoots reconcile listed from the garden,
on the other the cluster rows it read in the same pass, both indexed once in `observed.Observed`; the
rules return the findings that hold at this moment. What happens to them next (opened, kept open,
resolved) is the store's business (store.py), decided in SQL against the open rows
(docs/architecture.md, 'Drift kinds and the lifecycle of a finding').

The six kinds are an explicit registry (`KINDS`), each with its subject and its rule. A rule whose
input could not be read this pass finds nothing, and `Observed.not_evaluated` names its kind so
the store keeps that kind's open findings as they are. Every finding's
`details` says what was expected and what was observed, so a reader needs no second query to see
why it exists. Cluster readiness and "updating" come from `common.clusterstatus`, the one
definition (docs/architecture.md, 'Status is computed, in Python and SQL').
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypeAlias
from uuid import UUID

from collector.reconcile.observed import Observed, ShootObservation, UnlabeledShoot
from common import drift_kinds
from common.clock import rfc3339
from common.labels import CLUSTER_ID_LABEL

JsonValue: TypeAlias = str | int | float | bool | list["JsonValue"] | dict[str, "JsonValue"] | None

# major.minor, an optional patch, an optional pre-release or build suffix; a leading "v" is tolerated.
_VERSION = re.compile(r"^v?(?P<major>\d+)\.(?P<minor>\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?$")


@functools.lru_cache(maxsize=1024)  # a fleet runs a handful of versions, compared thousands of times
def minor_version(version: str | None) -> str | None:
    """The `major.minor` of a Kubernetes version (`1.31.4` -> `1.31`), or None when it does not parse."""
    if version is None:
        return None
    match = _VERSION.match(version.strip())
    if match is None:
        return None
    return f"{int(match['major'])}.{int(match['minor'])}"


def _versions_agree(expected: str, observed: str) -> bool:
    """Same `major.minor`; when either side does not parse, only the very same text agrees."""
    expected_minor, observed_minor = minor_version(expected), minor_version(observed)
    if expected_minor is None or observed_minor is None:
        return expected.strip() == observed.strip()
    return expected_minor == observed_minor


@dataclass(frozen=True, slots=True)
class Finding:
    """One disagreement that holds now; `(kind, subject)` names it across passes."""

    kind: str
    subject: str
    cluster_id: UUID | None
    shoot_uid: UUID | None
    details: dict[str, JsonValue]
    organization_id: UUID | None = None
    """The organization concerned when no cluster is (an unlabeled shoot's project owner); else None."""


def _shoot_ref(shoot: ShootObservation) -> dict[str, JsonValue]:
    return {"uid": str(shoot.uid), "namespace": shoot.namespace, "name": shoot.name}


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else rfc3339(moment)


def orphan_shoots(world: Observed) -> Iterator[Finding]:
    """A shoot whose cluster id matches no cluster row at all, or is not a UUID."""
    for shoot, cluster in world.with_clusters:
        if cluster is not None:
            continue
        reason = "the label is not a UUID" if shoot.cluster_id is None else "no cluster row has this id"
        yield Finding(
            kind=drift_kinds.ORPHAN_SHOOT,
            subject=str(shoot.uid),
            cluster_id=None,
            shoot_uid=shoot.uid,
            details={
                "expected": {"cluster": f"a cluster row whose id is label {CLUSTER_ID_LABEL}"},
                "observed": {"cluster_label": shoot.cluster_label, "cluster": None},
                "reason": reason,
                "shoot": _shoot_ref(shoot),
            },
        )


def shoots_of_deleted_clusters(world: Observed) -> Iterator[Finding]:
    """A shoot that belongs to a deleted cluster, unless that cluster's deletion is still under way.

    Deleting a cluster is two-staged: `deleted` is set, the provisioning side
    deletes the shoot (status DELETING), and `shoot_status` becomes `deleted` once Gardener confirms
    it gone. A shoot listed during that normal window is no disagreement. It is one once the
    deletion was confirmed (`shoot_status = deleted`), has failed (`sync_status = failed`), was
    never handed to the provisioning side at all (no sync state), or has been under way for longer
    than the pass's bound (`Observed.deletion_timeout`, RECONCILE_DELETION_TIMEOUT_SECONDS): a deletion
    that never finishes is reported instead of being excused forever.
    """
    for shoot, cluster in world.with_clusters:
        if cluster is None or cluster.deleted is None:
            continue
        overdue = world.deletion_overdue(cluster) if cluster.deletion_under_way else None
        if cluster.deletion_under_way and overdue is None:
            continue
        if overdue is not None:
            bound = int(world.deletion_timeout.total_seconds()) if world.deletion_timeout else 0
            reason = f"the cluster's deletion has been under way for longer than {bound} s and its shoot still exists"
        elif not cluster.has_sync_state:
            reason = "the cluster was deleted and its shoot was never handed to the provisioning side"
        elif cluster.sync_status == "failed":
            reason = "the cluster's deletion failed and its shoot still exists"
        else:
            reason = "the cluster's shoot was confirmed deleted, yet Gardener still lists it"
        yield Finding(
            kind=drift_kinds.SHOOT_OF_DELETED_CLUSTER,
            subject=str(shoot.uid),
            cluster_id=cluster.id,
            shoot_uid=shoot.uid,
            details={
                "expected": {"shoot": None, "cluster_deleted": _iso(cluster.deleted)},
                "observed": {"shoot": _shoot_ref(shoot)},
                "reason": reason,
                "sync_status": cluster.sync_status,
                "shoot_status": cluster.shoot_status,
                "shoot": _shoot_ref(shoot),
                **({"deletion_under_way_seconds": int(overdue.total_seconds())} if overdue is not None else {}),
            },
        )


def missing_shoots(world: Observed) -> Iterator[Finding]:
    """A live cluster whose latest sync completed has no shoot."""
    for cluster, shoots in world.shoots_of_clusters:
        if shoots or cluster.deleted is not None or not cluster.latest_sync_completed:
            continue
        yield Finding(
            kind=drift_kinds.MISSING_SHOOT,
            subject=str(cluster.id),
            cluster_id=cluster.id,
            shoot_uid=None,
            details={
                "expected": {"shoots": f"at least one shoot labelled {CLUSTER_ID_LABEL}={cluster.id}"},
                "observed": {"shoots": 0},
                "reason": "the cluster's latest sync completed, but Gardener lists no shoot for it",
                "sync_status": cluster.sync_status,
                "shoot_status": cluster.shoot_status,
            },
        )


def version_mismatches(world: Observed) -> Iterator[Finding]:
    """A ready cluster that is not updating, whose latest sync completed, runs another minor version.

    Only `major.minor` is compared (Gardener's maintenance moves patch versions on its own). A version
    that does not parse on either side is reported in the details, unless both sides are the same text.
    With several shoots claiming one cluster, every claimant is compared and all are shown.
    """
    for cluster, shoots in world.shoots_of_clusters:
        if not shoots or not cluster.latest_sync_completed or not cluster.ever_synced:
            continue
        disagreeing = [s for s in shoots if not _versions_agree(cluster.kubernetes_version, s.kubernetes_version)]
        # Compared first because it is cheap (cached); readiness and status only for the few that differ.
        if not disagreeing or not cluster.ready or cluster.updating:
            continue
        expected_minor = minor_version(cluster.kubernetes_version)
        observed: list[JsonValue] = []
        problems: list[JsonValue] = []
        if expected_minor is None:
            problems.append(f"the database version {cluster.kubernetes_version!r} does not parse as major.minor")
        for shoot in shoots:
            observed_minor = minor_version(shoot.kubernetes_version)
            observed.append(
                {**_shoot_ref(shoot), "kubernetes_version": shoot.kubernetes_version, "minor": observed_minor}
            )
            if observed_minor is None:
                problems.append(
                    f"shoot {shoot.namespace}/{shoot.name} version {shoot.kubernetes_version!r}"
                    " does not parse as major.minor"
                )
        details: dict[str, JsonValue] = {
            "expected": {"kubernetes_version": cluster.kubernetes_version, "minor": expected_minor},
            "observed": observed,
            "reason": "the shoot runs another minor Kubernetes version than the database holds",
        }
        if problems:
            details["unparseable"] = problems
        yield Finding(
            kind=drift_kinds.VERSION_MISMATCH,
            subject=str(cluster.id),
            cluster_id=cluster.id,
            shoot_uid=disagreeing[0].uid,
            details=details,
        )


def organization_mismatches(world: Observed) -> Iterator[Finding]:
    """A shoot whose organization-id label names another organization than its cluster's (or none)."""
    for shoot, cluster in world.with_clusters:
        if cluster is None or shoot.organization_id == cluster.organization_id:
            continue
        if shoot.organization_label is None:
            reason = "the shoot has no organization label"
        elif shoot.organization_id is None:
            reason = "the organization label is not a UUID"
        else:
            reason = "the organization label names another organization than the cluster's"
        yield Finding(
            kind=drift_kinds.ORGANIZATION_MISMATCH,
            subject=str(shoot.uid),
            cluster_id=cluster.id,
            shoot_uid=shoot.uid,
            details={
                "expected": {"organization_id": str(cluster.organization_id)},
                "observed": {"organization_label": shoot.organization_label},
                "reason": reason,
                "shoot": _shoot_ref(shoot),
            },
        )


def unlabeled_shoots(world: Observed) -> Iterator[Finding]:
    """A shoot in the garden project of a live organization that carries no cluster-id label.

    Fundament's provisioning side labels every shoot it creates, so such a shoot was made by hand or
    by another tool, in a project Fundament owns: nothing maps it to a cluster, so no other rule and
    no inventory round ever sees it (a blind spot of the inventory). The projects are Gardener's
    Project objects, their namespaces `spec.namespace` and their owners found as Fundament finds
    them (projects.py). Shoots outside those projects are not Fundament's business and are left
    alone. Without a project listing the rule says nothing (`Observed.not_evaluated`).
    """
    if world.garden_projects is None:
        return
    for shoot in world.unlabeled:
        owner = world.garden_projects.get(shoot.namespace)
        if owner is None:
            continue
        organization = owner.organization
        yield Finding(
            kind=drift_kinds.UNLABELED_SHOOT,
            subject=str(shoot.uid),
            cluster_id=None,
            shoot_uid=None,
            organization_id=organization.id,
            details={
                "expected": {"cluster_label": f"label {CLUSTER_ID_LABEL} naming the shoot's cluster"},
                "observed": {"cluster_label": None, "organization_label": shoot.organization_label},
                "reason": "a shoot in a Fundament garden project carries no cluster-id label",
                "organization": {"id": str(organization.id), "name": organization.name},
                "project": {"name": owner.project, "namespace": owner.namespace, "matched_by": owner.matched_by},
                "shoot": _unlabeled_ref(shoot),
                "shoot_created": rfc3339(shoot.created),
            },
        )


def _unlabeled_ref(shoot: UnlabeledShoot) -> dict[str, JsonValue]:
    return {"uid": str(shoot.uid), "namespace": shoot.namespace, "name": shoot.name}


@dataclass(frozen=True, slots=True)
class DriftKind:
    """One kind of finding: its id (as stored in drift_findings.kind), what its subject is, its rule."""

    id: str
    subject: Literal["shoot uid", "cluster id"]
    summary: str
    rule: Callable[[Observed], Iterator[Finding]]


# The registry, in the order of common.drift_kinds (whose ids are what the database's CHECK allows).
KINDS: tuple[DriftKind, ...] = (
    DriftKind(
        drift_kinds.ORPHAN_SHOOT,
        "shoot uid",
        "the shoot's cluster id matches no cluster row (or is not a UUID)",
        orphan_shoots,
    ),
    DriftKind(
        drift_kinds.SHOOT_OF_DELETED_CLUSTER,
        "shoot uid",
        "the shoot belongs to a deleted cluster whose deletion is not under way (confirmed, failed, never"
        " begun) or has been under way for longer than the bound",
        shoots_of_deleted_clusters,
    ),
    DriftKind(
        drift_kinds.MISSING_SHOOT,
        "cluster id",
        "a live cluster whose latest sync completed has no shoot",
        missing_shoots,
    ),
    DriftKind(
        drift_kinds.VERSION_MISMATCH,
        "cluster id",
        "a ready, not updating, synced cluster runs another minor version than the database holds",
        version_mismatches,
    ),
    DriftKind(
        drift_kinds.ORGANIZATION_MISMATCH,
        "shoot uid",
        "the shoot's organization label names another organization than its cluster's",
        organization_mismatches,
    ),
    DriftKind(
        drift_kinds.UNLABELED_SHOOT,
        "shoot uid",
        "a shoot in a live organization's Gardener project (its Project's spec.namespace) carries no cluster-id label",
        unlabeled_shoots,
    ),
)

KIND_IDS: tuple[str, ...] = tuple(kind.id for kind in KINDS)


def find_drift(world: Observed) -> list[Finding]:
    """Every finding that holds for this pass's inputs, each `(kind, subject)` once."""
    findings: list[Finding] = []
    for kind in KINDS:
        findings.extend(kind.rule(world))
    return findings
