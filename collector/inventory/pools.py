"""Nodes onto node pools: Gardener labels each node `worker.gardener.cloud/pool=<worker name>`.

The worker name is what Fundament's provisioning side generates from the node pool's name
(`common.naming.worker_name`: four sanitized characters and four of a hash), so the collector maps
a live pool to the nodes whose label carries that name. The contract gives every pool name a
worker name, even one with no usable character. What it cannot rule out is two live pools of one
cluster whose names come out the same (a hash collision): Gardener would then run both as one
worker, and nodes cannot be told apart. Such pools get no new counts, with a reason, while every
other pool of the cluster is stored as usual.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from uuid import UUID

from common.naming import worker_name


class PoolRef(Protocol):
    """A live node pool: its id and its name in the database."""

    @property
    def id(self) -> UUID: ...

    @property
    def name(self) -> str: ...


@dataclass(frozen=True, slots=True)
class PoolCounts:
    """Nodes and ready nodes per live pool that could be mapped; the pools that could not, with why."""

    counts: dict[UUID, tuple[int, int]] = field(default_factory=dict)
    unmapped: dict[UUID, str] = field(default_factory=dict)


def map_pools(pools: Sequence[PoolRef], nodes_by_worker: Mapping[str, tuple[int, int]]) -> PoolCounts:
    """Each pool's (nodes, ready) by its worker name; pools sharing a worker name are left out with a reason."""
    by_worker: dict[str, list[PoolRef]] = {}
    for pool in pools:
        by_worker.setdefault(worker_name(pool.name), []).append(pool)
    result = PoolCounts()
    for worker, claimants in by_worker.items():
        if len(claimants) == 1:
            result.counts[claimants[0].id] = nodes_by_worker.get(worker, (0, 0))
            continue
        names = ", ".join(sorted(repr(p.name) for p in claimants))
        for pool in claimants:
            result.unmapped[pool.id] = (
                f"node pools {names} share the worker name {worker!r}: their nodes cannot be told apart"
            )
    return result
