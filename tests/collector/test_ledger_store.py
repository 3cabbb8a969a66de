"""The ledger against real PostgreSQL, as fun_cluster_worker: rows across passes, unlisted sources, races."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from collector.inventory import store
from collector.inventory.ledger import LedgerCounts
from collector.inventory.sources import RESOURCE_TYPES, SOURCES, Discovered, SourceResult, Unlisted
from tests.fixtures.collector import T0, WORKER_ROLE, make_world
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.waiting import eventually_async


@pytest.fixture
def cluster_id(database: TestDatabase) -> UUID:
    with database.admin() as admin:
        return make_world(admin).clusters[0].id


def rows(database: TestDatabase, cluster_id: UUID, resource_type: str | None = None) -> list[dict[str, Any]]:
    with database.admin() as admin, admin.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "SELECT * FROM tenant.infrastructure_resources WHERE cluster_id = %s"
            " AND (%s::text IS NULL OR resource_type = %s) ORDER BY created, name, id",
            (cluster_id, resource_type, resource_type),
        ).fetchall()


def results(**found: tuple[Discovered, ...] | Unlisted) -> dict[str, SourceResult]:
    """Every source listed and empty, except those given (by type with dots as underscores)."""
    out: dict[str, SourceResult] = dict.fromkeys(RESOURCE_TYPES, ())
    for key, value in found.items():
        out[key.replace("_", ".", 1)] = value
    return out


def thing(resource_type: str, name: str, resource_id: str | None) -> Discovered:
    source = next(s for s in SOURCES if s.resource_type == resource_type)
    return Discovered(resource_type, "team-a" if source.namespaced else "", name, resource_id, source.billable)


async def ledger_pass(
    pool: AsyncConnectionPool[Any], cluster_id: UUID, found: dict[str, SourceResult], minutes: int
) -> LedgerCounts:
    async with pool.connection() as conn, conn.transaction():
        return await store.store_ledger(conn, cluster_id, found, observed=T0 + timedelta(minutes=minutes))


@pytest.mark.parametrize("resource_type", RESOURCE_TYPES)
async def test_create_destroy_recreate_and_id_change_of_each_source(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], cluster_id: UUID, resource_type: str
) -> None:
    key = resource_type.replace(".", "_", 1)
    a, b = thing(resource_type, "a", "id-a"), thing(resource_type, "b", "id-b")

    counts = await ledger_pass(worker_pool, cluster_id, results(**{key: (a, b)}), 0)
    assert counts.by_type[resource_type].found == 2
    assert counts.by_type[resource_type].created == 2
    first = rows(database, cluster_id, resource_type)
    assert [(r["name"], r["resource_id"], r["destroyed"]) for r in first] == [("a", "id-a", None), ("b", "id-b", None)]
    assert all(r["created"] == T0 and r["billable"] == a.billable for r in first)
    assert {r["namespace"] for r in first} == {a.namespace}

    counts = await ledger_pass(worker_pool, cluster_id, results(**{key: (a,)}), 15)
    assert (counts.by_type[resource_type].created, counts.by_type[resource_type].destroyed) == (0, 1)
    gone = next(r for r in rows(database, cluster_id, resource_type) if r["name"] == "b")
    assert gone["destroyed"] == T0 + timedelta(minutes=15), "destroyed is when the inventory noticed"

    counts = await ledger_pass(worker_pool, cluster_id, results(**{key: (a, b)}), 30)
    assert (counts.by_type[resource_type].created, counts.by_type[resource_type].destroyed) == (1, 0)
    lifetimes = [r for r in rows(database, cluster_id, resource_type) if r["name"] == "b"]
    assert [r["destroyed"] is None for r in lifetimes] == [False, True], "a re-created resource gets a new row"
    assert lifetimes[1]["id"] != lifetimes[0]["id"]

    moved = thing(resource_type, "a", "id-a-2")
    counts = await ledger_pass(worker_pool, cluster_id, results(**{key: (moved, b)}), 45)
    assert (counts.by_type[resource_type].created, counts.by_type[resource_type].destroyed) == (0, 0)
    active_a = [r for r in rows(database, cluster_id, resource_type) if r["name"] == "a"]
    assert len(active_a) == 1, "a new cloud id updates the active row"
    assert active_a[0]["resource_id"] == "id-a-2"
    assert active_a[0]["id"] == first[0]["id"]
    assert active_a[0]["last_seen"] == T0 + timedelta(minutes=45)


async def test_a_pass_with_no_change_writes_no_ledger_rows(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], cluster_id: UUID
) -> None:
    nodes = tuple(thing("kubernetes.node", f"n{i}", f"p{i}") for i in range(50))
    certs = (thing("kubernetes.certificate", "tls", "tls-secret"),)
    await ledger_pass(worker_pool, cluster_id, results(kubernetes_node=nodes, kubernetes_certificate=certs), 0)
    before = rows(database, cluster_id)
    counts = await ledger_pass(
        worker_pool, cluster_id, results(kubernetes_node=nodes, kubernetes_certificate=certs), 15
    )
    after = rows(database, cluster_id)
    assert sum(c.created + c.destroyed for c in counts.by_type.values()) == 0
    strip = [{k: v for k, v in r.items() if k != "last_seen"} for r in after]
    assert strip == [{k: v for k, v in r.items() if k != "last_seen"} for r in before]
    assert {r["last_seen"] for r in after} == {T0 + timedelta(minutes=15)}


async def test_a_pass_with_no_change_inserts_nothing_and_only_updates_last_seen(
    worker_pool: AsyncConnectionPool[Any], cluster_id: UUID
) -> None:
    nodes = tuple(thing("kubernetes.node", f"n{i}", f"p{i}") for i in range(200))
    await ledger_pass(worker_pool, cluster_id, results(kubernetes_node=nodes), 0)
    stats = (
        "SELECT n_tup_ins, n_tup_upd, n_tup_del FROM pg_catalog.pg_stat_xact_user_tables"
        " WHERE schemaname = 'tenant' AND relname = 'infrastructure_resources'"
    )
    async with worker_pool.connection() as conn, conn.transaction():
        # Row counts this backend has not flushed yet; the difference is the pass's own.
        before = await (await conn.execute(stats)).fetchone()
        await store.store_ledger(conn, cluster_id, results(kubernetes_node=nodes), observed=T0 + timedelta(hours=1))
        after = await (await conn.execute(stats)).fetchone()
    assert before is not None and after is not None
    counted = tuple(a - b for a, b in zip(after, before, strict=True))
    assert counted == (0, 200, 0)


async def test_an_unlisted_source_destroys_nothing_while_others_reconcile(
    database: TestDatabase, worker_pool: AsyncConnectionPool[Any], cluster_id: UUID
) -> None:
    cert = thing("kubernetes.certificate", "tls", "s1")
    volume = thing("kubernetes.persistentvolume", "pv-1", "vol-1")
    n1, n2 = thing("kubernetes.node", "n1", "p1"), thing("kubernetes.node", "n2", "p2")
    await ledger_pass(
        worker_pool,
        cluster_id,
        results(kubernetes_certificate=(cert,), kubernetes_persistentvolume=(volume,), kubernetes_node=(n1,)),
        0,
    )
    for reason in ("not_found", "forbidden", "timeout", "server_error"):
        counts = await ledger_pass(
            worker_pool,
            cluster_id,
            results(
                kubernetes_certificate=Unlisted(reason, "could not list"),
                kubernetes_persistentvolume=Unlisted(reason, "could not list"),
                kubernetes_node=(n2,),
            ),
            15,
        )
        assert "kubernetes.certificate" not in counts.by_type
        assert counts.unlisted["kubernetes.certificate"].reason == reason
        assert [r["destroyed"] for r in rows(database, cluster_id, "kubernetes.certificate")] == [None]
        assert [r["destroyed"] for r in rows(database, cluster_id, "kubernetes.persistentvolume")] == [None]
    nodes = rows(database, cluster_id, "kubernetes.node")
    assert {(r["name"], r["destroyed"] is None) for r in nodes} == {("n1", False), ("n2", True)}


async def test_racing_collections_never_record_two_active_rows(database: TestDatabase, cluster_id: UUID) -> None:
    found = results(kubernetes_node=(thing("kubernetes.node", "n1", "p1"),))
    async with (
        await psycopg.AsyncConnection.connect(database.dsn(WORKER_ROLE)) as first,
        await psycopg.AsyncConnection.connect(database.dsn(WORKER_ROLE)) as second,
    ):
        # Both read the ledger before either commits: each believes n1 is new.
        async with first.transaction():
            first_counts = await store.store_ledger(first, cluster_id, found, observed=T0)
            racing = asyncio.create_task(_pass_on(second, cluster_id, found))
            # The second insert must wait on the first's uncommitted index entry.
            await _wait_until_blocked(database, "fun_cluster_worker")
            assert not racing.done()
        second_counts = await racing
    assert first_counts.by_type["kubernetes.node"].created == 1
    assert second_counts.by_type["kubernetes.node"].created == 0
    assert len([r for r in rows(database, cluster_id, "kubernetes.node") if r["destroyed"] is None]) == 1


async def _pass_on(
    conn: psycopg.AsyncConnection[Any], cluster_id: UUID, found: dict[str, SourceResult]
) -> LedgerCounts:
    async with conn.transaction():
        return await store.store_ledger(conn, cluster_id, found, observed=T0 + timedelta(seconds=1))


async def _wait_until_blocked(database: TestDatabase, role: str) -> None:
    async with await psycopg.AsyncConnection.connect(database.dsn(), autocommit=True) as admin:

        async def blocked() -> bool:
            cur = await admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND wait_event_type = 'Lock'", (role,)
            )
            row = await cur.fetchone()
            return bool(row and row[0] > 0)

        await eventually_async(blocked, "the racing collection waiting on the first one's row")


def test_the_database_refuses_a_second_active_row(database: TestDatabase, cluster_id: UUID) -> None:
    insert = (
        "INSERT INTO tenant.infrastructure_resources (cluster_id, resource_type, name, billable, created, last_seen)"
        " VALUES (%s, 'kubernetes.node', 'n1', true, %s, %s)"
    )
    with psycopg.connect(database.dsn(WORKER_ROLE), autocommit=True) as conn:
        conn.execute(insert, (cluster_id, T0, T0))
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(insert, (cluster_id, T0, T0))
