"""One shared answer behind a single flight, with a read deadline of its own.

    callers ──get()──> fresh answer? ── yes ──> hit: the answer and the seconds it has left
                            │ no
                            ├─ no read running: start one (miss) ─┐
                            └─ a read is running: join it (shared)┴─> wait for that one read

Any number of callers during a miss cost exactly one read. The read runs in a task of its own and
callers wait on it through `asyncio.shield`, so a caller that gives up (a client deadline, a dropped
connection) never cancels the read for the others. The read is bounded by `read_timeout_seconds`
whoever waits for it, and every waiting caller is released by that same deadline, so a stalled
query cannot hold anyone longer. A failed read is not kept: each of its callers gets `ReadFailed`
(UNAVAILABLE) and the next caller starts a new read. The failure is logged once per read, here.

An answer is fresh for `ttl_seconds` counted from the moment its read started, so no copy handed
out (with its max-age) can be older than the TTL. Time comes from an injectable monotonic clock.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from common.text import truncate
from services.common.errors import Unavailable

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Outcome(enum.StrEnum):
    """How a lookup was answered (the `result` label of the cache metric)."""

    HIT = "hit"
    """A fresh answer was there."""
    MISS = "miss"
    """No fresh answer and no read running: this caller started the read."""
    SHARED = "shared"
    """No fresh answer, but a read was running: this caller waited for it."""


class ReadFailed(Unavailable):
    """The shared read failed or passed its deadline; nothing was kept, the next caller tries again."""


@dataclass(frozen=True, slots=True)
class Answer(Generic[T]):
    """What one caller gets: the shared value, the whole seconds it stays fresh, and how it was found."""

    value: T
    max_age_seconds: int
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class _Entry(Generic[T]):
    value: T
    expires: float  # on the cache's monotonic clock

    def seconds_left(self, now: float) -> int:
        # Rounded down: a max-age never promises more freshness than is left.
        return max(0, math.floor(self.expires - now))


@dataclass(frozen=True, slots=True)
class _Flight(Generic[T]):
    task: asyncio.Task[T]
    started: float  # on the cache's monotonic clock: the answer's age counts from here
    deadline: float  # on the event loop's clock: when the read and all its waiters give up


class SingleFlightCache(Generic[T]):
    """Keeps the last value `read()` returned for `ttl_seconds`; concurrent misses share one read."""

    def __init__(
        self,
        read: Callable[[], Awaitable[T]],
        *,
        ttl_seconds: float,
        read_timeout_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        on_lookup: Callable[[Outcome], None] | None = None,
        failure_message: str = "the answer could not be read, try again later",
    ) -> None:
        if ttl_seconds <= 0 or read_timeout_seconds <= 0:
            raise ValueError("ttl_seconds and read_timeout_seconds must be positive")
        self._read = read
        self._ttl = ttl_seconds
        self._read_timeout = read_timeout_seconds
        self._clock = clock
        self._on_lookup = on_lookup
        self._failure_message = failure_message
        self._entry: _Entry[T] | None = None
        self._flight: _Flight[T] | None = None
        self._waiting = 0

    @property
    def waiting(self) -> int:
        """Callers waiting for the running read right now (tests wait on it)."""
        return self._waiting

    @property
    def reading(self) -> bool:
        """Whether a read is running."""
        return self._flight is not None

    async def get(self) -> Answer[T]:
        """The fresh answer, reading it once for everyone when there is none; raises `ReadFailed`."""
        now = self._clock()
        entry = self._entry
        if entry is not None and now < entry.expires:
            self._observe(Outcome.HIT)
            return Answer(entry.value, entry.seconds_left(now), Outcome.HIT)
        flight = self._flight
        outcome = Outcome.SHARED
        if flight is None:
            flight = self._start(now)
            outcome = Outcome.MISS
        self._observe(outcome)
        self._waiting += 1
        try:
            async with asyncio.timeout_at(flight.deadline):
                value = await asyncio.shield(flight.task)
        except TimeoutError:
            raise ReadFailed(self._failure_message) from None
        except asyncio.CancelledError:
            # The read itself was cancelled (the cache is closing) while this caller still waits.
            current = asyncio.current_task()
            if flight.task.cancelled() and current is not None and not current.cancelling():
                raise ReadFailed(self._failure_message) from None
            raise
        except Exception as e:
            raise ReadFailed(self._failure_message) from e
        finally:
            self._waiting -= 1
        return Answer(value, _Entry(value, flight.started + self._ttl).seconds_left(self._clock()), outcome)

    def _start(self, now: float) -> _Flight[T]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._read_timeout
        task = loop.create_task(self._bounded_read(deadline), name="single-flight read")
        flight = _Flight(task, now, deadline)
        self._flight = flight
        task.add_done_callback(lambda done: self._finish(flight, done))
        return flight

    async def _bounded_read(self, deadline: float) -> T:
        async with asyncio.timeout_at(deadline):
            return await self._read()

    def _finish(self, flight: _Flight[T], task: asyncio.Task[T]) -> None:
        """Keep a successful answer, forget a failed one; runs once per read, before any waiter resumes."""
        if self._flight is flight:
            self._flight = None
        if task.cancelled():
            logger.info("shared read cancelled")
            return
        error = task.exception()  # retrieving it also keeps asyncio from warning about it
        if error is None:
            self._entry = _Entry(task.result(), flight.started + self._ttl)
        elif isinstance(error, TimeoutError):
            logger.warning("shared read passed its deadline", extra={"read_timeout_seconds": self._read_timeout})
        else:
            logger.warning(
                "shared read failed",
                extra={"cause": type(error).__name__, "error": truncate(str(error), 300)},
                exc_info=error if logger.isEnabledFor(logging.DEBUG) else None,
            )

    def _observe(self, outcome: Outcome) -> None:
        if self._on_lookup is not None:
            self._on_lookup(outcome)

    async def close(self) -> None:
        """Cancel a running read (at shutdown, before the pool closes) and wait for it to stop."""
        flight = self._flight
        if flight is not None:
            flight.task.cancel()
            await asyncio.gather(flight.task, return_exceptions=True)
