"""Search and order between protobuf and queries.py: the order enums and SearchNamespaces' rows."""

from __future__ import annotations

from collections.abc import Sequence

from fundament.fleet.v1 import fleet_pb2

from common import naming
from services.common.errors import InvalidArgument
from services.fleet import queries

_CLUSTER_ORDERS: dict[int, queries.ClusterOrder] = {
    fleet_pb2.CLUSTER_ORDER_UNSPECIFIED: queries.ClusterOrder.NAME,
    fleet_pb2.CLUSTER_ORDER_NAME: queries.ClusterOrder.NAME,
    fleet_pb2.CLUSTER_ORDER_ORGANIZATION: queries.ClusterOrder.ORGANIZATION,
    fleet_pb2.CLUSTER_ORDER_PODS: queries.ClusterOrder.PODS,
    fleet_pb2.CLUSTER_ORDER_NODES: queries.ClusterOrder.NODES,
    fleet_pb2.CLUSTER_ORDER_OBSERVED: queries.ClusterOrder.OBSERVED,
    fleet_pb2.CLUSTER_ORDER_STATUS_SINCE: queries.ClusterOrder.STATUS_SINCE,
}
_ORGANIZATION_ORDERS: dict[int, queries.OrganizationOrder] = {
    fleet_pb2.ORGANIZATION_ORDER_UNSPECIFIED: queries.OrganizationOrder.NAME,
    fleet_pb2.ORGANIZATION_ORDER_NAME: queries.OrganizationOrder.NAME,
    fleet_pb2.ORGANIZATION_ORDER_ALIAS: queries.OrganizationOrder.ALIAS,
    fleet_pb2.ORGANIZATION_ORDER_CREATED: queries.OrganizationOrder.CREATED,
}


def cluster_order(value: int) -> queries.ClusterOrder:
    """ListClusters' `order`; a value this service does not know is `InvalidArgument`."""
    try:
        return _CLUSTER_ORDERS[value]
    except KeyError:
        raise InvalidArgument(f"order: {value} is not a ClusterOrder") from None


def organization_order(value: int) -> queries.OrganizationOrder:
    """ListOrganizations' `order`; a value this service does not know is `InvalidArgument`."""
    try:
        return _ORGANIZATION_ORDERS[value]
    except KeyError:
        raise InvalidArgument(f"order: {value} is not an OrganizationOrder") from None


def namespace_match(row: queries.NamespaceMatchRow) -> fleet_pb2.NamespaceMatch:
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
    rows: Sequence[queries.NamespaceMatchRow], next_page_token: str
) -> fleet_pb2.SearchNamespacesResponse:
    return fleet_pb2.SearchNamespacesResponse(
        namespaces=[namespace_match(row) for row in rows], next_page_token=next_page_token
    )
