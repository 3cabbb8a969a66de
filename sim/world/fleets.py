"""Which world to simulate: the fleets of the database seed, or one shoot at Kubernetes' limits.

`test`, `demo` and `scale` are `fleet_description.generate` sizes, so the simulator and a database
seeded with the same size and seed agree on every cluster, pool and namespace. The huge fleet is the
simulator's own: one organization, one cluster, one shoot with 5,000 nodes and 150,000 pods
(the largest cluster Kubernetes documents as supported), for the
collector's memory benchmark.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from uuid import UUID

from fleet_description.generate import SIZES, generate
from fleet_description.model import (
    ClusterSpec,
    Fleet,
    NamespaceSpec,
    NodePoolSpec,
    OrganizationSpec,
    ProjectSpec,
    ShootSpec,
    SyncSpec,
)
from sim.world import derive
from sim.world.generate import DAEMONSETS, SYSTEM_DEPLOYMENTS, ContentProfile

FLEET_NAMES: tuple[str, ...] = tuple(SIZES)
HUGE_NODES = 5_000
HUGE_PODS = 150_000
HUGE_NAMESPACES = 1_000
_HUGE_POOLS = 5
_CERT_MANAGER_PODS = 3


def named_fleet(name: str, seed: int = 0) -> Fleet:
    """The seed's fleet of that size (raises ValueError for an unknown name)."""
    if name not in SIZES:
        raise ValueError(f"unknown fleet {name!r}: expected one of {', '.join(FLEET_NAMES)}")
    return generate(name, seed)


def fleet_of_organizations(organizations: int, seed: int = 0) -> Fleet:
    """A fleet shaped like `scale` (five clusters per organization), with `organizations` organizations."""
    shape = SIZES["scale"]
    return generate(replace(shape, name=f"scale-{organizations}", organizations=organizations), seed)


def huge_fleet(nodes: int = HUGE_NODES, pods: int = HUGE_PODS) -> tuple[Fleet, ContentProfile]:
    """One running shoot with `nodes` nodes and `pods` pods in all, and the profile that fills it."""
    system_pods = nodes * len(DAEMONSETS) + len(SYSTEM_DEPLOYMENTS) + _CERT_MANAGER_PODS
    tenant_pods = pods - system_pods
    if nodes < _HUGE_POOLS or tenant_pods < HUGE_NAMESPACES:
        raise ValueError(f"{nodes} nodes and {pods} pods are too few for the huge shoot")
    base, extra = divmod(tenant_pods, HUGE_NAMESPACES)
    created = datetime(2025, 6, 1, tzinfo=UTC)
    org = OrganizationSpec(derive.stable_uuid("huge", "org"), "huge", "Huge", True, created)
    cluster_id = derive.stable_uuid("huge", "cluster")
    sync = SyncSpec("completed", "ready", "reconcile", created + timedelta(minutes=12), created, created)
    cluster = ClusterSpec(cluster_id, org.id, "huge", "eu-west-1", "1.33.1", created, sync=sync)
    per_pool, pool_extra = divmod(nodes, _HUGE_POOLS)
    pools = tuple(
        NodePoolSpec(
            derive.stable_uuid("huge", "pool", i),
            cluster_id,
            f"pool-{i}",
            "m5.4xlarge",
            per_pool + (1 if i < pool_extra else 0),
            per_pool + 10,
            created,
        )
        for i in range(_HUGE_POOLS)
    )
    project = ProjectSpec(derive.stable_uuid("huge", "project"), cluster_id, "bulk", "Bulk", created)
    namespaces = tuple(
        NamespaceSpec(derive.stable_uuid("huge", "ns", i), project.id, f"ns-{i:04d}", created)
        for i in range(HUGE_NAMESPACES)
    )
    shoot = ShootSpec(
        uid=derive.stable_uuid("huge", "shoot"),
        name="huge",
        project="huge",
        cluster_label=str(cluster_id),
        organization_label=str(org.id),
        kubernetes_version="1.33.1",
        region="eu-west-1",
        created=created + timedelta(minutes=2),
    )

    def pods_in(namespace_name: str) -> int:
        index = int(namespace_name.removeprefix("ns-"))
        return base + (1 if index < extra else 0)

    fleet = Fleet(
        seed=0,
        organizations=(org,),
        clusters=(cluster,),
        node_pools=pools,
        projects=(project,),
        namespaces=namespaces,
        shoots=(shoot,),
        notes={"huge.shoot": "huge--huge", "huge.cluster": str(cluster_id)},
    )
    return fleet, ContentProfile(tenant_pods=pods_in, extras=True)


def huge_cluster_id() -> UUID:
    return derive.stable_uuid("huge", "cluster")
