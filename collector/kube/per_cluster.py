"""Values the collector keeps per cluster between rounds, made one at a time per cluster.

The shoot credentials (collector/kube/credential_cache.py) and the Prometheus targets
(collector/prometheus/resolve.py) are both such values: a caller takes the cluster's lock, uses the
value kept when it is still good, else makes a new one and keeps it, so callers that arrive while
it is made wait and share it (a single flight). A 401 drops one cluster's value; clusters no longer
collected are forgotten with their locks.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Generic, TypeVar
from uuid import UUID

V = TypeVar("V")


@dataclass
class PerCluster(Generic[V]):
    """One kept value and one lock per cluster id."""

    _values: dict[UUID, V] = field(default_factory=dict)
    _locks: dict[UUID, asyncio.Lock] = field(default_factory=dict)

    def lock(self, cluster_id: UUID) -> asyncio.Lock:
        """The cluster's lock: hold it while looking at and replacing its value."""
        return self._locks.setdefault(cluster_id, asyncio.Lock())

    def kept(self, cluster_id: UUID) -> V | None:
        return self._values.get(cluster_id)

    def keep(self, cluster_id: UUID, value: V) -> None:
        self._values[cluster_id] = value

    def drop(self, cluster_id: UUID) -> None:
        """Forget the cluster's value: the next caller makes a new one."""
        self._values.pop(cluster_id, None)

    def forget_except(self, cluster_ids: set[UUID]) -> None:
        """Forget the values and locks of clusters not in `cluster_ids`."""
        for cluster_id in set(self._values) - cluster_ids:
            del self._values[cluster_id]
            self._locks.pop(cluster_id, None)
