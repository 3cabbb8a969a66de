"""The ledger as fleet.v1 messages: ListInfrastructureResources' page and GetCluster's active counts."""

from __future__ import annotations

from collections.abc import Sequence

from fundament.fleet.v1 import fleet_pb2

from services.fleet.convert.scalars import text
from services.fleet.queries.ledger import LedgerCountRow, ResourceRow


def infrastructure_resource(row: ResourceRow) -> fleet_pb2.InfrastructureResource:
    return fleet_pb2.InfrastructureResource(
        id=str(row.id),
        cluster_id=str(row.cluster_id),
        cluster_name=row.cluster_name,
        organization_name=row.organization_name,
        resource_type=row.resource_type,
        resource_id=text(row.resource_id),
        name=row.name,
        namespace=row.namespace,
        billable=row.billable,
        created=row.created,
        last_seen=row.last_seen,
        destroyed=row.destroyed,
        destroyed_reason=text(row.destroyed_reason),
        worker_pool=_worker_pool(row),
    )


def _worker_pool(row: ResourceRow) -> fleet_pb2.WorkerPoolSpec | None:
    if row.pool_machine_type is None or row.pool_minimum is None or row.pool_maximum is None:
        return None
    return fleet_pb2.WorkerPoolSpec(
        machine_type=row.pool_machine_type, minimum=row.pool_minimum, maximum=row.pool_maximum
    )


def list_infrastructure_resources_response(
    rows: Sequence[ResourceRow], next_page_token: str
) -> fleet_pb2.ListInfrastructureResourcesResponse:
    return fleet_pb2.ListInfrastructureResourcesResponse(
        resources=[infrastructure_resource(row) for row in rows], next_page_token=next_page_token
    )


def ledger_count(row: LedgerCountRow) -> fleet_pb2.LedgerCount:
    return fleet_pb2.LedgerCount(
        resource_type=row.resource_type, active=row.active, active_billable=row.active_billable
    )
