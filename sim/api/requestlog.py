"""The request log: every API request the simulator answered, for tests to assert on.

Tests check what a client asked for (path, query, the Accept header, which credential) rather than
trusting it: "the collector lists pods metadata-only with `status.phase!=Succeeded`" is a log
query. The log is bounded (oldest entries drop first) so a long soak cannot grow it without end.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from sim.api.credentials.tokens import TokenKind

GARDEN = "garden"


@dataclass(slots=True)
class LoggedRequest:
    """One request; `status` is filled in when the answer starts (None while it hangs, or if reset)."""

    target: str  # "garden", a shoot key, or "control"
    method: str
    path: str  # as sent, shoot prefix included
    api_path: str  # below the target's prefix (`/api/v1/pods`)
    query: dict[str, str]
    accept: str
    token_kind: TokenKind
    time: float
    status: int | None = None
    fault: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def resource(self) -> str | None:
        """The resource plural of a resource path (`pods`), or None for discovery."""
        parts = [p for p in self.api_path.split("/") if p]
        if len(parts) >= 2 and parts[0] == "api":
            rest = parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            rest = parts[3:]
        else:
            return None
        if len(rest) >= 3 and rest[0] == "namespaces":
            return rest[2]
        return rest[0] if rest else None


class RequestLog:
    def __init__(self, max_entries: int = 100_000) -> None:
        self._entries: deque[LoggedRequest] = deque(maxlen=max_entries)
        self._lock = threading.Lock()

    def append(self, entry: LoggedRequest) -> None:
        with self._lock:
            self._entries.append(entry)

    def entries(self, predicate: Callable[[LoggedRequest], bool] | None = None) -> list[LoggedRequest]:
        with self._lock:
            snapshot = list(self._entries)
        return [e for e in snapshot if predicate is None or predicate(e)]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
