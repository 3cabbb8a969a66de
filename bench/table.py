"""The one table of `python -m bench`: each figure, its reference from the same run, ratio, target, verdict.

A `Row` is plain data, so the table is printed (`render`), kept as JSON (`to_json` / `rows_from_json`,
in bench/results/) and tested without running a benchmark. Targets are written the way the issues
write them (`<= 3`, `>= 0.8`, `< 400`) and checked by `meets`; a row without a target is a figure
reported for context. Growth points (`Point`) are the costs measured at several fleet sizes, which
bench/plot.py draws.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
}


@dataclass(frozen=True)
class Target:
    """What a figure must satisfy: `compared op limit`, e.g. a ratio `<= 3`."""

    op: str
    limit: float

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise ValueError(f"unknown target operator {self.op!r}: expected one of {', '.join(OPERATORS)}")

    def __str__(self) -> str:
        return f"{self.op} {self.limit:g}"


def meets(value: float, target: Target) -> bool:
    return OPERATORS[target.op](value, target.limit)


@dataclass(frozen=True)
class Row:
    """One line of the table. The target applies to the ratio when there is a reference, else to the value."""

    benchmark: str
    figure: str
    value: float
    unit: str
    reference: str = ""
    reference_value: float | None = None
    target: Target | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.reference_value is None:
            return None
        if self.reference_value == 0:
            return float("inf") if self.value else 1.0
        return self.value / self.reference_value

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        compared = self.ratio if self.ratio is not None else self.value
        return meets(compared, self.target)


@dataclass(frozen=True)
class Point:
    """One cost at one fleet size, for the growth plot."""

    series: str  # e.g. "platform_overview()"
    panel: str  # which chart it belongs to, e.g. "database functions"
    size: float  # the x axis: how big the fleet was
    value: float
    unit: str
    size_unit: str = "clusters"  # what `size` counts (reconcile and the collector count shoots)
    benchmark: str = ""  # which benchmark measured it, so a later run of that benchmark replaces it


def format_value(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if value == 0 or abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}".rstrip()


def render(rows: Sequence[Row]) -> str:
    """A plain-text table, one row per figure, with a summary line of targets met."""
    header = ("benchmark", "figure", "value", "reference", "ref. value", "ratio", "target", "met")
    cells = [header]
    for row in rows:
        met = "-" if row.met is None else ("yes" if row.met else "NO")
        ratio = "-" if row.ratio is None else f"{row.ratio:.2f}x"
        cells.append(
            (
                row.benchmark,
                row.figure,
                format_value(row.value, row.unit),
                row.reference or "-",
                format_value(row.reference_value, row.unit) if row.reference_value is not None else "-",
                ratio,
                str(row.target) if row.target else "-",
                met,
            )
        )
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    right = {2, 4, 5}
    lines = []
    for n, line in enumerate(cells):
        lines.append(
            "  ".join(cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(line))
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    notes = [f"  {row.benchmark} / {row.figure}: {row.note}" for row in rows if row.note]
    targets = [row for row in rows if row.met is not None]
    missed = [row for row in targets if not row.met]
    lines.append(f"{len(targets) - len(missed)} of {len(targets)} targets met" + (", missed:" if missed else ""))
    lines += [f"  {row.benchmark} / {row.figure}" for row in missed]
    if notes:
        lines += ["notes:", *notes]
    return "\n".join(lines)


def _row_json(row: Row) -> dict[str, Any]:
    data = asdict(row)
    data["target"] = None if row.target is None else {"op": row.target.op, "limit": row.target.limit}
    data["ratio"] = row.ratio
    data["met"] = row.met
    return data


def to_json(rows: Iterable[Row], points: Iterable[Point], meta: dict[str, Any]) -> str:
    """The table, the growth points and what the run was (`meta`) as one JSON document."""
    document = {
        "meta": meta,
        "rows": [_row_json(row) for row in rows],
        "growth": [asdict(point) for point in points],
    }
    return json.dumps(document, indent=1)


def rows_from_json(text: str) -> tuple[list[Row], list[Point]]:
    """Read back what `to_json` wrote (ratio and met are recomputed, not trusted)."""
    document = json.loads(text)
    rows = []
    for data in document["rows"]:
        target = data.get("target")
        rows.append(
            Row(
                benchmark=data["benchmark"],
                figure=data["figure"],
                value=float(data["value"]),
                unit=data["unit"],
                reference=data.get("reference", ""),
                reference_value=data.get("reference_value"),
                target=None if target is None else Target(target["op"], float(target["limit"])),
                note=data.get("note", ""),
            )
        )
    points = [Point(**data) for data in document.get("growth", [])]
    return rows, points
