"""The resources each simulated API serves: one explicit registry, read by routing and discovery.

A shoot serves nodes, namespaces, pods, persistent volumes and claims, services (core `v1`),
ingresses (`networking.k8s.io/v1`) and, when the CRD is installed, cert-manager certificates. The
garden serves project namespaces, projects and shoots (`core.gardener.cloud/v1beta1`) plus the
shoots' kubeconfig subresources. Field selector support mirrors the real servers' per-resource
lists.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Kind:
    resource: str  # plural, as in the URL
    kind: str
    group: str  # "" for the core group
    version: str
    namespaced: bool
    singular: str
    short_names: tuple[str, ...] = ()
    field_labels: frozenset[str] = frozenset()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()  # served with verb `create`
    custom_resource: bool = False  # served from a CRD (list items repeat kind and apiVersion)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def supported_fields(self) -> frozenset[str]:
        common = {"metadata.name", "metadata.namespace"} if self.namespaced else {"metadata.name"}
        return self.field_labels | common


CORE = ""
NETWORKING = "networking.k8s.io"
CERT_MANAGER = "cert-manager.io"
GARDENER = "core.gardener.cloud"

NODES = Kind("nodes", "Node", CORE, "v1", False, "node", ("no",), frozenset({"spec.unschedulable"}))
NAMESPACES = Kind("namespaces", "Namespace", CORE, "v1", False, "namespace", ("ns",), frozenset({"status.phase"}))
PODS = Kind(
    "pods",
    "Pod",
    CORE,
    "v1",
    True,
    "pod",
    ("po",),
    frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        }
    ),
    ("all",),
)
PERSISTENT_VOLUMES = Kind("persistentvolumes", "PersistentVolume", CORE, "v1", False, "persistentvolume", ("pv",))
PERSISTENT_VOLUME_CLAIMS = Kind(
    "persistentvolumeclaims", "PersistentVolumeClaim", CORE, "v1", True, "persistentvolumeclaim", ("pvc",)
)
SERVICES = Kind(
    "services", "Service", CORE, "v1", True, "service", ("svc",), frozenset({"spec.clusterIP", "spec.type"}), ("all",)
)
INGRESSES = Kind("ingresses", "Ingress", NETWORKING, "v1", True, "ingress", ("ing",))
CERTIFICATES = Kind(
    "certificates",
    "Certificate",
    CERT_MANAGER,
    "v1",
    True,
    "certificate",
    ("cert", "certs"),
    categories=("cert-manager",),
    custom_resource=True,
)

SHOOT_KINDS: tuple[Kind, ...] = (
    NODES,
    NAMESPACES,
    PODS,
    PERSISTENT_VOLUMES,
    PERSISTENT_VOLUME_CLAIMS,
    SERVICES,
    INGRESSES,
    CERTIFICATES,
)

SHOOTS = Kind(
    "shoots",
    "Shoot",
    GARDENER,
    "v1beta1",
    True,
    "shoot",
    (),
    frozenset({"spec.seedName", "status.seedName", "spec.cloudProfileName", "spec.cloudProfile.name"}),
    subresources=("adminkubeconfig", "viewerkubeconfig"),
)
PROJECTS = Kind("projects", "Project", GARDENER, "v1beta1", False, "project")

# The garden serves one kind of secret: each shoot's monitoring secret, by name (sim/api/prometheus/monitoring.py).
SECRETS = Kind("secrets", "Secret", CORE, "v1", True, "secret")

GARDEN_KINDS: tuple[Kind, ...] = (NAMESPACES, PROJECTS, SHOOTS, SECRETS)

KUBECONFIG_REQUEST_KINDS = {"adminkubeconfig": "AdminKubeconfigRequest", "viewerkubeconfig": "ViewerKubeconfigRequest"}


def find_kind(kinds: tuple[Kind, ...], group: str, version: str, resource: str) -> Kind | None:
    return next((k for k in kinds if (k.group, k.version, k.resource) == (group, version, resource)), None)
