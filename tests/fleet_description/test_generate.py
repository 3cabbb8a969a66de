"""The fleet generator: deterministic, consistent with itself, and planting what the tests rely on."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from common.clusterstatus import ClusterStatus, cluster_status
from common.organizations import SYSTEM_ORGANIZATION_ID
from fleet_description.generate import ANCHOR, SIZES, generate, iter_parts, resolve_size
from fleet_description.model import ClusterSpec, Fleet, NamespaceSpec, NodePoolSpec, OrganizationSpec, ProjectSpec
from fleet_description.scenarios import SHAPES, Scenario


def status_of(cluster: ClusterSpec) -> ClusterStatus:
    sync = cluster.sync
    return cluster_status(
        deleted=cluster.deleted is not None,
        sync_status=sync.sync_status if sync else None,
        shoot_status=sync.shoot_status if sync else None,
        shoot_operation=sync.shoot_operation if sync else None,
        ever_completed=sync is not None and sync.first_completed is not None,
    )


@pytest.fixture(scope="module")
def fleet() -> Fleet:
    return generate("test", 3)


def test_same_seed_same_fleet() -> None:
    assert generate("test", 11) == generate("test", 11)
    assert generate("demo", 11) == generate("demo", 11)


def test_another_seed_another_fleet() -> None:
    first, second = generate("test", 1), generate("test", 2)
    assert {c.id for c in first.clusters}.isdisjoint({c.id for c in second.clusters})


def test_streamed_parts_are_the_same_fleet(fleet: Fleet) -> None:
    namespaces = [ns for part in iter_parts("test", 3) for ns in part.namespaces]
    assert tuple(namespaces) == fleet.namespaces


def test_every_status_occurs(fleet: Fleet) -> None:
    assert {status_of(c) for c in fleet.clusters} == set(ClusterStatus)


def test_each_planted_scenario_has_the_status_it_promises(fleet: Fleet) -> None:
    for scenario in Scenario:
        cluster_ids = fleet.notes[f"scenario.{scenario.value}"].split(",")
        clusters = [c for c in fleet.clusters if str(c.id) in cluster_ids]
        assert clusters, scenario
        assert {status_of(c) for c in clusters} == {SHAPES[scenario].status}, scenario


def test_ids_are_unique_and_references_resolve(fleet: Fleet) -> None:
    org_ids = {o.id for o in fleet.organizations} | {SYSTEM_ORGANIZATION_ID}
    cluster_ids = {c.id for c in fleet.clusters}
    project_ids = {p.id for p in fleet.projects}
    every_id = [
        *org_ids,
        *cluster_ids,
        *project_ids,
        *(n.id for n in fleet.node_pools),
        *(n.id for n in fleet.namespaces),
        *(s.uid for s in fleet.shoots),
    ]
    assert len(every_id) == len(set(every_id))
    assert all(c.organization_id in org_ids for c in fleet.clusters)
    assert all(n.cluster_id in cluster_ids for n in fleet.node_pools)
    assert all(p.cluster_id in cluster_ids for p in fleet.projects)
    assert all(n.project_id in project_ids for n in fleet.namespaces)


def test_no_row_is_deleted_before_it_was_created_or_after_the_anchor(fleet: Fleet) -> None:
    rows: list[OrganizationSpec | ClusterSpec | NodePoolSpec | ProjectSpec | NamespaceSpec] = [
        *fleet.organizations,
        *fleet.clusters,
        *fleet.node_pools,
        *fleet.projects,
        *fleet.namespaces,
    ]
    for row in rows:
        assert row.created < ANCHOR
        assert row.deleted is None or row.created <= row.deleted < ANCHOR


def test_live_organization_names_and_live_child_names_are_unique(fleet: Fleet) -> None:
    live_names = [o.name for o in fleet.organizations if o.deleted is None]
    assert len(live_names) == len(set(live_names))
    for key in ((c.organization_id, c.name) for c in fleet.clusters if c.deleted is None):
        assert sum(1 for c in fleet.clusters if c.deleted is None and (c.organization_id, c.name) == key) == 1


def test_shoots_follow_the_sync_state(fleet: Fleet) -> None:
    shoots_by_cluster = Counter(s.cluster_label for s in fleet.shoots)
    for cluster in fleet.clusters:
        shape_has_shoot = shoots_by_cluster[str(cluster.id)] == 1
        shoot_status = cluster.sync.shoot_status if cluster.sync else None
        if shoot_status in (None, "pending", "missing"):
            assert not shape_has_shoot, cluster
        if shoot_status in ("progressing", "unhealthy", "error", "hibernating", "hibernated", "deleting"):
            assert shape_has_shoot, cluster
    assert all(n <= 1 for n in shoots_by_cluster.values())


def test_planted_drift_is_real(fleet: Fleet) -> None:
    clusters = {str(c.id): c for c in fleet.clusters}
    shoots = {str(s.uid): s for s in fleet.shoots}
    orphans = [shoots[uid] for uid in fleet.notes["drift.orphan_shoot"].split(",")]
    assert {o.cluster_label in clusters for o in orphans} == {False}
    assert "not-a-uuid" in {o.cluster_label for o in orphans}
    deleted_owner = clusters[shoots[fleet.notes["drift.shoot_of_deleted_cluster"]].cluster_label]
    assert deleted_owner.deleted is not None
    assert fleet.notes["drift.missing_shoot"] not in {s.cluster_label for s in fleet.shoots}
    mismatch = clusters[fleet.notes["drift.version_mismatch"]]
    mismatched_shoot = next(s for s in fleet.shoots if s.cluster_label == str(mismatch.id))
    assert mismatched_shoot.kubernetes_version.split(".")[:2] != mismatch.kubernetes_version.split(".")[:2]
    org_shoot = shoots[fleet.notes["drift.organization_mismatch"]]
    assert org_shoot.organization_label != str(clusters[org_shoot.cluster_label].organization_id)


def test_deleted_rows_at_every_level_and_planted_leftovers(fleet: Fleet) -> None:
    assert any(o.deleted for o in fleet.organizations)
    assert any(c.deleted for c in fleet.clusters)
    assert any(p.deleted for p in fleet.projects)
    assert any(n.deleted for n in fleet.namespaces)
    projects = {p.id: p for p in fleet.projects}
    assert any(n.deleted is None and projects[n.project_id].deleted is not None for n in fleet.namespaces)
    left = next(c for c in fleet.clusters if str(c.id) == fleet.notes["planted.deleted_organization_live_cluster"])
    assert left.deleted is None
    assert next(o for o in fleet.organizations if o.id == left.organization_id).deleted is not None
    assert any(c.organization_id == SYSTEM_ORGANIZATION_ID for c in fleet.clusters)
    assert SYSTEM_ORGANIZATION_ID not in {o.id for o in fleet.organizations}


def test_listed_and_unlisted_organizations(fleet: Fleet) -> None:
    assert {o.listed_publicly for o in fleet.organizations if o.deleted is None} == {True, False}


def test_demo_has_a_few_dozen_organizations_in_every_status() -> None:
    demo = generate("demo", 0)
    assert 24 <= len(demo.organizations) <= 60
    assert {status_of(c) for c in demo.clusters} == set(ClusterStatus)


def test_scale_size_is_the_design_target() -> None:
    scale = SIZES["scale"]
    clusters = scale.organizations * scale.clusters_per_organization
    projects = clusters * scale.projects_per_cluster
    assert (scale.organizations, clusters, projects, projects * scale.namespaces_per_project) == (
        10_000,
        50_000,
        250_000,
        1_000_000,
    )


def test_unknown_size_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown fleet size 'huge'"):
        resolve_size("huge")


def test_too_small_a_size_is_refused() -> None:
    with pytest.raises(ValueError, match="planted clusters"):
        generate(replace(SIZES["test"], organizations=2), 0)


def test_the_demo_page_names_the_demo_fleets_deleted_cluster_with_ledger_rows() -> None:
    """docs/demo.md's command for the ledger a deletion left behind names the demo fleet's planted cluster."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "demo.md").read_text()
    cluster_id = generate("demo", 0).notes["planted.deleted_cluster_ledger"]
    assert f'"cluster_id": "{cluster_id}", "include_destroyed": true' in readme
