"""The event loop a long-running asyncio process runs on (`EVENT_LOOP`).

uvloop by default: the collector and fleet-sim spend most of their CPU in the event loop, TLS and
HTTP handling, and uvloop runs the loop and its TLS transport in C where the standard loop runs them
in Python, which shows as clearly less CPU per cluster in `bench.collector_fanout --event-loop`.
`asyncio` keeps the standard loop, e.g. to rule the loop
out when chasing a bug. The APIs are not affected: grpc.aio and uvicorn run on the standard loop.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

import uvloop

from common.settings import env_choice

T = TypeVar("T")

log = logging.getLogger(__name__)

EVENT_LOOPS = ("uvloop", "asyncio")
DEFAULT_EVENT_LOOP = "uvloop"


def event_loop_from_env(env: Mapping[str, str]) -> str:
    """`EVENT_LOOP`: `uvloop` (default) or `asyncio`. Raises SettingsError for anything else."""
    return env_choice(env, "EVENT_LOOP", DEFAULT_EVENT_LOOP, EVENT_LOOPS)


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What `asyncio.Runner` builds its loop with; None is the standard loop."""
    if name not in EVENT_LOOPS:
        raise ValueError(f"unknown event loop {name!r}: expected one of {', '.join(EVENT_LOOPS)}")
    return uvloop.new_event_loop if name == "uvloop" else None


def run(main: Coroutine[Any, Any, T], *, event_loop: str = DEFAULT_EVENT_LOOP) -> T:
    """`asyncio.run(main)` on the named event loop. Raises ValueError for an unknown loop."""
    try:
        factory = loop_factory(event_loop)
    except ValueError:
        main.close()  # never started: no "never awaited" warning on top of the error
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.get_loop().set_exception_handler(quiet_transport_errors)
        return runner.run(main)


# What a peer can cause on one connection: it hangs up mid-handshake, resets, or the transport is
# closed while TLS still has bytes to write (uvloop's "handler is closed").
_PEER_CAUSED = (ConnectionError, ssl.SSLError, TimeoutError, RuntimeError)


def quiet_transport_errors(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """One line, no traceback, for a connection a peer broke; the default handler for the rest.

    The loop reports these from inside its transports, after the request that used the connection
    has already failed or finished with its own error; a traceback there reads like a bug in us.
    """
    error = context.get("exception")
    on_connection = "transport" in context or "protocol" in context
    if on_connection and isinstance(error, _PEER_CAUSED):
        log.warning(
            "connection closed with an error",
            extra={"detail": context.get("message", ""), "error": f"{type(error).__name__}: {error}"},
        )
        return
    loop.default_exception_handler(context)
