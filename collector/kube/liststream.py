"""Parse a Kubernetes list response in bounded batches while it streams in.

A shoot's API server answers a `resourceVersion=0` list from its watch cache and, before 1.34,
ignores `limit`: 150,000 pods arrive as one body of well over 100 MB. Parsed whole, that body costs several times
its size in Python objects, while the worker's peak must stay under 400 MB even for such a cluster.
`ListSplitter` sits between the HTTP stream (kube/client.py) and the code that folds items into
counts (inventory/shoot.py): it cuts the byte stream at item boundaries, parses each batch of about
`batch_bytes` with one `orjson.loads` and hands the items over, so only one batch is alive at a time.

How items are found without a JSON tokenizer in Python (which would cost more than the parse):
every item of one list is written by one encoder, so every item starts with the same bytes, e.g.
`{"kind":"PartialObjectMetadata",` or `{"metadata":{"name":`. That marker is learned from the
first item. It can never occur inside a JSON string (a raw `"` is always escaped there), only at an
object start. If an object nested inside an item happens to start with the same bytes, a cut there
leaves an unbalanced batch that `orjson` refuses; the splitter then tries an earlier cut and, failing
that, stops splitting and parses the rest at the end (correct, just not bounded). A batch that parses
is therefore always a run of whole items.

Memory is bounded whatever the server sends: bytes that cannot be handed over (one item that never
ends, or a list that could not be cut) may pile up to `batch_bytes + max_item_bytes`, then the
list is refused with `ItemTooLarge`. What a batch turns into is bounded too: its JSON values are
counted before it is parsed (kube/values.py), a batch holding more than `max_values` is cut
smaller, and one item holding more (or a list that cannot be cut below it) is refused unparsed.

The list's own fields (`metadata.resourceVersion`, `continue`) are parsed at the end from the
bytes before the first item plus the bytes after the last batch. A body cut short therefore always
fails at `finish()`, even when every batch before the cut parsed.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from collector.kube.limits import DEFAULT_ITEM_BYTES, LIST_BATCH_VALUES
from collector.kube.values import over_bound

Items = list[dict[str, Any]]

# A batch of legitimate items (14 to 20 bytes a value) stays well under the values bound, so only a
# dense one is counted exactly and cut smaller.
DEFAULT_BATCH_BYTES = 1 << 20
DEFAULT_MAX_ITEM_BYTES = DEFAULT_ITEM_BYTES
# Cuts to try, walking back from the last marker, before giving up on splitting this list.
_CUT_ATTEMPTS = 3
_ITEMS_KEY = re.compile(rb'"items"\s*:\s*\[\s*')
# The first key of an item plus, when short, its string value or the first key of its object value.
_MARKER = re.compile(rb'\{\s*"[^"\\]{1,64}"\s*:\s*(?:"[^"\\]{0,64}"\s*,|\{\s*"[^"\\]{1,64}"\s*:)?')
_TRAILING = b" \t\r\n,"


class MalformedList(ValueError):
    """The body is not a JSON object (truncated, cut off, or not JSON at all)."""


class ItemTooLarge(ValueError):
    """One item (or a list that could not be cut into items) grew over the splitter's bound."""

    def __init__(self, message: str, *, bound: str = "INVENTORY_MAX_ITEM_MIB") -> None:
        super().__init__(message)
        self.bound = bound
        """The setting, or the fixed bound, the list broke."""


