"""How a benchmark module tells `python -m bench` what to run and how to read it.

Each benchmark module keeps its own command line and prints its own report; with `--json` it also
writes its figures as a flat JSON object. Beside that, each declares a `BENCHMARK`: `plan`, the runs
to make for the options of the whole run (the costs that grow with the fleet at three sizes, 1%, 10%
and 100% of the scale fleet; the quick mode stops at 10%), and `read`, which turns the figures of
those runs into table `Row`s (each target against its reference measured in the same run) and
growth `Point`s. The targets are the module's own constants, so the table and the module's report
never disagree. bench/suite.py lists the benchmarks in the order they run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.table import Point, Row

FULL = (1, 10, 100)
QUICK = (1, 10)
Figures = Mapping[str, Any]


@dataclass(frozen=True)
class Options:
    """What the whole run was asked for."""

    dsn: str
    quick: bool = False

    @property
    def percents(self) -> tuple[int, ...]:
        return QUICK if self.quick else FULL


@dataclass(frozen=True)
class Run:
    """One process of one benchmark: `python -m <module> <args> --json FILE`."""

    benchmark: str
    module: str
    args: tuple[str, ...]
    percent: int = 100  # of the scale fleet; 100 also for benchmarks that have one size
    timeout_seconds: float = 1200.0

    @property
    def label(self) -> str:
        return self.benchmark if self.percent == 100 else f"{self.benchmark}@{self.percent}%"


Result = tuple[Run, Figures]
Reading = tuple[list[Row], list[Point]]


@dataclass(frozen=True)
class Benchmark:
    """A benchmark as the table knows it: its name, the runs it makes, how their figures are read."""

    name: str
    plan: Callable[[Options], list[Run]]
    read: Callable[[Sequence[Result]], Reading]


def largest(results: Sequence[Result]) -> Result:
    """The run at the largest fleet: the one whose figures the table shows."""
    return max(results, key=lambda result: result[0].percent)


def size_note(run: Run) -> str:
    return "" if run.percent == 100 else f"measured at {run.percent}% of the scale fleet (quick mode)"
