"""MALLOC_ARENA_MAX and MALLOC_MMAP_THRESHOLD_: what the API processes ask of glibc's allocator.

Each effect is checked in a child interpreter started with an empty environment (so glibc's own reading
of the variables plays no part): for the arenas, each new thread that allocates gets an arena of its
own until the limit is reached, and `malloc_stats()` prints one "Arena N:" block per arena; for the
threshold, `mallinfo2()` counts the blocks that have a mapping of their own.
"""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from common.settings import SettingsError
from services.common.malloc_tuning import (
    DEFAULT_MALLOC_ARENAS,
    DEFAULT_MMAP_THRESHOLD_BYTES,
    MallocSettings,
    malloc_settings_from_env,
    tune_malloc,
)

glibc_only = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="arenas and mmap thresholds are glibc's")
# mallinfo2 counts mapped blocks without overflowing; glibc has it since 2.33.
with_mallinfo2 = pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc" or tuple(int(p) for p in platform.libc_ver()[1].split(".")[:2]) < (2, 33),
    reason="mallinfo2 is glibc 2.33's",
)

ARENAS_CHILD = """
import ctypes, ctypes.util, sys, threading
from services.common.malloc_tuning import MallocSettings, tune_malloc
if sys.argv[1] != "none":
    assert tune_malloc(MallocSettings(arenas=int(sys.argv[1])))
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

# Freeing a 4 MiB block raises glibc's own threshold to 4 MiB. A 512 KiB block after that (more than the
# heap's free top holds, which glibc would use first) extends the heap, unless the threshold is fixed
# below its size. Prints how many more mapped blocks there are while it lives.
THRESHOLD_CHILD = """
import ctypes, ctypes.util, sys
from services.common.malloc_tuning import MallocSettings, tune_malloc
class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.mallinfo2.restype = Mallinfo2
if sys.argv[1] != "none":
    assert tune_malloc(MallocSettings(mmap_threshold_bytes=int(sys.argv[1])))
big = bytearray(4 << 20)
del big
before = libc.mallinfo2().hblks
block = bytearray(512 << 10)
print(libc.mallinfo2().hblks - before)
"""


def child(script: str, argument: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, argument], capture_output=True, text=True, timeout=60, check=True, env={}
    )


def arenas_used(limit: str) -> int:
    return sum(1 for line in child(ARENAS_CHILD, limit).stderr.splitlines() if line.startswith("Arena "))


def mapped_blocks_of_a_512_kib_block(threshold: str) -> int:
    return int(child(THRESHOLD_CHILD, threshold).stdout)


def test_the_defaults_and_values_out_of_range_are_refused() -> None:
    assert malloc_settings_from_env({}) == MallocSettings(DEFAULT_MALLOC_ARENAS, DEFAULT_MMAP_THRESHOLD_BYTES)
    assert malloc_settings_from_env({}) == MallocSettings(2, 65536)
    assert malloc_settings_from_env({"MALLOC_ARENA_MAX": "4", "MALLOC_MMAP_THRESHOLD_": "4096"}) == MallocSettings(
        4, 4096
    )
    with pytest.raises(SettingsError, match=r"MALLOC_ARENA_MAX='0': must be at least 1"):
        malloc_settings_from_env({"MALLOC_ARENA_MAX": "0"})
    with pytest.raises(SettingsError, match="expected a whole number"):
        malloc_settings_from_env({"MALLOC_ARENA_MAX": "few"})
    with pytest.raises(SettingsError, match=r"MALLOC_MMAP_THRESHOLD_='0': must be at least 4096"):
        malloc_settings_from_env({"MALLOC_MMAP_THRESHOLD_": "0"})
    with pytest.raises(SettingsError, match=r"MALLOC_MMAP_THRESHOLD_='33554433': must be at most 33554432"):
        malloc_settings_from_env({"MALLOC_MMAP_THRESHOLD_": "33554433"})
    with pytest.raises(ValueError, match="at least one"):
        tune_malloc(MallocSettings(arenas=0))
    with pytest.raises(ValueError, match="an mmap threshold from 4096"):
        tune_malloc(MallocSettings(mmap_threshold_bytes=1024))


@glibc_only
def test_threads_share_the_limited_arenas() -> None:
    assert arenas_used("none") > 2, "without a limit, each allocating thread should get its own arena"
    assert arenas_used("2") <= 2
    assert arenas_used("1") == 1


@with_mallinfo2
def test_a_fixed_threshold_keeps_large_blocks_out_of_the_heap() -> None:
    assert mapped_blocks_of_a_512_kib_block("none") == 0, "glibc's own threshold should have risen past 512 KiB"
    assert mapped_blocks_of_a_512_kib_block(str(DEFAULT_MMAP_THRESHOLD_BYTES)) == 1
    assert mapped_blocks_of_a_512_kib_block(str(1 << 20)) == 0
