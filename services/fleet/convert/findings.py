"""Drift findings as fleet.v1 messages: ListDriftFindings' page, the findings GetCluster shows, and
ListFindingHistory's page of findings grouped by kind and subject."""

from __future__ import annotations

from collections.abc import Sequence

from fundament.fleet.v1 import fleet_pb2

from services.fleet.convert.details import details_struct
from services.fleet.convert.scalars import kind_to_proto, text
from services.fleet.queries.findings import FindingRow, HistoryRow


def drift_finding(row: FindingRow) -> fleet_pb2.DriftFinding:
    return fleet_pb2.DriftFinding(
        id=str(row.id),
        kind=kind_to_proto(row.kind),
        subject=row.subject,
        cluster_id=text(row.cluster_id),
        cluster_name=text(row.cluster_name),
        organization_id=text(row.organization_id),
        organization_name=text(row.organization_name),
        shoot_uid=text(row.shoot_uid),
        shoot_name=text(row.shoot_name),
        shoot_namespace=text(row.shoot_namespace),
        details=details_struct(row.details),
        first_detected=row.first_detected,
        last_detected=row.last_detected,
        resolved=row.resolved,
    )


def list_drift_findings_response(
    rows: Sequence[FindingRow], next_page_token: str
) -> fleet_pb2.ListDriftFindingsResponse:
    return fleet_pb2.ListDriftFindingsResponse(
        findings=[drift_finding(row) for row in rows], next_page_token=next_page_token
    )


def finding_history(row: HistoryRow) -> fleet_pb2.FindingHistory:
    return fleet_pb2.FindingHistory(
        kind=kind_to_proto(row.kind),
        subject=row.subject,
        latest=drift_finding(row.latest),
        first_detected=row.group_first_detected,
        last_detected=row.group_last_detected,
        opened=row.opened,
        resolved=row.resolutions,
        open_seconds=row.open_seconds,
        open=row.is_open,
    )


def list_finding_history_response(
    rows: Sequence[HistoryRow], next_page_token: str
) -> fleet_pb2.ListFindingHistoryResponse:
    return fleet_pb2.ListFindingHistoryResponse(
        findings=[finding_history(row) for row in rows], next_page_token=next_page_token
    )
