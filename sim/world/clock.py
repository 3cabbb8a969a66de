"""The simulator's clock: real time plus an offset that tests and the control API can move forward.

Minted kubeconfigs expire after at least ten minutes and continue tokens after five; no test should
wait that long. Everything in the simulator that compares times reads this clock, so advancing it is
the same as waiting. It is shared between the server's event-loop thread and the caller's thread,
hence the lock.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime


class Clock:
    """Wall-clock time in UTC, shifted by an offset that only grows."""

    def __init__(self) -> None:
        self._offset_seconds = 0.0
        self._lock = threading.Lock()

    def time(self) -> float:
        """Seconds since the epoch, as the simulator sees them."""
        with self._lock:
            return time.time() + self._offset_seconds

    def now(self) -> datetime:
        """The simulator's current time as an aware UTC datetime."""
        return datetime.fromtimestamp(self.time(), UTC)

    def advance(self, seconds: float) -> None:
        """Move time forward (never backward: Kubernetes clients assume it does not jump back)."""
        if seconds < 0:
            raise ValueError(f"the clock only moves forward, not by {seconds} seconds")
        with self._lock:
            self._offset_seconds += seconds

    def reset(self) -> None:
        """Forget every advance (used between tests)."""
        with self._lock:
            self._offset_seconds = 0.0


def rfc3339(moment: datetime) -> str:
    """The timestamp format of Kubernetes object metadata (seconds, `Z`)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
