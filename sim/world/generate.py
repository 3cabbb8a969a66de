"""Record factories: the deterministic contents of a shoot, derived from the fleet description.

Rules, all decided by `sim/world/derive.py` from names and ids:

- one node per `autoscale_min` of each live node pool of the shoot's cluster, labelled with the
  pool's worker name; about one node in seventeen is not Ready; one shoot in four also has a node
  of a pool the database does not know (`legacy`);
- tenant namespaces for the live namespaces of the cluster's live projects, plus system ones;
- pods per tenant namespace by a count derived from the namespace's name (some Pending, Succeeded,
  Failed), two DaemonSet pods per node and a few system pods in `kube-system`;
- volumes, claims, Services (some LoadBalancer), Ingresses and cert-manager Certificates per tenant
  namespace, decided by a hash of its name, plus a few that belong to no tenant.

Functions here build records only; `sim/world/contents.py` owns the stores they go into.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from uuid import UUID

from common.naming import namespace_name, worker_name
from fleet_description.model import ClusterSpec, Fleet, NamespaceSpec, NodePoolSpec, ProjectSpec
from sim.world import derive
from sim.world.records import (
    CertificateRecord,
    ClaimRecord,
    IngressRecord,
    NamespaceRecord,
    NodeRecord,
    PodRecord,
    ServiceRecord,
    VolumeRecord,
)
from sim.world.shoots import ShootState, WorkerSpec

NextRv = Callable[[], int]

SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
CERT_MANAGER_NAMESPACE = "cert-manager"
DAEMONSETS = ("kube-proxy", "node-exporter")
SYSTEM_DEPLOYMENTS = ("coredns", "coredns", "metrics-server", "vpn-shoot", "calico-kube-controllers")
UNKNOWN_POOL = "legacy"
# Fundament gives a cluster without node pools one worker named `default`.
DEFAULT_WORKER = WorkerSpec("default", "standard-4", 1, 3, ("zone-a",))
CSI_DRIVER = "disk.csi.simulator"
_NAME_SPACE = 27**5  # distinct five-character suffixes


@dataclass(frozen=True, slots=True)
class ContentProfile:
    """How densely shoots are populated; the huge shoot of the memory benchmark uses its own."""

    tenant_pods: Callable[[str], int] = derive.tenant_pod_count
    daemon_pods_per_node: int = len(DAEMONSETS)
    system_pods: int = len(SYSTEM_DEPLOYMENTS)
    extras: bool = True  # volumes, services, ingresses, certificates


DEFAULT_PROFILE = ContentProfile()


@dataclass(frozen=True, slots=True)
class TenantNamespace:
    name: str  # the database's name, from which the pod count is derived
    kube_name: str
    namespace_id: UUID
    project_id: UUID


class FleetIndex:
    """The fleet's rows looked up by what a shoot needs: its cluster, pools and tenant namespaces.

    Tenant namespaces (and their cluster-side names) are worked out per cluster on first use: the
    `scale` fleet has a million namespaces, and most shoots are never looked into.
    """

    def __init__(self, fleet: Fleet) -> None:
        pools: dict[UUID, list[NodePoolSpec]] = {}
        for pool in fleet.node_pools:
            if pool.deleted is None:
                pools.setdefault(pool.cluster_id, []).append(pool)
        self.clusters: dict[str, ClusterSpec] = {str(c.id): c for c in fleet.clusters}
        self.pools = {k: tuple(sorted(v, key=lambda p: p.name)) for k, v in pools.items()}
        self._projects: dict[UUID, list[ProjectSpec]] = {}
        for project in fleet.projects:
            if project.deleted is None:
                self._projects.setdefault(project.cluster_id, []).append(project)
        self._namespaces: dict[UUID, list[NamespaceSpec]] = {}
        for ns in fleet.namespaces:
            if ns.deleted is None:
                self._namespaces.setdefault(ns.project_id, []).append(ns)
        self._tenants: dict[UUID, tuple[TenantNamespace, ...]] = {}

    def cluster_of(self, cluster_label: str) -> ClusterSpec | None:
        return self.clusters.get(cluster_label)

    def tenant_namespaces(self, cluster_id: UUID) -> tuple[TenantNamespace, ...]:
        """The live namespaces of the cluster's live projects."""
        tenants = self._tenants.get(cluster_id)
        if tenants is None:
            tenants = self._tenants[cluster_id] = tuple(
                TenantNamespace(ns.name, namespace_name(project.name, project.id, ns.name), ns.id, project.id)
                for project in self._projects.get(cluster_id, ())
                for ns in self._namespaces.get(project.id, ())
            )
        return tenants


