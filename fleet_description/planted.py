"""The planted rows that draw nothing from a random stream, so the rest of a fleet is the same with them.

Organization 0's first (running) cluster gets node pool names that test the naming contract; the
planted deleted cluster keeps the active ledger rows the collector recorded while it ran; organization
0's Gardener project lives in a namespace that does not follow `garden-<project>`. Ids derive from the
cluster's id (`uuid5`), so they follow the seed without a draw.
"""

from __future__ import annotations

from datetime import timedelta
from uuid import uuid5

from common.naming import project_name
from fleet_description.draws import MACHINES
from fleet_description.model import ClusterSpec, GardenProjectSpec, NodePoolSpec, OrganizationSpec, ResourceSpec

# Node pool names that test the naming contract (common.naming): two with a common prefix, whose
# worker names differ only by their hash, and one with no character a worker name can use.
PLANTED_POOL_NAMES = ("workers-production-a", "workers-production-b", "!!!")


# The organization whose Gardener project adopted a namespace of another name (Gardener allows a
# project's `spec.namespace` to be any namespace; `garden-<project>` is only its default).
ADOPTED_NAMESPACE_ORGANIZATION = 0


def project_namespace(organization_index: int, project: str) -> str:
    """The garden namespace of an organization's Gardener project: `garden-<project>`, except that
    organization 0's project adopted `garden-adopted-<project>`, so only its Project object tells."""
    if organization_index == ADOPTED_NAMESPACE_ORGANIZATION:
        return f"garden-adopted-{project}"
    return f"garden-{project}"


def garden_project(organization: OrganizationSpec, index: int) -> GardenProjectSpec:
    """The organization's Gardener project as Fundament's provisioning side creates it: named by
    `common.naming.project_name`, labelled with the organization's id (`index` -1: the system one)."""
    project = project_name(organization.name)
    return GardenProjectSpec(
        name=project,
        namespace=project_namespace(index, project),
        organization_label=str(organization.id),
        created=organization.created,
    )


def planted_pools(cluster: ClusterSpec) -> list[NodePoolSpec]:
    """The planted pool names, for organization 0's first (running) cluster, besides its drawn pools."""
    return [
        NodePoolSpec(
            id=uuid5(cluster.id, f"planted-pool-{k}"),
            cluster_id=cluster.id,
            name=name,
            machine_type=MACHINES[k % len(MACHINES)],
            autoscale_min=k + 1,
            autoscale_max=k + 3,
            created=cluster.created + timedelta(hours=1),
        )
        for k, name in enumerate(PLANTED_POOL_NAMES)
    ]


def planted_ledger_rows(cluster: ClusterSpec) -> list[ResourceSpec]:
    """The active ledger rows the collector recorded while the planted deleted (confirmed, no shoot)
    cluster ran: reconcile's first pass closes them as `cluster_deleted`."""
    assert cluster.deleted is not None
    seen = cluster.deleted - timedelta(hours=1)
    return [
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
        for k, (resource_type, namespace, name, billable) in enumerate(
            (
                ("kubernetes.node", "", f"{cluster.name}-node-0", True),
                ("kubernetes.node", "", f"{cluster.name}-node-1", True),
                ("kubernetes.loadbalancer", "web-0", "web-public", True),
            )
        )
    ]
