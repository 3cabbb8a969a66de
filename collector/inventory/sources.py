"""The ledger's sources: which Kubernetes objects each cluster is read for, and what each one found.

    SOURCES (this module) ──> shoot.py lists each source's path ──> Discovered / Unlisted ──> ledger.plan

The sources are an explicit registry: adding one is one declaration here plus a test. Namespaced
sources count only objects in tenant namespaces (those carrying `fundament.io/namespace-id`): the
rest of the cluster is the platform's own. A source that could not be listed is `Unlisted`, never an
empty list (docs/architecture.md, 'A source that could not be listed changes nothing').
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from collector.kube.objects import KubeObject

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

# The Unlisted reason of a source that held more resources than INVENTORY_LEDGER_MAX_PER_TYPE.
OVER_CAP = "over_cap"
# The Unlisted reason of every source when the collection source cannot see the objects at all
# (INVENTORY_SOURCE=prometheus): the ledger's rows stay exactly as they were.
NOT_VISIBLE = "not_visible"


def _everything(obj: KubeObject, tenants: frozenset[str]) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class LedgerSource:
    """A kind of Kubernetes object the ledger records, and how its objects are read."""

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


def sources_by_path(sources: Sequence[LedgerSource]) -> dict[str, list[LedgerSource]]:
    """Sources grouped by the list they read (one request serves every source on the same path)."""
    grouped: dict[str, list[LedgerSource]] = {}
    for source in sources:
        grouped.setdefault(source.path, []).append(source)
    return grouped
