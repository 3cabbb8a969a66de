"""The labels Gardener and Fundament put on shoots, nodes and namespaces, and the one parse of a cluster id.

Fundament's provisioning side labels every shoot with the ids of its cluster and organization;
Gardener labels every node with the worker (node pool) it belongs to. The collector, reconcile and
the simulator all read or write these names from here.
"""

from __future__ import annotations

import uuid
from uuid import UUID

POOL_LABEL = "worker.gardener.cloud/pool"
CLUSTER_ID_LABEL = "fundament.io/cluster-id"
ORGANIZATION_ID_LABEL = "fundament.io/organization-id"
NAMESPACE_ID_LABEL = "fundament.io/namespace-id"


def parse_id_label(value: str | None) -> UUID | None:
    """A label's value as a UUID, or None when it is absent or not one (a label may hold anything).

    The one reading of the id labels: surrounding blanks are ignored and any spelling `uuid.UUID`
    accepts (upper case, braces, no dashes) names the same id, so the collector and reconcile can
    never disagree on whether a shoot claims a cluster.
    """
    if value is None:
        return None
    try:
        return uuid.UUID(value.strip())
    except ValueError:
        return None
