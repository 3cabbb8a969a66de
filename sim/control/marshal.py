"""Marshalling onto the simulator's event loop: what every control action that touches the world uses.

The server runs on its own event loop (usually in a background thread), and the world must only change
between two steps of that loop, so a method that touches the world is run on it and waits for the
result. Called on the loop itself (by the HTTP endpoint), it runs directly.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from sim.api.simulator import Simulator

P = ParamSpec("P")
T = TypeVar("T")
B = TypeVar("B", bound="LoopBound")
CALL_TIMEOUT_SECONDS = 60.0


def on_loop(method: Callable[Concatenate[B, P], T]) -> Callable[Concatenate[B, P], T]:
    """Run the method on the simulator's event loop, waiting for its result."""

    def wrapper(self: B, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(functools.partial(method, self, *args, **kwargs))

    functools.update_wrapper(wrapper, method)
    return wrapper


class LoopBound:
    """A control surface over one simulator, bound to the event loop its server runs on."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None

    def bind_loop(self, loop: asyncio.AbstractEventLoop, thread_id: int) -> None:
        self._loop, self._loop_thread = loop, thread_id

    def _run(self, call: Callable[[], T]) -> T:
        loop = self._loop
        if loop is None or not loop.is_running() or threading.get_ident() == self._loop_thread:
            return call()

        async def on_the_loop() -> T:
            return call()

        return asyncio.run_coroutine_threadsafe(on_the_loop(), loop).result(CALL_TIMEOUT_SECONDS)
