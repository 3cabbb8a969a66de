"""ReconcileLoop end to end: fleet-sim's garden through the real client, real PostgreSQL as fun_cluster_worker.

Every test writes the simulator's fleet into a fresh database first, so both sides start from the
same description (the generator's planted drift included), then changes the world through the
simulator's control API (or, for the database side, as a superuser) and runs passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from collector.kube.client import garden_client
from collector.kube.errors import Gone, KubeError, ServerError, Timeout, TooLarge
from collector.kube.garden import RealGardener
from collector.mock import MockGardener
from collector.reconcile.drift import KIND_IDS
from collector.reconcile.loop import ReconcileLoop, ReconcileSummary
from collector.reconcile.metrics import REGISTRY
from common.database import make_pool
from common.labels import CLUSTER_ID_LABEL, ORGANIZATION_ID_LABEL
from common.naming import garden_namespace, project_name
from common.settings import DatabaseSettings
from db import provisioning
from db.seed.write import write_fleet
from fleet_description.model import Fleet
from sim.api.credentials.kubeconfig import to_yaml
from sim.world.shoots import ShootState
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest
from tests.fixtures.waiting import eventually_async

ROLE = "fun_cluster_worker"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PASS_EVERY = timedelta(minutes=5)
# The seed's deletions began before its anchor, months before T0: most tests bound them far away,
# so a deletion under way stays one (test_a_deletion_under_way_too_long_is_reported tests the bound).
LONG_AGO = timedelta(days=3650)


class SteppingClock:
    """A clock that moves five minutes each time it is read: one reading per pass."""

    def __init__(self) -> None:
        self._ticks = itertools.count()

    def __call__(self) -> datetime:
        return T0 + next(self._ticks) * PASS_EVERY


@dataclass
class Setup:
    sim: SimUnderTest
    database: TestDatabase
    pool: AsyncConnectionPool[Any]
    kubeconfig: Path

    def admin(self) -> psycopg.Connection[Any]:
        return self.database.admin()

    @contextlib.asynccontextmanager
    async def loop(
        self,
        *,
        page_size: int = 500,
        timeout_seconds: float = 10.0,
        interval_seconds: float = 300,
        clock: Callable[[], datetime] | None = None,
        deletion_timeout_seconds: float | None = LONG_AGO.total_seconds(),
    ) -> AsyncIterator[ReconcileLoop]:
        gardener = RealGardener(await garden_client(self.kubeconfig, timeout_seconds=timeout_seconds))
        try:
            yield ReconcileLoop(
                pool=self.pool,
                gardener=gardener,
                interval_seconds=interval_seconds,
                page_size=page_size,
                deletion_timeout_seconds=deletion_timeout_seconds,
                clock=clock or SteppingClock(),
            )
        finally:
            await gardener.close()

    def findings(self) -> list[dict[str, Any]]:
        with self.admin() as admin, admin.cursor(row_factory=dict_row) as cur:
            return cur.execute("SELECT * FROM tenant.drift_findings ORDER BY first_detected, kind, subject").fetchall()

    def open_findings(self) -> set[tuple[str, str]]:
        return {(f["kind"], f["subject"]) for f in self.findings() if f["resolved"] is None}

    def shoot_rows(self) -> dict[UUID, dict[str, Any]]:
        with self.admin() as admin, admin.cursor(row_factory=dict_row) as cur:
            return {r["uid"]: r for r in cur.execute("SELECT * FROM tenant.gardener_shoots").fetchall()}

    def snapshot(self) -> tuple[list[tuple[Any, ...]], ...]:
        """Every row reconcile may write, in a stable order."""
        with self.admin() as admin:
            return tuple(
                admin.execute(f"SELECT * FROM tenant.{table} ORDER BY 1").fetchall()
                for table in ("gardener_shoots", "drift_findings", "worker_heartbeats")
            )


@pytest.fixture
async def setup(sim: SimUnderTest, database: TestDatabase, tmp_path: Path) -> AsyncIterator[Setup]:
    with psycopg.connect(database.dsn()) as admin:
        write_fleet(admin, sim.fleet)
    kubeconfig = tmp_path / "garden.yaml"
    kubeconfig.write_bytes(to_yaml(sim.garden_kubeconfig))
    pool = make_pool(DatabaseSettings(url=database.dsn(ROLE), pool_min=1, pool_max=3), application_name="test")
    await pool.open(wait=True)
    try:
        yield Setup(sim, database, pool, kubeconfig)
    finally:
        await pool.close()


@pytest.fixture
async def loop(setup: Setup) -> AsyncIterator[ReconcileLoop]:
    async with setup.loop() as reconcile:
        yield reconcile


def noted(fleet: Fleet, key: str) -> list[str]:
    value = fleet.notes.get(key, "")
    return value.split(",") if value else []


def shoot_of_cluster(sim: SimUnderTest, cluster_id: str) -> ShootState:
    (found,) = sim.shoots(lambda s: s.cluster_label == cluster_id)
    return found


def scenario_shoot(sim: SimUnderTest, scenario: str) -> ShootState:
    """The shoot of the first cluster the generator gave `scenario`."""
    return shoot_of_cluster(sim, noted(sim.fleet, f"scenario.{scenario}")[0])


# --- the first pass -----------------------------------------------------------------------------


async def test_first_pass_mirrors_every_shoot_and_records_the_planted_drift(setup: Setup, loop: ReconcileLoop) -> None:
    summary = await loop.run_once()
    fleet = setup.sim.fleet
    expected = (
        {("orphan_shoot", uid) for uid in noted(fleet, "drift.orphan_shoot")}
        | {("shoot_of_deleted_cluster", uid) for uid in noted(fleet, "drift.shoot_of_deleted_cluster")}
        | {("organization_mismatch", uid) for uid in noted(fleet, "drift.organization_mismatch")}
        | {("version_mismatch", cid) for cid in noted(fleet, "drift.version_mismatch")}
        | {("unlabeled_shoot", uid) for uid in noted(fleet, "drift.unlabeled_shoot")}
        | {
            # A lost cluster (the provisioning side saw its shoot vanish) is a missing shoot too (docs/reconcile.md).
            ("missing_shoot", cid)
            for cid in noted(fleet, "drift.missing_shoot") + noted(fleet, "scenario.lost")
        }
    )
    assert {kind for kind, _ in expected} == set(KIND_IDS)
    assert setup.open_findings() == expected
    assert sum(summary.opened.values()) == len(expected)
    assert summary.open_now == {k: sum(1 for kind, _ in expected if kind == k) for k in KIND_IDS}

    listed = setup.sim.shoots(lambda s: s.cluster_labelled)  # the mirror holds the labelled shoots only
    rows = setup.shoot_rows()
    assert summary.shoots_listed == len(listed) == len(rows) == summary.shoots_new
    for shoot in listed:
        row = rows[UUID(shoot.uid)]
        assert (row["name"], row["namespace"], row["cluster_label"], row["organization_label"]) == (
            shoot.name,
            shoot.namespace,
            shoot.cluster_label,
            shoot.organization_label,
        )
        assert (row["kubernetes_version"], row["region"]) == (shoot.kubernetes_version, shoot.region)
        assert row["created"] == shoot.created.replace(microsecond=0)
        assert (row["first_seen"], row["last_seen"], row["deleted"]) == (T0, T0, None)
    not_uuid = [r for r in rows.values() if r["cluster_label"] == "not-a-uuid"]
    assert len(not_uuid) == 1
    assert not_uuid[0]["cluster_id"] is None

    with setup.admin() as admin:
        heartbeat = admin.execute(
            "SELECT last_completed, interval_seconds, details FROM tenant.worker_heartbeats WHERE loop = 'reconcile'"
        ).fetchone()
    assert heartbeat is not None
    assert heartbeat[:2] == (T0, 300)
    assert heartbeat[2]["shoots"]["listed"] == len(listed)


async def test_a_second_pass_without_change_keeps_everything(setup: Setup, loop: ReconcileLoop) -> None:
    await loop.run_once()
    before = setup.findings()
    summary = await loop.run_once()
    after = setup.findings()
    assert sum(summary.opened.values()) == sum(summary.resolved.values()) == 0
    assert summary.shoots_new == summary.shoots_gone == 0
    assert [(f["id"], f["first_detected"]) for f in after] == [(f["id"], f["first_detected"]) for f in before]
    assert {f["last_detected"] for f in after} == {T0 + PASS_EVERY}
    assert {r["last_seen"] for r in setup.shoot_rows().values()} == {T0 + PASS_EVERY}


# --- each kind: opened by its cause, kept, resolved by its cure, new again on recurrence ---------------


@dataclass
class Case:
    kind: str
    cause: Callable[[Setup], str]  # changes the world; returns the finding's subject
    cure: Callable[[Setup, str], None]


def _running(setup: Setup) -> ShootState:
    return scenario_shoot(setup.sim, "running")


def cause_version(setup: Setup) -> str:
    shoot = _running(setup)
    setup.sim.control.bump_version(shoot.key)
    return shoot.cluster_label


def cure_version(setup: Setup, subject: str) -> None:
    shoot = shoot_of_cluster(setup.sim, subject)
    (cluster,) = [c for c in setup.sim.fleet.clusters if str(c.id) == subject]
    # Back on the database's minor, on another patch: patch versions are not compared.
    major, minor = cluster.kubernetes_version.split(".")[:2]
    setup.sim.control.set_kubernetes_version(shoot.key, f"{major}.{minor}.99")


def cause_missing(setup: Setup) -> str:
    shoot = _running(setup)
    setup.sim.control.delete_shoot(shoot.key)
    return shoot.cluster_label


def cure_missing(setup: Setup, subject: str) -> None:
    (cluster,) = [c for c in setup.sim.fleet.clusters if str(c.id) == subject]
    setup.sim.control.add_shoot(
        "recreated",
        f"c{cluster.id.hex[:8]}",
        cluster_label=subject,
        organization_label=str(cluster.organization_id),
        kubernetes_version=cluster.kubernetes_version,
    )


def cause_orphan(setup: Setup) -> str:
    key = setup.sim.control.add_shoot(
        "strays", f"o{uuid4().hex[:8]}", cluster_label=str(uuid4()), organization_label=""
    )
    return setup.sim.control.shoot(key).uid


def cure_by_deleting_the_shoot(setup: Setup, subject: str) -> None:
    (shoot,) = setup.sim.shoots(lambda s: s.uid == subject)
    setup.sim.control.delete_shoot(shoot.key)


def cause_shoot_of_deleted(setup: Setup) -> str:
    # A shoot turns up for a cluster whose deletion the provisioning side already confirmed.
    deleted = noted(setup.sim.fleet, "scenario.deleted")[0]
    (cluster,) = [c for c in setup.sim.fleet.clusters if str(c.id) == deleted]
    key = setup.sim.control.add_shoot(
        "late", f"d{uuid4().hex[:8]}", cluster_label=deleted, organization_label=str(cluster.organization_id)
    )
    return setup.sim.control.shoot(key).uid


def cause_organization(setup: Setup) -> str:
    shoot = _running(setup)
    setup.sim.control.set_labels(shoot.key, organization_label=str(uuid4()))
    return shoot.uid


def cure_organization(setup: Setup, subject: str) -> None:
    (shoot,) = setup.sim.shoots(lambda s: s.uid == subject)
    (cluster,) = [c for c in setup.sim.fleet.clusters if str(c.id) == shoot.cluster_label]
    setup.sim.control.set_labels(shoot.key, organization_label=str(cluster.organization_id))


def cause_unlabeled(setup: Setup) -> str:
    # Someone strips the cluster-id label off a running cluster's shoot (in its organization's project).
    shoot = _running(setup)
    setup.sim.control.set_cluster_labelled(shoot.key, False)
    return shoot.uid


def cure_unlabeled(setup: Setup, subject: str) -> None:
    (shoot,) = setup.sim.shoots(lambda s: s.uid == subject)
    setup.sim.control.set_cluster_labelled(shoot.key, True)


CASES = [
    Case("version_mismatch", cause_version, cure_version),
    Case("missing_shoot", cause_missing, cure_missing),
    Case("orphan_shoot", cause_orphan, cure_by_deleting_the_shoot),
    Case("shoot_of_deleted_cluster", cause_shoot_of_deleted, cure_by_deleting_the_shoot),
    Case("organization_mismatch", cause_organization, cure_organization),
    Case("unlabeled_shoot", cause_unlabeled, cure_unlabeled),
]


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
async def test_a_kind_opens_stays_resolves_and_recurs_as_a_new_row(
    setup: Setup, loop: ReconcileLoop, case: Case
) -> None:
    await loop.run_once()
    baseline = {f["id"] for f in setup.findings()}

    subject = case.cause(setup)
    summary = await loop.run_once()
    assert summary.opened[case.kind] == 1
    (opened,) = [f for f in setup.findings() if (f["kind"], f["subject"]) == (case.kind, subject)]
    assert opened["first_detected"] == opened["last_detected"] == T0 + PASS_EVERY
    assert opened["details"]["expected"] is not None
    assert "observed" in opened["details"]

    summary = await loop.run_once()
    assert summary.opened[case.kind] == 0
    assert summary.still_open[case.kind] >= 1
    (kept,) = [f for f in setup.findings() if f["id"] == opened["id"]]
    assert kept["first_detected"] == T0 + PASS_EVERY
    assert kept["last_detected"] == T0 + 2 * PASS_EVERY
    assert kept["resolved"] is None

    case.cure(setup, subject)
    summary = await loop.run_once()
    assert summary.resolved[case.kind] == 1
    assert sum(summary.opened.values()) == 0
    (resolved,) = [f for f in setup.findings() if f["id"] == opened["id"]]
    assert resolved["resolved"] == T0 + 3 * PASS_EVERY
    assert resolved["first_detected"] == T0 + PASS_EVERY
    assert (case.kind, subject) not in setup.open_findings()

    recurring = case.cause(setup) if case.kind in {"orphan_shoot", "shoot_of_deleted_cluster"} else None
    if recurring is None:
        # The same subject disagrees again (the cure is undone in the same way it was caused).
        _undo_cure(setup, case, subject)
        recurring = subject
    summary = await loop.run_once()
    assert summary.opened[case.kind] == 1
    rows = setup.findings()
    again = [f for f in rows if (f["kind"], f["subject"]) == (case.kind, recurring) and f["resolved"] is None]
    assert len(again) == 1
    assert again[0]["id"] != opened["id"]
    assert again[0]["first_detected"] == T0 + 4 * PASS_EVERY
    # Nothing is ever deleted: every row of every earlier pass is still there.
    assert baseline | {opened["id"]} <= {f["id"] for f in rows}


def _undo_cure(setup: Setup, case: Case, subject: str) -> None:
    if case.kind == "version_mismatch":
        setup.sim.control.bump_version(shoot_of_cluster(setup.sim, subject).key)
    elif case.kind == "missing_shoot":
        setup.sim.control.delete_shoot(shoot_of_cluster(setup.sim, subject).key)
    elif case.kind == "unlabeled_shoot":
        cause_unlabeled_again(setup, subject)
    else:
        (shoot,) = setup.sim.shoots(lambda s: s.uid == subject)
        setup.sim.control.set_labels(shoot.key, organization_label=str(uuid4()))


def cause_unlabeled_again(setup: Setup, subject: str) -> None:
    (shoot,) = setup.sim.shoots(lambda s: s.uid == subject)
    setup.sim.control.set_cluster_labelled(shoot.key, False)


async def test_an_unlabeled_shoot_outside_fundaments_projects_is_left_alone(setup: Setup, loop: ReconcileLoop) -> None:
    await loop.run_once()
    key = setup.sim.control.add_shoot("someteam", "byhand", cluster_label="", organization_label="")
    setup.sim.control.set_cluster_labelled(key, False)
    summary = await loop.run_once()
    assert summary.shoots_unlabeled == 2  # the planted one and this one, garden-wide
    assert summary.opened["unlabeled_shoot"] == 0
    assert summary.open_now["unlabeled_shoot"] == 1  # the planted one, in organization 0's project


async def test_an_unlabeled_shoot_of_a_deleted_organization_is_resolved(setup: Setup, loop: ReconcileLoop) -> None:
    await loop.run_once()
    planted = setup.sim.fleet.notes["drift.unlabeled_shoot"]
    assert ("unlabeled_shoot", planted) in setup.open_findings()
    with setup.admin() as admin:
        admin.execute(
            "UPDATE tenant.organizations SET deleted = now() WHERE id = %s", [str(setup.sim.fleet.organizations[0].id)]
        )
    summary = await loop.run_once()
    assert summary.resolved["unlabeled_shoot"] == 1
    assert ("unlabeled_shoot", planted) not in setup.open_findings()


class FailingSecondListing:
    """The real garden, which starts answering 500 just before the second listing of a pass."""

    def __init__(self, setup: Setup, real: RealGardener) -> None:
        self._setup, self._real = setup, real

    async def list_shoots(self, *, label_selector: str, page_size: int = 500) -> Any:
        if label_selector.startswith("!"):
            self._setup.sim.control.fault("garden", "server_error")
        return await self._real.list_shoots(label_selector=label_selector, page_size=page_size)

    async def list_projects(self, *, page_size: int = 500) -> Any:
        return await self._real.list_projects(page_size=page_size)


async def test_a_listing_of_unlabeled_shoots_that_fails_records_nothing(setup: Setup, loop: ReconcileLoop) -> None:
    await loop.run_once()
    before = setup.snapshot()
    real = RealGardener(await garden_client(setup.kubeconfig, timeout_seconds=10))
    try:
        failing = ReconcileLoop(
            pool=setup.pool, gardener=FailingSecondListing(setup, real), interval_seconds=300, clock=SteppingClock()
        )
        with pytest.raises(ServerError):
            await failing.run_once()
    finally:
        await real.close()
    # Not even the mirror of the first (good) listing, nor the heartbeat: the pass is whole or nothing.
    assert setup.snapshot() == before


# --- unlabeled shoots are found through Gardener's Project objects --------------------------------


async def test_an_unlabeled_shoot_is_found_through_its_project_in_a_namespace_not_named_after_it(setup: Setup) -> None:
    """Organization 0's project lives in a namespace that is not `garden-<project>` (the fleet plants
    it so): only its Project's spec.namespace says the planted unlabeled shoot is Fundament's."""
    fleet = setup.sim.fleet
    owner = fleet.organizations[0]
    planted = fleet.notes["drift.unlabeled_shoot"]
    (spec,) = [s for s in fleet.shoots if str(s.uid) == planted]
    assert spec.namespace == fleet.notes["planted.adopted_project_namespace"]
    assert spec.namespace != garden_namespace(owner.name)  # the convention would miss it
    async with setup.loop(page_size=3) as loop:
        summary = await loop.run_once()
    assert summary.opened["unlabeled_shoot"] == 1
    assert summary.not_evaluated == {}
    assert summary.projects_listed == len(fleet.garden_projects) + len(
        {s.project for s in fleet.shoots} - {p.name for p in fleet.garden_projects}
    )
    (finding,) = [f for f in setup.findings() if f["kind"] == "unlabeled_shoot"]
    assert (finding["subject"], finding["organization_id"], finding["resolved"]) == (planted, owner.id, None)
    details = finding["details"]
    assert details["organization"] == {"id": str(owner.id), "name": owner.name}
    assert details["project"] == {"name": project_name(owner.name), "namespace": spec.namespace, "matched_by": "label"}
    assert details["shoot"] == {"uid": planted, "namespace": spec.namespace, "name": spec.name}
    # Projects are listed as shoots are: in pages of the pass's page size, limit/continue.
    projects = [r for r in setup.sim.control.requests("garden") if r.resource == "projects"]
    assert {r.query["limit"] for r in projects} == {"3"}
    assert "continue" in projects[-1].query


async def test_an_unlabeled_shoot_in_a_namespace_named_by_the_convention_but_not_fundaments_is_left_alone(
    setup: Setup, loop: ReconcileLoop
) -> None:
    """Organization 0's project lives elsewhere, so `garden-<its project>` is free for another team's
    project: a shoot there is not Fundament's, however its namespace is named (or it is labelled)."""
    await loop.run_once()
    owner = setup.sim.fleet.organizations[0]
    setup.sim.control.add_project("someteam", namespace=garden_namespace(owner.name))
    key = setup.sim.control.add_shoot("someteam", "byhand", cluster_label="", organization_label=str(owner.id))
    setup.sim.control.set_cluster_labelled(key, False)
    assert setup.sim.control.shoot(key).namespace == garden_namespace(owner.name)
    summary = await loop.run_once()
    assert summary.shoots_unlabeled == 2
    assert summary.opened["unlabeled_shoot"] == 0
    assert ("unlabeled_shoot", setup.sim.control.shoot(key).uid) not in setup.open_findings()


