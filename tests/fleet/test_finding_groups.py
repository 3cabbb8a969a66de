"""ListFindingHistory: the finding history grouped by finding (kind and subject), on every protocol.

What each entry must say is computed here from the rows of tenant.drift_findings, grouped in Python,
independently of the query; the walk is checked to stay put while reconcile reopens, resolves and
adds findings between its pages.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
from fundament.fleet.v1 import fleet_pb2

from common.organizations import SYSTEM_ORGANIZATION_ID
from tests.fixtures.fleet_api import NOW, PROTOCOLS, CallFailed, FleetApiUnderTest
from tests.fleet.test_fields import rows, when


@dataclass(frozen=True)
class Expected:
    kind: str
    subject: str
    first_detected: datetime
    last_detected: datetime
    opened_last: datetime
    opened: int
    resolved: int
    open_seconds: int
    open: bool
    latest_id: str


def expected_groups(api: FleetApiUnderTest, *, as_of: datetime = NOW, cluster_id: str | None = None) -> list[Expected]:
    """The history grouped in Python from the database rows, most recently opened first."""
    found = rows(
        api.database,
        "SELECT f.id::text, f.kind, f.subject, f.first_detected, f.last_detected, f.resolved, f.cluster_id::text"
        " FROM tenant.drift_findings f LEFT JOIN tenant.clusters c ON c.id = f.cluster_id"
        " WHERE coalesce(c.organization_id, f.organization_id) IS DISTINCT FROM %s AND f.first_detected <= %s",
        (SYSTEM_ORGANIZATION_ID, as_of),
    )
    groups: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for row in found:
        if cluster_id is None or row[6] == cluster_id:
            groups.setdefault((row[1], row[2]), []).append(row)
    result = []
    for (kind, subject), occurrences in groups.items():
        latest = max(occurrences, key=lambda r: (r[3], r[0]))
        result.append(
            Expected(
                kind=kind,
                subject=subject,
                first_detected=min(r[3] for r in occurrences),
                last_detected=max(r[4] for r in occurrences),
                opened_last=latest[3],
                opened=len(occurrences),
                resolved=sum(1 for r in occurrences if r[5] is not None),
                open_seconds=round(sum(max(((r[5] or NOW) - r[3]).total_seconds(), 0) for r in occurrences)),
                open=any(r[5] is None for r in occurrences),
                latest_id=latest[0],
            )
        )
    return sorted(result, key=lambda e: (e.opened_last, e.kind, e.subject), reverse=True)


def kind_name(kind: str) -> str:
    return f"DRIFT_KIND_{kind.upper()}"


async def walk(
    api: FleetApiUnderTest, protocol: str, *, between: Any = None, page_size: int = 37, **filters: Any
) -> list[fleet_pb2.FindingHistory]:
    """Every entry, page by page; `between(page_number)` runs after each page (rows changing mid-walk)."""
    entries: list[fleet_pb2.FindingHistory] = []
    token = ""
    number = 0
    while True:
        request = fleet_pb2.ListFindingHistoryRequest(page_size=page_size, page_token=token, **filters)
        page = await api.call(protocol, "ListFindingHistory", request)
        entries += list(page.findings)
        token = page.next_page_token
        number += 1
        if not token:
            return entries
        if between is not None:
            between(number)


def as_expected(entry: fleet_pb2.FindingHistory) -> Expected:
    return Expected(
        kind=fleet_pb2.DriftKind.Name(entry.kind).removeprefix("DRIFT_KIND_").lower(),
        subject=entry.subject,
        first_detected=when(entry, "first_detected"),  # type: ignore[arg-type]
        last_detected=when(entry, "last_detected"),  # type: ignore[arg-type]
        opened_last=when(entry.latest, "first_detected"),  # type: ignore[arg-type]
        opened=entry.opened,
        resolved=entry.resolved,
        open_seconds=entry.open_seconds,
        open=entry.open,
        latest_id=entry.latest.id,
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_one_entry_per_finding_with_its_counts_newest_first(
    shared_fleet_api: FleetApiUnderTest, protocol: str
) -> None:
    expected = expected_groups(shared_fleet_api)
    assert any(e.opened > 1 for e in expected), "the world has findings that opened more than once"
    assert any(e.open for e in expected) and any(not e.open for e in expected)
    entries = await walk(shared_fleet_api, protocol)
    assert [as_expected(e) for e in entries] == expected
    # The latest occurrence comes in full, as ListDriftFindings shows it.
    flapping = next(e for e in entries if e.opened > 1)
    assert flapping.latest.kind == flapping.kind and flapping.latest.subject == flapping.subject
    assert flapping.latest.details.fields or flapping.latest.cluster_name


async def test_filters_select_occurrences_and_open_only_keeps_open_findings(
    shared_fleet_api: FleetApiUnderTest,
) -> None:
    everything = expected_groups(shared_fleet_api)
    flapping = next(e for e in everything if e.opened > 1)
    query = "SELECT cluster_id::text FROM tenant.drift_findings WHERE id = %s"
    [(cluster_id,)] = rows(shared_fleet_api.database, query, (flapping.latest_id,))
    entries = await walk(shared_fleet_api, "connect", cluster_id=cluster_id)
    assert [as_expected(e) for e in entries] == expected_groups(shared_fleet_api, cluster_id=cluster_id)
    open_now = await walk(shared_fleet_api, "grpc", open_only=True)
    assert [as_expected(e) for e in open_now] == [e for e in everything if e.open]
    kind = await walk(shared_fleet_api, "grpc", kind=getattr(fleet_pb2, kind_name(flapping.kind)))
    assert {e.kind for e in kind} == {getattr(fleet_pb2, kind_name(flapping.kind))}
    assert len(kind) == sum(1 for e in everything if e.kind == flapping.kind)


async def test_a_walk_neither_repeats_nor_skips_while_findings_reopen_resolve_and_appear(
    fleet_api: FleetApiUnderTest,
) -> None:
    """Between pages reconcile reopens findings the walk has not reached yet (which would move them to the
    front, before the cursor), resolves open ones and finds new ones; the walk shows each finding that
    existed when it began exactly once, in the order of its first page's time."""
    before = expected_groups(fleet_api)
    later = NOW + timedelta(minutes=1)
    touched: set[str] = set()
    changes = {"added": 0, "resolved": 0, "reopened": 0}

    def reconcile_pass(page_number: int) -> None:
        # Reopen two resolved findings further down the list, resolve one open one, add a new finding.
        untouched = [e for e in before[page_number * 37 :] if e.latest_id not in touched]
        ahead = [e for e in untouched if not e.open][:2]
        still_open = [e for e in untouched if e.open][:1]
        touched.update(e.latest_id for e in ahead + still_open)
        changes["added"] += len(ahead) + 1
        changes["reopened"] += len(ahead)
        changes["resolved"] += len(still_open)
        with fleet_api.database.admin() as conn:
            for e in ahead:
                conn.execute(
                    "INSERT INTO tenant.drift_findings (id, kind, subject, cluster_id, organization_id, shoot_uid,"
                    " details, first_detected, last_detected)"
                    " SELECT %s, kind, subject, cluster_id, organization_id, shoot_uid, details, %s, %s"
                    " FROM tenant.drift_findings WHERE id = %s",
                    (uuid.uuid4(), later, later, e.latest_id),
                )
            for e in still_open:
                conn.execute("UPDATE tenant.drift_findings SET resolved = %s WHERE id = %s", (later, e.latest_id))
            conn.execute(
                "INSERT INTO tenant.drift_findings (id, kind, subject, cluster_id, organization_id, shoot_uid,"
                " details, first_detected, last_detected)"
                " SELECT %s, kind, %s, cluster_id, organization_id, shoot_uid, details, %s, %s"
                " FROM tenant.drift_findings WHERE id = %s",
                (uuid.uuid4(), f"new-{page_number}", later, later, before[0].latest_id),
            )

    entries = await walk(fleet_api, "connect", between=reconcile_pass)
    keys = [(e.kind, e.subject) for e in entries]
    assert len(keys) == len(set(keys)), "the walk repeated an entry"
    wanted = [(kind_name(e.kind), e.subject) for e in before]
    assert [(fleet_pb2.DriftKind.Name(k), s) for k, s in keys] == wanted, "the walk skipped or moved an entry"
    # The findings did change under the walk: reopened and new ones, one resolved per page.
    [(added, resolved)] = rows(
        fleet_api.database,
        "SELECT count(*) FILTER (WHERE first_detected = %s), count(*) FILTER (WHERE resolved = %s)"
        " FROM tenant.drift_findings",
        (later, later),
    )
    assert added == changes["added"] and resolved == changes["resolved"] and changes["reopened"] > 0


async def test_a_token_is_bound_to_its_filters(shared_fleet_api: FleetApiUnderTest) -> None:
    first = await shared_fleet_api.call(
        "connect", "ListFindingHistory", fleet_pb2.ListFindingHistoryRequest(page_size=5)
    )
    assert first.next_page_token
    with pytest.raises(CallFailed) as refused:
        await shared_fleet_api.call(
            "connect",
            "ListFindingHistory",
            fleet_pb2.ListFindingHistoryRequest(page_size=5, page_token=first.next_page_token, open_only=True),
        )
    assert refused.value.code == "invalid_argument"
