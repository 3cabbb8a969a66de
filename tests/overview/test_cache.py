"""The single-flight cache on its own: one read per miss, TTL and max-age, failures, deadline, cancellation.

No I/O: the read is a coroutine the test controls through events, and time is a clock the test moves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from services.common.errors import Unavailable
from services.common.singleflight import Outcome, ReadFailed, SingleFlightCache
from tests.fixtures.overview import FakeClock
from tests.fixtures.waiting import eventually_async


@dataclass
class ControlledRead:
    """A read that counts its calls and, when gated, waits until the test opens the gate."""

    results: list[object] = field(default_factory=list)
    calls: int = 0
    started: asyncio.Event = field(default_factory=asyncio.Event)
    gated: bool = False
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: int = 0

    async def __call__(self) -> str:
        self.calls += 1
        self.started.set()
        try:
            if self.gated:
                await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        result = self.results.pop(0) if self.results else f"answer {self.calls}"
        if isinstance(result, BaseException):
            raise result
        return str(result)


def make_cache(
    read: Callable[[], Awaitable[str]],
    clock: FakeClock,
    *,
    ttl: float = 60,
    # The read's deadline is real time: only the test of the deadline sets a short one. On a loaded
    # machine 200 callers may take seconds to line up, and a deadline passing then would release them.
    read_timeout: float = 3600.0,
    lookups: list[Outcome] | None = None,
) -> SingleFlightCache[str]:
    return SingleFlightCache(
        read,
        ttl_seconds=ttl,
        read_timeout_seconds=read_timeout,
        clock=clock,
        on_lookup=None if lookups is None else lookups.append,
        failure_message="try again later",
    )


async def test_concurrent_misses_share_one_read() -> None:
    read = ControlledRead(gated=True)
    lookups: list[Outcome] = []
    cache = make_cache(read, FakeClock(), lookups=lookups)
    callers = [asyncio.create_task(cache.get()) for _ in range(200)]
    await eventually_async(lambda: cache.waiting == 200)
    assert read.calls == 1
    read.gate.set()
    answers = await asyncio.gather(*callers)
    assert {answer.value for answer in answers} == {"answer 1"}
    assert lookups.count(Outcome.MISS) == 1 and lookups.count(Outcome.SHARED) == 199
    later = await cache.get()
    assert (later.value, later.outcome, read.calls) == ("answer 1", Outcome.HIT, 1)


async def test_max_age_is_whole_seconds_left_and_falls_until_a_new_read() -> None:
    clock = FakeClock()
    read = ControlledRead()
    cache = make_cache(read, clock, ttl=60)
    ages = []
    # Steps in exact binary fractions, so "60 seconds later" is exactly 60: at 0, 0.5, 10.5, 40.75, 59.75 s.
    for step in (0.0, 0.5, 10.0, 30.25, 19.0):
        clock.advance(step)
        answer = await cache.get()
        ages.append(answer.max_age_seconds)
        assert answer.value == "answer 1"
    assert ages == [60, 59, 49, 19, 0]
    clock.advance(0.25)  # exactly 60 seconds after the read started: no longer fresh
    renewed = await cache.get()
    assert (renewed.value, renewed.outcome, renewed.max_age_seconds) == ("answer 2", Outcome.MISS, 60)


async def test_age_counts_from_when_the_read_started() -> None:
    clock = FakeClock()
    read = ControlledRead(gated=True)
    cache = make_cache(read, clock, ttl=60)
    caller = asyncio.create_task(cache.get())
    await read.started.wait()
    clock.advance(12.5)  # the database took a while to answer
    read.gate.set()
    assert (await caller).max_age_seconds == 47


async def test_a_failed_read_is_not_kept_and_the_next_caller_reads_again() -> None:
    read = ControlledRead(results=[ConnectionError("server closed the connection"), "fresh"])
    cache = make_cache(read, FakeClock())
    with pytest.raises(ReadFailed) as caught:
        await cache.get()
    assert isinstance(caught.value, Unavailable)
    assert caught.value.message == "try again later"
    assert isinstance(caught.value.__cause__, ConnectionError)
    answer = await cache.get()
    assert (answer.value, answer.outcome, read.calls) == ("fresh", Outcome.MISS, 2)


async def test_every_waiter_of_a_failed_read_gets_its_own_error() -> None:
    read = ControlledRead(results=[RuntimeError("boom")], gated=True)
    cache = make_cache(read, FakeClock())
    callers = [asyncio.create_task(cache.get()) for _ in range(5)]
    await eventually_async(lambda: cache.waiting == 5)
    read.gate.set()
    errors = await asyncio.gather(*callers, return_exceptions=True)
    assert all(isinstance(error, ReadFailed) for error in errors)
    assert len({id(error) for error in errors}) == 5  # no exception object is raised twice
    assert read.calls == 1 and not cache.reading


async def test_a_stalled_read_releases_every_waiter_at_its_deadline_and_is_cancelled() -> None:
    read = ControlledRead(gated=True)  # never opened: the read stalls
    cache = make_cache(read, FakeClock(), read_timeout=0.2)
    callers = [asyncio.create_task(cache.get()) for _ in range(10)]
    results = await asyncio.wait_for(asyncio.gather(*callers, return_exceptions=True), timeout=10)
    assert all(isinstance(result, ReadFailed) for result in results)
    await eventually_async(lambda: not cache.reading)
    assert read.cancelled == 1
    read.gated = False
    assert (await cache.get()).value == "answer 2"  # the next caller tries again


async def test_a_caller_that_gives_up_does_not_cancel_the_shared_read() -> None:
    read = ControlledRead(gated=True)
    cache = make_cache(read, FakeClock())
    impatient = asyncio.create_task(cache.get())
    patient = asyncio.create_task(cache.get())
    await eventually_async(lambda: cache.waiting == 2)
    impatient.cancel()
    with pytest.raises(asyncio.CancelledError):
        await impatient
    assert cache.reading and read.cancelled == 0
    read.gate.set()
    assert (await patient).value == "answer 1"
    assert read.calls == 1


async def test_a_read_nobody_waits_for_any_more_still_fills_the_cache() -> None:
    read = ControlledRead(gated=True)
    cache = make_cache(read, FakeClock())
    caller = asyncio.create_task(cache.get())
    await read.started.wait()
    caller.cancel()
    await asyncio.gather(caller, return_exceptions=True)
    read.gate.set()
    await eventually_async(lambda: not cache.reading)
    answer = await cache.get()
    assert (answer.value, answer.outcome, read.calls) == ("answer 1", Outcome.HIT, 1)


async def test_close_cancels_a_running_read_and_its_waiters_fail_cleanly() -> None:
    read = ControlledRead(gated=True)
    cache = make_cache(read, FakeClock())
    caller = asyncio.create_task(cache.get())
    await read.started.wait()
    await cache.close()
    with pytest.raises(ReadFailed):
        await caller
    assert read.cancelled == 1


@pytest.mark.parametrize(("ttl", "read_timeout"), [(0, 1.0), (60, 0), (-1, 1.0)], ids=["no-ttl", "no-deadline", "neg"])
def test_ttl_and_read_timeout_must_be_positive(ttl: float, read_timeout: float) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        make_cache(ControlledRead(), FakeClock(), ttl=ttl, read_timeout=read_timeout)
