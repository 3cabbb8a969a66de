"""Bound a JSON answer by the number of values it turns into, counted before it is parsed.

A byte bound alone does not bound memory: in `[],[],[],…` every 3 bytes become a Python list of
about 70 bytes, so 16 MiB parse into more than 500 MB. Every answer from outside is therefore also
bounded in values (kube/limits.py gives the bound of each kind), and a document over its bound is
refused before a single object of it is built.

How the values are counted without a tokenizer in Python (which would cost more than the parse):
every value of a document but the first is an element of a container, each element after the first
is preceded by a comma, and every container opens with `[` or `{`. So the number of `[`, `{` and `,`
outside strings, plus one, is at least the number of values (exactly that plus the empty containers;
an object's member, key and value, counts once; keys are short and shared by orjson). The counting
runs in C through bytes methods, a chunk at a time so that it costs a bounded amount of memory
whatever the document holds:

1. escaped backslashes and escaped quotes are removed (`\\\\`, then `\\"`): every `"` left delimits a
   string (a chunk never ends inside a run of backslashes, so no escape is cut in two);
2. every byte but `"`, `[`, `{` and `,` is deleted (`bytes.translate`);
3. what lies between quotes, the inside of strings, is dropped (`split` on `"`, every other piece),
   and what is left is counted.

A document too short to hold more values than the bound (each value takes two bytes at least, its
own and a comma) is not counted at all, and one whose `[`, `{` and `,` counted anywhere (strings
included, an upper bound, three scans at memchr speed) stay within it is not counted exactly, so a
legitimate answer costs almost nothing extra. The count is exact only
for valid JSON; anything else is refused by the parser afterwards. Depth needs no bound of its own:
orjson refuses a document nested deeper than 1,024 levels, and the values bound the memory anyway.
"""

from __future__ import annotations

from typing import Any

import orjson

from collector.kube.errors import BadResponse, TooLarge

Raw = bytes | bytearray

_KEEP = b'"[{,'
_DROP = bytes(b for b in range(256) if b not in _KEEP)
_BACKSLASH = 0x5C
_CHUNK = 256 << 10
MIN_BYTES_PER_VALUE = 2
"""Each value takes two bytes at least (`0,`): a shorter document cannot break a bound."""


def count_values(raw: Raw, end: int | None = None) -> int:
    """At least the number of values `raw[:end]` parses into (exact for valid JSON without empty containers)."""
    view = memoryview(raw).cast("B")
    size = len(view) if end is None else min(end, len(view))
    if size == 0:
        return 0
    structural = 0
    inside = False  # within a string at the start of the chunk
    start = 0
    while start < size:
        end = min(start + _CHUNK, size)
        # Never end a chunk within a run of backslashes: the escape after it would be cut in two.
        while end < size and view[end - 1] == _BACKSLASH:
            end += 1
        chunk = bytes(view[start:end]).replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _DROP)
        pieces = chunk.split(b'"')
        structural += len(b"".join(pieces[1 if inside else 0 :: 2]))
        if len(pieces) % 2 == 0:  # an odd number of quotes: the string state flips
            inside = not inside
        start = end
    return structural + 1


def over_bound(raw: Raw, max_values: int, end: int | None = None) -> int | None:
    """The count of `raw[:end]`'s values when it is over `max_values`, else None.

    Cheap first: a document too short to break the bound is not looked at, and one whose `[`, `{`
    and `,` counted anywhere (strings included: an upper bound, three `bytes.count` scans without a
    copy) stay within it is not counted exactly.
    """
    size = len(raw) if end is None else min(end, len(raw))
    if size < MIN_BYTES_PER_VALUE * max_values:
        return None
    if raw.count(b"[", 0, size) + raw.count(b"{", 0, size) + raw.count(b",", 0, size) + 1 <= max_values:
        return None
    count = count_values(raw, size)
    return count if count > max_values else None


def loads_bounded(raw: Raw, *, max_values: int, what: str, bound: str, count: int | None = None) -> Any:
    """`orjson.loads(raw)`, refused unparsed when it holds more than `max_values` values.

    `bound` names the setting or the fixed bound in the error; `count` is the values when the caller
    counted them already. Raises TooLarge or BadResponse.
    """
    over = over_bound(raw, max_values) if count is None else (count if count > max_values else None)
    if over is not None:
        raise too_many(what, max_values, bound)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise BadResponse(f"{what}: the body is not complete JSON ({e.msg} at byte {e.pos})") from e


def too_many(what: str, max_values: int, bound: str) -> TooLarge:
    """The error of an answer over its bound in values; it was not parsed."""
    return TooLarge(f"{what}: more than {max_values:,} JSON values ({bound}); refused unparsed")
