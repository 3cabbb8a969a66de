"""Bounds of every HTTP/1.1 port a process serves with uvicorn: head and body time, idle time, connections.

uvicorn (0.54, h11) bounds idle keep-alive connections (`timeout_keep_alive`), the size of a request
head (h11's 16 KiB incomplete-event limit, answered 400) and the connections and tasks it serves at
once (`limit_concurrency`, answered 503), but never the time a client takes to send a request head:
a client that sends a byte every few seconds and never ends its head (slowloris) holds its
connection, and with it a share of the connection limit, for ever. `head_timeout_protocol()` adds
that bound: from the moment a connection opens, or a response was sent and the next request may
start, the client has `head_timeout_seconds` to complete the head; otherwise it gets 408 and the
connection is closed, counted in `fleet_http_connections_closed_total{reason="head_timeout"}`.
The body has the same weakness (a client that announces a length and sends a byte now and then), so
once the head is complete the rest of the request must arrive within `body_timeout_seconds`: 408 if
no answer has started yet, the connection closed either way, `reason="body_timeout"`.

Liveness has a reserved slot: a complete `GET /livez` head is served whatever the connection limit,
so a flood of connections (a slowloris above `max_connections` renews its heads before each timeout)
answers everyone else 503 but never fails the kubelet's liveness probe and restarts a healthy pod.
uvicorn refuses over the limit once a head is complete, so the head's path decides; /livez answers
from memory, never waits on the database, and its own requests are bounded by the head timeout.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from prometheus_client import Counter
from uvicorn.protocols.http.h11_impl import H11Protocol

logger = logging.getLogger(__name__)

CONNECTIONS_CLOSED = Counter(
    "fleet_http_connections_closed",
    "HTTP/1.1 connections the server closed because a client broke a bound, by reason.",
    ["reason"],
)
LIVENESS_PATH = "/livez"
"""Served over the connection limit (the reserved slot)."""
_TIMEOUT_ANSWER = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """What one HTTP port allows a client (the APIs' settings; the defaults serve the other ports)."""

    head_timeout_seconds: float = 10.0
    """Time to send a complete request head, from connecting or from the end of the last response."""
    body_timeout_seconds: float = 30.0
    """Time to send the rest of a request (its body) once its head is complete."""
    idle_timeout_seconds: int = 5
    """Time a keep-alive connection may sit idle between requests before it is closed."""
    max_connections: int = 500
    """Open connections (and requests in progress) served at once; a request over it is answered 503."""


def head_timeout_protocol(head_timeout_seconds: float, body_timeout_seconds: float = 30.0) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request head or body is not complete in time."""

    class HeadTimeoutProtocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _body_timer: asyncio.TimerHandle | None = None
        _limit: int | None = None

        # uvicorn reads `limit_concurrency` once per request, after it set `scope` from the head: the
        # liveness probe's request sees no limit (the reserved slot), every other request the port's.
        @property
        def limit_concurrency(self) -> int | None:
            scope = getattr(self, "scope", None)
            if scope is not None and scope.get("path") == LIVENESS_PATH and scope.get("method") in ("GET", "HEAD"):
                return None
            return self._limit

        @limit_concurrency.setter
        def limit_concurrency(self, value: int | None) -> None:
            self._limit = value

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_head_timer()

        def data_received(self, data: bytes) -> None:
            if self._head_timer is None and self._waiting_for_head():
                self._arm_head_timer()
            super().data_received(data)
            if not self._waiting_for_head():
                self._cancel_head_timer()
            if self._waiting_for_body():
                if self._body_timer is None:
                    self._body_timer = self.loop.call_later(body_timeout_seconds, self._body_timed_out)
            else:
                self._cancel_body_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_head_timer()
            self._cancel_body_timer()
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # The next head may start now; the idle (keep-alive) timer covers the silence before it,
            # this one a head that starts but never ends.
            self._cancel_head_timer()

        def _waiting_for_head(self) -> bool:
            # uvicorn makes a new cycle when a head is complete; before that, the last one (if any) is done.
            return self.cycle is None or self.cycle.response_complete

        def _waiting_for_body(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete and self.cycle.more_body

        def _arm_head_timer(self) -> None:
            self._head_timer = self.loop.call_later(head_timeout_seconds, self._head_timed_out)

        def _cancel_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _cancel_body_timer(self) -> None:
            if self._body_timer is not None:
                self._body_timer.cancel()
                self._body_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if self.transport.is_closing() or not self._waiting_for_head():
                return
            self._cut_off("head_timeout", "closed a connection whose request head took too long", answer=True)

        def _body_timed_out(self) -> None:
            self._body_timer = None
            if self.transport.is_closing() or not self._waiting_for_body():
                return
            answer = self.cycle is not None and not self.cycle.response_started
            self._cut_off("body_timeout", "closed a connection whose request body took too long", answer=answer)

        def _cut_off(self, reason: str, message: str, *, answer: bool) -> None:
            CONNECTIONS_CLOSED.labels(reason).inc()
            peer = f"{self.client[0]}:{self.client[1]}" if self.client else None
            logger.info(message, extra={"peer": peer})
            if answer:
                self.transport.write(_TIMEOUT_ANSWER)
            self.transport.close()

    return HeadTimeoutProtocol


def uvicorn_limits(limits: HttpLimits) -> dict[str, Any]:
    """The keyword arguments of `uvicorn.Config` that apply `limits`."""
    return {
        "http": head_timeout_protocol(limits.head_timeout_seconds, limits.body_timeout_seconds),
        "timeout_keep_alive": limits.idle_timeout_seconds,
        "limit_concurrency": limits.max_connections,
    }
