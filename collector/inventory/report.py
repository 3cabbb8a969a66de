"""What `cluster-worker collect` shows a person: a progress bar in a terminal, then a summary.

The summary has one line per cluster (numbers, or why it failed), a line for each cluster with
namespaces that could not be read (their counts were kept), and one line per ledger type: how many
resources exist, how many this pass recorded as created and destroyed, and in how many clusters the
source could not be listed (its rows were left as they were).
"""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from collector.inventory.results import ClusterResult, RoundSummary
from collector.inventory.sources import RESOURCE_TYPES

_BAR_WIDTH = 30


class ProgressBar:
    """`[#####.....] 12/40 clusters, 1 failed` redrawn in place on a terminal stream."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self._total = total
        self._stream = stream
        self._done = 0
        self._failed = 0
        self._draw()

    def advance(self, result: ClusterResult) -> None:
        self._done += 1
        self._failed += not result.ok
        self._draw()

    def close(self) -> None:
        self._stream.write("\n")
        self._stream.flush()

    def _draw(self) -> None:
        filled = _BAR_WIDTH * self._done // max(1, self._total)
        failed = f", {self._failed} failed" if self._failed else ""
        bar = "#" * filled + "." * (_BAR_WIDTH - filled)
        self._stream.write(f"\r[{bar}] {self._done}/{self._total} clusters{failed}")
        self._stream.flush()


def print_summary(summary: RoundSummary, out: TextIO) -> None:
    """One line per cluster, then the ledger counts per type, then the totals."""
    rows: list[tuple[str, ...]] = [("CLUSTER", "RESULT", "NODES", "READY", "PODS", "SECONDS", "ERROR")]
    for result in sorted(summary.results, key=lambda r: str(r.cluster)):
        seconds = f"{result.duration_seconds:.2f}"
        if result.reading is not None:
            r = result.reading
            rows.append((str(result.cluster), "ok", str(r.nodes), str(r.ready_nodes), str(r.pods), seconds, ""))
        else:
            rows.append((str(result.cluster), f"FAILED ({result.reason})", "-", "-", "-", seconds, result.error or ""))
    _table(rows, out)
    for result in sorted(summary.results, key=lambda r: str(r.cluster)):
        if result.unread_namespaces:
            reasons = ", ".join(
                f"{n} {reason}" for reason, n in sorted(Counter(result.unread_namespaces.values()).items())
            )
            out.write(
                f"{result.cluster}: {len(result.unread_namespaces)} namespace(s) not read ({reasons}); counts kept\n"
            )
    out.write("\n")
    ledger_rows: list[tuple[str, ...]] = [("LEDGER TYPE", "FOUND", "CREATED", "DESTROYED", "NOT LISTED IN")]
    for resource_type in (*RESOURCE_TYPES, *sorted(set(summary.ledger) - set(RESOURCE_TYPES))):
        counts = summary.ledger.get(resource_type)
        unlisted = summary.unlisted.get(resource_type, 0)
        ledger_rows.append(
            (
                resource_type,
                str(counts.found if counts else 0),
                str(counts.created if counts else 0),
                str(counts.destroyed if counts else 0),
                f"{unlisted} cluster(s)" if unlisted else "-",
            )
        )
    _table(ledger_rows, out)
    out.write(f"\n{summary.collected} collected, {summary.failed} failed, in {summary.duration_seconds:.1f} s\n")


def _table(rows: list[tuple[str, ...]], out: TextIO) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n")
