"""How often Python's cyclic garbage collector runs in the worker and fleet-sim (`GC_THRESHOLD`).

Both processes turn JSON into short-lived dicts and lists all day, and nearly all of them die by
reference counting, without ever being part of a cycle. At Python's default first-generation
threshold (700 more container allocations than deallocations) the collector still walks them over
and over, more than a thousand times in a large inventory round, for a noticeable share of the
worker's CPU. At 10,000 it runs a few dozen times, and the rare real cycles (exceptions with their
tracebacks, closed connections) are still collected; `bench.collector_fanout` prints the collections
and their time per round. The older generations keep Python's defaults. The APIs
are not affected.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping

from common.settings import env_int

DEFAULT_GC_THRESHOLD = 10_000
PYTHON_GC_THRESHOLD = gc.get_threshold()[0]
"""The interpreter's own first-generation threshold (700 on CPython 3.11), for comparing against."""


def gc_threshold_from_env(env: Mapping[str, str]) -> int:
    """`GC_THRESHOLD`: net container allocations between first-generation collections, at least 1 (0,
    which would turn automatic collection off, is refused: a long-running process would keep every
    cycle). Raises SettingsError for anything else."""
    return env_int(env, "GC_THRESHOLD", DEFAULT_GC_THRESHOLD, minimum=1)


def set_gc_threshold(threshold: int) -> None:
    """Collect the first generation every `threshold` net allocations; the older generations keep theirs."""
    if threshold < 1:
        raise ValueError(f"a GC threshold is at least 1, not {threshold}")
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(threshold, older, oldest)
