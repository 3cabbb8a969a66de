"""What one simulated shoot's API server holds, and the changes the control API can make to it.

`ShootContents` owns one ordered store per served resource and the shoot's resourceVersion
counter (each shoot is its own etcd, so versions are per shoot). `build_contents` fills it from the
fleet through the factories in `sim/world/generate.py`; the world builds a shoot's contents the first
time someone looks, so a fleet of thousands of shoots starts in well under a second.

All methods run on the server's event loop (the control API marshals calls there), so no lock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from sim.world import generate
from sim.world.generate import ContentProfile, FleetIndex, TenantNamespace
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
from sim.world.store import R, Store


class ContentsError(LookupError):
    """A change names something the shoot does not have (a pool, a namespace)."""


class ShootContents:
    """The objects of one shoot's API server."""

    def __init__(self, profile: ContentProfile) -> None:
        self.profile = profile
        self._rv = 0
        self.compacted_rv = 0
        self.nodes: Store[NodeRecord] = Store()
        self.namespaces: Store[NamespaceRecord] = Store()
        self.pods: Store[PodRecord] = Store()
        self.volumes: Store[VolumeRecord] = Store()
        self.claims: Store[ClaimRecord] = Store()
        self.services: Store[ServiceRecord] = Store()
        self.ingresses: Store[IngressRecord] = Store()
        self.certificates: Store[CertificateRecord] = Store()
        self.next_pod_index: dict[str, int] = {}  # per namespace: the index the next added pod gets

    @property
    def resource_version(self) -> int:
        return self._rv

    def next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def store(self, resource: str) -> Store[Any]:
        """The store behind a resource's plural name (`pods`, `persistentvolumes`, ...)."""
        stores: dict[str, Store[Any]] = {
            "nodes": self.nodes,
            "namespaces": self.namespaces,
            "pods": self.pods,
            "persistentvolumes": self.volumes,
            "persistentvolumeclaims": self.claims,
            "services": self.services,
            "ingresses": self.ingresses,
            "certificates": self.certificates,
        }
        return stores[resource]

    def compact(self) -> None:
        """Forget history: every continue token issued so far now answers 410 Expired."""
        self.compacted_rv = self.next_rv()

    # --- changes -----------------------------------------------------------------------------

    def ready_node_names(self) -> list[str]:
        return [node.name for node in self.nodes.iter_from() if node.ready]

    def scale_pool(self, shoot: ShootState, worker: str, count: int) -> None:
        """Run `count` nodes in a pool (a new pool if the name is unknown), with their DaemonSet pods."""
        if count < 0:
            raise ValueError(f"a pool cannot run {count} nodes")
        spec = next((w for w in shoot.workers if w.name == worker), None)
        existing = [n for n in self.nodes.iter_from() if n.worker == worker]
        if spec is None:
            machine = existing[0].machine_type if existing else generate.DEFAULT_WORKER.machine_type
            spec = WorkerSpec(worker, machine, count, max(count, 1), (f"{shoot.region}-a",))
        wanted = generate.pool_nodes(shoot, spec, count, self.next_rv)
        wanted_names = {n.name for n in wanted}
        for node in existing:
            if node.name not in wanted_names:
                self.nodes.delete("", node.name)
                for pod in generate.daemon_pods(node, self.profile, self.next_rv):
                    self.pods.delete(pod.namespace, pod.name)
        have = {n.name for n in existing}
        for node in wanted:
            if node.name not in have:
                self.nodes.put(node)
                for pod in generate.daemon_pods(node, self.profile, self.next_rv):
                    self.pods.put(pod)

    def add_pods(self, namespace: str, count: int, phase: str | None = "Running") -> list[str]:
        """Start `count` more pods in a namespace; returns their names."""
        self._require_namespace(namespace)
        if count < 0:
            raise ValueError(f"cannot add {count} pods")
        first = self.next_pod_index.get(namespace, 0)
        apps = generate.apps_of(namespace, 8)
        nodes = self.ready_node_names()
        pods: list[PodRecord] = []
        index = first
        while len(pods) < count:
            batch = range(index, index + count - len(pods))
            for pod in generate.workload_pods(namespace, apps, batch, nodes, self.next_rv, phase=phase):
                if self.pods.get(namespace, pod.name) is None:
                    pods.append(pod)
            index = batch.stop
        self.next_pod_index[namespace] = index
        for pod in pods:
            self.pods.put(pod)
        return [pod.name for pod in pods]

    def remove_pods(self, namespace: str, count: int) -> list[str]:
        """Delete the `count` newest pods of a namespace (as a scale-down does); returns their names."""
        self._require_namespace(namespace)
        newest_first = sorted(self.pods.in_namespace(namespace), key=lambda pod: pod.rv, reverse=True)
        doomed = newest_first[: max(count, 0)]
        for pod in doomed:
            self.pods.delete(namespace, pod.name)
        return [pod.name for pod in doomed]

    def set_pod_phase(self, namespace: str, name: str, phase: str) -> None:
        pod = self.pods.get(namespace, name)
        if pod is None:
            raise ContentsError(f"no pod {namespace}/{name}")
        self.pods.put(replace(pod, phase=phase, rv=self.next_rv()))

    def add_namespace(self, name: str, namespace_id: str | None, pods: int) -> None:
        """Create a namespace (a tenant one when it carries a namespace id) with `pods` running pods."""
        if self.namespaces.get("", name) is not None:
            raise ValueError(f"namespace {name!r} already exists")
        self.namespaces.put(NamespaceRecord(name, namespace_id, None, self.next_rv()))
        self.add_pods(name, pods)

    def remove_namespace(self, name: str) -> None:
        """Delete a namespace and everything in it; volumes claimed from it go too (reclaim Delete)."""
        self._require_namespace(name)
        self.namespaces.delete("", name)
        for store in (self.pods, self.claims, self.services, self.ingresses, self.certificates):
            for record in store.in_namespace(name):
                store.delete(name, record.name)
        for volume in list(self.volumes.iter_from()):
            if volume.claim is not None and volume.claim[0] == name:
                self.volumes.delete("", volume.name)
        self.next_rv()

    def _require_namespace(self, name: str) -> None:
        if self.namespaces.get("", name) is None:
            raise ContentsError(f"no namespace {name!r}")


