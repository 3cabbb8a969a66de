"""The infrastructure ledger (DESIGN.md §8): what exists in each cluster, whoever created it.

    SOURCES (this module)  ──>  shoot.py lists each source's kind  ──>  Discovered / Unlisted
                                                                            │
    inventory_store.store_ledger  <──  plan() against the active rows  <────┘

The platform does not create most of what a cluster costs: the autoscaler adds nodes, a tenant's
Service asks the cloud for a load balancer, a claim provisions a disk. So the ledger is written by
discovery: per ready cluster and source, what exists is compared with the ledger's active rows.

- a resource the ledger does not know is recorded as created;
- an active resource that no longer exists is recorded as destroyed (the row is kept);
- a source that could not be listed (error, timeout, 403, 404 kind not installed) is `Unlisted` and
  its type is left exactly as it is: "could not list" is never read as "none exist";
- the same resource (type, namespace, name) reporting another cloud id updates its active row;
- a resource created again after it was destroyed gets a new row (the database's partial unique
  index allows one active row per resource, so racing collections cannot record it twice).

Times are when the inventory noticed, not when the cloud created or deleted anything.

The sources are an explicit registry (STYLE 13): adding one is one declaration here plus a test.
Namespaced sources count only objects in tenant namespaces (those carrying
`fundament.io/namespace-id`): the rest of the cluster is the platform's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from collector.kubetypes import KubeObject

NODES_PATH = "/api/v1/nodes"


@dataclass(frozen=True, slots=True)
class Discovered:
    """One resource a source found in a cluster."""

    resource_type: str
    namespace: str
    """'' for cluster-wide kinds (the ledger's convention, so the unique index covers them)."""
    name: str
    resource_id: str | None
    """The cloud's id; None while the cloud has not assigned one (a pending load balancer)."""
    billable: bool

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.resource_type, self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class Unlisted:
    """A source that could not be listed this time; its type is left untouched."""

    reason: str
    """A short label: not_found (kind not installed), forbidden, timeout, server_error, ..."""
    message: str


SourceResult = tuple[Discovered, ...] | Unlisted


def _everything(obj: KubeObject, tenants: frozenset[str]) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class LedgerSource:
    """A kind of Kubernetes object the ledger records, and how (the smarter seed's InventorySource)."""

    resource_type: str
    """The ledger's type, a namespaced id like `kubernetes.node`."""
    kind: str
    """The Kubernetes kind, for people and messages."""
    path: str
    """The cluster-wide list path (`/api/v1/nodes`, `/apis/cert-manager.io/v1/certificates`)."""
    namespaced: bool
    """Whether only objects in tenant namespaces count (else the kind is cluster-wide)."""
    billable: bool
    """Whether the cloud bills for the resource."""
    resource_id: Callable[[KubeObject], str | None]
    """How the cloud's id is read from the object."""
    include: Callable[[KubeObject, frozenset[str]], bool] = _everything
    """Which objects count, given the cluster's tenant namespace names."""

    def discover(self, obj: KubeObject, tenants: frozenset[str]) -> Discovered | None:
        """The ledger's view of one listed object, or None when it does not count."""
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            return None
        namespace = meta.get("namespace") or ""
        if self.namespaced and namespace not in tenants:
            return None
        if not self.include(obj, tenants):
            return None
        return Discovered(
            resource_type=self.resource_type,
            namespace=namespace if self.namespaced else "",
            name=name,
            resource_id=_clean(self.resource_id(obj)),
            billable=self.billable,
        )


def _clean(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _dig(obj: Mapping[str, Any], *path: str | int) -> Any:
    current: Any = obj
    for step in path:
        if isinstance(step, int):
            if not isinstance(current, list) or len(current) <= step:
                return None
        elif not isinstance(current, Mapping):
            return None
        current = current[step] if isinstance(step, int) else current.get(step)
    return current


def provider_id(obj: KubeObject) -> str | None:
    """A node's cloud id: `spec.providerID` (e.g. `aws:///eu-west-1a/i-0abc`)."""
    return _dig(obj, "spec", "providerID")  # type: ignore[no-any-return]


def csi_volume_handle(obj: KubeObject) -> str | None:
    """A persistent volume's cloud id: the CSI driver's `spec.csi.volumeHandle`."""
    return _dig(obj, "spec", "csi", "volumeHandle")  # type: ignore[no-any-return]


def load_balancer_address(obj: KubeObject) -> str | None:
    """A load balancer's cloud id: the first `status.loadBalancer.ingress` hostname, else its IP."""
    first = _dig(obj, "status", "loadBalancer", "ingress", 0)
    if not isinstance(first, Mapping):
        return None
    return _clean(first.get("hostname")) or _clean(first.get("ip"))


def certificate_secret(obj: KubeObject) -> str | None:
    """A certificate's id: the Secret it is written to (`spec.secretName`)."""
    return _dig(obj, "spec", "secretName")  # type: ignore[no-any-return]


def claimed_cloud_volume(obj: KubeObject, tenants: frozenset[str]) -> bool:
    """A persistent volume counts when a claim in a tenant namespace holds it and it is a cloud disk.

    A volume without a CSI handle (a node's local disk) is no cloud resource of its own: the node is.
    """
    return _dig(obj, "spec", "claimRef", "namespace") in tenants and csi_volume_handle(obj) is not None


def provisioned_load_balancer(obj: KubeObject, tenants: frozenset[str]) -> bool:
    """A Service counts once it is of type LoadBalancer and the cloud gave it an address.

    A pending one has no cloud load balancer yet; the pass that sees its address records it created.
    """
    return _dig(obj, "spec", "type") == "LoadBalancer" and load_balancer_address(obj) is not None


SOURCES: tuple[LedgerSource, ...] = (
    LedgerSource(
        resource_type="kubernetes.node",
        kind="Node",
        path=NODES_PATH,
        namespaced=False,
        billable=True,
        resource_id=provider_id,
    ),
    LedgerSource(
        resource_type="kubernetes.persistentvolume",
        kind="PersistentVolume",
        path="/api/v1/persistentvolumes",
        namespaced=False,
        billable=True,
        resource_id=csi_volume_handle,
        include=claimed_cloud_volume,
    ),
    LedgerSource(
        resource_type="kubernetes.loadbalancer",
        kind="Service",
        path="/api/v1/services",
        namespaced=True,
        billable=True,
        resource_id=load_balancer_address,
        include=provisioned_load_balancer,
    ),
    LedgerSource(
        resource_type="kubernetes.ingress",
        kind="Ingress",
        path="/apis/networking.k8s.io/v1/ingresses",
        namespaced=True,
        billable=False,
        resource_id=load_balancer_address,
    ),
    LedgerSource(
        resource_type="kubernetes.certificate",
        kind="Certificate",
        path="/apis/cert-manager.io/v1/certificates",
        namespaced=True,
        billable=False,
        resource_id=certificate_secret,
    ),
)
"""The sources every ready cluster is read for, in the order summaries show them."""

RESOURCE_TYPES: tuple[str, ...] = tuple(source.resource_type for source in SOURCES)


@dataclass(frozen=True, slots=True)
class ActiveRow:
    """One active ledger row (destroyed IS NULL) of a cluster."""

    id: UUID
    resource_type: str
    namespace: str
    name: str
    resource_id: str | None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.resource_type, self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class LedgerPlan:
    """What one pass should write, before the database had its say (racing passes may do part of it)."""

    create: tuple[Discovered, ...] = ()
    destroy: tuple[UUID, ...] = ()
    change_id: tuple[tuple[UUID, str | None], ...] = ()
    touch: tuple[UUID, ...] = ()
    found: Mapping[str, int] = field(default_factory=dict)
    unlisted: Mapping[str, Unlisted] = field(default_factory=dict)

    @property
    def listed_types(self) -> tuple[str, ...]:
        return tuple(self.found)


def listed_types(results: Mapping[str, SourceResult]) -> tuple[str, ...]:
    """The resource types whose source could be listed (only their active rows are compared)."""
    return tuple(t for t, result in results.items() if not isinstance(result, Unlisted))


def plan(results: Mapping[str, SourceResult], active: Iterable[ActiveRow]) -> LedgerPlan:
    """Compare what each listed source found with the ledger's active rows of the listed types.

    Active rows of an unlisted type are never touched; rows of types not in `results` are ignored.
    """
    found: dict[str, dict[tuple[str, str, str], Discovered]] = {}
    unlisted: dict[str, Unlisted] = {}
    for resource_type, result in results.items():
        if isinstance(result, Unlisted):
            unlisted[resource_type] = result
        else:
            found[resource_type] = {d.key: d for d in result if d.resource_type == resource_type}
    create: list[Discovered] = []
    destroy: list[UUID] = []
    change: list[tuple[UUID, str | None]] = []
    touch: list[UUID] = []
    known: set[tuple[str, str, str]] = set()
    for row in active:
        listed = found.get(row.resource_type)
        if listed is None:
            continue  # unlisted (or unknown) type: left exactly as it is
        known.add(row.key)
        now = listed.get(row.key)
        if now is None:
            destroy.append(row.id)
        elif now.resource_id != row.resource_id:
            change.append((row.id, now.resource_id))
        else:
            touch.append(row.id)
    for listed in found.values():
        create.extend(d for key, d in listed.items() if key not in known)
    return LedgerPlan(
        create=tuple(create),
        destroy=tuple(destroy),
        change_id=tuple(change),
        touch=tuple(touch),
        found={resource_type: len(listed) for resource_type, listed in found.items()},
        unlisted=unlisted,
    )


@dataclass(frozen=True, slots=True)
class TypeCounts:
    """One pass over one resource type: how many exist, and how many were recorded created and destroyed."""

    found: int = 0
    created: int = 0
    destroyed: int = 0


@dataclass(frozen=True, slots=True)
class LedgerCounts:
    """One pass over one cluster: counts per listed type, and why the others could not be listed."""

    by_type: Mapping[str, TypeCounts] = field(default_factory=dict)
    unlisted: Mapping[str, Unlisted] = field(default_factory=dict)


def add_counts(total: dict[str, TypeCounts], more: Mapping[str, TypeCounts]) -> None:
    """Add one cluster's counts into a running total per type (summaries over a round)."""
    for resource_type, counts in more.items():
        so_far = total.get(resource_type, TypeCounts())
        total[resource_type] = TypeCounts(
            found=so_far.found + counts.found,
            created=so_far.created + counts.created,
            destroyed=so_far.destroyed + counts.destroyed,
        )


def sources_by_path(sources: Sequence[LedgerSource]) -> dict[str, list[LedgerSource]]:
    """Sources grouped by the list they read (one request serves every source on the same path)."""
    grouped: dict[str, list[LedgerSource]] = {}
    for source in sources:
        grouped.setdefault(source.path, []).append(source)
    return grouped
