"""An ordered store of compact records: what stands in for etcd in one simulated API server.

A real API server lists objects in the order of their etcd keys (`<namespace>/<name>`), and a
continue token names the key to start after. The store keeps records bucketed per namespace, each
bucket sorted by name, so a page can start anywhere by bisection, whatever the store's size (a
150,000-pod shoot pages as cheaply as a small one). Records are immutable; changing one means
putting its replacement. Iteration copies one bucket at a time, so a change made between two
pages of a streamed response never breaks the iteration (it may show up, as in an inconsistent
list). `Store.version` names the store's current contents, so what is derived from them (an encoded
list, see `sim/api/machinery/listcache.py`) can be kept until they change.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Iterator
from typing import Generic, Protocol, TypeVar


class Record(Protocol):
    """What every stored record has: its key parts and the resourceVersion it was last written at."""

    @property
    def name(self) -> str: ...

    @property
    def namespace(self) -> str: ...

    @property
    def rv(self) -> int: ...


def record_key(namespace: str, name: str) -> str:
    """The etcd-style key of an object (`ns/name`, or `name` when cluster-scoped)."""
    return f"{namespace}/{name}" if namespace else name


R = TypeVar("R", bound=Record)

# One sequence for every store of the process: no two stores, and no two states of one store, share a version.
_versions = itertools.count(1)


class Store(Generic[R]):
    """Records of one kind, ordered by namespace, then name."""

    def __init__(self, records: Iterable[R] = ()) -> None:
        self._names: dict[str, list[str]] = {}
        self._records: dict[str, list[R]] = {}
        self._namespaces: list[str] = []
        self._count = 0
        self.version = next(_versions)
        """Changes on every put and delete; unique to this store's current contents in this process."""
        for record in records:
            self.put(record)

    def __len__(self) -> int:
        return self._count

    def put(self, record: R) -> None:
        """Insert `record`, or replace the one with the same namespace and name."""
        self.version = next(_versions)
        names = self._names.get(record.namespace)
        if names is None:
            bisect.insort(self._namespaces, record.namespace, key=_bucket_prefix)
            names = self._names[record.namespace] = []
            self._records[record.namespace] = []
        records = self._records[record.namespace]
        index = bisect.bisect_left(names, record.name)
        if index < len(names) and names[index] == record.name:
            records[index] = record
            return
        names.insert(index, record.name)
        records.insert(index, record)
        self._count += 1

    def get(self, namespace: str, name: str) -> R | None:
        names = self._names.get(namespace)
        if names is None:
            return None
        index = bisect.bisect_left(names, name)
        if index < len(names) and names[index] == name:
            return self._records[namespace][index]
        return None

    def delete(self, namespace: str, name: str) -> R | None:
        """Remove and return the record, or None when there is none."""
        names = self._names.get(namespace)
        if names is None:
            return None
        index = bisect.bisect_left(names, name)
        if index >= len(names) or names[index] != name:
            return None
        self.version = next(_versions)
        names.pop(index)
        record = self._records[namespace].pop(index)
        self._count -= 1
        if not names:
            del self._names[namespace]
            del self._records[namespace]
            self._namespaces.remove(namespace)
        return record

    def in_namespace(self, namespace: str) -> list[R]:
        """A copy of one namespace's records, in name order."""
        return list(self._records.get(namespace, ()))

    def namespaces(self) -> list[str]:
        """The namespaces that hold at least one record, in order."""
        return list(self._namespaces)

    def iter_from(self, start_key: str = "", *, namespace: str | None = None) -> Iterator[R]:
        """Records whose key is at or after `start_key`, in key order, optionally in one namespace."""
        if namespace is not None:
            namespaces = [namespace] if namespace in self._names else []
        else:
            start_prefix = start_key[: start_key.index("/") + 1] if "/" in start_key else ""
            first = bisect.bisect_left(self._namespaces, start_prefix, key=_bucket_prefix)
            namespaces = self._namespaces[first:]
        for ns in namespaces:
            names = self._names.get(ns)
            if names is None:  # the namespace emptied since the iteration began
                continue
            prefix = _bucket_prefix(ns)
            first_index = 0
            if start_key and start_key.startswith(prefix):
                first_index = bisect.bisect_left(names, start_key[len(prefix) :])
            elif start_key and prefix < start_key:
                continue
            yield from self._records[ns][first_index:]

    def count_from(self, start_key: str = "", *, namespace: str | None = None) -> int:
        """How many records `iter_from(start_key, namespace=...)` would yield, without iterating them."""
        if namespace is not None:
            namespaces = [namespace] if namespace in self._names else []
        else:
            start_prefix = start_key[: start_key.index("/") + 1] if "/" in start_key else ""
            namespaces = self._namespaces[bisect.bisect_left(self._namespaces, start_prefix, key=_bucket_prefix) :]
        total = 0
        for ns in namespaces:
            names = self._names[ns]
            prefix = _bucket_prefix(ns)
            if start_key and start_key.startswith(prefix):
                total += len(names) - bisect.bisect_left(names, start_key[len(prefix) :])
            elif not (start_key and prefix < start_key):
                total += len(names)
        return total


def _bucket_prefix(namespace: str) -> str:
    """The key prefix of a namespace's bucket: etcd orders by whole keys, so `a-b/` sorts before `a/`."""
    return f"{namespace}/" if namespace else ""
