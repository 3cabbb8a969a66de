"""The cluster reader of INVENTORY_SOURCE=prometheus: each cluster's numbers from its shoot's Prometheus.

    InventoryLoop ──> MonitoringReader ──> shoot map ──> MonitoringResolver (the monitoring secret, cached)
                                                     └─> PrometheusClient ──> prometheus.queries

It fills the same snapshots as the API-server source (nodes and Ready nodes per pool, allocatable
CPU, memory and pods, unfinished pods per namespace) from kube-state-metrics series, with the
shoot's read-only monitoring credential: no adminkubeconfig or viewerkubeconfig is minted. What it
cannot see, the ledger's objects (provider ids, volume handles, load balancer addresses, ingresses,
certificates), it records as not listed (`not_visible`), so the ledger's rows stay as they were.

The five queries of one collection are evaluated at one time, the reader's clock when the
collection starts (whole milliseconds), so they see one state of the cluster (prometheus/queries.py).
A failure fails the cluster alone with `last_error` naming the shoot's Prometheus; its snapshot
keeps its previous numbers. A 401 means the monitoring credentials were rotated: the secret is read
again and the queries retried once.
"""

from __future__ import annotations

import logging
import math
import ssl
from collections.abc import Sequence

from collector.inventory.reading import ClusterRow, MonitoringFailed, Reading
from collector.inventory.shoot_map import ShootMap
from collector.inventory.sources import NOT_VISIBLE, LedgerSource, SourceResult, Unlisted
from collector.kube.errors import KubeError, Unauthorized
from collector.kube.garden import Gardener
from collector.kube.limits import DEFAULT_LIMITS, ResponseLimits
from collector.prometheus.http import PrometheusClient
from collector.prometheus.queries import QUERIES, cluster_metrics, vector
from collector.prometheus.resolve import MonitoringResolver
from common.clock import Clock, utc_now

logger = logging.getLogger(__name__)

SOURCE = "prometheus"
WHAT = "the shoot's Prometheus"


class MonitoringReader:
    """Reads each cluster from its shoot's Prometheus (INVENTORY_SOURCE=prometheus)."""

    def __init__(
        self,
        gardener: Gardener,
        resolver: MonitoringResolver,
        *,
        sources: Sequence[LedgerSource],
        timeout_seconds: float,
        context: ssl.SSLContext,
        limits: ResponseLimits = DEFAULT_LIMITS,
        page_size: int = 500,
        clock: Clock = utc_now,
    ) -> None:
        """`clock` gives each collection's evaluation time (the simulator's clock in tests)."""
        self._shoots = ShootMap(gardener, page_size=page_size)
        self._resolver = resolver
        self._sources = tuple(sources)
        self._timeout_seconds = timeout_seconds
        self._context = context
        self._limits = limits
        self._clock = clock

    async def prepare(self, clusters: Sequence[ClusterRow], *, full_round: bool) -> None:
        await self._shoots.refresh(clusters, full_round=full_round)
        if full_round:
            self._resolver.forget_except({cluster.id for cluster in clusters})

    async def read(self, cluster: ClusterRow) -> Reading:
        ref = self._shoots.ref(cluster)
        for attempt in (1, 2):
            try:
                target = await self._resolver.get(cluster.id, ref.namespace, ref.name)
            except KubeError as e:
                raise MonitoringFailed(f"resolving {WHAT} of {ref}: {e}", reason=e.reason) from e
            client = PrometheusClient(target, self._timeout_seconds, self._context, self._limits)
            try:
                return await self._read(client)
            except Unauthorized as e:
                if attempt == 2:
                    raise MonitoringFailed(f"reading {WHAT}: {e}", reason=e.reason) from e
                # Rotated credentials: read the secret again and retry once.
                self._resolver.drop(cluster.id)
                logger.info(
                    "Prometheus refused the credentials; resolving again", extra={"cluster_id": str(cluster.id)}
                )
            except KubeError as e:
                raise MonitoringFailed(f"reading {WHAT}: {e}", reason=e.reason) from e
            finally:
                await client.close()
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def _read(self, client: PrometheusClient) -> Reading:
        # One after another over the one connection; each answer is checked (and dropped) before the next
        # is asked for, so a hostile one fails the cluster at once.
        what = f"Prometheus {client.target.url}"
        at = math.floor(self._clock().timestamp() * 1000) / 1000  # Prometheus evaluates at whole milliseconds
        samples = {
            name: vector(await client.query(expression, name=name, at=at), f"{what} query {name}", at=at)
            for name, expression in QUERIES.items()
        }
        metrics = cluster_metrics(samples, what)
        unseen = Unlisted(NOT_VISIBLE, "the Prometheus source cannot see the ledger's objects; left as they were")
        ledger: dict[str, SourceResult] = {source.resource_type: unseen for source in self._sources}
        return Reading(
            nodes=metrics.nodes,
            ready_nodes=metrics.ready_nodes,
            pods=metrics.pods,
            allocatable_pods=metrics.allocatable_pods,
            cpu_allocatable_millicores=metrics.cpu_allocatable_millicores,
            memory_allocatable_bytes=metrics.memory_allocatable_bytes,
            pool_nodes=metrics.pool_nodes,
            namespace_pods=metrics.namespace_pods,
            ledger=ledger,
            requests=client.requests,
            source=SOURCE,
            pools_known=metrics.pools_known,
            pods_by_namespace_name=metrics.pods_by_name,
            bytes_read=client.bytes_read,
        )
