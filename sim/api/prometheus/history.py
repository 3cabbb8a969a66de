"""What each simulated shoot's Prometheus has scraped, so that an instant query is answered as of its `time=`.

A real Prometheus keeps every scrape, and an instant query at `time=t` sees, per series, the latest
sample at or before t: queries pinned to one time see one state of the cluster, however it changes
between them. fleet-sim plays that with few copies. A shoot's state (its nodes, pods and
namespaces, which are immutable records, kept as tuples of references, the monitoring stack and
whether its kube-state-metrics exports labels) is captured when a query finds it changed since the shoot's
previous query. The change happened after that previous query, so the new state is dated just
after it (`since`): a query pinned to a time before the change keeps seeing the old state, one at
or after it sees the new one. The first state a shoot is seen in has held forever (its world was
generated so). States no query can still ask for (superseded more than `KEEP_SECONDS` ago) are
dropped; a time older than every state kept is answered with no series, as a Prometheus answers
for a time it holds no samples of.

Changes can also be queued to land right after a shoot's Prometheus answered N more queries
(`after_queries`), so a test can change the world between two queries of one collection,
deterministically.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from sim.world.contents import ShootContents
from sim.world.records import NamespaceRecord, NodeRecord, PodRecord

# Prometheus's timestamp resolution: a change noticed after a query is dated this much after it.
RESOLUTION_SECONDS = 0.001
# How far back a query may still be pinned (a collection lasts INVENTORY_TIMEOUT_SECONDS at most).
KEEP_SECONDS = 600.0


@dataclass(frozen=True, slots=True)
class ScrapedState:
    """One state of a shoot as its Prometheus holds it, from `since` until the next state's `since`."""

    since: float
    version: tuple[int, int, int, bool, str]
    nodes: tuple[NodeRecord, ...]
    pods: tuple[PodRecord, ...]
    namespaces: tuple[NamespaceRecord, ...]
    labels_exported: bool
    stack: str
    """`gardener` or `fuller` (monitoring.py)."""


def _version(contents: ShootContents, labels_exported: bool, stack: str) -> tuple[int, int, int, bool, str]:
    return (contents.nodes.version, contents.pods.version, contents.namespaces.version, labels_exported, stack)


def capture(contents: ShootContents, *, labels_exported: bool, stack: str, since: float) -> ScrapedState:
    """The shoot's state now (also what its kube-state-metrics exposition serves)."""
    return ScrapedState(
        since=since,
        version=_version(contents, labels_exported, stack),
        nodes=tuple(contents.nodes.iter_from()),
        pods=tuple(contents.pods.iter_from()),
        namespaces=tuple(contents.namespaces.iter_from()),
        labels_exported=labels_exported,
        stack=stack,
    )


@dataclass
class _Shoot:
    contents: ShootContents
    states: list[ScrapedState]
    checked: float
    """When a query last looked at the shoot (simulator time)."""


@dataclass
class _Pending:
    remaining: int
    change: Callable[[], None]


@dataclass
class ScrapeHistory:
    """Per shoot key: the states its Prometheus holds, and the changes waiting for its queries."""

    _shoots: dict[str, _Shoot] = field(default_factory=dict)
    _pending: dict[str, list[_Pending]] = field(default_factory=dict)

    def state_at(
        self, key: str, contents: ShootContents, *, labels_exported: bool, stack: str, now: float, at: float
    ) -> ScrapedState | None:
        """The shoot's state as of `at` (None: older than every state kept), noting a change since the last query."""
        shoot = self._shoots.get(key)
        if shoot is None or shoot.contents is not contents:  # first seen, or the world was built again
            first = capture(contents, labels_exported=labels_exported, stack=stack, since=-math.inf)
            shoot = self._shoots[key] = _Shoot(contents, [first], now)
        elif shoot.states[-1].version != _version(contents, labels_exported, stack):
            since = min(shoot.checked + RESOLUTION_SECONDS, now)
            shoot.states.append(capture(contents, labels_exported=labels_exported, stack=stack, since=since))
        shoot.checked = max(shoot.checked, now)
        while len(shoot.states) > 1 and shoot.states[1].since < now - KEEP_SECONDS:
            shoot.states.pop(0)
        for state in reversed(shoot.states):
            if state.since <= at:
                return state
        return None

    def after_queries(self, key: str, queries: int, change: Callable[[], None]) -> None:
        """Run `change` once the shoot's Prometheus answered `queries` (at least 1) more queries."""
        if queries < 1:
            raise ValueError(f"cannot wait for {queries} queries")
        self._pending.setdefault(key, []).append(_Pending(queries, change))

    def answered(self, key: str) -> None:
        """Count one answered query of the shoot's Prometheus; run the changes that were waiting for it."""
        pending = self._pending.get(key)
        if not pending:
            return
        due: list[_Pending] = []
        for waiting in pending:
            waiting.remaining -= 1
            if waiting.remaining <= 0:
                due.append(waiting)
        self._pending[key] = [waiting for waiting in pending if waiting.remaining > 0]
        for waiting in due:
            waiting.change()

    def reset(self) -> None:
        self._shoots.clear()
        self._pending.clear()
