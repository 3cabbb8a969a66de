"""How every long-running process is asked to stop: SIGTERM (Kubernetes, the demo's supervisor) or
SIGINT (Ctrl-C) sets one event that its main coroutine waits on, so it can finish what it is doing
and close what it holds instead of dying mid-write."""

from __future__ import annotations

import asyncio
import signal

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def stop_event() -> asyncio.Event:
    """An event that SIGTERM or SIGINT sets from now on; call it inside the running event loop."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop.set)
    return stop
