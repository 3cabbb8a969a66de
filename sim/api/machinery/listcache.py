"""Encoded list items kept between requests, while the store they came from has not changed.

A collector lists the same small lists of every shoot each round; rendering and encoding them again
each time was a sizeable part of the simulator's CPU per request. A list's items are kept only when
they are a whole list (no continue token, no limit) that fits in one streamed chunk, so a
150,000-pod list is never held. The key names everything the items depend on: the store's version
(`Store.version`, which changes on every put and delete), whatever the renderer reads besides the
record (the shoot), and the request's namespace, representation and selectors. Least recently
used entries go first once the entries hold more than `max_bytes`.

Used on the server's event loop only, so no lock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

# What one entry costs besides its body (the key tuple, the dict slot), counted against the bound.
ENTRY_OVERHEAD_BYTES = 256


class ListCache:
    """Encoded items by key, least recently used first out, within `max_bytes` (0 keeps nothing)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        """What the entries hold, overhead included."""
        return self._bytes

    def get(self, key: Hashable) -> bytes | None:
        items = self._entries.get(key)
        if items is not None:
            self._entries.move_to_end(key)
        return items

    def put(self, key: Hashable, items: bytes) -> None:
        cost = len(items) + ENTRY_OVERHEAD_BYTES
        if cost > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= len(old) + ENTRY_OVERHEAD_BYTES
        self._entries[key] = items
        self._bytes += cost
        while self._bytes > self.max_bytes:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= len(dropped) + ENTRY_OVERHEAD_BYTES

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0
