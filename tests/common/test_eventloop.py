"""EVENT_LOOP: which loop cluster-worker and fleet-sim run on."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from common import eventloop
from common.settings import SettingsError


async def running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_the_default_is_uvloop_and_asyncio_is_the_standard_loop() -> None:
    assert eventloop.event_loop_from_env({}) == "uvloop"
    assert isinstance(eventloop.run(running_loop()), uvloop.Loop)
    standard = eventloop.run(running_loop(), event_loop=eventloop.event_loop_from_env({"EVENT_LOOP": "asyncio"}))
    assert not isinstance(standard, uvloop.Loop)
    assert isinstance(standard, asyncio.BaseEventLoop)


def test_an_unknown_loop_is_named_and_refused() -> None:
    with pytest.raises(SettingsError, match="EVENT_LOOP='tokio': expected one of uvloop, asyncio"):
        eventloop.event_loop_from_env({"EVENT_LOOP": "tokio"})
    with pytest.raises(ValueError, match="unknown event loop 'tokio'"):
        eventloop.run(running_loop(), event_loop="tokio")


class _Transport:
    """Stands in for the transport the loop names in its report."""


def test_a_connection_a_peer_broke_is_one_line_without_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    # What uvloop reports when TLS still writes to a transport the peer already closed.
    async def report() -> None:
        loop = asyncio.get_running_loop()
        loop.call_exception_handler(
            {
                "message": "Fatal error on SSL protocol",
                "exception": RuntimeError("unable to perform operation on <TCPTransport>; the handler is closed"),
                "transport": _Transport(),
            }
        )
        loop.call_exception_handler({"message": "a bug of ours", "exception": ValueError("boom")})

    with caplog.at_level("WARNING"):
        eventloop.run(report())
    quiet = [r for r in caplog.records if r.name == "common.eventloop"]
    assert len(quiet) == 1 and quiet[0].exc_info is None
    assert "handler is closed" in quiet[0].__dict__["error"]
    assert quiet[0].__dict__["detail"] == "Fatal error on SSL protocol"
    # Anything not on a connection still reaches the default handler, traceback and all.
    loud = [r for r in caplog.records if r.name == "asyncio"]
    assert len(loud) == 1 and loud[0].exc_info is not None and "a bug of ours" in loud[0].getMessage()
