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
