"""The paged lists of FleetService: each one's token name, sort key and the key of a row.

A spec's key is the ORDER BY of its block in services/fleet/queries/ (for the sortable lists, of the
order's block in orders.sql); the names are bound into the tokens, so a token of one list or order is refused by
another. Direction, query and filters are bound through the filter fingerprint.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from services.common.paging import KeyPart, KeysetSpec
from services.fleet.queries import base, clusters, findings, ledger, organizations, search, usage

_NAME_ID = (KeyPart.TEXT, KeyPart.UUID)
_TEXT_KEY = (KeyPart.TEXT, *_NAME_ID)
_INTEGER_KEY = (KeyPart.INTEGER, *_NAME_ID)
_TIME_KEY = (KeyPart.TIMESTAMP, *_NAME_ID)


def _time(value: datetime | None) -> datetime:
    # A missing time sorts as '-infinity' in orders.sql; base.NEVER stands for it in a token.
    return base.NEVER if value is None else value


OrganizationSpec = KeysetSpec[organizations.OrganizationRow, tuple[Any, ...]]
ORGANIZATIONS: dict[organizations.OrganizationOrder, OrganizationSpec] = {
    organizations.OrganizationOrder.NAME: KeysetSpec("organizations", _NAME_ID, lambda row: (row.name, row.uuid)),
    organizations.OrganizationOrder.ALIAS: KeysetSpec(
        "organizations.alias", _TEXT_KEY, lambda row: (row.alias, row.name, row.uuid)
    ),
    organizations.OrganizationOrder.CREATED: KeysetSpec(
        "organizations.created", _TIME_KEY, lambda row: (row.created, row.name, row.uuid)
    ),
}

ClusterSpec = KeysetSpec[clusters.ClusterRow, tuple[Any, ...]]
CLUSTERS: dict[clusters.ClusterOrder, ClusterSpec] = {
    clusters.ClusterOrder.NAME: KeysetSpec("clusters", _NAME_ID, lambda row: (row.name, row.id)),
    clusters.ClusterOrder.ORGANIZATION: KeysetSpec(
        "clusters.organization", _TEXT_KEY, lambda row: (row.organization_name, row.name, row.id)
    ),
    clusters.ClusterOrder.PODS: KeysetSpec(
        "clusters.pods", _INTEGER_KEY, lambda row: (row.pods or 0, row.name, row.id)
    ),
    clusters.ClusterOrder.NODES: KeysetSpec(
        "clusters.nodes", _INTEGER_KEY, lambda row: (row.nodes or 0, row.name, row.id)
    ),
    clusters.ClusterOrder.OBSERVED: KeysetSpec(
        "clusters.observed", _TIME_KEY, lambda row: (_time(row.observed), row.name, row.id)
    ),
    clusters.ClusterOrder.STATUS_SINCE: KeysetSpec(
        "clusters.status_since", _TIME_KEY, lambda row: (_time(row.shoot_status_changed), row.name, row.id)
    ),
}
# ListClusters by snapshot time, newest first: a walk pinned to its first page's time (queries/clusters.py,
# walk_by_observed), whose key leads with that time and the walk's phase.
CLUSTERS_BY_OBSERVED_WALK: KeysetSpec[clusters.WalkRow, clusters.WalkKey] = KeysetSpec(
    "clusters.observed.walk",
    (KeyPart.TIMESTAMP, KeyPart.INTEGER, KeyPart.TIMESTAMP, KeyPart.TEXT, KeyPart.UUID),
    lambda walk: (walk.as_of, walk.phase, _time(walk.row.observed), walk.row.name, walk.row.id),
)
NAMESPACE_SEARCH: KeysetSpec[search.NamespaceMatchRow, tuple[str, UUID]] = KeysetSpec(
    "namespace_search", _NAME_ID, lambda row: (row.name, row.id)
)
# Open findings and, with include_resolved, resolved ones too: one key for both, since (first_detected,
# id) is unique over every row; include_resolved is a field of FindingFilters, so it binds the token.
DRIFT_FINDINGS: KeysetSpec[findings.FindingRow, tuple[datetime, UUID]] = KeysetSpec(
    "drift_findings", (KeyPart.TIMESTAMP, KeyPart.UUID), lambda row: (row.first_detected, row.id)
)
INFRASTRUCTURE_RESOURCES: KeysetSpec[ledger.ResourceRow, ledger.ResourceKey] = KeysetSpec(
    "infrastructure_resources",
    (KeyPart.UUID, KeyPart.TEXT, KeyPart.TEXT, KeyPart.TEXT, KeyPart.UUID),
    lambda row: (row.cluster_id, row.resource_type, row.namespace, row.name, row.id),
)
# ListUsage: one list per aggregate, each keyed as its block in usage.sql orders it.
UsageSpec = KeysetSpec[usage.UsageGroupRow, tuple[Any, ...]]
USAGE: dict[usage.UsageAggregate, UsageSpec] = {
    usage.UsageAggregate.ORGANIZATION: KeysetSpec(
        "usage.organization",
        (KeyPart.TEXT, KeyPart.UUID, KeyPart.TEXT),
        lambda row: (row.organization_name, row.organization_id, row.resource_type),
    ),
    usage.UsageAggregate.CLUSTER: KeysetSpec(
        "usage.cluster",
        (KeyPart.TEXT, KeyPart.TEXT, KeyPart.UUID, KeyPart.TEXT),
        lambda row: (row.organization_name, row.cluster_name, row.cluster_id, row.resource_type),
    ),
    usage.UsageAggregate.RESOURCE_TYPE: KeysetSpec(
        "usage.resource_type", (KeyPart.TEXT,), lambda row: (row.resource_type,)
    ),
}
# The finding history, grouped by finding: its first part is the walk's as_of (its first page's time),
# which every token of the walk carries unchanged, so later pages read the history as the first did.
FINDING_HISTORY: KeysetSpec[findings.HistoryRow, findings.HistoryKey] = KeysetSpec(
    "finding_history",
    (KeyPart.TIMESTAMP, KeyPart.TIMESTAMP, KeyPart.TEXT, KeyPart.TEXT),
    lambda row: (row.as_of, row.opened_last, row.kind, row.subject),
)
