"""GC_THRESHOLD: how often Python's cyclic garbage collector runs in cluster-worker and fleet-sim."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.garbage_collection import DEFAULT_GC_THRESHOLD, gc_threshold_from_env, set_gc_threshold
from common.settings import SettingsError

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture
def kept_threshold() -> Iterator[tuple[int, int, int]]:
    """The test process's thresholds, put back afterwards whatever the test set."""
    before = gc.get_threshold()
    try:
        yield before
    finally:
        gc.set_threshold(*before)


def test_the_default_is_10000_and_any_positive_threshold_is_taken() -> None:
    assert gc_threshold_from_env({}) == DEFAULT_GC_THRESHOLD == 10_000
    assert gc_threshold_from_env({"GC_THRESHOLD": ""}) == 10_000
    assert gc_threshold_from_env({"GC_THRESHOLD": "700"}) == 700
    assert gc_threshold_from_env({"GC_THRESHOLD": "1"}) == 1


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("0", "GC_THRESHOLD='0': must be at least 1"),
        ("-1", "GC_THRESHOLD='-1': must be at least 1"),
        ("often", "GC_THRESHOLD='often': expected a whole number"),
    ],
)
def test_a_bad_threshold_is_named_and_refused(raw: str, says: str) -> None:
    with pytest.raises(SettingsError, match=says):
        gc_threshold_from_env({"GC_THRESHOLD": raw})


def test_only_the_first_generation_changes(kept_threshold: tuple[int, int, int]) -> None:
    _, older, oldest = kept_threshold
    set_gc_threshold(12_345)
    assert gc.get_threshold() == (12_345, older, oldest)
    with pytest.raises(ValueError, match="at least 1, not 0"):
        set_gc_threshold(0)
    assert gc.get_threshold() == (12_345, older, oldest), "a refused value changes nothing"


def test_fleet_sim_refuses_a_threshold_below_1_by_name(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sim.main", "--port", "0", "--state-dir", str(tmp_path), "--gc-threshold", "0"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--gc-threshold 0: must be at least 1" in done.stderr
