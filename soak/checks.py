"""What the soak checks: samples of the stored state, and the verdicts printed at the end.

The sampler reads every snapshot, finding and ledger row as the superuser every few seconds; each
sample is compared with the one before (`compare`), so a row that disappears or an `observed` that
moves backwards is caught even if a later write would hide it. The verdicts (`Verdict`) are plain
data built from those comparisons, the clients' tallies, the fault steps and the counted queries;
`render` prints them as a table and the soak exits non-zero if any failed. Nothing here starts or
stops a process, so it is tested without the system (tests/soak/test_checks.py).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

from common.database import load_queries

QUERIES = load_queries(Path(__file__).with_name("queries.sql"))
SNAPSHOT_TABLES = ("cluster_snapshots", "node_pool_snapshots", "namespace_snapshots")
ALLOWED_CODES = frozenset({"ok", "unavailable"})
MAX_DETAILS = 8


# A row's start and optional end: a finding's first_detected and resolved, a ledger row's created and destroyed.
Lifetime = tuple[datetime, datetime | None]


@dataclass(frozen=True)
class Sample:
    """The stored state at one moment: ids with the times that must never go back or vanish."""

    taken: datetime
    snapshots: Mapping[str, Mapping[str, datetime | None]]
    """Per snapshot table: row id -> observed."""
    findings: Mapping[str, Lifetime]
    """Finding id -> (first_detected, resolved)."""
    ledger: Mapping[str, Lifetime]
    """Ledger row id -> (created, destroyed)."""
    duplicates: Sequence[str] = ()
    """Resources with two or more active ledger rows."""


async def take_sample(dsn: str) -> Sample:
    """Read the whole state in one repeatable-read transaction (raises psycopg errors when it cannot)."""
    async with await psycopg.AsyncConnection.connect(dsn, connect_timeout=5) as conn:
        await conn.set_isolation_level(psycopg.IsolationLevel.REPEATABLE_READ)
        async with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(QUERIES["now"].sql)
            now = (await cur.fetchone() or {})["now"]
            snapshots: dict[str, dict[str, datetime | None]] = {}
            for table in SNAPSHOT_TABLES:
                await cur.execute(QUERIES[table].sql)
                snapshots[table] = {row["id"]: row["observed"] for row in await cur.fetchall()}
            await cur.execute(QUERIES["findings"].sql)
            findings = {row["id"]: (row["first_detected"], row["resolved"]) for row in await cur.fetchall()}
            await cur.execute(QUERIES["ledger"].sql)
            ledger = {row["id"]: (row["created"], row["destroyed"]) for row in await cur.fetchall()}
            await cur.execute(QUERIES["ledger_duplicates"].sql)
            duplicates = [f"{row['resource']} ({row['rows']} active rows)" for row in await cur.fetchall()]
    return Sample(now, snapshots, findings, ledger, duplicates)


@dataclass(frozen=True)
class Violation:
    """One broken invariant between two samples; `kind` groups them into verdicts."""

    kind: str  # "snapshot", "finding", "ledger", "duplicate"
    text: str


def _lifetimes_kept(
    kind: str,
    noun: str,
    columns: tuple[str, str],
    before: Mapping[str, Lifetime],
    after: Mapping[str, Lifetime],
) -> list[Violation]:
    """Rows with a start and an optional end: none deleted, the start never changed, a set end kept."""
    found: list[Violation] = []
    start_column, end_column = columns
    for row_id, (start, end) in before.items():
        if row_id not in after:
            found.append(Violation(kind, f"{noun} {row_id} was deleted"))
            continue
        start_now, end_now = after[row_id]
        if start_now != start:
            found.append(Violation(kind, f"{noun} {row_id}: {start_column} {start} -> {start_now}"))
        if end is not None and end_now != end:
            found.append(Violation(kind, f"{noun} {row_id}: {end_column} {end} -> {end_now}"))
    return found


def compare(before: Sample, after: Sample) -> list[Violation]:
    """Everything `after` breaks relative to `before`: rows gone, times moved back, states undone."""
    found: list[Violation] = []
    for table in SNAPSHOT_TABLES:
        now = after.snapshots.get(table, {})
        for row_id, observed in before.snapshots.get(table, {}).items():
            if row_id not in now:
                found.append(Violation("snapshot", f"{table} row {row_id} disappeared"))
            elif observed is not None and (now[row_id] is None or now[row_id] < observed):  # type: ignore[operator]
                found.append(Violation("snapshot", f"{table} row {row_id}: observed {observed} -> {now[row_id]}"))
    found += _lifetimes_kept("finding", "finding", ("first_detected", "resolved"), before.findings, after.findings)
    found += _lifetimes_kept("ledger", "ledger row", ("created", "destroyed"), before.ledger, after.ledger)
    found += [Violation("duplicate", f"duplicate active ledger rows: {text}") for text in after.duplicates]
    return found


@dataclass
class SampleLog:
    """Every comparison so far; keeps the violations and how much was looked at, not the samples."""

    samples: int = 0
    failed_reads: int = 0
    violations: list[Violation] = field(default_factory=list)
    last: Sample | None = None
    first: Sample | None = None

    def add(self, sample: Sample) -> None:
        if self.last is not None:
            self.violations += compare(self.last, sample)
        self.first = self.first or sample
        self.last = sample
        self.samples += 1

    def of_kind(self, kind: str) -> list[str]:
        return [v.text for v in self.violations if v.kind == kind]


@dataclass(frozen=True)
class Verdict:
    """One line of the soak's report."""

    name: str
    passed: bool
    summary: str
    details: tuple[str, ...] = ()