@pytest.mark.parametrize("fault", ["server_error", "forbidden", "malformed", "hang"])
async def test_a_failed_project_listing_leaves_the_unlabeled_rule_unevaluated(setup: Setup, fault: str) -> None:
    """Could not list the projects is never "there are none": the unlabeled-shoot findings stay open
    as they were, no new one opens, and the rest of the pass is stored as usual."""
    async with setup.loop(timeout_seconds=0.5) as loop:
        await loop.run_once()
        planted = setup.sim.fleet.notes["drift.unlabeled_shoot"]
        (before,) = [f for f in setup.findings() if f["kind"] == "unlabeled_shoot"]
        assert before["subject"] == planted
        # In the failing pass: the planted shoot is gone (evaluated, its finding would resolve), another
        # shoot of an organization's project loses its label (evaluated, it would open), a version moves.
        (planted_shoot,) = setup.sim.shoots(lambda s: s.uid == planted)
        setup.sim.control.delete_shoot(planted_shoot.key)
        stripped = cause_unlabeled(setup)
        bumped = scenario_shoot(setup.sim, "unhealthy")
        setup.sim.control.bump_version(bumped.key)
        setup.sim.control.fault("garden", fault, resource="projects", seconds=5 if fault == "hang" else 0.0)
        summary = await loop.run_once()
    assert summary.projects_listed is None
    assert list(summary.not_evaluated) == ["unlabeled_shoot"]
    assert "could not list Gardener's projects" in summary.not_evaluated["unlabeled_shoot"]
    assert summary.opened["unlabeled_shoot"] == summary.resolved["unlabeled_shoot"] == 0
    assert summary.open_now["unlabeled_shoot"] == 1
    (kept,) = [f for f in setup.findings() if f["kind"] == "unlabeled_shoot"]
    assert (kept["id"], kept["resolved"]) == (before["id"], None)
    assert kept["last_detected"] == before["last_detected"]  # not seen again: it was not looked for
    assert ("unlabeled_shoot", stripped) not in setup.open_findings()
    # The other rules ran and the pass was stored, its summary saying what it could not evaluate.
    assert summary.opened["version_mismatch"] == 1
    assert ("version_mismatch", bumped.cluster_label) in setup.open_findings()
    with setup.admin() as admin:
        row = admin.execute("SELECT details FROM tenant.worker_heartbeats WHERE loop = 'reconcile'").fetchone()
    assert row is not None
    assert list(row[0]["not_evaluated"]) == ["unlabeled_shoot"]
    assert row[0]["projects"] == {"listed": None}
    # With the projects listed again, the rule decides: the gone shoot's finding resolves, the new one opens.
    setup.sim.control.clear_faults()
    async with setup.loop() as loop:
        summary = await loop.run_once()
    assert summary.not_evaluated == {}
    assert (summary.resolved["unlabeled_shoot"], summary.opened["unlabeled_shoot"]) == (1, 1)
    assert setup.open_findings() >= {("unlabeled_shoot", stripped)}
    assert ("unlabeled_shoot", planted) not in setup.open_findings()


