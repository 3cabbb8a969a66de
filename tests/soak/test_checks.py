"""The soak's end-of-run checks (soak/checks.py): comparisons of samples, verdicts, the report.

The comparisons run on hand-made samples; `take_sample` runs against a real migrated database (as
the superuser the soak reads with), where a row deleted behind its back must show as a violation.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from db.seed.write import write_fleet
from fleet_description.generate import generate
from soak.checks import (
    Sample,
    SampleLog,
    Verdict,
    allowed_queries,
    answer_verdict,
    compare,
    invariant_verdict,
    queries_verdict,
    render,
    take_sample,
)
from tests.fixtures.postgres import TestDatabase

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = T0 + timedelta(seconds=15)


def sample(
    clusters: dict[str, datetime | None] | None = None,
    findings: dict[str, tuple[datetime, datetime | None]] | None = None,
    ledger: dict[str, tuple[datetime, datetime | None]] | None = None,
    duplicates: tuple[str, ...] = (),
) -> Sample:
    return Sample(T0, {"cluster_snapshots": clusters or {}}, findings or {}, ledger or {}, duplicates)


def texts(before: Sample, after: Sample) -> list[str]:
    return [v.text for v in compare(before, after)]


def test_nothing_changed_or_moved_forward_is_fine() -> None:
    before = sample({"a": T0, "b": None}, {"f": (T0, None)}, {"l": (T0, None)})
    after = sample({"a": T1, "b": T1, "c": T0}, {"f": (T0, T1), "g": (T1, None)}, {"l": (T0, T1)})
    assert compare(before, after) == []


@pytest.mark.parametrize(
    ("before", "after", "says"),
    [
        (sample({"a": T0}), sample({}), "cluster_snapshots row a disappeared"),
        (sample({"a": T1}), sample({"a": T0}), "cluster_snapshots row a: observed"),
        (sample({"a": T1}), sample({"a": None}), "cluster_snapshots row a: observed"),
        (sample(findings={"f": (T0, None)}), sample(), "finding f was deleted"),
        (sample(findings={"f": (T0, None)}), sample(findings={"f": (T1, None)}), "finding f: first_detected"),
        (sample(findings={"f": (T0, T1)}), sample(findings={"f": (T0, None)}), "finding f: resolved"),
        (sample(ledger={"l": (T0, None)}), sample(), "ledger row l was deleted"),
        (sample(ledger={"l": (T0, T1)}), sample(ledger={"l": (T0, None)}), "ledger row l: destroyed"),
        (sample(ledger={"l": (T0, None)}), sample(ledger={"l": (T1, None)}), "ledger row l: created"),
        (sample(), sample(duplicates=("c node default/n (2 active rows)",)), "duplicate active ledger rows"),
    ],
    ids=[
        "snapshot gone",
        "observed back",
        "observed cleared",
        "finding deleted",
        "finding first_detected moved",
        "finding reopened",
        "ledger row deleted",
        "ledger row undestroyed",
        "ledger created moved",
        "duplicate active rows",
    ],
)
def test_each_broken_invariant_is_named(before: Sample, after: Sample, says: str) -> None:
    found = texts(before, after)
    assert len(found) == 1
    assert found[0].startswith(says)


def test_the_log_compares_each_sample_with_the_one_before() -> None:
    log = SampleLog()
    log.add(sample({"a": T0}))
    log.add(sample({"a": T1}))
    log.add(sample({"a": T0}))  # back to T0: wrong against T1, though equal to the first sample
    assert log.samples == 3
    assert len(log.of_kind("snapshot")) == 1
    verdict = invariant_verdict("snapshots", log, ["snapshot"], minimum_samples=2)
    assert not verdict.passed
    assert "1 violations" in verdict.summary


def test_too_few_samples_fail_the_invariant_check() -> None:
    log = SampleLog()
    log.add(sample({"a": T0}))
    assert not invariant_verdict("snapshots", log, ["snapshot"], minimum_samples=2).passed


def test_only_ok_and_unavailable_pass() -> None:
    answers = {"grpc GetPlatformOverview ok": 100, "connect-get GetPlatformOverview unavailable": 3}
    assert answer_verdict("public", answers, {}).passed


def test_an_internal_error_fails_with_its_message() -> None:
    answers = {"grpc GetPlatformOverview ok": 100, "grpc GetPlatformOverview internal": 1}
    verdict = answer_verdict("public", answers, {"internal": ["grpc GetPlatformOverview: boom"]})
    assert not verdict.passed
    assert verdict.details == ("internal: grpc GetPlatformOverview: boom",)


def test_no_successful_answer_at_all_fails() -> None:
    assert not answer_verdict("public", {"grpc X unavailable": 5}, {}).passed
    assert not answer_verdict("public", {}, {}).passed


@pytest.mark.parametrize(
    ("seconds", "replicas", "allowed"), [(59, 1, 1), (60, 1, 2), (600, 1, 11), (600, 2, 22), (180, 2, 8)]
)
def test_one_read_per_ttl_per_replica(seconds: float, replicas: int, allowed: int) -> None:
    assert allowed_queries(seconds, replicas) == allowed


def test_more_queries_than_replicas_can_make_fail() -> None:
    assert queries_verdict(22, {"a": 11, "b": 11}, 600, 2).passed
    assert not queries_verdict(23, {"a": 11, "b": 11}, 600, 2).passed
    too_many = queries_verdict(20, {"a": 12, "b": 8}, 600, 2)
    assert not too_many.passed
    assert too_many.details == ("a read 12 times, more than 11",)


def test_the_report_counts_failures() -> None:
    text = render([Verdict("one", True, "fine"), Verdict("two", False, "broken", ("why",))])
    assert "PASS  one" in text
    assert "FAIL  two" in text
    assert "      - why" in text
    assert text.endswith("1 of 2 checks passed, 1 FAILED")


async def test_a_sample_reads_every_row_and_sees_one_deleted(database: TestDatabase) -> None:
    fleet = generate("test", 0)
    with database.admin() as conn:
        write_fleet(conn, fleet)
        clusters = [row[0] for row in conn.execute("SELECT id FROM tenant.clusters ORDER BY id LIMIT 2").fetchall()]
        for cluster in clusters:
            conn.execute("INSERT INTO tenant.cluster_snapshots (cluster_id, observed) VALUES (%s, now())", (cluster,))
        conn.execute(
            "INSERT INTO tenant.drift_findings (kind, subject, cluster_id, first_detected, last_detected)"
            " VALUES ('missing_shoot', %s, %s, now(), now())",
            (str(clusters[0]), clusters[0]),
        )
    before = await take_sample(database.dsn())
    assert set(before.snapshots["cluster_snapshots"]) == {str(c) for c in clusters}
    assert len(before.findings) == 1
    assert before.duplicates == []
    with database.admin() as conn:
        conn.execute("DELETE FROM tenant.cluster_snapshots WHERE cluster_id = %s", (clusters[1],))
        conn.execute("DELETE FROM tenant.drift_findings")
    after = await take_sample(database.dsn())
    found = texts(before, after)
    assert f"cluster_snapshots row {clusters[1]} disappeared" in found
    assert any(text.endswith("was deleted") and text.startswith("finding") for text in found)
