"""How glibc's allocator behaves in an API process: its arenas (`MALLOC_ARENA_MAX`) and where large
blocks come from (`MALLOC_MMAP_THRESHOLD_`).

Both settings keep an API's RSS flat under a flood of short-lived HTTP/2 streams (rapid reset), where
nothing leaks but glibc's defaults keep freed memory instead of returning it:

- **Arenas.** glibc gives each thread that allocates under contention an arena of its own, up to eight
  per core, and an arena's freed memory is seldom returned to the system. gRPC core serves the gRPC
  port from several threads, so the streams' small allocations spread over many arenas and the RSS
  keeps growing with the number of streams served. Two arenas bound that, at no cost worth naming:
  the API's threads spend their time in gRPC core and Python, not waiting on malloc's locks.
- **The mmap threshold.** glibc serves a block of at least the threshold (128 KiB at first) with a
  mapping of its own, returned to the system when freed, but raises the threshold to the size of
  each such block freed, up to 32 MiB. After the first large buffers come and go, blocks of 64 KiB
  and more land in the main heap, whose holes are not returned, so the heap still grows with two
  arenas. A fixed threshold turns that adjustment off. A block of 64 KiB or more (a large page of
  answers) then costs one mapping, a few microseconds against the milliseconds of the query that
  filled it. Fixing the threshold also stops glibc moving its trim threshold (how much free memory
  the top of the heap may keep before it is returned), at whatever it had reached by then; it is set
  to twice the mmap threshold, the relation glibc itself keeps between the two.

`bench.rapid_reset` measures the RSS growth with and without these settings; docs/results.md keeps
its figures.

glibc reads both variables itself when the process starts (hence their names, glibc's own, the
threshold's in bytes); setting them again from Python makes the bounds hold where the environment
does not set them (a plain `platform-admin-api` on a laptop). On a C library other than glibc,
nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Mapping
from dataclasses import dataclass

from common.settings import env_int

DEFAULT_MALLOC_ARENAS = 2
DEFAULT_MMAP_THRESHOLD_BYTES = 64 << 10
MIN_MMAP_THRESHOLD_BYTES = 4 << 10
"""A page: below it every small allocation would be a mapping of its own."""
MAX_MMAP_THRESHOLD_BYTES = 32 << 20
"""glibc's own ceiling for the threshold on 64-bit systems (half its heap size); mallopt refuses more."""
# mallopt's parameter numbers (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


@dataclass(frozen=True)
class MallocSettings:
    """What an API process asks of glibc's allocator at start."""

    arenas: int = DEFAULT_MALLOC_ARENAS
    """MALLOC_ARENA_MAX: at most this many malloc arenas."""
    mmap_threshold_bytes: int = DEFAULT_MMAP_THRESHOLD_BYTES
    """MALLOC_MMAP_THRESHOLD_: blocks of at least this many bytes get a mapping of their own."""


def malloc_settings_from_env(env: Mapping[str, str]) -> MallocSettings:
    """`MALLOC_ARENA_MAX` (at least 1) and `MALLOC_MMAP_THRESHOLD_` (4 KiB to 32 MiB). Raises SettingsError."""
    threshold = env_int(
        env,
        "MALLOC_MMAP_THRESHOLD_",
        DEFAULT_MMAP_THRESHOLD_BYTES,
        minimum=MIN_MMAP_THRESHOLD_BYTES,
        maximum=MAX_MMAP_THRESHOLD_BYTES,
    )
    return MallocSettings(
        arenas=env_int(env, "MALLOC_ARENA_MAX", DEFAULT_MALLOC_ARENAS, minimum=1), mmap_threshold_bytes=threshold
    )


def tune_malloc(settings: MallocSettings) -> bool:
    """Apply `settings` to glibc's allocator from now on; False where the C library is not glibc."""
    if settings.arenas < 1:
        raise ValueError(f"at least one malloc arena, not {settings.arenas}")
    threshold = settings.mmap_threshold_bytes
    if not MIN_MMAP_THRESHOLD_BYTES <= threshold <= MAX_MMAP_THRESHOLD_BYTES:
        raise ValueError(
            f"an mmap threshold from {MIN_MMAP_THRESHOLD_BYTES} to {MAX_MMAP_THRESHOLD_BYTES}, not {threshold}"
        )
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return False
    libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.mallopt.restype = ctypes.c_int
    applied = [
        libc.mallopt(M_ARENA_MAX, settings.arenas),
        libc.mallopt(M_MMAP_THRESHOLD, threshold),
        libc.mallopt(M_TRIM_THRESHOLD, 2 * threshold),
    ]
    return applied == [1, 1, 1]