def build_contents(shoot: ShootState, index: FleetIndex, profile: ContentProfile) -> ShootContents:
    """A shoot's objects as the fleet describes them (see `sim/world/generate.py` for the rules)."""
    contents = ShootContents(profile)
    _add_nodes(contents, shoot)
    nodes = contents.ready_node_names()
    rv = contents.next_rv
    for ns in generate.system_namespaces(shoot, rv):
        contents.namespaces.put(ns)
    system_pods = generate.system_deployment_pods(profile, nodes, rv)
    if shoot.has_certificates_crd:
        system_pods += generate.cert_manager_pods(nodes, rv)
    _put_all(contents.pods, system_pods)
    extras = [generate.system_extras(shoot, rv)] if profile.extras else []
    cluster = index.cluster_of(shoot.cluster_label)
    tenants: tuple[TenantNamespace, ...] = index.tenant_namespaces(cluster.id) if cluster else ()
    for tenant in tenants:
        contents.namespaces.put(
            NamespaceRecord(tenant.kube_name, str(tenant.namespace_id), str(tenant.project_id), rv())
        )
        count = profile.tenant_pods(tenant.name)
        contents.next_pod_index[tenant.kube_name] = count
        apps = generate.apps_of(tenant.kube_name, count)
        _put_all(contents.pods, generate.workload_pods(tenant.kube_name, apps, range(count), nodes, rv))
        if profile.extras:
            extras.append(generate.tenant_extras(shoot, tenant.kube_name, apps[0], rv))
    for extra in extras:
        _put_all(contents.volumes, extra.volumes)
        _put_all(contents.claims, extra.claims)
        _put_all(contents.services, extra.services)
        _put_all(contents.ingresses, extra.ingresses)
        _put_all(contents.certificates, extra.certificates)
    return contents


def _add_nodes(contents: ShootContents, shoot: ShootState) -> None:
    """One node per pool minimum (plus a pool the database does not know, in some shoots) and their DaemonSet pods."""
    workers = list(shoot.workers)
    if generate.has_unknown_pool(shoot):
        workers.append(generate.unknown_pool_worker(shoot))
    for worker in workers:
        for node in generate.pool_nodes(shoot, worker, worker.minimum, contents.next_rv):
            contents.nodes.put(node)
            _put_all(contents.pods, generate.daemon_pods(node, contents.profile, contents.next_rv))


def _put_all(store: Store[R], records: Iterable[R]) -> None:
    for record in records:
        store.put(record)
