"""The four paged lists of FleetService: each one's token name, sort key and the key of a row.

A spec's key is the ORDER BY of its block in queries.sql; the names are bound into the tokens, so a
token of one list is refused by another.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from services.common.paging import KeyPart, KeysetSpec
from services.fleet import queries

_NAME_ID = (KeyPart.TEXT, KeyPart.UUID)

ORGANIZATIONS: KeysetSpec[queries.OrganizationRow, tuple[str, UUID]] = KeysetSpec(
    "organizations", _NAME_ID, lambda row: (row.name, row.id)
)
CLUSTERS: KeysetSpec[queries.ClusterRow, tuple[str, UUID]] = KeysetSpec(
    "clusters", _NAME_ID, lambda row: (row.name, row.id)
)
# Open findings and, with include_resolved, resolved ones too: one key for both, since (first_detected,
# id) is unique over every row; include_resolved is a field of FindingFilters, so it binds the token.
DRIFT_FINDINGS: KeysetSpec[queries.FindingRow, tuple[datetime, UUID]] = KeysetSpec(
    "drift_findings", (KeyPart.TIMESTAMP, KeyPart.UUID), lambda row: (row.first_detected, row.id)
)
INFRASTRUCTURE_RESOURCES: KeysetSpec[queries.ResourceRow, queries.ResourceKey] = KeysetSpec(
    "infrastructure_resources",
    (KeyPart.UUID, KeyPart.TEXT, KeyPart.TEXT, KeyPart.TEXT, KeyPart.UUID),
    lambda row: (row.cluster_id, row.resource_type, row.namespace, row.name, row.id),
)
