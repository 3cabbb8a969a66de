"""The reconcile store against real PostgreSQL, as fun_cluster_worker: the mirror and the finding lifecycle.

The garden side is given as `ShootObservation`s here (the store never sees Kubernetes); the loop's
tests in test_reconcile_loop.py drive the same code through fleet-sim.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest
from psycopg.rows import dict_row

from collector.reconcile import store
from collector.reconcile.drift import KIND_IDS, find_drift
from collector.reconcile.observed import Observed, ShootObservation
from common.database import load_queries
from db import provisioning
from tests.fixtures.postgres import TestDatabase

ROLE = "fun_cluster_worker"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def add_cluster(
    admin: psycopg.Connection[Any],
    *,
    version: str = "1.31.0",
    deleted: datetime | None = None,
    sync_status: str | None = "completed",
    shoot_status: str = "ready",
) -> tuple[UUID, UUID]:
    """An organization with one cluster (and its sync state unless `sync_status` is None); returns both ids."""
    org, cluster = uuid4(), uuid4()
    admin.execute(
        "INSERT INTO tenant.organizations (id, name, alias, created) VALUES (%s, %s, 'Org', %s)",
        (org, f"org-{org.hex[:12]}", T0 - timedelta(days=30)),
    )
    admin.execute(
        "INSERT INTO tenant.clusters (id, organization_id, name, region, kubernetes_version, created, deleted)"
        " VALUES (%s, %s, 'c', 'eu-west-1', %s, %s, %s)",
        (cluster, org, version, T0 - timedelta(days=30), deleted),
    )
    if sync_status is not None:
        provisioning.write_state(
            admin,
            cluster,
            sync_status=sync_status,
            shoot_status=shoot_status,
            shoot_operation="reconcile",
            first_completed=T0 - timedelta(days=29),
            at=T0 - timedelta(days=29),
        )
    return org, cluster


def shoot_of(cluster: UUID, org: UUID, *, version: str = "1.31.2", uid: UUID | None = None) -> ShootObservation:
    return ShootObservation(
        uid=uid or uuid4(),
        name=f"s-{cluster.hex[:8]}",
        namespace="garden-p",
        cluster_label=str(cluster),
        organization_label=str(org),
        kubernetes_version=version,
        region="eu-west-1",
        created=T0 - timedelta(days=29),
    )


async def store_pass(conn: psycopg.AsyncConnection[Any], shoots: list[ShootObservation], now: datetime) -> Any:
    """What ReconcileLoop does inside its transaction, minus the listing."""
    async with conn.transaction():
        await store.lock_pass(conn)
        await store.stage_shoots(conn, shoots)
        clusters = await store.read_clusters(conn)
        findings = find_drift(Observed(shoots, clusters))
        shoot_changes = await store.store_shoots(conn, now=now)
        changes = await store.store_findings(conn, findings, now=now)
        await store.record_heartbeat(conn, now=now, interval_seconds=300, details={"ok": True})
    return shoot_changes, changes


@pytest.fixture
async def worker(database: TestDatabase) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    async with await psycopg.AsyncConnection.connect(database.dsn(ROLE)) as conn:
        yield conn


def findings(admin: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    with admin.cursor(row_factory=dict_row) as cur:
        return cur.execute("SELECT * FROM tenant.drift_findings ORDER BY first_detected, kind, subject").fetchall()


def shoots(admin: psycopg.Connection[Any]) -> dict[UUID, dict[str, Any]]:
    with admin.cursor(row_factory=dict_row) as cur:
        return {r["uid"]: r for r in cur.execute("SELECT * FROM tenant.gardener_shoots").fetchall()}


async def test_every_query_prepares_against_the_migrated_schema(worker: psycopg.AsyncConnection[Any]) -> None:
    queries = load_queries(Path(store.__file__).with_name("store.sql"))
    await worker.execute(queries["create_listed_stage"].sql)
    await worker.execute(queries["create_findings_stage"].sql)
    await worker.execute(queries["create_gardener_ledger_stage"].sql)
    await worker.execute(queries["create_gardener_ledger_listed_stage"].sql)
    for query in queries.values():
        if query.name.startswith(("create_", "copy_")):
            continue
        if query.name.startswith("analyze_"):  # a utility statement: cannot be prepared, so run it
            await worker.execute(query.sql)
            continue
        names: list[str] = []

        def number(match: re.Match[str], names: list[str] = names) -> str:
            if match.group(1) not in names:
                names.append(match.group(1))
            return f"${names.index(match.group(1)) + 1}"

        await worker.execute(f"PREPARE p_{query.name} AS " + re.sub(r"%\((\w+)\)s", number, query.sql))
    await worker.rollback()


async def test_finding_lifecycle_open_move_resolve_recur(
    database: TestDatabase, worker: psycopg.AsyncConnection[Any]
) -> None:
    with database.admin() as admin:
        org, cluster = add_cluster(admin, version="1.31.0")
    good = shoot_of(cluster, org, version="1.31.4")
    drifted = shoot_of(cluster, org, version="1.30.1", uid=good.uid)

    _, changes = await store_pass(worker, [drifted], T0)
    assert changes.opened == {"version_mismatch": 1}
    with database.admin() as admin:
        (first,) = findings(admin)
    assert (first["first_detected"], first["last_detected"], first["resolved"]) == (T0, T0, None)
    assert first["details"]["expected"] == {"kubernetes_version": "1.31.0", "minor": "1.31"}

    _, changes = await store_pass(worker, [drifted], T0 + timedelta(minutes=5))
    assert (changes.opened, changes.still_open, changes.resolved) == ({}, {"version_mismatch": 1}, {})
    with database.admin() as admin:
        (moved,) = findings(admin)
    assert moved["id"] == first["id"]
    assert moved["first_detected"] == T0
    assert moved["last_detected"] == T0 + timedelta(minutes=5)

    _, changes = await store_pass(worker, [good], T0 + timedelta(minutes=10))
    assert changes.resolved == {"version_mismatch": 1}
    with database.admin() as admin:
        (resolved,) = findings(admin)
    assert resolved["id"] == first["id"]
    assert resolved["resolved"] == T0 + timedelta(minutes=10)
    assert resolved["last_detected"] == T0 + timedelta(minutes=5)

    _, changes = await store_pass(worker, [drifted], T0 + timedelta(minutes=15))
    assert changes.opened == {"version_mismatch": 1}
    with database.admin() as admin:
        old, recurrence = findings(admin)
    assert old["id"] == first["id"]
    assert old["resolved"] == T0 + timedelta(minutes=10)
    assert recurrence["id"] != first["id"]
    assert recurrence["first_detected"] == T0 + timedelta(minutes=15)
    assert recurrence["resolved"] is None


async def test_mirror_upserts_by_uid_and_soft_deletes(
    database: TestDatabase, worker: psycopg.AsyncConnection[Any]
) -> None:
    with database.admin() as admin:
        org, cluster = add_cluster(admin)
    first = shoot_of(cluster, org)
    shoot_changes, _ = await store_pass(worker, [first], T0)
    assert (shoot_changes.new, shoot_changes.refreshed, shoot_changes.gone) == (1, 0, 0)

    bumped = ShootObservation(**{**_fields(first), "kubernetes_version": "1.31.7"})
    shoot_changes, _ = await store_pass(worker, [bumped], T0 + timedelta(minutes=5))
    assert (shoot_changes.new, shoot_changes.refreshed, shoot_changes.gone) == (0, 1, 0)
    with database.admin() as admin:
        row = shoots(admin)[first.uid]
    assert (row["first_seen"], row["last_seen"], row["kubernetes_version"]) == (
        T0,
        T0 + timedelta(minutes=5),
        "1.31.7",
    )
    assert (row["cluster_id"], row["organization_id"], row["cluster_label"]) == (cluster, org, str(cluster))

    # Re-created under the same name with a new uid: a new row, and the old one soft-deleted.
    recreated = ShootObservation(**{**_fields(first), "uid": uuid4()})
    shoot_changes, changes = await store_pass(worker, [recreated], T0 + timedelta(minutes=10))
    assert (shoot_changes.new, shoot_changes.gone) == (1, 1)
    assert changes.opened == {}
    with database.admin() as admin:
        rows = shoots(admin)
    assert rows[first.uid]["deleted"] == T0 + timedelta(minutes=10)
    assert rows[recreated.uid]["deleted"] is None
    assert rows[recreated.uid]["name"] == rows[first.uid]["name"]


async def test_a_pass_with_no_change_opens_and_resolves_nothing(
    database: TestDatabase, worker: psycopg.AsyncConnection[Any]
) -> None:
    with database.admin() as admin:
        org, cluster = add_cluster(admin)
        _, missing = add_cluster(admin)
    listing = [shoot_of(cluster, org), shoot_of(uuid4(), org)]
    await store_pass(worker, listing, T0)
    with database.admin() as admin:
        before = len(findings(admin))
    _, changes = await store_pass(worker, listing, T0 + timedelta(minutes=5))
    assert (changes.opened, changes.resolved) == ({}, {})
    assert changes.still_open == {"orphan_shoot": 1, "missing_shoot": 1}
    with database.admin() as admin:
        assert len(findings(admin)) == before == 2
        assert {f["subject"] for f in findings(admin)} == {str(listing[1].uid), str(missing)}


async def test_open_counts_and_heartbeat(database: TestDatabase, worker: psycopg.AsyncConnection[Any]) -> None:
    with database.admin() as admin:
        add_cluster(admin)
    await store_pass(worker, [], T0)
    assert await store.count_open_findings(worker) == {"missing_shoot": 1}
    await worker.rollback()
    with database.admin() as admin:
        row = admin.execute(
            "SELECT last_completed, interval_seconds, first_completed, details FROM tenant.worker_heartbeats"
            " WHERE loop = 'reconcile'"
        ).fetchone()
    assert row == (T0, 300, T0, {"ok": True})
    await store_pass(worker, [], T0 + timedelta(minutes=5))
    with database.admin() as admin:
        row = admin.execute(
            "SELECT last_completed, first_completed FROM tenant.worker_heartbeats WHERE loop = 'reconcile'"
        ).fetchone()
    assert row == (T0 + timedelta(minutes=5), T0)


async def test_passes_are_serialized_by_the_lock(database: TestDatabase) -> None:
    with database.admin() as admin:
        org, cluster = add_cluster(admin)
    listing = [shoot_of(cluster, org, version="1.29.0")]
    async with (
        await psycopg.AsyncConnection.connect(database.dsn(ROLE)) as one,
        await psycopg.AsyncConnection.connect(database.dsn(ROLE)) as two,
    ):
        await asyncio.gather(store_pass(one, listing, T0), store_pass(two, listing, T0 + timedelta(seconds=1)))
    with database.admin() as admin:
        rows = findings(admin)
        assert len(rows) == 1
        assert len(shoots(admin)) == 1


async def test_the_worker_role_cannot_delete(database: TestDatabase, worker: psycopg.AsyncConnection[Any]) -> None:
    for table in ("gardener_shoots", "drift_findings", "worker_heartbeats"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await worker.execute(f"DELETE FROM tenant.{table}")
        await worker.rollback()


def test_kind_ids_are_what_the_database_allows(database: TestDatabase) -> None:
    with database.admin() as admin:
        (definition,) = admin.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'drift_findings_ck_kind'"
        ).fetchone() or ("",)
    allowed = {part.split("'")[1] for part in str(definition).split("::text")[:-1]}
    assert allowed == set(KIND_IDS)


def _fields(shoot: ShootObservation) -> dict[str, Any]:
    return {
        "uid": shoot.uid,
        "name": shoot.name,
        "namespace": shoot.namespace,
        "cluster_label": shoot.cluster_label,
        "organization_label": shoot.organization_label,
        "kubernetes_version": shoot.kubernetes_version,
        "region": shoot.region,
        "created": shoot.created,
    }


async def test_a_clock_that_steps_back_breaks_no_constraint(
    database: TestDatabase, worker: psycopg.AsyncConnection[Any]
) -> None:
    with database.admin() as admin:
        org, cluster = add_cluster(admin, version="1.31.0")
    drifted = shoot_of(cluster, org, version="1.29.0")
    await store_pass(worker, [drifted], T0)
    await store_pass(worker, [drifted], T0 - timedelta(minutes=1))
    with database.admin() as admin:
        (finding,) = findings(admin)
        assert shoots(admin)[drifted.uid]["last_seen"] == T0
    assert finding["last_detected"] == T0
    await store_pass(worker, [], T0 - timedelta(minutes=2))
    with database.admin() as admin:
        (finding,) = [f for f in findings(admin) if f["kind"] == "version_mismatch"]
        assert shoots(admin)[drifted.uid]["deleted"] == T0
    assert finding["resolved"] == T0