# --- no false findings ----------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", ["upgrading", "upgrading_sync", "starting", "stopped", "error", "unhealthy"])
async def test_version_changes_of_clusters_that_are_not_ready_or_updating(
    setup: Setup, loop: ReconcileLoop, scenario: str
) -> None:
    await loop.run_once()
    shoot = scenario_shoot(setup.sim, scenario)
    setup.sim.control.bump_version(shoot.key)
    summary = await loop.run_once()
    if scenario == "unhealthy":  # ready (unhealthy counts) and not updating: a real mismatch
        assert summary.opened["version_mismatch"] == 1
    else:
        assert summary.opened["version_mismatch"] == 0
        assert ("version_mismatch", shoot.cluster_label) not in setup.open_findings()


async def test_a_never_synced_cluster_gets_neither_version_nor_missing_findings(
    setup: Setup, loop: ReconcileLoop
) -> None:
    cluster_id = noted(setup.sim.fleet, "scenario.provisioning")[0]
    (cluster,) = [c for c in setup.sim.fleet.clusters if str(c.id) == cluster_id]
    summary = await loop.run_once()
    assert ("missing_shoot", cluster_id) not in setup.open_findings()
    # Its shoot appears, on another minor version than the database holds, while provisioning goes on.
    setup.sim.control.add_shoot(
        "fresh",
        "p0",
        cluster_label=cluster_id,
        organization_label=str(cluster.organization_id),
        kubernetes_version="9.9.0",
    )
    summary = await loop.run_once()
    assert sum(summary.opened.values()) == 0