VALUES_BOUND = "a list batch's bound"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Turn the cyclic GC off around a burst of allocations that makes no cycles (no await inside).

    Parsed items, and the observations reconcile builds from them, are plain trees freed by reference
    counting; without this, allocating millions of dicts triggers repeated generation scans that
    cost more than the parse itself.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class ListSplitter:
    """Feed the bytes of one list response; receive its items in batches; get the list's own fields."""

    def __init__(
        self,
        on_items: Callable[[Items], None],
        *,
        batch_bytes: int = DEFAULT_BATCH_BYTES,
        max_item_bytes: int = DEFAULT_MAX_ITEM_BYTES,
        max_values: int = LIST_BATCH_VALUES,
    ) -> None:
        self._on_items = on_items
        self._batch_bytes = batch_bytes
        self._max_item_bytes = max_item_bytes
        self._max_values = max_values
        self._head: bytes | None = None  # everything up to and including `"items":[`
        self._buf = bytearray()  # after the head: unparsed items (each batch starts at an item start)
        self._marker: bytes | None = None
        self._splitting = True
        self.items_seen = 0
        self.batches = 0

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the body; may hand over a batch of items.

        Raises ItemTooLarge when more than `batch_bytes + max_item_bytes` could not be handed over.
        """
        self._buf += chunk
        if self._head is None:
            found = _ITEMS_KEY.search(self._buf)
            if found is None:
                self._check_bound()
                return
            self._head = bytes(self._buf[: found.end()])
            del self._buf[: found.end()]
        if self._splitting and len(self._buf) >= self._batch_bytes:
            self._cut()
        self._check_bound()

    def _check_bound(self) -> None:
        if len(self._buf) <= self._batch_bytes + self._max_item_bytes:
            return
        self._buf = bytearray()
        mib = self._max_item_bytes / (1 << 20)
        if self._splitting and self._head is not None:
            raise ItemTooLarge(f"one item of the list is over {mib:g} MiB")
        raise ItemTooLarge(f"the list could not be cut into items and is over {mib:g} MiB unparsed")

    def finish(self) -> dict[str, Any]:
        """Parse what is left; hand over the last items; return the list without its items.

        Raises MalformedList when the body is not one complete JSON object, ItemTooLarge when what is
        left holds more values than a batch may and cannot be cut.
        """
        while self._splitting and self._head is not None and over_bound(self._buf, self._max_values) is not None:
            left = len(self._buf)
            self._cut()
            if len(self._buf) == left:
                break
        document = self._buf if self._head is None else self._head + self._buf
        if over_bound(document, self._max_values) is not None:
            self._buf = bytearray()
            raise ItemTooLarge(
                f"the list could not be cut into batches of at most {self._max_values:,} JSON values; refused unparsed",
                bound=VALUES_BOUND,
            )
        self._buf = bytearray()
        with gc_paused():
            try:
                parsed = orjson.loads(document)
            except orjson.JSONDecodeError as e:
                raise MalformedList(f"the list body is not complete JSON ({e.msg} at byte {e.pos})") from None
            del document
            if not isinstance(parsed, dict):
                raise MalformedList("the list body is not a JSON object")
            items = parsed.pop("items", None)
            if items is None:
                items = []
            if not isinstance(items, list):
                raise MalformedList("the list's items are not an array")
            self._deliver(items)
        return parsed

    def _cut(self) -> None:
        if self._marker is None:
            self._marker = self._learn_marker()
            if self._marker is None:
                return
        end = len(self._buf)
        failures = 0
        while failures < _CUT_ATTEMPTS:
            cut = self._buf.rfind(self._marker, 1, end)
            if cut <= 0:
                if end == len(self._buf):
                    return  # one item larger than a batch: wait for more bytes
                cut = self._buf.find(self._marker, 1)  # cut down to the first item alone
            stop = cut
            while stop > 0 and self._buf[stop - 1] in _TRAILING:
                stop -= 1
            values = over_bound(self._buf, self._max_values, stop)
            if values is not None:
                if self._buf.rfind(self._marker, 1, cut) <= 0:
                    self._buf = bytearray()
                    raise ItemTooLarge(
                        f"one item of the list holds more than {self._max_values:,} JSON values; refused unparsed",
                        bound=VALUES_BOUND,
                    )
                end = min(cut, max(1, stop * self._max_values // values))  # a denser batch is cut smaller
                continue
            batch = bytearray(b"[")
            batch += memoryview(self._buf)[:stop]
            batch += b"]"
            with gc_paused():
                try:
                    items = orjson.loads(batch)
                except orjson.JSONDecodeError:
                    failures += 1
                    end = cut  # a nested object starts like an item: try the marker before it
                    continue
                finally:
                    del batch
                del self._buf[:cut]
                self._deliver(items)
                del items
            return
        self._splitting = False  # give up splitting this list; finish() parses the rest

    def _learn_marker(self) -> bytes | None:
        if self._buf[:1] == b"]":
            self._splitting = False  # an empty list: nothing to split
            return None
        found = _MARKER.match(self._buf)
        if found is None:
            self._splitting = False
            return None
        return bytes(found.group(0))

    def _deliver(self, items: Items) -> None:
        if items:
            self.items_seen += len(items)
            self.batches += 1
            self._on_items(items)
