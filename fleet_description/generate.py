"""Deterministic fleets of any size: the database's rows and the garden's shoots, from one seed.

`generate(size, seed)` returns a whole `Fleet` (the simulator and the tests use it);
`iter_parts(size, seed)` yields the same fleet one organization at a time, so the writer can store
the ADR-0002 scale (1,000,000 namespaces) without holding it all (`db/seed/write.py`). Each
organization is generated from its own random stream (`seed` and its index), so a part never
depends on the ones before it and the same seed gives the same fleet, id for id, on any machine.

Every fleet starts with the planted things: every scenario of `fleet_description/scenarios.py` once (so every
status and every drift kind occurs, even at size `test`); organization 0 listed, organization 1 not; organization 0's
first cluster with node pool names that test the naming contract and its Gardener project in a namespace
not named `garden-<project>` (`planted.py`); the planted deleted cluster with the active ledger rows it had
when it ran (reconcile closes them); the last organization deleted (though listed) with one live cluster
left behind; a cluster of the system organization; two orphan shoots (one labelled with a UUID no cluster
has, one with a label that is no UUID); one shoot without the cluster-id label in organization 0's
project. `Fleet.notes` says where. Times are fixed relative to `ANCHOR`, never the wall clock: every
creation lies at least 15 days before it, every deletion within the 9 days before it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from common.naming import project_name, shoot_name
from common.organizations import SYSTEM_ORGANIZATION_ID
from fleet_description.draws import (
    CLUSTER_WORDS,
    MACHINES,
    NAMESPACE_WORDS,
    POOLS,
    PROJECT_WORDS,
    REGIONS,
    VERSIONS,
    minor_of,
    organization_id,
    organization_name,
    other_minor,
    random_uuid,
    stream,
)
from fleet_description.model import (
    ClusterSpec,
    Fleet,
    GardenProjectSpec,
    NamespaceSpec,
    NodePoolSpec,
    OrganizationSpec,
    ProjectSpec,
    ResourceSpec,
    ShootSpec,
)
from fleet_description.planted import garden_project, planted_ledger_rows, planted_pools, project_namespace
from fleet_description.scenarios import PLANTED, SHAPES, WEIGHTS, Scenario, sync_spec

# Every generated time lies before this instant.
ANCHOR = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class FleetSize:
    """How big a fleet is; counts are rows, live and deleted together."""

    name: str
    organizations: int
    clusters_per_organization: int
    node_pools_per_cluster: int
    projects_per_cluster: int
    namespaces_per_project: int
    listed_share: float  # organizations that opted in to the public overview


SIZES: dict[str, FleetSize] = {
    size.name: size
    for size in (
        FleetSize("test", 9, 3, 2, 2, 2, 0.67),
        FleetSize("demo", 40, 4, 2, 3, 3, 0.5),
        # The design scale: 10,000 organizations, 50,000 clusters, 250,000 projects, 1,000,000 namespaces.
        FleetSize("scale", 10_000, 5, 2, 5, 4, 0.3),
    )
}


@dataclass(slots=True)
class FleetPart:
    """One organization's share of a fleet (or the fleet-wide extras: system cluster, orphan shoots)."""

    organizations: list[OrganizationSpec] = field(default_factory=list)
    clusters: list[ClusterSpec] = field(default_factory=list)
    node_pools: list[NodePoolSpec] = field(default_factory=list)
    projects: list[ProjectSpec] = field(default_factory=list)
    namespaces: list[NamespaceSpec] = field(default_factory=list)
    shoots: list[ShootSpec] = field(default_factory=list)
    garden_projects: list[GardenProjectSpec] = field(default_factory=list)
    resources: list[ResourceSpec] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Plan:
    """Where the planted things go, given the size."""

    size: FleetSize

    @property
    def deleted_organization(self) -> int:
        return self.size.organizations - 1

    def scenario(self, rng: random.Random, cluster_index: int) -> Scenario:
        if cluster_index < len(PLANTED):
            return PLANTED[cluster_index]
        return rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]