async def test_a_shoot_recreated_under_its_name_is_a_new_row(setup: Setup, loop: ReconcileLoop) -> None:
    await loop.run_once()
    old = _running(setup)
    new_uid = setup.sim.control.recreate_shoot(old.key)
    summary = await loop.run_once()
    assert (summary.shoots_new, summary.shoots_gone) == (1, 1)
    assert sum(summary.opened.values()) == 0
    rows = setup.shoot_rows()
    assert rows[UUID(old.uid)]["deleted"] == T0 + PASS_EVERY
    assert rows[UUID(new_uid)]["deleted"] is None
    assert rows[UUID(new_uid)]["first_seen"] == T0 + PASS_EVERY
    assert rows[UUID(new_uid)]["name"] == rows[UUID(old.uid)]["name"] == old.name


async def test_two_shoots_claiming_one_cluster(setup: Setup, loop: ReconcileLoop) -> None:
    shoot = _running(setup)
    (cluster,) = [c for c in setup.sim.fleet.clusters if str(c.id) == shoot.cluster_label]
    await loop.run_once()
    setup.sim.control.add_shoot(
        "twin",
        "t0",
        cluster_label=shoot.cluster_label,
        organization_label=str(cluster.organization_id),
        kubernetes_version="1.10.0",
    )
    summary = await loop.run_once()
    assert list(summary.duplicate_claims) == [shoot.cluster_label]
    assert summary.opened["version_mismatch"] == 1
    (finding,) = [f for f in setup.findings() if f["subject"] == shoot.cluster_label]
    assert {o["uid"] for o in finding["details"]["observed"]} == {shoot.uid, setup.sim.control.shoot("twin--t0").uid}
    assert REGISTRY.get_sample_value("fleet_reconcile_duplicate_claims") == 1


