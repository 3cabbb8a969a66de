"""The growth plot of `python -m bench`: each cost against fleet size, so a person sees it grows linearly or better.

One panel per family of costs (the public overview's SQL, the staff API, reconcile), both axes
logarithmic. On such axes a cost that grows linearly with the fleet is a line of slope 1, drawn
dashed through each series' smallest point: a series at or under its dashed line grows linearly or
better; one that bends above it grows faster. `slope` gives the same verdict as a number (the
log-log slope between the smallest and the largest size), printed under the table.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import matplotlib as mpl

mpl.use("Agg")  # files only, never a window

import matplotlib.pyplot as plt

from bench.table import Point


def by_panel(points: Sequence[Point]) -> dict[str, dict[str, list[Point]]]:
    """Points grouped by panel, then series, each series sorted by size."""
    panels: dict[str, dict[str, list[Point]]] = defaultdict(lambda: defaultdict(list))
    for point in points:
        panels[point.panel][point.series].append(point)
    return {
        panel: {name: sorted(series, key=lambda p: p.size) for name, series in groups.items()}
        for panel, groups in panels.items()
    }


def slope(series: Sequence[Point]) -> float | None:
    """The log-log slope from the smallest to the largest size: 1 is linear, below 1 better, above worse."""
    usable = [p for p in series if p.size > 0 and p.value > 0]
    if len(usable) < 2 or usable[0].size == usable[-1].size:
        return None
    first, last = usable[0], usable[-1]
    return math.log(last.value / first.value) / math.log(last.size / first.size)


def describe(points: Sequence[Point]) -> list[str]:
    """One line per series: its sizes and its growth slope."""
    lines = []
    for panel, groups in by_panel(points).items():
        for name, series in groups.items():
            s = slope(series)
            sizes = ", ".join(f"{p.size:,.0f}: {p.value:.3g} {p.unit}" for p in series)
            verdict = (
                "-" if s is None else f"slope {s:.2f} ({'linear or better' if s <= 1.1 else 'FASTER than linear'})"
            )
            lines.append(f"{panel} / {name}: {sizes}; {verdict}")
    return lines


def draw(points: Sequence[Point], path: Path, title: str) -> None:
    """Write the PNG (one panel per family; nothing when there are no points)."""
    panels = by_panel(points)
    if not panels:
        return
    columns = min(2, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(6.5 * columns, 4.8 * rows), squeeze=False)
    cells = [ax for row in axes for ax in row]
    for ax in cells[len(panels) :]:
        ax.set_visible(False)
    for ax, (panel, groups) in zip(cells, panels.items(), strict=False):
        for name, series in groups.items():
            sizes = [p.size for p in series]
            values = [p.value for p in series]
            (line,) = ax.plot(sizes, values, marker="o", label=name)
            if len(series) >= 2 and values[0] > 0:
                linear = [values[0] * size / sizes[0] for size in sizes]
                ax.plot(sizes, linear, linestyle="--", linewidth=0.8, color=line.get_color(), alpha=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(panel, fontsize=10)
        ax.set_xlabel(f"fleet size ({next(iter(groups.values()))[0].size_unit})")
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=7)
    figure.suptitle(f"{title} (dashed: linear growth from the smallest size)", fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
