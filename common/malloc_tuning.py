"""How many malloc arenas glibc may keep in an API process (`MALLOC_ARENA_MAX`).

glibc gives each thread that allocates under contention an arena of its own, up to eight per core,
and an arena's freed memory is seldom returned to the system. gRPC core serves the API's gRPC port
from several threads, so a flood of short-lived streams (HTTP/2 rapid reset) spreads its small
allocations over many arenas, and the process's RSS creeps up with the number of streams although
nothing leaks: `bench.rapid_reset` measured 1.20x more RSS after 400,000 reset streams than after
50,000 with glibc's default, 1.06x with two arenas. Two arenas cost nothing measurable here: the
API's threads spend their time in gRPC core and Python, not waiting on malloc's locks.

glibc reads the same variable itself when the process starts; setting it again from Python makes the
bound hold where the environment does not set it (a plain `platform-admin-api` on a laptop). On a C
library other than glibc, nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Mapping

from common.settings import env_int

DEFAULT_MALLOC_ARENAS = 2
M_ARENA_MAX = -8
"""mallopt's parameter number for the arena limit (glibc's malloc.h)."""


def malloc_arenas_from_env(env: Mapping[str, str]) -> int:
    """`MALLOC_ARENA_MAX`: at most this many malloc arenas, at least 1. Raises SettingsError otherwise."""
    return env_int(env, "MALLOC_ARENA_MAX", DEFAULT_MALLOC_ARENAS, minimum=1)


def limit_malloc_arenas(arenas: int) -> bool:
    """Ask glibc for at most `arenas` arenas from now on; False where the C library is not glibc."""
    if arenas < 1:
        raise ValueError(f"at least one malloc arena, not {arenas}")
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return False
    libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.mallopt.restype = ctypes.c_int
    return bool(libc.mallopt(M_ARENA_MAX, arenas) == 1)