# --- a failed or partial list records nothing -------------------------------------------------------


def _change_the_world(setup: Setup) -> None:
    """Changes a pass would record, so a test sees that a failed pass recorded none of them."""
    setup.sim.control.delete_shoot(_running(setup).key)
    setup.sim.control.bump_version(scenario_shoot(setup.sim, "patch_differs").key)


@pytest.mark.parametrize("first", [True, False], ids=["first pass", "after a good pass"])
async def test_a_server_error_records_nothing(setup: Setup, loop: ReconcileLoop, first: bool) -> None:
    if not first:
        await loop.run_once()
        _change_the_world(setup)
    before = setup.snapshot()
    setup.sim.control.fault("garden", "server_error")
    with pytest.raises(ServerError):
        await loop.run_once()
    assert setup.snapshot() == before
    if first:
        assert before == ([], [], [])


async def test_a_timeout_records_nothing(setup: Setup) -> None:
    # The first pass gets the usual timeout (a loaded machine may take more than the short one); only
    # the pass against the hanging garden runs with the short one.
    async with setup.loop() as loop:
        await loop.run_once()
    _change_the_world(setup)
    before = setup.snapshot()
    async with setup.loop(timeout_seconds=0.5) as loop:
        setup.sim.control.fault("garden", "hang", seconds=5)
        with pytest.raises(Timeout):
            await loop.run_once()
    assert setup.snapshot() == before


