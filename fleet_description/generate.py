"""Deterministic fleets of any size: the database's rows and the garden's shoots, from one seed.

`generate(size, seed)` returns a whole `Fleet` (the simulator and the tests use it);
`iter_parts(size, seed)` yields the same fleet one organization at a time, so the writer can store
the ADR-0002 scale (1,000,000 namespaces) without holding it all (`db/seed/write.py`). Each
organization is generated from its own random stream (`seed` and its index), so a part never
depends on the ones before it and the same seed gives the same fleet, id for id, on any machine.

Every fleet starts with the planted things: every scenario of `fleet_description/scenarios.py` once (so every
status and every drift kind occurs, even at size `test`); organization 0 listed, organization 1 not; organization 0's
first cluster with node pool names that test the naming contract (`PLANTED_POOL_NAMES`); the planted
deleted cluster with the active ledger rows it had when it ran (reconcile closes them);
the last organization deleted (though listed) with one live cluster left behind; a cluster of the
system organization; two orphan shoots (one labelled with a UUID no cluster has, one with a label
that is no UUID); one shoot without the cluster-id label in organization 0's garden project.
`Fleet.notes` says where. Times are fixed relative to `ANCHOR`, never the wall clock: every creation
lies at least 15 days before it, every deletion within the 9 days before it, so no row is deleted
before it was created.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid5

from common.naming import project_name, shoot_name
from common.organizations import SYSTEM_ORGANIZATION_ID
from fleet_description.model import (
    ClusterSpec,
    Fleet,
    NamespaceSpec,
    NodePoolSpec,
    OrganizationSpec,
    ProjectSpec,
    ResourceSpec,
    ShootSpec,
)
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

_REGIONS = ("eu-west-1", "eu-central-1", "us-east-1", "ap-southeast-1")
_VERSIONS = ("1.30.8", "1.31.4", "1.32.2", "1.33.1")
_MACHINES = ("m5.large", "m5.xlarge", "c5.2xlarge", "r5.xlarge")
_POOLS = ("system", "workers", "highmem", "gpu")
_CLUSTER_WORDS = ("prod", "staging", "dev", "ci", "edge", "data")
_PROJECT_WORDS = ("web", "payments", "search", "billing", "identity", "ml", "mobile", "ops")
_NAMESPACE_WORDS = ("api", "worker", "frontend", "jobs", "cache", "db")
_ORG_WORDS = ("acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell", "cyberdyne", "soylent")


@dataclass(slots=True)
class FleetPart:
    """One organization's share of a fleet (or the fleet-wide extras: system cluster, orphan shoots)."""

    organizations: list[OrganizationSpec] = field(default_factory=list)
    clusters: list[ClusterSpec] = field(default_factory=list)
    node_pools: list[NodePoolSpec] = field(default_factory=list)
    projects: list[ProjectSpec] = field(default_factory=list)
    namespaces: list[NamespaceSpec] = field(default_factory=list)
    shoots: list[ShootSpec] = field(default_factory=list)
    resources: list[ResourceSpec] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)


def _stream(seed: int, *names: object) -> random.Random:
    """A random stream of its own for one named part of the fleet with `seed`."""
    # Reproducible sample data, never secrets: a seeded PRNG is exactly what is wanted here.
    return random.Random(":".join(map(str, (seed, *names))))  # noqa: S311


def _uuid(rng: random.Random) -> UUID:
    """A random (version 4 shaped) UUID drawn from `rng`, so ids follow the seed."""
    bits = rng.getrandbits(128)
    bits = (bits & ~(0xF000 << 64)) | (0x4000 << 64)
    bits = (bits & ~(0xC000 << 48)) | (0x8000 << 48)
    return UUID(int=bits)


def organization_id(seed: int, index: int) -> UUID:
    """The id of organization `index`, drawn from a stream of its own so any part can name any other."""
    return _uuid(_stream(seed, "organization-id", index))


def organization_name(index: int) -> str:
    word = _ORG_WORDS[index % len(_ORG_WORDS)]
    return word if index < len(_ORG_WORDS) else f"{word}-{index}"


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _other_minor(version: str) -> str:
    major, minor = version.split(".")[:2]
    return f"{major}.{int(minor) - 1}.9"


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
    rng = _stream(seed, "organization", index)
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
    garden_project = project_name(name)
    for j in range(size.clusters_per_organization):
        if deleted_org:
            # The deleted organization's first cluster was left live by a hand edit; the rest were deleted properly.
            scenario = Scenario.RUNNING if j == 0 else Scenario.DELETED
        else:
            scenario = plan.scenario(rng, index * size.clusters_per_organization + j)
        cluster = _cluster(rng, part, _Owner(seed, size, org, index, garden_project), scenario, j)
        if not deleted_org and index * size.clusters_per_organization + j == PLANTED.index(Scenario.DELETED):
            _plant_ledger_leftovers(part, cluster)
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
    garden_project: str