def _check_size(size: FleetSize) -> None:
    capacity = (size.organizations - 1) * size.clusters_per_organization
    if capacity < len(PLANTED):
        raise ValueError(f"size {size.name!r} has room for {capacity} planted clusters, needs {len(PLANTED)}")
    if min(size.node_pools_per_cluster, size.projects_per_cluster, size.namespaces_per_project) < 1:
        raise ValueError(f"size {size.name!r}: every cluster needs a node pool, a project and a namespace")


def _organization_part(seed: int, size: FleetSize, index: int) -> FleetPart:
    rng = stream(seed, "organization", index)
    plan = _Plan(size)
    part = FleetPart()
    org_id = organization_id(seed, index)
    name = organization_name(index)
    created = ANCHOR - timedelta(days=rng.randint(200, 900), minutes=rng.randint(0, 1439))
    deleted_org = index == plan.deleted_organization
    # Planted: organization 0 is listed, organization 1 is not, the deleted one was; the rest by share.
    drawn = rng.random() < size.listed_share
    listed = index != 1 and (deleted_org or index == 0 or drawn)
    org = OrganizationSpec(
        id=org_id,
        name=name,
        alias=f"{name.replace('-', ' ').title()} Inc.",
        listed_publicly=listed,
        created=created,
        deleted=ANCHOR - timedelta(days=3) if deleted_org else None,
    )
    part.organizations.append(org)
    if index == 1:
        part.notes["planted.unlisted_organization"] = str(org_id)
    owner = _Owner(seed, size, org, index, garden_project(org, index))
    part.garden_projects.append(owner.project)
    if owner.project.namespace != f"garden-{owner.project.name}":
        part.notes["planted.adopted_project_namespace"] = owner.project.namespace
    for j in range(size.clusters_per_organization):
        if deleted_org:
            # The deleted organization's first cluster was left live by a hand edit; the rest were deleted properly.
            scenario = Scenario.RUNNING if j == 0 else Scenario.DELETED
        else:
            scenario = plan.scenario(rng, index * size.clusters_per_organization + j)
        cluster = _cluster(rng, part, owner, scenario, j)
        if not deleted_org and index * size.clusters_per_organization + j == PLANTED.index(Scenario.DELETED):
            part.resources += planted_ledger_rows(cluster)
            part.notes["planted.deleted_cluster_ledger"] = str(cluster.id)
        if deleted_org and j == 0:
            part.notes["planted.deleted_organization_live_cluster"] = str(cluster.id)
    return part


@dataclass(frozen=True, slots=True)
class _Owner:
    """The organization a cluster is generated for, and where it sits in the fleet."""

    seed: int
    size: FleetSize
    organization: OrganizationSpec
    index: int  # -1 for the system organization
    project: GardenProjectSpec  # its Gardener project: where its shoots live


