"""MALLOC_ARENA_MAX: the API processes ask glibc for at most that many malloc arenas.

The effect is checked in a child interpreter: each new thread that allocates gets an arena of its own
until glibc's limit is reached, and `malloc_stats()` prints one "Arena N:" block per arena.
"""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from common.malloc_arenas import DEFAULT_MALLOC_ARENAS, limit_malloc_arenas, malloc_arenas_from_env
from common.settings import SettingsError

glibc_only = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="arenas are glibc's")

CHILD = """
import ctypes, ctypes.util, sys, threading
from common.malloc_arenas import limit_malloc_arenas
if sys.argv[1] != "none":
    assert limit_malloc_arenas(int(sys.argv[1]))
hold = []
barrier = threading.Barrier(6)
def allocate():
    hold.append([bytearray(64) for _ in range(2000)])
    barrier.wait()
threads = [threading.Thread(target=allocate) for _ in range(5)]
for t in threads: t.start()
barrier.wait()
ctypes.CDLL(ctypes.util.find_library("c")).malloc_stats()
for t in threads: t.join()
"""


def arenas_used(limit: str) -> int:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, limit], capture_output=True, text=True, timeout=60, check=True, env={}
    )
    return sum(1 for line in child.stderr.splitlines() if line.startswith("Arena "))


def test_the_default_is_two_and_a_value_below_one_is_refused() -> None:
    assert malloc_arenas_from_env({}) == DEFAULT_MALLOC_ARENAS == 2
    assert malloc_arenas_from_env({"MALLOC_ARENA_MAX": "4"}) == 4
    with pytest.raises(SettingsError, match=r"MALLOC_ARENA_MAX='0': must be at least 1"):
        malloc_arenas_from_env({"MALLOC_ARENA_MAX": "0"})
    with pytest.raises(SettingsError, match="expected a whole number"):
        malloc_arenas_from_env({"MALLOC_ARENA_MAX": "few"})
    with pytest.raises(ValueError, match="at least one"):
        limit_malloc_arenas(0)


@glibc_only
def test_threads_share_the_limited_arenas() -> None:
    assert arenas_used("none") > 2, "without a limit, each allocating thread should get its own arena"
    assert arenas_used("2") <= 2
    assert arenas_used("1") == 1
