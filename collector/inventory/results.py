"""What a round of the inventory loop reports: each cluster's outcome and the round's sums."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from collector.inventory.ledger import LedgerCounts, TypeCounts, add_counts
from collector.inventory.reading import ClusterRow, Reading
from collector.inventory.sources import Unlisted


@dataclass(frozen=True, slots=True)
class ClusterResult:
    """How one cluster's collection went."""

    cluster: ClusterRow
    duration_seconds: float
    reading: Reading | None = None
    ledger: LedgerCounts | None = None
    unread_namespaces: dict[UUID, str] = field(default_factory=dict)
    """Namespace id -> why its count could not be told this time (it kept its last one)."""
    error: str | None = None
    reason: str | None = None
    """A short label when it failed: a KubeError's reason, timeout, no_shoot, credential, database, internal."""
    failure_recorded: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """One round (or one on-demand collection) over a set of clusters."""

    started: datetime
    duration_seconds: float
    results: tuple[ClusterResult, ...]
    ledger: dict[str, TypeCounts] = field(default_factory=dict)
    """Per resource type, summed over the clusters collected."""
    unlisted: dict[str, int] = field(default_factory=dict)
    """Per resource type, in how many collected clusters its source could not be listed."""

    @property
    def collected(self) -> int:
        return sum(1 for r in self.results if r.ok)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if not r.ok)


def summarize(started: datetime, duration: float, results: Sequence[ClusterResult]) -> RoundSummary:
    ledger: dict[str, TypeCounts] = {}
    unlisted: dict[str, int] = {}
    for result in results:
        if result.ledger is None:
            continue
        add_counts(ledger, result.ledger.by_type)
        for resource_type, why in result.ledger.unlisted.items():
            if isinstance(why, Unlisted):
                unlisted[resource_type] = unlisted.get(resource_type, 0) + 1
    return RoundSummary(started, duration, tuple(results), ledger, unlisted)
