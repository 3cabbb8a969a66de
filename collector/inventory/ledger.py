"""The infrastructure ledger: what exists in each cluster, whoever created it, and what one pass changes.

    sources.py: Discovered / Unlisted ──> plan() against the active rows ──> store.store_reading writes it

The platform does not create most of what a cluster costs: the autoscaler adds nodes, a tenant's
Service asks the cloud for a load balancer, a claim provisions a disk. So the ledger is written by
discovery: per ready cluster and source, what exists is compared with the ledger's active rows.

- a resource the ledger does not know is recorded as created;
- an active resource that no longer exists is recorded as destroyed (the row is kept);
- a source that could not be listed (error, timeout, 403, 404 kind not installed) is `Unlisted` and
  its type is left exactly as it is: "could not list" is never read as "none exist";
- the same resource (type, namespace, name) reporting another cloud id updates its active row;
- a resource created again after it was destroyed gets a new row (the database's partial unique
  index allows one active row per resource, so racing collections cannot record it twice).

Times are when the inventory noticed, not when the cloud created or deleted anything
(docs/architecture.md, 'The ledger records what the inventory noticed').
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from uuid import UUID

from collector.inventory.sources import Discovered, SourceResult, Unlisted


@dataclass(frozen=True, slots=True)
class ActiveRow:
    """One active ledger row (destroyed IS NULL) of a cluster."""

    id: UUID
    resource_type: str
    namespace: str
    name: str
    resource_id: str | None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.resource_type, self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class LedgerPlan:
    """What one pass should write, before the database had its say (racing passes may do part of it)."""

    create: tuple[Discovered, ...] = ()
    destroy: tuple[UUID, ...] = ()
    change_id: tuple[tuple[UUID, str | None], ...] = ()
    touch: tuple[UUID, ...] = ()
    found: Mapping[str, int] = field(default_factory=dict)
    unlisted: Mapping[str, Unlisted] = field(default_factory=dict)


def listed_types(results: Mapping[str, SourceResult]) -> tuple[str, ...]:
    """The resource types whose source could be listed (only their active rows are compared)."""
    return tuple(t for t, result in results.items() if not isinstance(result, Unlisted))


def plan(results: Mapping[str, SourceResult], active: Iterable[ActiveRow]) -> LedgerPlan:
    """Compare what each listed source found with the ledger's active rows of the listed types.

    Active rows of an unlisted type are never touched; rows of types not in `results` are ignored.
    """
    found: dict[str, dict[tuple[str, str, str], Discovered]] = {}
    unlisted: dict[str, Unlisted] = {}
    for resource_type, result in results.items():
        if isinstance(result, Unlisted):
            unlisted[resource_type] = result
        else:
            found[resource_type] = {d.key: d for d in result if d.resource_type == resource_type}
    create: list[Discovered] = []
    destroy: list[UUID] = []
    change: list[tuple[UUID, str | None]] = []
    touch: list[UUID] = []
    known: set[tuple[str, str, str]] = set()
    for row in active:
        listed = found.get(row.resource_type)
        if listed is None:
            continue  # unlisted (or unknown) type: left exactly as it is
        known.add(row.key)
        now = listed.get(row.key)
        if now is None:
            destroy.append(row.id)
        elif now.resource_id != row.resource_id:
            change.append((row.id, now.resource_id))
        else:
            touch.append(row.id)
    for listed in found.values():
        create.extend(d for key, d in listed.items() if key not in known)
    return LedgerPlan(
        create=tuple(create),
        destroy=tuple(destroy),
        change_id=tuple(change),
        touch=tuple(touch),
        found={resource_type: len(listed) for resource_type, listed in found.items()},
        unlisted=unlisted,
    )


@dataclass(frozen=True, slots=True)
class TypeCounts:
    """One pass over one resource type: how many exist, and how many were recorded created and destroyed."""

    found: int = 0
    created: int = 0
    destroyed: int = 0


@dataclass(frozen=True, slots=True)
class LedgerCounts:
    """One pass over one cluster: counts per listed type, and why the others could not be listed."""

    by_type: Mapping[str, TypeCounts] = field(default_factory=dict)
    unlisted: Mapping[str, Unlisted] = field(default_factory=dict)


def add_counts(total: dict[str, TypeCounts], more: Mapping[str, TypeCounts]) -> None:
    """Add one cluster's counts into a running total per type (summaries over a round)."""
    for resource_type, counts in more.items():
        so_far = total.get(resource_type, TypeCounts())
        total[resource_type] = TypeCounts(
            found=so_far.found + counts.found,
            created=so_far.created + counts.created,
            destroyed=so_far.destroyed + counts.destroyed,
        )