def merge_answers(tallies: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """The clients' answers, summed: `"<protocol> <method> <code>" -> count`."""
    total: Counter[str] = Counter()
    for tally in tallies:
        total.update(tally.get("answers", {}))
    return total


def answer_verdict(name: str, answers: Mapping[str, int], examples: Mapping[str, Sequence[str]]) -> Verdict:
    """Every answer is OK or UNAVAILABLE, and some were OK (the load really ran)."""
    by_code: Counter[str] = Counter()
    for key, count in answers.items():
        by_code[key.rsplit(" ", 1)[-1]] += count
    bad = {code: n for code, n in by_code.items() if code not in ALLOWED_CODES}
    summary = ", ".join(f"{code} {n}" for code, n in sorted(by_code.items())) or "no answers"
    details = tuple(f"{code}: {text}" for code in bad for text in examples.get(code, ())[:3])
    return Verdict(name, not bad and by_code["ok"] > 0, summary, details)


def server_codes_verdict(name: str, codes: Mapping[str, float]) -> Verdict:
    """The services' own count of answers by code (their /metrics) shows no internal error either."""
    bad = {code: n for code, n in codes.items() if code not in ALLOWED_CODES and n}
    summary = ", ".join(f"{code} {n:.0f}" for code, n in sorted(codes.items())) or "no answers"
    return Verdict(name, not bad and codes.get("ok", 0) > 0, summary)


def sample_size(sample: Sample | None) -> str:
    """How much one sample held, e.g. `1,412 snapshot, 37 finding and 2,108 ledger rows`."""
    if sample is None:
        return "nothing"
    snapshots = sum(len(rows) for rows in sample.snapshots.values())
    return f"{snapshots:,} snapshot, {len(sample.findings):,} finding and {len(sample.ledger):,} ledger rows"


def invariant_verdict(name: str, log: SampleLog, kinds: Sequence[str], minimum_samples: int) -> Verdict:
    texts = [text for kind in kinds for text in log.of_kind(kind)]
    enough = log.samples >= minimum_samples
    summary = f"{log.samples} samples of up to {sample_size(log.last)} "
    summary += f"({log.failed_reads} unreadable while the database was down), "
    summary += f"{len(texts)} violations" + ("" if enough else f"; fewer than {minimum_samples} samples")
    return Verdict(name, enough and not texts, summary, tuple(texts[:MAX_DETAILS]))


def allowed_queries(window_seconds: float, replicas: int, ttl_seconds: float = 60.0) -> int:
    """Most reads `replicas` single-flight caches of `ttl_seconds` can make in a window: one per TTL each."""
    return replicas * (math.floor(window_seconds / ttl_seconds) + 1)


def queries_verdict(counted: int, per_replica: Mapping[str, float], window_seconds: float, replicas: int) -> Verdict:
    limit = allowed_queries(window_seconds, replicas)
    one = allowed_queries(window_seconds, 1)
    over = {name: n for name, n in per_replica.items() if n > one}
    minutes = window_seconds / 60
    summary = (
        f"{counted} overview queries in {minutes:.1f} min by {replicas} replicas (pg_stat_statements; at most "
        f"{limit}); per replica by its metrics: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(per_replica.items()))
    )
    details = tuple(f"{name} read {n:.0f} times, more than {one}" for name, n in over.items())
    return Verdict(
        "public API: at most one query a minute per replica", counted <= limit and not over, summary, details
    )


def render(verdicts: Sequence[Verdict]) -> str:
    """The report: one line per check, PASS or FAIL, with the details of failures under it."""
    width = max((len(v.name) for v in verdicts), default=10)
    lines = []
    for verdict in verdicts:
        lines.append(f"{'PASS' if verdict.passed else 'FAIL'}  {verdict.name:<{width}}  {verdict.summary}")
        lines += [f"      - {detail}" for detail in verdict.details[:MAX_DETAILS]]
    failed = sum(not v.passed for v in verdicts)
    lines.append(
        f"{len(verdicts) - failed} of {len(verdicts)} checks passed" + (f", {failed} FAILED" if failed else "")
    )
    return "\n".join(lines)
