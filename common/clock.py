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
