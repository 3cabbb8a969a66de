"""common.health.Liveness: alive while the last beat is within the limit (a clock the test steps)."""

from __future__ import annotations

import pytest

from common.health import Liveness


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_alive_within_the_limit_and_again_after_a_beat() -> None:
    clock = Clock()
    liveness = Liveness(3.0, monotonic=clock)
    clock.now += 3.0
    assert liveness.alive() and liveness.silent_seconds == 3.0
    clock.now += 0.5
    assert not liveness.alive()
    liveness.beat()
    assert liveness.alive() and liveness.silent_seconds == 0.0


def test_a_limit_that_is_not_positive_is_refused() -> None:
    with pytest.raises(ValueError, match="stall_after_seconds=0"):
        Liveness(0)
