"""A finding's `details` as a protobuf Struct, with every time in the one form the API uses.

Reconcile writes the times inside details as RFC 3339 with `Z` (`common.clock.rfc3339`); rows written
by older releases hold `+00:00` offsets. So that a reader never meets two spellings of a time in one
answer, any string that is a complete RFC 3339 date-time is rewritten into the `Z` form that
protobuf's JSON gives every Timestamp field. Nothing else is touched: the pattern needs a `T`, a time
and an offset, which no label value, name or version can hold (none may contain `:`).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from google.protobuf import struct_pb2

from common.clock import rfc3339

_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")
# Details are written by reconcile (a few hundred bytes); a deeper tree is not ours and stays as it is.
_MAX_DEPTH = 16


def normalized_time(value: str) -> str:
    """`value` in the API's `Z` form when it is an RFC 3339 date-time, else unchanged."""
    if not _DATE_TIME.match(value):
        return value
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    return rfc3339(moment)


def _normalized(value: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, str):
        return normalized_time(value)
    if isinstance(value, dict):
        return {key: _normalized(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalized(item, depth + 1) for item in value]
    return value


def details_struct(details: dict[str, Any]) -> struct_pb2.Struct:
    """The stored details as a Struct, times in `Z` form."""
    struct = struct_pb2.Struct()
    struct.update(_normalized(details, 0))
    return struct
