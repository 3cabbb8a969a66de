"""The garden's view of one shoot: what `core.gardener.cloud/v1beta1` Shoot objects are rendered from.

A `ShootState` starts as the fleet's `ShootSpec` plus the workers of the shoot's cluster, and is
replaced (never mutated) when the control API changes the world: a version bump, hibernation, a
recreation with a new uid. The shoot's key `<project>--<name>` names its API under `/shoots/<key>`;
Gardener forbids `--` inside project and shoot names, so the key is unambiguous. The shoot lives in
its project's namespace (`Project.spec.namespace`), which is `garden-<project>` by default only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from fleet_description.model import ShootSpec
from sim.world import derive

OPERATION_TYPES = ("Create", "Reconcile", "Delete", "Migrate", "Restore")
OPERATION_STATES = ("Processing", "Succeeded", "Error", "Failed", "Pending", "Aborted")


class ShootKeyError(ValueError):
    """A project or shoot name cannot form an unambiguous shoot key."""


def shoot_key(project: str, name: str) -> str:
    """`<project>--<name>`, the path segment of a shoot's API (and its technical id's tail)."""
    for part in (project, name):
        if not part or "--" in part or "/" in part:
            raise ShootKeyError(f"{part!r} cannot be part of a shoot key (empty, '--' or '/')")
    return f"{project}--{name}"


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """One entry of `spec.provider.workers` (a node pool as Gardener sees it)."""

    name: str
    machine_type: str
    minimum: int
    maximum: int
    zones: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ExtensionSpec:
    """One entry of `spec.extensions`: an extension the shoot asks for (or, `disabled`, one it turns off
    that the landscape's operator enables by default)."""

    type: str
    disabled: bool = False


# Extensions a landscape offers (gardener-extension-shoot-*), in the order a shoot lists them.
EXTENSION_CATALOGUE = ("shoot-dns-service", "shoot-cert-service", "shoot-networking-problemdetector")
# The add-ons of `spec.addons` (deprecated by Gardener; only evaluation shoots may enable them).
ADDONS = ("kubernetesDashboard", "nginxIngress")


def default_extensions(uid: str) -> tuple[ExtensionSpec, ...]:
    """The extensions a shoot asks for, derived from its uid: about half ask for DNS, half for
    certificates, and one in four turns off the operator's problem detector."""
    draw = derive.stable_int("extensions", uid)
    chosen = [ExtensionSpec(kind) for bit, kind in enumerate(EXTENSION_CATALOGUE[:2]) if draw >> bit & 1]
    if draw >> 2 & 3 == 0:
        chosen.append(ExtensionSpec(EXTENSION_CATALOGUE[2], disabled=True))
    return tuple(chosen)


@dataclass(frozen=True, slots=True)
class ProjectRecord:
    """A Gardener project (cluster-scoped in the garden, so `namespace` is empty)."""

    name: str
    uid: str
    created: datetime
    rv: int
    garden_namespace: str | None = None
    """`spec.namespace`, where the project's shoots live; None while Gardener has not created it."""
    organization_label: str | None = None
    """Label `fundament.io/organization-id`; None on a project Fundament does not manage."""
    namespace: str = ""


@dataclass(frozen=True, slots=True)
class ShootState:
    name: str
    project: str
    namespace: str  # the project's garden namespace
    uid: str
    cluster_label: str
    organization_label: str
    kubernetes_version: str
    region: str
    created: datetime
    hibernated: bool
    last_operation: str
    last_operation_state: str
    control_plane_healthy: bool
    workers: tuple[WorkerSpec, ...]
    has_certificates_crd: bool
    rv: int
    generation: int = 1
    changed: datetime | None = None  # when the last operation last moved (None: at creation)
    cluster_labelled: bool = True  # False: no fundament.io/cluster-id label at all (an unlabeled shoot)
    extensions: tuple[ExtensionSpec, ...] = ()
    addons: tuple[str, ...] = ()
    """The enabled `spec.addons`; a shoot with any is an evaluation shoot, as Gardener requires."""

    @property
    def key(self) -> str:
        return shoot_key(self.project, self.name)

    @property
    def technical_id(self) -> str:
        return f"shoot--{self.project}--{self.name}"

    @property
    def serving(self) -> bool:
        """Whether the shoot's API server runs: not when hibernation is on, not before its creation finished."""
        return not self.hibernated and self.has_advertised_addresses

    @property
    def is_hibernated(self) -> bool:
        """`status.isHibernated`: hibernation is on and the operation that brought it down finished."""
        return self.hibernated and self.last_operation_state == "Succeeded"

    @property
    def deleting(self) -> bool:
        """A delete is under way: Gardener has set `metadata.deletionTimestamp`."""
        return self.last_operation == "Delete"

    @property
    def has_advertised_addresses(self) -> bool:
        """Gardener publishes the API address once a create succeeded; until then no kubeconfig is issued."""
        return not (self.last_operation == "Create" and self.last_operation_state != "Succeeded")

    @property
    def status_label(self) -> str:
        """The `shoot.gardener.cloud/status` label: healthy, progressing, unhealthy or unknown."""
        if self.last_operation_state in {"Processing", "Pending"}:
            return "progressing"
        if self.last_operation_state in {"Error", "Failed", "Aborted"} or not self.control_plane_healthy:
            return "unhealthy"
        return "healthy"


def initial_state(spec: ShootSpec, workers: tuple[WorkerSpec, ...], *, healthy: bool, rv: int) -> ShootState:
    """The state a shoot starts in, straight from its spec."""
    shoot_key(spec.project, spec.name)  # validate early: a bad name must fail at startup
    return ShootState(
        name=spec.name,
        project=spec.project,
        namespace=spec.namespace,
        uid=str(spec.uid),
        cluster_label=spec.cluster_label,
        organization_label=spec.organization_label,
        kubernetes_version=spec.kubernetes_version,
        region=spec.region,
        created=spec.created,
        hibernated=spec.hibernated,
        last_operation=spec.last_operation,
        last_operation_state=spec.last_operation_state,
        control_plane_healthy=healthy,
        workers=workers,
        has_certificates_crd=spec.has_certificates_crd,
        rv=rv,
        cluster_labelled=spec.cluster_labelled,
        extensions=default_extensions(str(spec.uid)),
    )