def _cluster(rng: random.Random, part: FleetPart, owner: _Owner, scenario: Scenario, j: int) -> ClusterSpec:
    shape = SHAPES[scenario]
    org = owner.organization
    cluster_id = _uuid(rng)
    name = f"{_CLUSTER_WORDS[j % len(_CLUSTER_WORDS)]}-{j}"
    created = org.created + timedelta(days=rng.randint(1, 150), minutes=rng.randint(0, 1439))
    changed = created + timedelta(days=rng.randint(1, 30))
    deleted = ANCHOR - timedelta(days=rng.randint(1, 9)) if shape.deleted else None
    version = rng.choice(_VERSIONS)
    region = rng.choice(_REGIONS)
    if scenario is Scenario.PATCH_DIFFERS:
        version = _minor(version)  # Fundament holds free text: both "1.31" and "1.31.4" occur
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
        _plant_pool_names(part, cluster)
    if shape.has_shoot:
        shoot_version = version
        organization_label = str(org.id)
        if scenario is Scenario.VERSION_MISMATCH:
            shoot_version = _other_minor(version)
            _note(part.notes, "drift.version_mismatch", str(cluster_id))
        elif scenario is Scenario.PATCH_DIFFERS:
            shoot_version = f"{version}.7"
        elif scenario is Scenario.ORGANIZATION_MISMATCH:
            neighbour = (owner.index + 1) % owner.size.organizations
            organization_label = str(organization_id(owner.seed, neighbour))
        shoot = ShootSpec(
            uid=_uuid(rng),
            name=shoot_name(name, cluster_id),
            project=owner.garden_project,
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
                id=_uuid(rng),
                cluster_id=cluster.id,
                name=_POOLS[k % len(_POOLS)] if k < len(_POOLS) else f"pool-{k}",
                machine_type=rng.choice(_MACHINES),
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
        word = _PROJECT_WORDS[k % len(_PROJECT_WORDS)]
        project = ProjectSpec(
            id=_uuid(rng),
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
                    id=_uuid(rng),
                    project_id=project.id,
                    name=f"{_NAMESPACE_WORDS[m % len(_NAMESPACE_WORDS)]}-{m}",
                    created=ns_created,
                    deleted=ns_deleted,
                )
            )


# Node pool names that test the naming contract (common.naming): two with a common prefix, whose
# worker names differ only by their hash, and one with no character a worker name can use.
PLANTED_POOL_NAMES = ("workers-production-a", "workers-production-b", "!!!")


def _plant_pool_names(part: FleetPart, cluster: ClusterSpec) -> None:
    """Organization 0's first (running) cluster gets the planted pool names too; no draw from the stream,
    so the rest of the fleet is the same with or without them."""
    for k, name in enumerate(PLANTED_POOL_NAMES):
        part.node_pools.append(
            NodePoolSpec(
                id=uuid5(cluster.id, f"planted-pool-{k}"),
                cluster_id=cluster.id,
                name=name,
                machine_type=_MACHINES[k % len(_MACHINES)],
                autoscale_min=k + 1,
                autoscale_max=k + 3,
                created=cluster.created + timedelta(hours=1),
            )
        )
    part.notes["planted.pool_names"] = str(cluster.id)


def _plant_ledger_leftovers(part: FleetPart, cluster: ClusterSpec) -> None:
    """The first deleted (confirmed, no shoot) cluster keeps the active ledger rows the collector recorded
    while it ran: reconcile's first pass closes them as `cluster_deleted`. No draw from the stream."""
    assert cluster.deleted is not None
    seen = cluster.deleted - timedelta(hours=1)
    for k, (resource_type, namespace, name, billable) in enumerate(
        (
            ("kubernetes.node", "", f"{cluster.name}-node-0", True),
            ("kubernetes.node", "", f"{cluster.name}-node-1", True),
            ("kubernetes.loadbalancer", "web-0", "web-public", True),
        )
    ):
        part.resources.append(
            ResourceSpec(
                id=uuid5(cluster.id, f"planted-resource-{k}"),
                cluster_id=cluster.id,
                resource_type=resource_type,
                resource_id=f"planted://{cluster.id}/{k}",
                name=name,
                namespace=namespace,
                billable=billable,
                created=cluster.created + timedelta(days=1),
                last_seen=seen,
            )
        )
    part.notes["planted.deleted_cluster_ledger"] = str(cluster.id)


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
    rng = _stream(seed, "extras")
    part = FleetPart()
    # The system organization's row is seeded by the migrations, so it is not in `organizations`.
    system = OrganizationSpec(SYSTEM_ORGANIZATION_ID, "system", "System", False, ANCHOR - timedelta(days=1000))
    owner = _Owner(seed, size, system, -1, project_name(system.name))
    cluster = _cluster(rng, part, owner, Scenario.RUNNING, 0)
    part.notes["planted.system_cluster"] = str(cluster.id)
    for label in (str(_uuid(rng)), "not-a-uuid"):
        uid = _uuid(rng)
        part.shoots.append(
            ShootSpec(
                uid=uid,
                name=f"orphan{len(part.shoots)}",
                project="strays0000",
                cluster_label=label,
                organization_label=str(organization_id(seed, 0)),
                kubernetes_version=_VERSIONS[-1],
                region=_REGIONS[0],
                created=ANCHOR - timedelta(days=10),
            )
        )
        _note(part.notes, "drift.orphan_shoot", str(uid))
    # Planted: a shoot made by hand in organization 0's garden project, without the cluster-id label
    # (drift kind unlabeled_shoot: nothing maps it to a cluster).
    owner_name = organization_name(0)
    unlabeled = ShootSpec(
        uid=_uuid(rng),
        name="handmade",
        project=project_name(owner_name),
        cluster_label="",
        organization_label=str(organization_id(seed, 0)),
        kubernetes_version=_VERSIONS[-1],
        region=_REGIONS[0],
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
        resources=tuple(whole.resources),
        notes=whole.notes,
    )
