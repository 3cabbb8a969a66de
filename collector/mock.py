"""GARDENER_MODE=mock, all of it: the garden and every shoot as the database describes them.

    worker.py ──┬─> MockGardener: one agreeing shoot per live cluster (reconcile finds no drift), and the
                │                 Gardener project of each organization that has one
                └─> MockReader:   a cluster's Reading from its rows (the inventory reads no shoot)

For local work without Kubernetes at all (docs/architecture.md, 'Mock and real Gardener mode'): every
live node pool runs its autoscaler minimum of ready nodes, every live namespace holds a number of pods
derived from its name, and the ledger sees those nodes and nothing else. Shoots have no API servers
here, so minting a credential is an error. The SQL is in mock.sql beside this module.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row
from psycopg_pool import AsyncConnectionPool

from collector.inventory.reading import ClusterRow, Reading
from collector.inventory.sources import Discovered, LedgerSource, SourceResult
from collector.kube.credential import Credential
from collector.kube.errors import BadResponse
from collector.kube.garden import ShootRef
from common.database import load_queries
from common.labels import CLUSTER_ID_LABEL, ORGANIZATION_ID_LABEL
from common.naming import garden_namespace, project_name, shoot_name, worker_name

_QUERIES = load_queries(Path(__file__).with_name("mock.sql"))

Conn = psycopg.AsyncConnection[Any]

# What every mock node offers: a 4-core, 16 GiB machine with the kubelet's default pod limit.
MOCK_NODE_PODS = 110
MOCK_NODE_MILLICORES = 4000
MOCK_NODE_BYTES = 16 * 1024**3

# Mock shoot uids are derived from the cluster id in this namespace, so they are stable across passes.
_MOCK_NAMESPACE = uuid.UUID("7d5f2c1e-0b8a-4c3e-9a61-2f4e8b6d1c90")


@dataclass(frozen=True, slots=True)
class MockShootRow:
    """What the database knows of a live cluster, enough to describe its shoot."""

    cluster_id: UUID
    organization_id: UUID
    organization_name: str
    name: str
    region: str
    kubernetes_version: str
    created: datetime
    pools: list[list[Any]]
    """Its live node pools: [name, machine type, autoscale min, autoscale max] each."""


@dataclass(frozen=True, slots=True)
class MockPoolRow:
    name: str
    autoscale_min: int


@dataclass(frozen=True, slots=True)
class MockNamespaceRow:
    id: UUID
    name: str


async def mock_shoots(conn: Conn) -> list[MockShootRow]:
    """Every live cluster of a live tenant organization, as the mock garden describes it."""
    async with conn.cursor(row_factory=class_row(MockShootRow)) as cur:
        await cur.execute(_QUERIES["mock_shoots"].sql)
        return await cur.fetchall()


async def mock_node_pools(conn: Conn, cluster_id: UUID) -> list[MockPoolRow]:
    """The cluster's live node pools with their autoscaler minimum."""
    async with conn.cursor(row_factory=class_row(MockPoolRow)) as cur:
        await cur.execute(_QUERIES["mock_node_pools"].sql, {"cluster_id": cluster_id})
        return await cur.fetchall()


async def live_namespaces(conn: Conn, cluster_id: UUID) -> list[MockNamespaceRow]:
    """The cluster's live namespaces of live projects."""
    async with conn.cursor(row_factory=class_row(MockNamespaceRow)) as cur:
        await cur.execute(_QUERIES["live_namespaces"].sql, {"cluster_id": cluster_id})
        return await cur.fetchall()


def mock_shoot(row: MockShootRow) -> dict[str, Any]:
    """The shoot object the mock garden lists for a cluster row."""
    return {
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {
            "name": shoot_name(row.name, row.cluster_id),
            "namespace": garden_namespace(row.organization_name),
            "uid": str(uuid.uuid5(_MOCK_NAMESPACE, str(row.cluster_id))),
            "creationTimestamp": row.created.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "labels": {
                CLUSTER_ID_LABEL: str(row.cluster_id),
                ORGANIZATION_ID_LABEL: str(row.organization_id),
            },
        },
        "spec": {
            "kubernetes": {"version": row.kubernetes_version},
            "region": row.region,
            "provider": {"type": "local", "workers": _mock_workers(row.pools)},
        },
        "status": {"lastOperation": {"type": "Reconcile", "state": "Succeeded"}},
    }


def _mock_workers(pools: list[list[Any]]) -> list[dict[str, Any]]:
    """spec.provider.workers as Fundament's provisioning side writes them: one per live pool (its worker
    name by the naming rule), or one `default` worker of 1 to 3 nodes for a cluster without pools."""
    if not pools:
        return [{"name": "default", "machine": {"type": "local"}, "minimum": 1, "maximum": 3}]
    return [
        {"name": worker_name(name), "machine": {"type": machine}, "minimum": low, "maximum": high}
        for name, machine, low, high in pools
    ]