async def test_a_gone_in_the_middle_of_the_pages_records_nothing(setup: Setup) -> None:
    async with setup.loop(page_size=4) as loop:
        await loop.run_once()
        _change_the_world(setup)
        before = setup.snapshot()
        # The first page is served (it takes the one-off fault on `shoots`); the next one answers 410.
        setup.sim.control.fault("garden", "latency", resource="shoots", seconds=0.001, times=1)
        setup.sim.control.fault("garden", "gone")
        with pytest.raises(Gone):
            await loop.run_once()
        assert setup.snapshot() == before
        pages = [r for r in setup.sim.control.requests("garden") if r.query.get("labelSelector")]
        assert [r.fault for r in pages[-2:]] == ["latency", "gone"]
        assert "continue" in pages[-1].query


async def test_an_expired_continue_token_records_nothing(setup: Setup) -> None:
    async with setup.loop(page_size=4) as loop:
        await loop.run_once()
        _change_the_world(setup)
        before = setup.snapshot()
        control = setup.sim.control
        control.clear_requests()
        control.fault("garden", "latency", resource="shoots", seconds=0.001, times=1)
        control.fault("garden", "hang", seconds=30)
        task = asyncio.create_task(loop.run_once())
        # Wait until the second page's request is held, then let the continue token expire (etcd compacts).
        await eventually_async(lambda: len(control.requests("garden")) >= 2, "the second page's request held")
        control.advance_clock(600)
        control.clear_faults()
        with pytest.raises(Gone):
            await task
        assert setup.snapshot() == before