def _cluster(rng: random.Random, part: FleetPart, owner: _Owner, scenario: Scenario, j: int) -> ClusterSpec:
    shape = SHAPES[scenario]
    org = owner.organization
    cluster_id = random_uuid(rng)
    name = f"{CLUSTER_WORDS[j % len(CLUSTER_WORDS)]}-{j}"
    created = org.created + timedelta(days=rng.randint(1, 150), minutes=rng.randint(0, 1439))
    changed = created + timedelta(days=rng.randint(1, 30))
    deleted = ANCHOR - timedelta(days=rng.randint(1, 9)) if shape.deleted else None
    version = rng.choice(VERSIONS)
    region = rng.choice(REGIONS)
    if scenario is Scenario.PATCH_DIFFERS:
        version = minor_of(version)  # Fundament holds free text: both "1.31" and "1.31.4" occur
    cluster = ClusterSpec(
        id=cluster_id,
        organization_id=org.id,
        name=name,
        region=region,
        kubernetes_version=version,
        created=created,
        deleted=deleted,
        sync=sync_spec(scenario, created=created, changed=changed),
    )
    part.clusters.append(cluster)
    _note(part.notes, f"scenario.{scenario.value}", str(cluster_id))
    _children(rng, part, owner.size, cluster, scenario)
    if owner.index == 0 and j == 0:
        # Besides its drawn pools; no draw from the stream, so the rest of the fleet is the same with them.
        part.node_pools += planted_pools(cluster)
        part.notes["planted.pool_names"] = str(cluster.id)
    if shape.has_shoot:
        shoot_version = version
        organization_label = str(org.id)
        if scenario is Scenario.VERSION_MISMATCH:
            shoot_version = other_minor(version)
            _note(part.notes, "drift.version_mismatch", str(cluster_id))
        elif scenario is Scenario.PATCH_DIFFERS:
            shoot_version = f"{version}.7"
        elif scenario is Scenario.ORGANIZATION_MISMATCH:
            neighbour = (owner.index + 1) % owner.size.organizations
            organization_label = str(organization_id(owner.seed, neighbour))
        shoot = ShootSpec(
            uid=random_uuid(rng),
            name=shoot_name(name, cluster_id),
            project=owner.project.name,
            namespace=owner.project.namespace,
            cluster_label=str(cluster_id),
            organization_label=organization_label,
            kubernetes_version=shoot_version,
            region=region,
            created=created + timedelta(minutes=2),
            hibernated=shape.hibernated,
            last_operation=shape.last_operation,
            last_operation_state=shape.last_operation_state,
            has_certificates_crd=rng.random() < 0.9,
        )
        part.shoots.append(shoot)
        if scenario is Scenario.ORGANIZATION_MISMATCH:
            _note(part.notes, "drift.organization_mismatch", str(shoot.uid))
        if scenario is Scenario.SHOOT_OF_DELETED_CLUSTER:
            _note(part.notes, "drift.shoot_of_deleted_cluster", str(shoot.uid))
    elif scenario is Scenario.MISSING_SHOOT:
        _note(part.notes, "drift.missing_shoot", str(cluster_id))
    return cluster


def _children(rng: random.Random, part: FleetPart, size: FleetSize, cluster: ClusterSpec, scenario: Scenario) -> None:
    shape = SHAPES[scenario]
    # Children of a deleted cluster are deleted with it, unless the scenario leaves them behind.
    cascade = cluster.deleted if cluster.deleted is not None and not shape.live_children else None
    for k in range(size.node_pools_per_cluster):
        created = cluster.created + timedelta(hours=rng.randint(0, 48))
        pool_deleted = cascade or (ANCHOR - timedelta(days=2) if rng.random() < 0.03 else None)
        autoscale_min = rng.randint(1, 3)
        part.node_pools.append(
            NodePoolSpec(
                id=random_uuid(rng),
                cluster_id=cluster.id,
                name=POOLS[k % len(POOLS)] if k < len(POOLS) else f"pool-{k}",
                machine_type=rng.choice(MACHINES),
                autoscale_min=autoscale_min,
                autoscale_max=autoscale_min + rng.randint(0, 5),
                created=created,
                deleted=pool_deleted,
            )
        )
    for k in range(size.projects_per_cluster):
        project_created = cluster.created + timedelta(days=rng.randint(0, 30))
        project_deleted = cascade or (ANCHOR - timedelta(days=4) if rng.random() < 0.02 else None)
        # The planted leftover: project 0 deleted, its namespaces still live (a hand edit).
        leftover = scenario is Scenario.DELETED_PROJECT_LIVE_NAMESPACE and k == 0
        if leftover:
            project_deleted = ANCHOR - timedelta(days=4)
        word = PROJECT_WORDS[k % len(PROJECT_WORDS)]
        project = ProjectSpec(
            id=random_uuid(rng),
            cluster_id=cluster.id,
            name=f"{word}-{k}",
            alias=f"{word.title()} {k}",
            created=project_created,
            deleted=project_deleted,
        )
        part.projects.append(project)
        for m in range(size.namespaces_per_project):
            ns_created = project_created + timedelta(hours=rng.randint(1, 100))
            if leftover:
                ns_deleted = None
            elif project_deleted is not None:
                ns_deleted = project_deleted
            else:
                ns_deleted = ANCHOR - timedelta(days=1) if rng.random() < 0.03 else None
            part.namespaces.append(
                NamespaceSpec(
                    id=random_uuid(rng),
                    project_id=project.id,
                    name=f"{NAMESPACE_WORDS[m % len(NAMESPACE_WORDS)]}-{m}",
                    created=ns_created,
                    deleted=ns_deleted,
                )
            )


