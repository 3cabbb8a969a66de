"""The reader of INVENTORY_SOURCE=prometheus: each cluster from its shoot's Prometheus, the rest from its API server.

    InventoryLoop ──> MonitoringReader ──> shoot map ──> MonitoringResolver (the monitoring secret, cached)
                                      │              └─> PrometheusClient ──> prometheus.queries (nodes, maybe pods)
                                      └─> GardenReader (viewerkubeconfig; nodes left out) ──> the rest
                                                   both ──> split.merge ──> Reading

A stock Gardener shoot Prometheus holds the nodes' series but no tenant namespaces, pods of tenants,
volumes, services, ingresses or certificates (collector/inventory/split.py says which part comes
from where, PROMETHEUS_PARTS and PROMETHEUS_OTHERS_FROM choose). The Prometheus is read with the
shoot's read-only monitoring credential; the API server, when the split reads it, with Gardener's
read-only `viewerkubeconfig` (the caller builds that GardenReader: never an admin credential). Both
are read at once; either failing fails the cluster (nothing is stored, its snapshot keeps its
previous numbers), with `last_error` naming the side that failed.

The Prometheus's queries of one collection are evaluated at one time, the reader's clock when the
collection starts (whole milliseconds), so they see one state of the cluster (prometheus/queries.py).
A 401 from the Prometheus means the monitoring credentials were rotated: the secret is read again
and the queries retried once.

Before a target's first queries, its Prometheus's external labels are checked against the shoot
(prometheus/identity.py), once per target; the secret's owner and address were checked when it was
resolved (prometheus/target.py, prometheus/address.py). Every host is resolved under the address
policy, so the basic-auth pair goes to no address it refuses.
"""

from __future__ import annotations

import asyncio
import logging
import math
import ssl
from collections.abc import Awaitable, Sequence
from typing import TypeVar
from uuid import UUID

from collector.inventory.garden_reader import GardenReader
from collector.inventory.reading import ClusterRow, MonitoringFailed, Reading
from collector.inventory.shoot import DEFAULT_LEDGER_MAX_PER_TYPE
from collector.inventory.shoot_map import ShootMap
from collector.inventory.sources import LedgerSource
from collector.inventory.split import Split, merge
from collector.kube.errors import KubeError, Unauthorized
from collector.kube.garden import Gardener, ShootRef
from collector.kube.limits import DEFAULT_LIMITS, ResponseLimits
from collector.prometheus.address import PolicyResolver
from collector.prometheus.http import PrometheusClient
from collector.prometheus.identity import check_identity, external_labels
from collector.prometheus.queries import NodeMetrics, PodMetrics, Sample, node_metrics, pod_metrics, vector
from collector.prometheus.resolve import MonitoringResolver
from collector.prometheus.target import MonitoringTarget
from common.clock import Clock, utc_now

logger = logging.getLogger(__name__)

WHAT = "the shoot's Prometheus"
T = TypeVar("T")
U = TypeVar("U")


class MonitoringReader:
    """Reads each cluster from its shoot's Prometheus, the rest from its API server (INVENTORY_SOURCE=prometheus)."""

    def __init__(
        self,
        gardener: Gardener,
        resolver: MonitoringResolver,
        *,
        sources: Sequence[LedgerSource],
        timeout_seconds: float,
        context: ssl.SSLContext,
        split: Split,
        apiserver: GardenReader | None,
        limits: ResponseLimits = DEFAULT_LIMITS,
        page_size: int = 500,
        clock: Clock = utc_now,
        ledger_max_per_type: int = DEFAULT_LEDGER_MAX_PER_TYPE,
    ) -> None:
        """`apiserver` reads what the split leaves to the API server (None when it reads nothing there);
        `clock` gives each collection's evaluation time (the simulator's clock in tests)."""
        if split.reads_apiserver != (apiserver is not None):
            raise ValueError(f"the split ({split}) and the API-server reader given disagree")
        self._shoots = ShootMap(gardener, page_size=page_size)
        self._resolver = resolver
        self._sources = tuple(sources)
        self._split = split
        self._queries = split.queries()
        self._apiserver = apiserver
        self._timeout_seconds = timeout_seconds
        self._context = context
        self._limits = limits
        self._clock = clock
        self._cap = ledger_max_per_type
        self._dns = PolicyResolver(resolver.policy)
        self._verified: dict[UUID, MonitoringTarget] = {}

    @property
    def split(self) -> Split:
        return self._split

    async def prepare(self, clusters: Sequence[ClusterRow], *, full_round: bool) -> None:
        await self._shoots.refresh(clusters, full_round=full_round)
        if full_round:
            ids = {cluster.id for cluster in clusters}
            self._resolver.forget_except(ids)
            self._verified = {k: v for k, v in self._verified.items() if k in ids}
            if self._apiserver is not None:
                self._apiserver.forget_except(ids)

    async def read(self, cluster: ClusterRow) -> Reading:
        ref = self._shoots.ref(cluster)
        if self._apiserver is None:
            (nodes, pods, requests, read), api = await self._prometheus(cluster, ref), None
        else:
            (nodes, pods, requests, read), api = await _both(
                self._prometheus(cluster, ref), self._apiserver.read_shoot(cluster.id, ref)
            )
        return merge(self._split, self._sources, nodes, pods, api, requests=requests, bytes_read=read, cap=self._cap)

    async def _prometheus(self, cluster: ClusterRow, ref: ShootRef) -> tuple[NodeMetrics, PodMetrics | None, int, int]:
        """(the nodes, the pods if the split reads them here, requests, bytes read). Raises MonitoringFailed."""
        for attempt in (1, 2):
            try:
                target = await self._resolver.get(cluster.id, ref.namespace, ref.name, shoot_uid=ref.uid)
            except KubeError as e:
                raise MonitoringFailed(f"resolving {WHAT} of {ref}: {e}", reason=e.reason) from e
            client = PrometheusClient(target, self._timeout_seconds, self._context, self._limits, resolver=self._dns)
            try:
                if self._verified.get(cluster.id) != target:
                    labels = external_labels(await client.configuration(), f"Prometheus {target.url}")
                    check_identity(
                        labels,
                        shoot=str(ref),
                        name=ref.name,
                        technical_id=ref.technical_id,
                        what=f"Prometheus {target.url}",
                    )
                    self._verified[cluster.id] = target
                nodes, pods = await self._query(client)
                return nodes, pods, client.requests, client.bytes_read
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

    async def _query(self, client: PrometheusClient) -> tuple[NodeMetrics, PodMetrics | None]:
        # One after another over the one connection; each answer is checked (and dropped) before the next
        # is asked for, so a hostile one fails the cluster at once.
        what = f"Prometheus {client.target.url}"
        at = math.floor(self._clock().timestamp() * 1000) / 1000  # Prometheus evaluates at whole milliseconds
        samples: dict[str, list[Sample]] = {
            name: vector(await client.query(expression, name=name, at=at), f"{what} query {name}", at=at)
            for name, expression in self._queries.items()
        }
        nodes = node_metrics(samples, what)
        return nodes, pod_metrics(samples, what) if self._split.pods_from_prometheus else None


async def _both(first: Awaitable[T], second: Awaitable[U]) -> tuple[T, U]:
    """Both at once; on the first failure the other is cancelled (and waited for) and the failure raised."""
    tasks = (asyncio.ensure_future(first), asyncio.ensure_future(second))
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return tasks[0].result(), tasks[1].result()
