"""What a correct collector should find in a shoot: counts computed from the simulator's own records.

Tests of the collector compare its snapshots with `expected_shoot(...)` instead of hard-coded
numbers, so they keep working whatever the fleet generator or a test changes. Pods in phase
Succeeded or Failed are not counted (finished pods run no workload; the collector's phase selector
skips them too). Allocatable sums are given over all nodes and over Ready nodes; the ledger lists
every candidate resource with whether it sits in a tenant namespace (one carrying
`fundament.io/namespace-id`), so a test applies the source's scope.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.api.objects.core import provider_id
from sim.world import derive
from sim.world.contents import ShootContents
from sim.world.shoots import ShootState

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


@dataclass(frozen=True, slots=True)
class PoolCounts:
    nodes: int
    ready_nodes: int


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    resource_type: str  # kubernetes.node | kubernetes.persistentvolume | kubernetes.loadbalancer | ...
    namespace: str  # "" when cluster-scoped
    name: str
    resource_id: str
    tenant: bool  # the object (or, for a volume, its claim) is in a tenant namespace


@dataclass(frozen=True, slots=True)
class Allocatable:
    pods: int
    cpu_millicores: int
    memory_bytes: int


@dataclass(frozen=True, slots=True)
class ExpectedShoot:
    key: str
    uid: str
    cluster_label: str
    kubernetes_version: str
    nodes: int
    ready_nodes: int
    allocatable: Allocatable  # over every node
    ready_allocatable: Allocatable  # over Ready nodes only
    pods: int  # not Succeeded or Failed, every namespace
    pools: dict[str, PoolCounts]  # by `worker.gardener.cloud/pool`
    namespace_pods: dict[str, int]  # tenant namespace id -> pods not Succeeded or Failed
    ledger: tuple[LedgerEntry, ...]

    def ledger_ids(self, resource_type: str, *, tenant_only: bool = False) -> set[str]:
        return {
            e.resource_id for e in self.ledger if e.resource_type == resource_type and (e.tenant or not tenant_only)
        }


def expected_shoot(shoot: ShootState, contents: ShootContents) -> ExpectedShoot:
    pools: dict[str, list[int]] = {}
    total = [0, 0, 0]
    ready = [0, 0, 0]
    ledger: list[LedgerEntry] = []
    for node in contents.nodes.iter_from():
        millicores, memory = derive.allocatable(node.machine_type, node.cores, node.memory_gib)
        counts = pools.setdefault(node.worker, [0, 0])
        counts[0] += 1
        counts[1] += node.ready
        for i, value in enumerate((node.max_pods, millicores, memory)):
            total[i] += value
            ready[i] += value if node.ready else 0
        ledger.append(LedgerEntry("kubernetes.node", "", node.name, provider_id(shoot, node), False))
    tenants = {ns.name: ns.namespace_id for ns in contents.namespaces.iter_from() if ns.namespace_id is not None}
    namespace_pods = dict.fromkeys(tenants.values(), 0)
    pods = 0
    for pod in contents.pods.iter_from():
        if pod.phase not in TERMINAL_PHASES:
            pods += 1
            if pod.namespace in tenants:
                namespace_pods[tenants[pod.namespace]] += 1
    ledger += _ledger_candidates(shoot, contents, set(tenants))
    return ExpectedShoot(
        key=shoot.key,
        uid=shoot.uid,
        cluster_label=shoot.cluster_label,
        kubernetes_version=shoot.kubernetes_version,
        nodes=sum(n for n, _ in pools.values()),
        ready_nodes=sum(r for _, r in pools.values()),
        allocatable=Allocatable(*total),
        ready_allocatable=Allocatable(*ready),
        pods=pods,
        pools={worker: PoolCounts(n, r) for worker, (n, r) in pools.items()},
        namespace_pods=namespace_pods,
        ledger=tuple(ledger),
    )


def _ledger_candidates(shoot: ShootState, contents: ShootContents, tenants: set[str]) -> list[LedgerEntry]:
    """Volumes with a CSI handle and a claim, load balancers with an address, ingresses (by their load
    balancer address, as `collector/inventory/sources.py` reads them), certificates (by secretName)."""
    ledger = [
        LedgerEntry("kubernetes.persistentvolume", "", v.name, v.csi_handle, v.claim[0] in tenants)
        for v in contents.volumes.iter_from()
        if v.csi_handle is not None and v.claim is not None
    ]
    ledger += [
        LedgerEntry(
            "kubernetes.loadbalancer", s.namespace, s.name, s.lb_hostname or s.lb_ip or "", s.namespace in tenants
        )
        for s in contents.services.iter_from()
        if s.type == "LoadBalancer" and (s.lb_hostname or s.lb_ip)
    ]
    ledger += [
        LedgerEntry("kubernetes.ingress", i.namespace, i.name, i.address or "", i.namespace in tenants)
        for i in contents.ingresses.iter_from()
    ]
    if shoot.has_certificates_crd:
        ledger += [
            LedgerEntry("kubernetes.certificate", c.namespace, c.name, c.secret_name, c.namespace in tenants)
            for c in contents.certificates.iter_from()
        ]
    return ledger
