"""Clusters as fleet.v1 messages: ListClusters' summaries and GetCluster's answer.

Status and staleness are derived here from each row with `common.clusterstatus` (the one definition:
docs/architecture.md, 'Status is computed, in Python and SQL'), at the instant `now` the service read
the database with.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from fundament.fleet.v1 import fleet_pb2

from common import clusterstatus, naming
from common.clusterstatus import ClusterStatus
from services.fleet.convert.findings import drift_finding
from services.fleet.convert.ledger import ledger_count
from services.fleet.convert.scalars import age_seconds, source_to_proto, status_to_proto, text
from services.fleet.queries.clusters import ClusterRow, NamespaceRow, NodePoolRow, ProjectRow
from services.fleet.queries.findings import FindingRow
from services.fleet.queries.ledger import LedgerCountRow


def row_status(row: ClusterRow) -> ClusterStatus:
    return clusterstatus.cluster_status(
        deleted=row.deleted is not None,
        sync_status=row.sync_status,
        shoot_status=row.shoot_status,
        shoot_operation=row.shoot_operation,
        ever_completed=row.first_completed is not None,
    )


def row_is_stale(row: ClusterRow, now: datetime) -> bool:
    ready = clusterstatus.is_ready(
        cluster_deleted=row.deleted is not None,
        organization_deleted=row.organization_deleted,
        organization_id=row.organization_id,
        shoot_status=row.shoot_status,
    )
    return clusterstatus.is_stale(
        ready=ready,
        observed=row.observed,
        ready_since=row.ready_since,
        interval_seconds=row.inventory_interval_seconds,
        collector_since=row.inventory_since,
        now=now,
    )


def cluster_snapshot(row: ClusterRow, now: datetime) -> fleet_pb2.ClusterSnapshot | None:
    if not row.collected:
        return None
    return fleet_pb2.ClusterSnapshot(
        observed=row.observed,
        age_seconds=age_seconds(row.observed, now) if row.observed is not None else 0,
        nodes=row.nodes or 0,
        ready_nodes=row.ready_nodes or 0,
        pods=row.pods or 0,
        allocatable_pods=row.allocatable_pods or 0,
        cpu_allocatable_millicores=row.cpu_allocatable_millicores or 0,
        memory_allocatable_bytes=row.memory_allocatable_bytes or 0,
        last_error=text(row.last_error),
        last_error_at=row.last_error_at,
        source=source_to_proto(row.snapshot_source),
    )


def cluster_summary(row: ClusterRow, now: datetime) -> fleet_pb2.ClusterSummary:
    return fleet_pb2.ClusterSummary(
        id=str(row.id),
        name=row.name,
        organization_id=str(row.organization_id),
        organization_name=row.organization_name,
        organization_alias=row.organization_alias,
        region=row.region,
        kubernetes_version=row.kubernetes_version,
        observed_kubernetes_version=text(row.observed_kubernetes_version),
        status=status_to_proto(row_status(row)),
        snapshot=cluster_snapshot(row, now),
        stale=row_is_stale(row, now),
        open_drift_findings=row.open_drift_findings,
        created=row.created,
        deleted=row.deleted,
        shoot_status_changed=row.shoot_status_changed,
    )


def list_clusters_response(
    rows: Sequence[ClusterRow], now: datetime, next_page_token: str
) -> fleet_pb2.ListClustersResponse:
    return fleet_pb2.ListClustersResponse(
        clusters=[cluster_summary(row, now) for row in rows], next_page_token=next_page_token
    )


def sync_state(row: ClusterRow) -> fleet_pb2.SyncState | None:
    if row.sync_status is None:
        return None
    return fleet_pb2.SyncState(
        sync_status=row.sync_status,
        sync_attempts=row.sync_attempts or 0,
        sync_error=text(row.sync_error),
        sync_updated=row.sync_updated,
        first_completed=row.first_completed,
        shoot_status=text(row.shoot_status),
        shoot_operation=text(row.shoot_operation),
        shoot_message=text(row.shoot_message),
        shoot_status_changed=row.shoot_status_changed,
    )


def node_pool(row: NodePoolRow) -> fleet_pb2.NodePool:
    snapshot = None
    if row.observed is not None:
        snapshot = fleet_pb2.NodePoolSnapshot(
            observed=row.observed, nodes=row.nodes or 0, ready_nodes=row.ready_nodes or 0
        )
    return fleet_pb2.NodePool(
        id=str(row.id),
        name=row.name,
        machine_type=row.machine_type,
        autoscale_min=row.autoscale_min,
        autoscale_max=row.autoscale_max,
        snapshot=snapshot,
    )


def project(row: ProjectRow) -> fleet_pb2.Project:
    return fleet_pb2.Project(id=str(row.id), name=row.name, alias=row.alias, namespaces=row.namespaces)


def namespace(row: NamespaceRow) -> fleet_pb2.Namespace:
    snapshot = None
    if row.observed is not None:
        snapshot = fleet_pb2.NamespaceSnapshot(observed=row.observed, pods=row.pods or 0)
    return fleet_pb2.Namespace(
        id=str(row.id),
        name=row.name,
        project_id=str(row.project_id),
        project_name=row.project_name,
        snapshot=snapshot,
        kubernetes_name=naming.namespace_name(row.project_name, row.project_id, row.name),
    )


def get_cluster_response(
    cluster: ClusterRow,
    *,
    node_pools: Sequence[NodePoolRow],
    projects: Sequence[ProjectRow],
    namespaces: Sequence[NamespaceRow],
    findings: Sequence[FindingRow],
    ledger: Sequence[LedgerCountRow],
    now: datetime,
    resolved: Sequence[FindingRow] = (),
    resolved_truncated: bool = False,
) -> fleet_pb2.GetClusterResponse:
    return fleet_pb2.GetClusterResponse(
        cluster=cluster_summary(cluster, now),
        node_pools=[node_pool(row) for row in node_pools],
        projects=[project(row) for row in projects],
        namespaces=[namespace(row) for row in namespaces],
        open_findings=[drift_finding(row) for row in findings],
        ledger=[ledger_count(row) for row in ledger],
        sync=sync_state(cluster),
        resolved_findings=[drift_finding(row) for row in resolved],
        resolved_findings_truncated=resolved_truncated,
    )
