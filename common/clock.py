"""The wall clock, in one place: every process judges times in UTC, timezone-aware.

Code that needs "now" takes a `Clock` (a callable) with `utc_now` as its default, so tests pass a
clock they control instead of patching time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The current time in UTC, timezone-aware."""
    return datetime.now(UTC)


def rfc3339(moment: datetime) -> str:
    """`moment` in UTC as RFC 3339 with `Z`, the form every API answer uses for a time.

    The fraction follows protobuf's Timestamp JSON: none for whole seconds, else 3 or 6 digits, so a
    time inside a finding's details reads exactly like the finding's own `first_detected`.
    """
    if moment.tzinfo is None:
        raise ValueError(f"{moment!r} has no time zone")
    utc = moment.astimezone(UTC)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        fraction = f"{utc.microsecond:06d}"
        text += "." + (fraction[:3] if fraction.endswith("000") else fraction)
    return text + "Z"
