"""The SQL twins of `clusterstatus` agree with Python on every combination of inputs.

Every input domain (including NULL/None and, for times, values on both sides of each boundary) is
enumerated, sent to PostgreSQL in one query per function as the staff API's role, and compared row
by row with the Python function.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from uuid import UUID

import psycopg

from common.clusterstatus import (
    SHOOT_OPERATIONS,
    SHOOT_STATUSES,
    SYNC_STATUSES,
    ClusterStatus,
    cluster_status,
    is_ready,
    is_stale,
    is_updating,
    needs_attention,
)
from common.organizations import SYSTEM_ORGANIZATION_ID
from tests.fixtures.postgres import TestDatabase

ROLE = "fun_platform_admin_api"


def test_cluster_status_twin_agrees_on_every_combination(database: TestDatabase) -> None:
    combos = list(
        itertools.product(
            (False, True), (None, *SYNC_STATUSES), (None, *SHOOT_STATUSES), (None, *SHOOT_OPERATIONS), (False, True)
        )
    )
    columns = list(zip(*combos, strict=True))
    with psycopg.connect(database.dsn(ROLE)) as conn:
        rows = conn.execute(
            """
            SELECT tenant.cluster_status(d, s, sh, op, e)
            FROM unnest(%s::boolean[], %s::text[], %s::text[], %s::text[], %s::boolean[]) WITH ORDINALITY
                AS input(d, s, sh, op, e, n)
            ORDER BY n
            """,
            [list(column) for column in columns],
        ).fetchall()
    assert len(rows) == len(combos) == 2 * 5 * 11 * 6 * 2
    disagreements = []
    for (deleted, sync, shoot, operation, ever), (sql_status,) in zip(combos, rows, strict=True):
        python_status = cluster_status(
            deleted=deleted, sync_status=sync, shoot_status=shoot, shoot_operation=operation, ever_completed=ever
        )
        if ClusterStatus(sql_status) is not python_status:
            disagreements.append((deleted, sync, shoot, operation, ever, sql_status, python_status))
    assert disagreements == []
    # The enumeration really exercised the whole rule, not one corner of it.
    assert {ClusterStatus(status) for (status,) in rows} == set(ClusterStatus)


def test_attention_and_updating_twins_agree(database: TestDatabase) -> None:
    statuses: list[str | None] = [None, *(status.value for status in ClusterStatus)]
    with psycopg.connect(database.dsn(ROLE)) as conn:
        rows = conn.execute(
            """
            SELECT tenant.cluster_needs_attention(s), tenant.cluster_is_updating(s)
            FROM unnest(%s::text[]) WITH ORDINALITY AS input(s, n) ORDER BY n
            """,
            [statuses],
        ).fetchall()
    assert rows[0] == (False, False)  # NULL status: neither, never NULL
    for status, (attention, updating) in zip(ClusterStatus, rows[1:], strict=True):
        assert attention is needs_attention(status), status
        assert updating is is_updating(status), status


def test_ready_twin_agrees_on_every_combination(database: TestDatabase) -> None:
    tenant = UUID("22222222-2222-2222-2222-222222222222")
    combos = list(
        itertools.product((False, True), (False, True), (tenant, SYSTEM_ORGANIZATION_ID), (None, *SHOOT_STATUSES))
    )
    columns = [list(column) for column in zip(*combos, strict=True)]
    with psycopg.connect(database.dsn(ROLE)) as conn:
        rows = conn.execute(
            """
            SELECT tenant.cluster_is_ready(cd, od, org, sh)
            FROM unnest(%s::boolean[], %s::boolean[], %s::uuid[], %s::text[])
                WITH ORDINALITY AS input(cd, od, org, sh, n)
            ORDER BY n
            """,
            columns,
        ).fetchall()
    got = [row[0] for row in rows]
    want = [
        is_ready(cluster_deleted=cd, organization_deleted=od, organization_id=org, shoot_status=sh)
        for cd, od, org, sh in combos
    ]
    assert got == want
    assert any(want) and not all(want)


def test_staleness_twin_agrees_on_every_combination(database: TestDatabase) -> None:
    now = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
    interval = 60
    limit = timedelta(seconds=3 * interval)
    tick = timedelta(microseconds=1)
    # Each time on both sides of and exactly at the three-interval boundary, plus recent, ancient, unknown.
    times = [None, now, now - limit + tick, now - limit, now - limit - tick, now - timedelta(days=400)]
    combos = list(itertools.product((False, True), times, times, (None, interval, 1), times))
    columns = [list(column) for column in zip(*combos, strict=True)]
    with psycopg.connect(database.dsn(ROLE)) as conn:
        rows = conn.execute(
            """
            SELECT tenant.snapshot_is_stale(r, o, rs, i, cs, %s)
            FROM unnest(%s::boolean[], %s::timestamptz[], %s::timestamptz[], %s::integer[], %s::timestamptz[])
                WITH ORDINALITY AS input(r, o, rs, i, cs, n)
            ORDER BY n
            """,
            [now, *columns],
        ).fetchall()
    got = [row[0] for row in rows]
    want = [
        is_stale(ready=r, observed=o, ready_since=rs, interval_seconds=i, collector_since=cs, now=now)
        for r, o, rs, i, cs in combos
    ]
    mismatches = [(combo, g, w) for combo, g, w in zip(combos, got, want, strict=True) if g is not w]
    assert mismatches == []
    assert any(want) and not all(want)
