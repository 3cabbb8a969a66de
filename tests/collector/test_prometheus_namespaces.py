"""The Prometheus source's namespaces: a namespace that cannot be matched with certainty is never stored as 0.

Without the namespace-id label the collector matches each live namespace by the name Fundament's
provisioning side generated for it from its project's name and id. A renamed project changes that
name, but a Kubernetes namespace cannot be renamed: the shoot keeps the old one. Such a namespace
keeps its previous count and `observed`, is marked unread with the reason, and is counted in
`fleet_inventory_namespaces_unread_total{reason}`; fleet-sim and the database play the rename.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

import pytest

from collector.inventory.metrics import REGISTRY
from collector.inventory.reading import ClusterRow
from common.naming import namespace_name
from tests.collector.test_sim import rows
from tests.fixtures.collector import Collector, shoot_key_of
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest


@dataclass(frozen=True)
class Project:
    id: UUID
    name: str
    namespaces: dict[UUID, str]
    """Namespace id -> its name in the database."""


def unread_total(reason: str) -> float:
    return REGISTRY.get_sample_value("fleet_inventory_namespaces_unread_total", {"reason": reason}) or 0.0


def project_with_pods(database: TestDatabase, sim: SimUnderTest, cluster: ClusterRow) -> Project:
    """A live project of the cluster whose every namespace runs pods on the shoot."""
    expected = sim.control.expected(shoot_key_of(sim, cluster.id)).namespace_pods
    found = rows(
        database,
        "SELECT p.id AS project_id, p.name AS project_name, n.id, n.name FROM tenant.projects p"
        " JOIN tenant.namespaces n ON n.project_id = p.id AND n.deleted IS NULL"
        " WHERE p.cluster_id = %s AND p.deleted IS NULL ORDER BY p.name, n.name",
        cluster.id,
    )
    projects: dict[UUID, Project] = {}
    for row in found:
        project = projects.setdefault(row["project_id"], Project(row["project_id"], row["project_name"], {}))
        project.namespaces[row["id"]] = row["name"]
    for project in projects.values():
        if all(expected.get(str(ns_id), 0) > 0 for ns_id in project.namespaces):
            return project
    raise LookupError(f"cluster {cluster} has no project whose namespaces all run pods")


def snapshots(database: TestDatabase, cluster_id: UUID) -> dict[UUID, dict[str, Any]]:
    return {
        row["namespace_id"]: row
        for row in rows(database, "SELECT * FROM tenant.namespace_snapshots WHERE cluster_id = %s", cluster_id)
    }


def rename(database: TestDatabase, project: Project, new_name: str) -> None:
    """Fundament renames the project; its namespaces' generated names change, the shoot's do not."""
    for namespace in project.namespaces.values():
        assert namespace_name(new_name, project.id, namespace) != namespace_name(project.name, project.id, namespace)
    with database.admin() as admin:
        admin.execute("UPDATE tenant.projects SET name = %s WHERE id = %s", (new_name, project.id))


async def first_round_by_name(
    collector: Collector, sim: SimUnderTest, database: TestDatabase
) -> tuple[ClusterRow, str, Project, dict[UUID, dict[str, Any]]]:
    """A collection without the namespace-id label, every namespace matched by its generated name."""
    sim.control.set_monitoring_labels(False)
    [cluster] = await collector.few(1)
    key = shoot_key_of(sim, cluster.id)
    project = project_with_pods(database, sim, cluster)
    summary = await collector.round([cluster])
    assert summary.collected == 1, [r.error for r in summary.results]
    before = snapshots(database, cluster.id)
    expected = sim.control.expected(key).namespace_pods
    for namespace_id in project.namespaces:
        assert before[namespace_id]["pods"] == expected[str(namespace_id)] > 0
        assert before[namespace_id].get("unread_reason") is None
    return cluster, key, project, before


@pytest.mark.parametrize(
    ("new_namespace_on_the_shoot", "reason"),
    [(False, "renamed"), (True, "ambiguous")],
    ids=["old-name-kept", "new-name-created-too"],
)
async def test_a_renamed_project_keeps_its_namespaces_counts_marked_unread(
    monitoring_collector: Collector,
    sim: SimUnderTest,
    sim_database: TestDatabase,
    new_namespace_on_the_shoot: bool,
    reason: str,
) -> None:
    cluster, key, project, before = await first_round_by_name(monitoring_collector, sim, sim_database)
    new_name = f"zz{project.name}"
    rename(sim_database, project, new_name)
    for namespace_id, name in project.namespaces.items():
        # The tenant's workload changes too: a read would show it, a kept count does not.
        sim.control.add_pods(key, namespace_name(project.name, project.id, name), 3)
        if new_namespace_on_the_shoot:
            # The provisioning side created the namespace again under the new name (empty so far).
            sim.control.add_namespace(key, namespace_name(new_name, project.id, name), namespace_id=str(namespace_id))
    counted = unread_total(reason)
    sim.control.advance_clock(900)
    summary = await monitoring_collector.round([cluster])
    assert summary.collected == 1, [r.error for r in summary.results]
    [cluster_snapshot] = rows(sim_database, "SELECT * FROM tenant.cluster_snapshots WHERE cluster_id = %s", cluster.id)
    assert cluster_snapshot["last_error"] is None
    after = snapshots(sim_database, cluster.id)
    for namespace_id in project.namespaces:
        kept, was = after[namespace_id], before[namespace_id]
        assert (kept["pods"], kept["observed"]) == (was["pods"], was["observed"]), "never stored as a fresh 0"
        assert (kept["unread_reason"], kept["unread_at"]) == (reason, cluster_snapshot["observed"])
    others = [ns_id for ns_id in after if ns_id not in project.namespaces]
    assert others, "the cluster has namespaces of other projects"
    for namespace_id in others:
        assert after[namespace_id]["observed"] == cluster_snapshot["observed"]
        assert after[namespace_id]["unread_reason"] is None
    assert unread_total(reason) == counted + len(project.namespaces)
    assert summary.results[0].unread_namespaces == dict.fromkeys(project.namespaces, reason)

    # With the id label exported again the namespaces are read by id: counted afresh, no longer unread.
    sim.control.set_monitoring_labels(True)
    sim.control.advance_clock(900)
    await monitoring_collector.round([cluster])
    expected = sim.control.expected(key).namespace_pods
    read = snapshots(sim_database, cluster.id)
    for namespace_id in project.namespaces:
        assert read[namespace_id]["pods"] == expected[str(namespace_id)] == before[namespace_id]["pods"] + 3
        assert (read[namespace_id]["unread_reason"], read[namespace_id]["unread_at"]) == (None, None)


async def test_with_the_namespace_id_label_a_rename_changes_nothing(
    monitoring_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    [cluster] = await monitoring_collector.few(1)
    key = shoot_key_of(sim, cluster.id)
    project = project_with_pods(sim_database, sim, cluster)
    rename(sim_database, project, f"zz{project.name}")
    summary = await monitoring_collector.round([cluster])
    assert summary.collected == 1 and summary.results[0].unread_namespaces == {}
    expected = sim.control.expected(key).namespace_pods
    stored = snapshots(sim_database, cluster.id)
    for namespace_id in project.namespaces:
        assert stored[namespace_id]["pods"] == expected[str(namespace_id)]
        assert stored[namespace_id]["unread_reason"] is None


async def test_a_namespace_missing_from_the_shoot_is_stored_as_0_only_when_matched_by_id(
    monitoring_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    """A live namespace the shoot does not have: with the id label every tenant namespace is in view, so
    it runs no pods (as the API-server source says); by name it may be one the shoot holds under another."""
    sim.control.set_monitoring_labels(False)
    [cluster] = await monitoring_collector.few(1)
    project = project_with_pods(sim_database, sim, cluster)
    namespace_id = uuid4()
    with sim_database.admin() as admin:
        admin.execute(
            "INSERT INTO tenant.namespaces (id, project_id, name) VALUES (%s, %s, 'not-yet-there')",
            (namespace_id, project.id),
        )
    counted = unread_total("not_found")
    summary = await monitoring_collector.round([cluster])
    assert summary.results[0].unread_namespaces == {namespace_id: "not_found"}
    assert namespace_id not in snapshots(sim_database, cluster.id), "a namespace never read gets no row"
    assert unread_total("not_found") == counted + 1
    sim.control.set_monitoring_labels(True)
    sim.control.advance_clock(900)
    await monitoring_collector.round([cluster])
    stored = snapshots(sim_database, cluster.id)[namespace_id]
    assert (stored["pods"], stored["unread_reason"]) == (0, None)
