"""The labels Gardener and Fundament put on shoots, nodes and namespaces, the one parse of an id
label's value, and the name kube-state-metrics exports a label under.

Fundament's provisioning side labels every shoot with the ids of its cluster and organization, and
every tenant namespace with its namespace id; Gardener labels every node with the worker (node pool)
it belongs to. The collector, reconcile and the simulator all read or write these names from here.
"""

from __future__ import annotations

import re
import uuid
from uuid import UUID

POOL_LABEL = "worker.gardener.cloud/pool"
CLUSTER_ID_LABEL = "fundament.io/cluster-id"
ORGANIZATION_ID_LABEL = "fundament.io/organization-id"
NAMESPACE_ID_LABEL = "fundament.io/namespace-id"


_NOT_IN_A_METRIC_LABEL = re.compile(r"[^a-zA-Z0-9_]")


def parse_id_label(value: str | None) -> UUID | None:
    """A label's value as a UUID, or None when it is absent or not one (a label may hold anything).

    The one reading of the id labels (cluster, organization and namespace ids): surrounding blanks
    are ignored and any spelling `uuid.UUID` accepts (upper case, braces, no dashes) names the same
    id, so the collector's two sources and reconcile can never disagree on whether a shoot claims a
    cluster or a namespace is a tenant's.
    """
    if value is None:
        return None
    try:
        return uuid.UUID(value.strip())
    except ValueError:
        return None


def exported_label(kubernetes_label: str) -> str:
    """The name kube-state-metrics gives an allow-listed Kubernetes label on its `kube_*_labels` series:
    `label_` plus the name with every character outside `[a-zA-Z0-9_]` turned into `_`."""
    return "label_" + _NOT_IN_A_METRIC_LABEL.sub("_", kubernetes_label)
