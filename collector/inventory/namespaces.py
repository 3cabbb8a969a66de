"""Which tenant namespace is which: a reading's counts matched to the live namespaces, with certainty or not at all.

    store.store_reading ──> count_namespaces(reading, live namespaces) ──> read: pods per namespace id
                                                                     └──> unread: a reason per namespace id

A namespace is **read** (its count stored, `observed` moved) only when the match is certain:

- **by its id**, when the reading carries namespace ids (the API-server source, mock mode, and the
  Prometheus source where kube-state-metrics exports `fundament.io/namespace-id`): every tenant
  namespace of the shoot is in view with its id, so a live namespace no shoot namespace carries
  runs no pods, a certain 0, as it always was;
- **by its generated name**, when the reading has names only (kube-state-metrics without the
  label): the name Fundament's provisioning side gives the namespace is its project's 8-character
  name prefix, 4 hex digits of its project id's hash, `-` and its own name
  (`common.naming.namespace_name`). The match is certain when exactly one live namespace of the
  cluster has that project hash and name, exactly one namespace of the shoot has them too, and it
  is the generated name itself.

Anything else is **unread**, with a reason (`UNREAD_REASONS`); its last count stays:

- `renamed`: the shoot holds the namespace only under another project prefix with the same
  project hash and name. The project was renamed since the namespace was created (Kubernetes
  cannot rename a namespace, so the shoot keeps the old name); the generated name is gone.
- `ambiguous`: more than one shoot namespace could be it (its generated name and another prefix:
  a renamed project's namespace created again), or two live namespaces of the cluster share the
  project hash and name (a clash of the 16-bit hash), so no count can be given to either.
- `not_found`: no namespace of the shoot has its project hash and name: it may not be created yet,
  or be there under a name the contract does not give it. Not seeing it is no proof it is empty.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from uuid import UUID

from collector.inventory.reading import Reading
from common.naming import namespace_name

NOT_FOUND = "not_found"
RENAMED = "renamed"
AMBIGUOUS = "ambiguous"
UNREAD_REASONS = (NOT_FOUND, RENAMED, AMBIGUOUS)
"""Why a namespace was not read (the values db/migrations allow in `namespace_snapshots.unread_reason`)."""

# A generated name: 8 characters of the project's name, 4 of its id's hash, "-", the namespace's name.
_PREFIX = 12
_HASH = slice(8, 12)


@dataclass(frozen=True, slots=True)
class NamespaceRow:
    """A live namespace of the cluster, with its project (whose name and id its name on the shoot derives from)."""

    id: UUID
    name: str
    project_name: str
    project_id: UUID

    @property
    def kube_name(self) -> str:
        """Its name on the shoot, as the provisioning side generates it."""
        return namespace_name(self.project_name, self.project_id, self.name)


@dataclass(frozen=True, slots=True)
class NamespaceCounts:
    """One reading's namespaces: the counts read, and why the others were not."""

    pods: dict[UUID, int] = field(default_factory=dict)
    unread: dict[UUID, str] = field(default_factory=dict)


def count_namespaces(reading: Reading, namespaces: Sequence[NamespaceRow]) -> NamespaceCounts:
    """The pods of each live namespace the reading tells with certainty; a reason for each other one."""
    by_name = reading.pods_by_namespace_name
    if by_name is None:
        return NamespaceCounts({ns.id: reading.namespace_pods.get(ns.id, 0) for ns in namespaces})
    on_shoot: dict[tuple[str, str], list[str]] = {}
    for name in by_name:
        key = _identity(name)
        if key is not None:
            on_shoot.setdefault(key, []).append(name)
    wanted = {ns.id: ns.kube_name for ns in namespaces}
    claims = Counter(_identity(kube_name) for kube_name in wanted.values())
    counts = NamespaceCounts()
    for ns in namespaces:
        kube_name = wanted[ns.id]
        key = _identity(kube_name)
        candidates = on_shoot.get(key, []) if key is not None else []
        if claims[key] > 1 or len(candidates) > 1:
            counts.unread[ns.id] = AMBIGUOUS
        elif candidates == [kube_name]:
            counts.pods[ns.id] = by_name[kube_name]
        else:
            counts.unread[ns.id] = RENAMED if candidates else NOT_FOUND
    return counts


def _identity(kube_name: str) -> tuple[str, str] | None:
    """What a generated name says for certain: (the project id's hash digits, the namespace's own name)."""
    if len(kube_name) <= _PREFIX + 1 or kube_name[_PREFIX] != "-":
        return None
    return kube_name[_HASH], kube_name[_PREFIX + 1 :]