async def test_a_malformed_listing_records_nothing(setup: Setup, loop: ReconcileLoop) -> None:
    await loop.run_once()
    before = setup.snapshot()
    setup.sim.control.fault("garden", "malformed")
    with pytest.raises(KubeError):
        await loop.run_once()
    assert setup.snapshot() == before


# --- the loop, metrics ------------------------------------------------------------------------------


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels or None) or 0.0


async def test_run_passes_at_once_then_every_interval_and_survives_a_failure(setup: Setup) -> None:
    async with setup.loop(interval_seconds=0.05) as reconcile:
        completed = _sample("fleet_reconcile_passes_total", outcome="completed")
        failed = _sample("fleet_reconcile_passes_total", outcome="failed")
        setup.sim.control.fault("garden", "server_error", times=1)
        stop = asyncio.Event()
        runner = asyncio.create_task(reconcile.run(stop))
        await eventually_async(
            lambda: _sample("fleet_reconcile_passes_total", outcome="completed") >= completed + 2, "two more passes"
        )
        assert _sample("fleet_reconcile_passes_total", outcome="failed") == failed + 1
        assert reconcile.first_pass_done.is_set()
        stop.set()
        await asyncio.wait_for(runner, 10)


async def test_run_starts_with_a_pass_and_stops_without_waiting_for_the_interval(setup: Setup) -> None:
    async with setup.loop(interval_seconds=3600) as reconcile:
        stop = asyncio.Event()
        runner = asyncio.create_task(reconcile.run(stop))
        await asyncio.wait_for(reconcile.first_pass_done.wait(), 10)
        stop.set()
        await asyncio.wait_for(runner, 5)
    with setup.admin() as admin:
        (interval,) = admin.execute(
            "SELECT interval_seconds FROM tenant.worker_heartbeats WHERE loop = 'reconcile'"
        ).fetchone() or (None,)
    assert interval == 3600


async def test_metrics_follow_the_database(setup: Setup, loop: ReconcileLoop) -> None:
    count_before = _sample("fleet_reconcile_pass_duration_seconds_count", outcome="completed")
    summary: ReconcileSummary = await loop.run_once()
    assert _sample("fleet_reconcile_pass_duration_seconds_count", outcome="completed") == count_before + 1
    labelled = setup.sim.shoots(lambda s: s.cluster_labelled)
    assert _sample("fleet_reconcile_shoots_listed") == summary.shoots_listed == len(labelled)
    open_rows = setup.open_findings()
    for kind in KIND_IDS:
        assert _sample("fleet_reconcile_open_findings", kind=kind) == sum(1 for k, _ in open_rows if k == kind)
    assert _sample("fleet_reconcile_last_completed_timestamp_seconds") == T0.timestamp()


def test_summary_renders_one_row_per_kind() -> None:
    summary = ReconcileSummary(
        completed=T0,
        duration_seconds=1.5,
        list_seconds=1.0,
        shoots_listed=3,
        shoots_new=1,
        shoots_gone=0,
        duplicate_claims={},
        opened={"orphan_shoot": 2},
        still_open={"missing_shoot": 1},
        resolved={"version_mismatch": 4},
    )
    lines = summary.render().splitlines()
    assert lines[0] == "shoots listed 3 (new 1, gone 0, unlabeled 0); pass took 1.50 s (listing 1.00 s)"
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert rows["orphan_shoot"] == ["2", "0", "0"]
    assert rows["missing_shoot"] == ["0", "1", "0"]
    assert rows["version_mismatch"] == ["0", "0", "4"]
    assert rows["total"] == ["2", "1", "4"]
    assert set(rows) == {*KIND_IDS, "total"}


