"""What a cluster reader is given, what it produces and how it may fail: the loop's contract with its readers.

InventoryLoop ──> ClusterReader ──┬─> GardenReader (garden_reader.py): the shoot's API server, through Gardener
                                  ├─> MonitoringReader (monitoring_reader.py): the shoot's Prometheus
                                  └─> MockReader (collector/mock.py): the database, GARDENER_MODE=mock
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol
from uuid import UUID

from collector.inventory.sources import SourceResult


@dataclass(frozen=True, slots=True)
class ClusterRow:
    """A cluster to collect."""

    id: UUID
    name: str
    organization_id: UUID
    organization_name: str

    def __str__(self) -> str:
        return f"{self.organization_name}/{self.name}"


@dataclass(frozen=True, slots=True)
class Reading:
    """Everything one collection learned about one cluster, ready to store."""

    nodes: int
    ready_nodes: int
    pods: int
    allocatable_pods: int
    cpu_allocatable_millicores: int
    memory_allocatable_bytes: int
    pool_nodes: dict[str, tuple[int, int]]
    """Worker name -> (nodes, ready nodes)."""
    namespace_pods: dict[UUID, int]
    """Fundament namespace id (from the label) -> unfinished pods."""
    ledger: dict[str, SourceResult]
    """Resource type -> what its source found, or why it could not be listed."""
    requests: int = 0
    """API requests the reading took (credential minting not included)."""
    source: str = "apiserver"
    """What read the numbers: `apiserver`, `prometheus` or `mock` (stored with the snapshot)."""
    pools_known: bool = True
    """False when the nodes could not be told apart by pool (the pool label is not exported): the
    node pools then keep their previous snapshots instead of being counted as empty."""
    pods_by_namespace_name: dict[str, int] | None = None
    """Kubernetes namespace name -> unfinished pods, for every namespace of the shoot (0 when it runs
    none), when the namespace ids could not be read (the id label is not exported): the store then
    matches each live namespace by its generated name, where that is certain (namespaces.py)."""
    bytes_read: int = 0
    """Body bytes the reading received (for summaries and benchmarks; 0 where not counted)."""


class CollectError(Exception):
    """A collection failed for a reason of the collector's own (not one API call's)."""

    reason = "error"


class NoShoot(CollectError):
    """No shoot carries the cluster's id; `reason` is the garden listing's failure when that is why."""

    reason = "no_shoot"

    def __init__(self, message: str, *, reason: str = "no_shoot") -> None:
        super().__init__(message)
        self.reason = reason


class CredentialFailed(CollectError):
    reason = "credential"


class MonitoringFailed(CollectError):
    """The shoot's Prometheus could not be resolved or read; the reason is the underlying failure's."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class ClusterReader(Protocol):
    """Produces a cluster's Reading."""

    async def prepare(self, clusters: Sequence[ClusterRow], *, full_round: bool) -> None:
        """Get ready to read these clusters (once per round); never raises for one cluster's sake."""
        ...

    async def read(self, cluster: ClusterRow) -> Reading:
        """Read one cluster. Raises KubeError or CollectError."""
        ...
