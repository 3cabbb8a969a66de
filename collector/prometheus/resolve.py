"""Which Prometheus to ask for a cluster: its monitoring secret, read from the garden and cached.

Each cluster's target is read once and kept for `ttl_seconds` (PROMETHEUS_RESOLVE_TTL_SECONDS), one read
at a time per cluster (a single flight: callers that arrive while it is read wait for it and share
the answer), so a round costs the garden a secret read per cluster only when the cache ran out. A
401 from the Prometheus means the credentials were rotated: the caller `drop`s the entry and
resolves again, once. A failed read is never cached.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from uuid import UUID

from prometheus_client import Counter

from collector.kube.errors import NotFound
from collector.kube.per_cluster import PerCluster
from collector.prometheus.address import AddressPolicy
from collector.prometheus.target import (
    MonitoringTarget,
    MonitoringUnavailable,
    monitoring_secret_name,
    target_from_secret,
)

# One of the inventory's metrics (docs/collector.md), counted where every real read happens; in no registry
# here: inventory/metrics.py adds it to the inventory worker's.
SECRETS_READ = Counter(
    "fleet_inventory_monitoring_secrets_read",
    "Monitoring secrets read from the garden (INVENTORY_SOURCE=prometheus).",
    registry=None,
)


class SecretReader(Protocol):
    """What the resolver needs from the garden: one secret by namespace and name (raises KubeError)."""

    async def read_secret(self, namespace: str, name: str) -> dict[str, Any]: ...


@dataclass
class MonitoringResolver:
    """Cluster id -> its MonitoringTarget, cached for `ttl_seconds`."""

    garden: SecretReader
    ttl_seconds: float
    policy: AddressPolicy = field(default_factory=AddressPolicy)
    """Where a Prometheus may be (address.py); the default allows no loopback."""
    monotonic: Callable[[], float] = time.monotonic
    reads: int = 0
    """Secrets read since start (tests and the benchmark read it)."""
    _targets: PerCluster[tuple[float, MonitoringTarget]] = field(default_factory=PerCluster)

    async def get(self, cluster_id: UUID, namespace: str, shoot_name: str, *, shoot_uid: str = "") -> MonitoringTarget:
        """The cluster's target; read from the garden when none is cached or it is older than the TTL.

        With `shoot_uid`, the secret must be owned by that Shoot. Raises KubeError (MonitoringUnavailable
        when the shoot has no monitoring, AddressRefused or WrongPrometheus for a secret not to be trusted).
        """
        async with self._targets.lock(cluster_id):
            cached = self._targets.kept(cluster_id)
            if cached is not None and self.monotonic() - cached[0] < self.ttl_seconds:
                return cached[1]
            name = monitoring_secret_name(shoot_name)
            self.reads += 1
            SECRETS_READ.inc()
            try:
                secret = await self.garden.read_secret(namespace, name)
            except NotFound as e:
                # A missing secret means no monitoring, not a failure of the garden.
                raise MonitoringUnavailable(
                    f"secret {namespace}/{name} does not exist; the shoot has no monitoring"
                ) from e
            target = target_from_secret(
                secret, what=f"secret {namespace}/{name}", policy=self.policy, shoot_uid=shoot_uid
            )
            self._targets.keep(cluster_id, (self.monotonic(), target))
            return target

    def drop(self, cluster_id: UUID) -> None:
        """Forget the cluster's target (after a 401): the next `get` reads the secret again."""
        self._targets.drop(cluster_id)

    def forget_except(self, cluster_ids: set[UUID]) -> None:
        """Forget the targets of clusters no longer collected."""
        self._targets.forget_except(cluster_ids)
