"""Where a cluster's `Reading` comes from: its shoot through Gardener, or the database in mock mode.

    InventoryLoop ──> ClusterReader ──┬─> GardenReader: shoot map + CredentialCache + shoot.read_shoot
                                      └─> MockReader:   the database (GARDENER_MODE=mock, DESIGN.md §7)

`prepare` runs once per round: the garden reader lists the garden's shoots once (label
`fundament.io/cluster-id`) and maps each cluster id to its shoot, instead of one lookup per cluster.
If that listing fails, the previous round's map is used (shoots rarely move) and clusters without a
known shoot fail with the garden's error.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from typing import Any, Protocol

from psycopg_pool import AsyncConnectionPool

from collector import inventory_store as store
from collector.gardener import CredentialCache, Gardener, ShootRef, shoot_refs
from collector.inventory_store import ClusterRow
from collector.kube import KubeError, Unauthorized, shoot_client
from collector.ledger import Discovered, LedgerSource, SourceResult
from collector.shoot import Reading, read_shoot
from common.labels import CLUSTER_ID_LABEL
from common.naming import worker_name

logger = logging.getLogger(__name__)


class CollectError(Exception):
    """A collection failed for a reason of the collector's own (not one API call's)."""

    reason = "error"


class NoShoot(CollectError):
    reason = "no_shoot"


class CredentialFailed(CollectError):
    reason = "credential"


class ClusterReader(Protocol):
    """Produces a cluster's Reading."""

    async def prepare(self, clusters: Sequence[ClusterRow], *, full_round: bool) -> None:
        """Get ready to read these clusters (once per round); never raises for one cluster's sake."""
        ...

    async def read(self, cluster: ClusterRow) -> Reading:
        """Read one cluster. Raises KubeError or CollectError."""
        ...


class GardenReader:
    """Reads each cluster's shoot with a credential from Gardener (GARDENER_MODE=real)."""

    def __init__(
        self,
        gardener: Gardener,
        credentials: CredentialCache,
        *,
        sources: Sequence[LedgerSource],
        timeout_seconds: float,
        page_size: int = 500,
    ) -> None:
        self._gardener = gardener
        self._credentials = credentials
        self._sources = tuple(sources)
        self._timeout_seconds = timeout_seconds
        # A ledger source gets half the cluster's budget, so a hung CRD cannot cost the snapshot.
        self._ledger_timeout_seconds = timeout_seconds / 2
        self._page_size = page_size
        self._refs: dict[str, ShootRef] = {}
        self._garden_error: str | None = None

    async def prepare(self, clusters: Sequence[ClusterRow], *, full_round: bool) -> None:
        if not clusters:
            return
        # One cluster (an on-demand collect) asks for its own shoot; a round lists the garden once.
        selector = CLUSTER_ID_LABEL if len(clusters) > 1 else f"{CLUSTER_ID_LABEL}={clusters[0].id}"
        try:
            shoots = await self._gardener.list_shoots(label_selector=selector, page_size=self._page_size)
        except KubeError as e:
            self._garden_error = str(e)
            logger.warning("cannot list the garden's shoots; using the last known ones", extra={"error": str(e)})
        else:
            refs = shoot_refs(shoots, CLUSTER_ID_LABEL)
            if full_round:
                self._refs = refs
            else:
                self._refs.update(refs)
            self._garden_error = None
        if full_round:
            self._credentials.forget_except({cluster.id for cluster in clusters})

    async def read(self, cluster: ClusterRow) -> Reading:
        ref = self._refs.get(str(cluster.id))
        if ref is None:
            why = f" (listing the garden failed: {self._garden_error})" if self._garden_error else ""
            raise NoShoot(f"no shoot in the garden carries {CLUSTER_ID_LABEL}={cluster.id}{why}")
        for attempt in (1, 2):
            try:
                credential = await self._credentials.get(cluster.id, ref)
            except KubeError as e:
                raise CredentialFailed(f"cannot get a credential for shoot {ref}: {e}") from e
            client = shoot_client(credential, timeout_seconds=self._timeout_seconds, name=str(ref))
            try:
                return await read_shoot(client, self._sources, ledger_timeout_seconds=self._ledger_timeout_seconds)
            except Unauthorized:
                if attempt == 2:
                    raise
                # Revoked or rotated: drop it and try once more with a fresh one.
                self._credentials.drop(cluster.id)
                logger.info("shoot refused the credential; minting a new one", extra={"cluster_id": str(cluster.id)})
            finally:
                await client.close()
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


# GARDENER_MODE=mock: what every mock node offers (a 4-core, 16 GiB machine with the kubelet default).
MOCK_NODE_PODS = 110
MOCK_NODE_MILLICORES = 4000
MOCK_NODE_BYTES = 16 * 1024**3


def mock_pod_count(namespace_name: str) -> int:
    """GARDENER_MODE=mock: the pods a namespace holds, derived from its name (1 to 20, stable)."""
    digest = hashlib.blake2b(namespace_name.encode(), digest_size=4).digest()
    return 1 + int.from_bytes(digest, "big") % 20


class MockReader:
    """Reads the database instead of a shoot (DESIGN.md §7, GARDENER_MODE=mock).

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
            pools = await store.mock_node_pools(conn, cluster.id)
            namespaces = await store.live_namespaces(conn, cluster.id)
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
