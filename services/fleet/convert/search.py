"""SearchNamespaces' answer: each namespace found, with where it lives and its name on the shoot."""

from __future__ import annotations

from collections.abc import Sequence

from fundament.fleet.v1 import fleet_pb2

from common import naming
from services.fleet.queries.search import NamespaceMatchRow


def namespace_match(row: NamespaceMatchRow) -> fleet_pb2.NamespaceMatch:
    return fleet_pb2.NamespaceMatch(
        id=str(row.id),
        name=row.name,
        project_id=str(row.project_id),
        project_name=row.project_name,
        cluster_id=str(row.cluster_id),
        cluster_name=row.cluster_name,
        organization_id=str(row.organization_id),
        organization_name=row.organization_name,
        organization_alias=row.organization_alias,
        kubernetes_name=naming.namespace_name(row.project_name, row.project_id, row.name),
    )


def search_namespaces_response(
    rows: Sequence[NamespaceMatchRow], next_page_token: str
) -> fleet_pb2.SearchNamespacesResponse:
    return fleet_pb2.SearchNamespacesResponse(
        namespaces=[namespace_match(row) for row in rows], next_page_token=next_page_token
    )
