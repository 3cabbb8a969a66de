"""ListUsage's groups as rows: a table for people, RFC 4180 CSV for spreadsheets and billing tools.

The CSV's columns take their names from the FinOps FOCUS specification where they mean the same
(ChargePeriodStart, ChargePeriodEnd, SubAccountId, SubAccountName, ResourceId, ResourceName,
ResourceType, ConsumedQuantity, ConsumedUnit); what FOCUS has no column for carries its `x_` prefix
for custom columns. No prices: they are not this project's. One row per group and step:

- ConsumedQuantity is the **lower bound** in hours (each ledger row from `created` to `last_seen`: the
  time the inventory saw it), so an export never bills time nobody saw; x_ConsumedQuantityUpperBound
  is the upper bound (to `destroyed`, an active row to the answer's read time), x_PeakCount the most
  rows present at once in the step;
- ConsumedUnit is `Hours`; quantities are decimal hours with six places (3.6 ms);
- times are ISO 8601 in UTC with `Z`; the file is UTF-8 without a byte order mark, CRLF line ends,
  one header row, fields quoted where RFC 4180 needs it;
- a text cell a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, tab or CR) is
  prefixed with `'`: names come from tenants.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TextIO

from fundament.fleet.v1 import fleet_pb2

UNIT = "Hours"
SECONDS_PER_HOUR = 3600
COLUMNS = (
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "SubAccountId",
    "SubAccountName",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "ConsumedQuantity",
    "ConsumedUnit",
    "x_ConsumedQuantityLowerBound",
    "x_ConsumedQuantityUpperBound",
    "x_PeakCount",
)
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One group's one step."""

    start: datetime
    end: datetime
    organization_id: str
    organization_name: str
    cluster_id: str
    cluster_name: str
    resource_type: str
    lower_hours: float
    upper_hours: float
    peak: int


def rows_of(groups: Iterable[fleet_pb2.UsageGroup]) -> Iterator[UsageRow]:
    for group in groups:
        for step in group.steps:
            yield UsageRow(
                start=step.start.ToDatetime(tzinfo=UTC),
                end=step.end.ToDatetime(tzinfo=UTC),
                organization_id=group.organization_id,
                organization_name=group.organization_name,
                cluster_id=group.cluster_id,
                cluster_name=group.cluster_name,
                resource_type=group.resource_type,
                lower_hours=step.lower_resource_seconds / SECONDS_PER_HOUR,
                upper_hours=step.upper_resource_seconds / SECONDS_PER_HOUR,
                peak=step.peak,
            )


def iso(at: datetime) -> str:
    """ISO 8601 in UTC with `Z`, to the second unless the time has a fraction."""
    text = at.astimezone(UTC).isoformat(timespec="microseconds" if at.microsecond else "seconds")
    return text.removesuffix("+00:00") + "Z"


def hours(value: float) -> str:
    return f"{value:.6f}"


def safe_text(value: str) -> str:
    """A text cell no spreadsheet reads as a formula."""
    return "'" + value if value.startswith(_FORMULA_STARTS) else value


def write_csv(rows: Iterable[UsageRow], out: TextIO) -> int:
    """Write the header and `rows` as RFC 4180 CSV; returns the number of data rows."""
    writer = csv.writer(out, dialect="excel", lineterminator="\r\n")
    writer.writerow(COLUMNS)
    count = 0
    for row in rows:
        writer.writerow(
            (
                iso(row.start),
                iso(row.end),
                row.organization_id,
                safe_text(row.organization_name),
                row.cluster_id,
                safe_text(row.cluster_name),
                safe_text(row.resource_type),
                hours(row.lower_hours),
                UNIT,
                hours(row.lower_hours),
                hours(row.upper_hours),
                str(row.peak),
            )
        )
        count += 1
    return count


def table_lines(rows: Sequence[UsageRow]) -> list[str]:
    """The rows as an aligned table for a terminal, the empty columns of the aggregate left out."""
    header = ["start (UTC)", "end (UTC)", "organization", "cluster", "type", "hours (lower)", "hours (upper)", "peak"]
    cells = [
        [
            iso(r.start),
            iso(r.end),
            r.organization_name,
            r.cluster_name,
            r.resource_type,
            f"{r.lower_hours:.2f}",
            f"{r.upper_hours:.2f}",
            str(r.peak),
        ]
        for r in rows
    ]
    keep = [i for i in range(len(header)) if i not in (2, 3) or any(line[i] for line in cells)]
    widths = {i: max([len(header[i]), *(len(line[i]) for line in cells)]) for i in keep}
    numeric = {5, 6, 7}

    def line(values: list[str]) -> str:
        return "  ".join(values[i].rjust(widths[i]) if i in numeric else values[i].ljust(widths[i]) for i in keep)

    return [line(header).rstrip(), *(line(values).rstrip() for values in cells)]