# --- deletions that never finish ------------------------------------------------------------------


async def test_a_deletion_under_way_too_long_is_reported(setup: Setup) -> None:
    """A deleted cluster whose shoot is still being deleted is excused for the bound (default: three
    intervals), then its shoot is a shoot_of_deleted_cluster finding that says why."""
    deleting = noted(setup.sim.fleet, "scenario.deleting")[0]
    shoot = shoot_of_cluster(setup.sim, deleting)
    clock = SteppingClock()  # T0, then five minutes more per pass
    with setup.admin() as admin:
        # The deletion began just before the first pass.
        provisioning.delete_cluster(admin, deleting, at=T0 - timedelta(minutes=1))
    subject = ("shoot_of_deleted_cluster", str(shoot.uid))
    async with setup.loop(interval_seconds=300, deletion_timeout_seconds=None, clock=clock) as loop:
        for _ in range(3):  # under way 1, 6 and 11 minutes: within 15
            await loop.run_once()
            assert subject not in setup.open_findings()
        await loop.run_once()  # 16 minutes
    assert subject in setup.open_findings()
    [finding] = [f for f in setup.findings() if (f["kind"], str(f["subject"])) == subject]
    assert "under way for longer than 900 s" in finding["details"]["reason"]
    assert finding["details"]["deletion_under_way_seconds"] == 16 * 60
    # Once the provisioning side confirms the deletion and the shoot is gone, the finding resolves.
    setup.sim.control.delete_shoot(shoot.key)
    async with setup.loop(clock=lambda: T0 + timedelta(hours=1)) as loop:
        await loop.run_once()
    assert subject not in setup.open_findings()


async def test_the_bound_is_configurable(setup: Setup) -> None:
    deleting = noted(setup.sim.fleet, "scenario.deleting")[0]
    shoot = shoot_of_cluster(setup.sim, deleting)
    with setup.admin() as admin:
        provisioning.delete_cluster(admin, deleting, at=T0 - timedelta(minutes=2))
    async with setup.loop(deletion_timeout_seconds=60, clock=lambda: T0) as loop:
        await loop.run_once()
    assert ("shoot_of_deleted_cluster", str(shoot.uid)) in setup.open_findings()
    with pytest.raises(ValueError, match="deletion_timeout_seconds"):
        ReconcileLoop(pool=setup.pool, gardener=None, interval_seconds=1, deletion_timeout_seconds=0)  # type: ignore[arg-type]


async def test_the_mock_garden_lists_each_organizations_project(setup: Setup) -> None:
    """GARDENER_MODE=mock: the garden is the database's, its projects as Fundament creates them, so the
    unlabeled-shoot rule is evaluated (and finds nothing: the mock garden has no unlabeled shoot)."""
    mock = MockGardener(setup.pool)
    projects = await mock.list_projects()
    owners = {p["metadata"]["labels"][ORGANIZATION_ID_LABEL] for p in projects}
    assert {p["spec"]["namespace"] for p in projects} == {
        s["metadata"]["namespace"] for s in await mock.list_shoots(label_selector=CLUSTER_ID_LABEL)
    }
    assert str(setup.sim.fleet.organizations[0].id) in owners
    loop = ReconcileLoop(pool=setup.pool, gardener=mock, interval_seconds=300, clock=SteppingClock())
    summary = await loop.run_once()
    assert summary.not_evaluated == {}
    assert summary.projects_listed == len(projects)
    assert summary.opened["unlabeled_shoot"] == summary.shoots_unlabeled == 0
    # Its shoots carry the live node pools as workers, so the ledger has the clusters and their pools.
    shoots = await mock.list_shoots(label_selector=CLUSTER_ID_LABEL)
    workers = sum(len(s["spec"]["provider"]["workers"]) for s in shoots)
    assert workers > len(shoots)
    assert summary.gardener_ledger["created"] == {"gardener.cluster": len(shoots), "gardener.workerpool": workers}


@pytest.mark.parametrize(("fault", "count"), [("value_bomb", 4), ("endless_pages", 500)])
async def test_a_shoot_list_refused_at_its_values_bound_fails_the_pass_and_records_nothing(
    setup: Setup, loop: ReconcileLoop, fault: str, count: int
) -> None:
    """A page that parses into more than its bytes suggest, or pages that never end: the pass fails
    (never "succeeded" on a list it did not read) and nothing of it is stored."""
    await loop.run_once()
    _change_the_world(setup)
    before = setup.snapshot()
    failed = REGISTRY.get_sample_value("fleet_reconcile_passes_total", {"outcome": "failed"}) or 0.0
    setup.sim.control.fault("garden", fault, resource="shoots", count=count)
    with pytest.raises(TooLarge, match="JSON values"):
        await loop.run_once()
    assert setup.snapshot() == before
    assert REGISTRY.get_sample_value("fleet_reconcile_passes_total", {"outcome": "failed"}) == failed + 1