def workers_of(index: FleetIndex, cluster: ClusterSpec | None) -> tuple[WorkerSpec, ...]:
    """`spec.provider.workers` of a shoot: its cluster's live pools, or one default worker."""
    pools = index.pools.get(cluster.id, ()) if cluster is not None else ()
    if not pools:
        return (DEFAULT_WORKER,)
    zones = ("a", "b", "c")
    return tuple(
        WorkerSpec(
            name=worker_name(pool.name),
            machine_type=pool.machine_type,
            minimum=pool.autoscale_min,
            maximum=pool.autoscale_max,
            zones=(f"{cluster.region if cluster else 'zone'}-{zones[derive.stable_int(pool.id) % 3]}",),
        )
        for pool in pools
    )


def unique_suffix(index: int) -> str:
    """A five-character suffix that looks generated but is distinct for every index below 27**5."""
    return derive.encode_suffix((index * 7919 + 104729) % _NAME_SPACE)  # 7919 is prime to 27: a bijection


def node_name(shoot: ShootState, worker: WorkerSpec | str, index: int) -> str:
    worker_label = worker if isinstance(worker, str) else worker.name
    return f"{shoot.technical_id}-{worker_label}-z1-{derive.suffix(shoot.uid, worker_label)}-{unique_suffix(index)}"


def pool_nodes(shoot: ShootState, worker: WorkerSpec, count: int, next_rv: NextRv) -> list[NodeRecord]:
    """The first `count` nodes of a worker pool (the same names whenever the pool is scaled)."""
    cores, memory_gib = derive.machine_size(worker.machine_type)
    nodes = []
    for i in range(count):
        name = node_name(shoot, worker, i)
        nodes.append(
            NodeRecord(
                name=name,
                worker=worker.name,
                machine_type=worker.machine_type,
                zone=worker.zones[0] if worker.zones else "zone-a",
                ready=derive.node_is_ready(name),
                cores=cores,
                memory_gib=memory_gib,
                max_pods=110,
                rv=next_rv(),
            )
        )
    return nodes


def has_unknown_pool(shoot: ShootState) -> bool:
    """One shoot in four runs a node of a pool the database does not know."""
    return derive.stable_int("unknown-pool", shoot.uid) % 4 == 0


def unknown_pool_worker(shoot: ShootState) -> WorkerSpec:
    taken = {w.name for w in shoot.workers}
    name = UNKNOWN_POOL if UNKNOWN_POOL not in taken else f"{UNKNOWN_POOL}-x"
    machine = shoot.workers[0].machine_type if shoot.workers else DEFAULT_WORKER.machine_type
    return WorkerSpec(name, machine, 1, 1, (f"{shoot.region}-a",))


def daemon_pods(node: NodeRecord, profile: ContentProfile, next_rv: NextRv) -> list[PodRecord]:
    """The DaemonSet pods a node runs in `kube-system` (they follow the node when pools scale)."""
    # Named after the node's pool and its unique suffix, so no two nodes' pods can collide.
    return [
        PodRecord(
            name=f"{daemonset}-{node.worker}-{node.name.rsplit('-', 1)[-1]}",
            namespace="kube-system",
            app=daemonset,
            node=node.name,
            phase="Running" if node.ready else "Pending",
            rv=next_rv(),
            daemon=True,
        )
        for daemonset in DAEMONSETS[: profile.daemon_pods_per_node]
    ]