NOTES_PER_KEY = 5


def _note(notes: dict[str, str], key: str, value: str) -> None:
    """Record one of the first few occurrences of a thing (notes stay small at any size)."""
    previous = notes.get(key)
    if previous is None:
        notes[key] = value
    elif previous.count(",") < NOTES_PER_KEY - 1:
        notes[key] = f"{previous},{value}"


def _extras_part(seed: int, size: FleetSize) -> FleetPart:
    """The system organization's cluster, the orphan shoots and the unlabeled shoot."""
    rng = stream(seed, "extras")
    part = FleetPart()
    # The system organization's row is seeded by the migrations, so it is not in `organizations`.
    system = OrganizationSpec(SYSTEM_ORGANIZATION_ID, "system", "System", False, ANCHOR - timedelta(days=1000))
    owner = _Owner(seed, size, system, -1, garden_project(system, -1))
    part.garden_projects.append(owner.project)
    cluster = _cluster(rng, part, owner, Scenario.RUNNING, 0)
    part.notes["planted.system_cluster"] = str(cluster.id)
    for label in (str(random_uuid(rng)), "not-a-uuid"):
        uid = random_uuid(rng)
        part.shoots.append(
            ShootSpec(
                uid=uid,
                name=f"orphan{len(part.shoots)}",
                project="strays0000",
                cluster_label=label,
                organization_label=str(organization_id(seed, 0)),
                kubernetes_version=VERSIONS[-1],
                region=REGIONS[0],
                created=ANCHOR - timedelta(days=10),
            )
        )
        _note(part.notes, "drift.orphan_shoot", str(uid))
    # Planted: a shoot made by hand in organization 0's garden project, without the cluster-id label
    # (drift kind unlabeled_shoot: nothing maps it to a cluster).
    owner_project = project_name(organization_name(0))
    unlabeled = ShootSpec(
        uid=random_uuid(rng),
        name="handmade",
        project=owner_project,
        namespace=project_namespace(0, owner_project),
        cluster_label="",
        organization_label=str(organization_id(seed, 0)),
        kubernetes_version=VERSIONS[-1],
        region=REGIONS[0],
        created=ANCHOR - timedelta(days=5),
        cluster_labelled=False,
    )
    part.shoots.append(unlabeled)
    part.notes["drift.unlabeled_shoot"] = str(unlabeled.uid)
    return part


def iter_parts(size: FleetSize | str, seed: int = 0) -> Iterator[FleetPart]:
    """The fleet one organization at a time, then the extras; deterministic in `size` and `seed`."""
    fleet_size = resolve_size(size)
    _check_size(fleet_size)
    for index in range(fleet_size.organizations):
        yield _organization_part(seed, fleet_size, index)
    yield _extras_part(seed, fleet_size)


def resolve_size(size: FleetSize | str) -> FleetSize:
    """A size by name (`test`, `demo`, `scale`) or as given; raises ValueError for an unknown name."""
    if isinstance(size, FleetSize):
        return size
    try:
        return SIZES[size]
    except KeyError:
        raise ValueError(f"unknown fleet size {size!r}: expected one of {', '.join(SIZES)}") from None


def generate(size: FleetSize | str, seed: int = 0) -> Fleet:
    """A whole fleet of `size` from `seed`, held in memory."""
    whole = FleetPart()
    for part in iter_parts(size, seed):
        whole.organizations += part.organizations
        whole.clusters += part.clusters
        whole.node_pools += part.node_pools
        whole.projects += part.projects
        whole.namespaces += part.namespaces
        whole.shoots += part.shoots
        whole.garden_projects += part.garden_projects
        whole.resources += part.resources
        for key, values in part.notes.items():
            for value in values.split(","):
                _note(whole.notes, key, value)
    return Fleet(
        seed=seed,
        organizations=tuple(whole.organizations),
        clusters=tuple(whole.clusters),
        node_pools=tuple(whole.node_pools),
        projects=tuple(whole.projects),
        namespaces=tuple(whole.namespaces),
        shoots=tuple(whole.shoots),
        garden_projects=tuple(whole.garden_projects),
        resources=tuple(whole.resources),
        notes=whole.notes,
    )