def mock_project(organization_id: UUID, organization_name: str) -> dict[str, Any]:
    """The Project the mock garden lists for an organization, as Fundament creates it: labelled, default namespace."""
    return {
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Project",
        "metadata": {
            "name": project_name(organization_name),
            "uid": str(uuid.uuid5(_MOCK_NAMESPACE, f"project/{organization_id}")),
            "labels": {ORGANIZATION_ID_LABEL: str(organization_id)},
        },
        "spec": {"namespace": garden_namespace(organization_name)},
    }


class MockGardener:
    """The garden as the database says it should be: every live cluster of a live organization is one shoot."""

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self._pool = pool

    async def close(self) -> None:
        return None

    async def list_shoots(self, *, label_selector: str, page_size: int = 500) -> list[dict[str, Any]]:
        # The mock garden's shoots all carry the cluster-id label: asked for the others, it has none.
        if label_selector == f"!{CLUSTER_ID_LABEL}":
            return []
        if label_selector != CLUSTER_ID_LABEL:
            raise ValueError(
                f"the mock garden answers only {CLUSTER_ID_LABEL} and its negation, not {label_selector!r}"
            )
        async with self._pool.connection() as conn:
            rows = await mock_shoots(conn)
        return [mock_shoot(row) for row in rows]

    async def list_projects(self, *, page_size: int = 500) -> list[dict[str, Any]]:
        # The mock garden's shoots are all labelled, so the projects of the organizations that have one suffice.
        async with self._pool.connection() as conn:
            rows = await mock_shoots(conn)
        owners = {row.organization_id: row.organization_name for row in rows}
        return [mock_project(org_id, name) for org_id, name in sorted(owners.items())]

    async def mint_credential(self, shoot: ShootRef, *, kind: str, lifetime_seconds: int) -> Credential:
        raise BadResponse(f"GARDENER_MODE=mock has no shoot API servers (asked for {kind} access to {shoot})")

    async def read_secret(self, namespace: str, name: str) -> dict[str, Any]:
        raise BadResponse(f"GARDENER_MODE=mock has no secrets (asked for {namespace}/{name})")


def mock_pod_count(namespace_name: str) -> int:
    """The pods a namespace holds, derived from its name (1 to 20, stable)."""
    digest = hashlib.blake2b(namespace_name.encode(), digest_size=4).digest()
    return 1 + int.from_bytes(digest, "big") % 20


class MockReader:
    """Reads a cluster from the database instead of its shoot.

    Every live node pool runs its autoscaler minimum of ready nodes; every live namespace holds
    `mock_pod_count(name)` pods. The ledger sees the nodes (provider id `mock:///cluster/node`) and
    nothing else.
    """

    def __init__(self, pool: AsyncConnectionPool[Any], *, sources: Sequence[LedgerSource]) -> None:
        self._pool = pool
        self._sources = tuple(sources)

    async def prepare(self, clusters: Sequence[ClusterRow], *, full_round: bool) -> None:
        return None

    async def read(self, cluster: ClusterRow) -> Reading:
        async with self._pool.connection() as conn:
            pools = await mock_node_pools(conn, cluster.id)
            namespaces = await live_namespaces(conn, cluster.id)
        pool_nodes: dict[str, tuple[int, int]] = {}
        node_names: list[str] = []
        for pool in pools:
            worker = worker_name(pool.name)
            count = max(0, pool.autoscale_min)
            pool_nodes[worker] = (count, count)
            node_names.extend(f"{worker}-{i}" for i in range(count))
        nodes = len(node_names)
        namespace_pods = {ns.id: mock_pod_count(ns.name) for ns in namespaces}
        ledger: dict[str, SourceResult] = {}
        for source in self._sources:
            if source.resource_type == "kubernetes.node":
                ledger[source.resource_type] = tuple(
                    Discovered(source.resource_type, "", name, f"mock:///{cluster.id}/{name}", source.billable)
                    for name in node_names
                )
            else:
                ledger[source.resource_type] = ()
        return Reading(
            source="mock",
            nodes=nodes,
            ready_nodes=nodes,
            pods=sum(namespace_pods.values()),
            allocatable_pods=nodes * MOCK_NODE_PODS,
            cpu_allocatable_millicores=nodes * MOCK_NODE_MILLICORES,
            memory_allocatable_bytes=nodes * MOCK_NODE_BYTES,
            pool_nodes=pool_nodes,
            namespace_pods=namespace_pods,
            ledger=ledger,
        )