def apps_of(namespace: str, pod_count: int) -> list[str]:
    """The workloads of a tenant namespace (one per eight pods, at most five)."""
    names = ("web", "api", "worker", "cache", "db")
    return list(names[: max(1, min(len(names), (pod_count + 7) // 8))])


def workload_pods(
    namespace: str,
    apps: Sequence[str],
    indexes: range,
    nodes: Sequence[str],
    next_rv: NextRv,
    *,
    phase: str | None = None,
) -> Iterator[PodRecord]:
    """Pods `indexes` of a namespace, spread over its workloads and over `nodes` round-robin."""
    prefixes = [f"{app}-{derive.suffix(namespace, app, length=10)}-" for app in apps]  # `<app>-<replicaset hash>-`
    offset = derive.stable_int(namespace)
    for i in indexes:
        app = apps[i % len(apps)]
        name = prefixes[i % len(apps)] + unique_suffix(i)
        pod_phase = phase or derive.pod_phase(namespace, name)
        node: str | None = nodes[(offset + i) % len(nodes)] if nodes else None
        if node is None or (pod_phase == "Pending" and i % 2 == 0):
            node, pod_phase = None, "Pending"  # unschedulable, or no node to run on
        yield PodRecord(
            name=name,
            namespace=namespace,
            app=app,
            node=node,
            phase=pod_phase,
            rv=next_rv(),
        )


def system_namespaces(shoot: ShootState, next_rv: NextRv) -> list[NamespaceRecord]:
    names = list(SYSTEM_NAMESPACES)
    if shoot.has_certificates_crd:
        names.append(CERT_MANAGER_NAMESPACE)
    return [NamespaceRecord(name, None, None, next_rv()) for name in names]


def system_deployment_pods(profile: ContentProfile, nodes: Sequence[str], next_rv: NextRv) -> list[PodRecord]:
    pods = []
    for i, app in enumerate(SYSTEM_DEPLOYMENTS[: profile.system_pods]):
        name = f"{app}-{derive.suffix('kube-system', app, length=10)}-{unique_suffix(i)}"
        node = nodes[i % len(nodes)] if nodes else None
        pods.append(PodRecord(name, "kube-system", app, node, "Running" if node else "Pending", next_rv()))
    return pods


def cert_manager_pods(nodes: Sequence[str], next_rv: NextRv) -> list[PodRecord]:
    apps = ("cert-manager", "cert-manager-cainjector", "cert-manager-webhook")
    return list(workload_pods(CERT_MANAGER_NAMESPACE, apps, range(len(apps)), nodes, next_rv, phase="Running"))


@dataclass(slots=True)
class NamespaceExtras:
    """Everything but pods that a namespace holds (or, for the system ones, the shoot)."""

    volumes: list[VolumeRecord]
    claims: list[ClaimRecord]
    services: list[ServiceRecord]
    ingresses: list[IngressRecord]
    certificates: list[CertificateRecord]


def cluster_ip(*parts: object) -> str:
    value = derive.stable_int("ip", *parts)
    return f"100.64.{value % 250 + 1}.{value // 250 % 250 + 1}"


def tenant_extras(shoot: ShootState, namespace: str, app: str, next_rv: NextRv) -> NamespaceExtras:
    """Volumes, services, ingresses and certificates of one tenant namespace."""
    extras = NamespaceExtras([], [], [], [], [])
    for i in range(derive.stable_int("claims", namespace) % 3):
        claim = f"data-{app}-{i}"
        volume = f"pvc-{derive.stable_uuid(shoot.uid, namespace, claim)}"
        size = 10 * (1 + derive.stable_int("size", namespace, claim) % 5)
        handle = f"vol-{derive.stable_int('handle', shoot.uid, namespace, claim):016x}"
        extras.claims.append(ClaimRecord(claim, namespace, volume, size, "default", next_rv()))
        extras.volumes.append(VolumeRecord(volume, size, handle, (namespace, claim), "Bound", "default", next_rv()))
    extras.services.append(
        ServiceRecord(app, namespace, app, "ClusterIP", cluster_ip(namespace, app), None, None, next_rv())
    )
    roll = derive.stable_int("lb", namespace)
    if roll % 4 == 0:
        hostname = f"{derive.suffix(shoot.uid, namespace, length=12)}.lb.{shoot.region}.example.net"
        ip = f"203.0.113.{roll // 4 % 250 + 1}"
        pending = roll % 13 == 0  # the cloud has not provisioned it yet: no id to record
        extras.services.append(
            ServiceRecord(
                f"{app}-public",
                namespace,
                app,
                "LoadBalancer",
                cluster_ip(namespace, app, "public"),
                None if pending or roll % 8 == 4 else hostname,
                None if pending or roll % 8 == 0 else ip,
                next_rv(),
            )
        )
    if derive.stable_int("ingress", namespace) % 3 == 0:
        host = f"{app}.{namespace}.{shoot.name}.{shoot.project}.example.org"
        secret = f"{app}-tls" if shoot.has_certificates_crd else None
        address = f"198.51.100.{derive.stable_int('ingress-ip', shoot.uid) % 250 + 1}"
        extras.ingresses.append(IngressRecord(app, namespace, host, app, address, secret, next_rv()))
        if secret is not None:
            ready = derive.stable_int("cert-ready", namespace) % 7 != 0
            extras.certificates.append(CertificateRecord(secret, namespace, secret, host, ready, next_rv()))
    return extras


def system_extras(shoot: ShootState, next_rv: NextRv) -> NamespaceExtras:
    """What belongs to no tenant: the API service, DNS, a monitoring volume, maybe a spare volume and an LB."""
    extras = NamespaceExtras([], [], [], [], [])
    extras.services.append(ServiceRecord("kubernetes", "default", "", "ClusterIP", "100.64.0.1", None, None, next_rv()))
    extras.services.append(
        ServiceRecord("kube-dns", "kube-system", "coredns", "ClusterIP", "100.64.0.10", None, None, next_rv())
    )
    claim = "prometheus-db-prometheus-0"
    volume = f"pvc-{derive.stable_uuid(shoot.uid, 'kube-system', claim)}"
    handle = f"vol-{derive.stable_int('handle', shoot.uid, 'kube-system', claim):016x}"
    extras.claims.append(ClaimRecord(claim, "kube-system", volume, 20, "default", next_rv()))
    extras.volumes.append(VolumeRecord(volume, 20, handle, ("kube-system", claim), "Bound", "default", next_rv()))
    roll = derive.stable_int("spare", shoot.uid)
    if roll % 2 == 0:  # pre-provisioned and never claimed
        spare = f"spare-{derive.suffix(shoot.uid, 'spare')}"
        spare_handle = f"vol-{roll:016x}"
        extras.volumes.append(VolumeRecord(spare, 50, spare_handle, None, "Available", "default", next_rv()))
    if roll % 3 == 0:  # a local volume: no CSI handle
        local = f"local-{derive.suffix(shoot.uid, 'local')}"
        extras.volumes.append(
            VolumeRecord(local, 100, None, ("kube-system", "scratch"), "Released", "local", next_rv())
        )
    if roll % 5 == 0:
        extras.services.append(
            ServiceRecord(
                "addons-nginx-ingress-controller",
                "kube-system",
                "nginx-ingress",
                "LoadBalancer",
                cluster_ip(shoot.uid, "ingress-lb"),
                f"{derive.suffix(shoot.uid, 'ingress', length=12)}.lb.{shoot.region}.example.net",
                None,
                next_rv(),
            )
        )
    return extras
