"""Rows in, fleet.v1 messages out: the only place that builds the staff API's protobuf messages.

    queries.py rows ──> convert ──> fleet_pb2 messages
    request enums   ──> convert ──> clusterstatus values / drift kind names (for SQL)

Status and staleness are derived here from each row with `common.clusterstatus` (the one definition:
docs/architecture.md, 'Status is computed, in Python and SQL'), at the instant `now` the service read
the database with. Enums, times and ages each go through one small function.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from fundament.fleet.v1 import fleet_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from common import clusterstatus, naming
from common.clusterstatus import ClusterStatus
from common.drift_kinds import DRIFT_KINDS
from services.common.errors import InvalidArgument
from services.fleet import queries
from services.fleet.details import details_struct

# ---- enums and scalars


# Each enum is mapped by name once, at import: a member missing on either side fails loudly here.
_STATUS_TO_PROTO: dict[ClusterStatus, fleet_pb2.ClusterStatus] = {
    status: getattr(fleet_pb2, f"CLUSTER_STATUS_{status.name}") for status in ClusterStatus
}
_KIND_TO_PROTO: dict[str, fleet_pb2.DriftKind] = {
    kind: getattr(fleet_pb2, f"DRIFT_KIND_{kind.upper()}") for kind in DRIFT_KINDS
}


_SOURCE_TO_PROTO: dict[str, fleet_pb2.SnapshotSource] = {
    "apiserver": fleet_pb2.SNAPSHOT_SOURCE_API_SERVER,
    "prometheus": fleet_pb2.SNAPSHOT_SOURCE_PROMETHEUS,
    "mock": fleet_pb2.SNAPSHOT_SOURCE_MOCK,
}


def source_to_proto(source: str | None) -> fleet_pb2.SnapshotSource:
    """The snapshot's source column as the enum; UNSPECIFIED for a row written before it was recorded."""
    return _SOURCE_TO_PROTO.get(source or "", fleet_pb2.SNAPSHOT_SOURCE_UNSPECIFIED)


def status_to_proto(status: ClusterStatus) -> fleet_pb2.ClusterStatus:
    return _STATUS_TO_PROTO[status]


def statuses_from_proto(values: Iterable[int]) -> tuple[str, ...] | None:
    """Requested statuses as clusterstatus values (sorted, unique); None for "all". Raises InvalidArgument."""
    wanted: set[str] = set()
    for value in values:
        try:
            name = fleet_pb2.ClusterStatus.Name(value)
        except ValueError:
            raise InvalidArgument(f"statuses: {value} is not a ClusterStatus") from None
        if value == fleet_pb2.CLUSTER_STATUS_UNSPECIFIED:
            raise InvalidArgument("statuses: CLUSTER_STATUS_UNSPECIFIED is not a status")
        wanted.add(ClusterStatus[name.removeprefix("CLUSTER_STATUS_")].value)
    return tuple(sorted(wanted)) if wanted else None


def kind_to_proto(kind: str) -> fleet_pb2.DriftKind:
    return _KIND_TO_PROTO[kind]


def kind_from_proto(value: int) -> str | None:
    """A DriftKind filter as the database's kind name; None for UNSPECIFIED (every kind)."""
    if value == fleet_pb2.DRIFT_KIND_UNSPECIFIED:
        return None
    try:
        name = fleet_pb2.DriftKind.Name(value)
    except ValueError:
        raise InvalidArgument(f"kind: {value} is not a DriftKind") from None
    return name.removeprefix("DRIFT_KIND_").lower()


def age_seconds(then: datetime, now: datetime) -> int:
    """Whole seconds from `then` to `now`; never negative (a clock a little ahead is not the future)."""
    return max(0, int((now - then).total_seconds()))


def text(value: object | None) -> str:
    return "" if value is None else str(value)


# ---- clusters


def row_status(row: queries.ClusterRow) -> ClusterStatus:
    return clusterstatus.cluster_status(
        deleted=row.deleted is not None,
        sync_status=row.sync_status,
        shoot_status=row.shoot_status,
        shoot_operation=row.shoot_operation,
        ever_completed=row.first_completed is not None,
    )


def row_is_stale(row: queries.ClusterRow, now: datetime) -> bool:
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


def cluster_snapshot(row: queries.ClusterRow, now: datetime) -> fleet_pb2.ClusterSnapshot | None:
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


def cluster_summary(row: queries.ClusterRow, now: datetime) -> fleet_pb2.ClusterSummary:
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
    rows: Sequence[queries.ClusterRow], now: datetime, next_page_token: str
) -> fleet_pb2.ListClustersResponse:
    return fleet_pb2.ListClustersResponse(
        clusters=[cluster_summary(row, now) for row in rows], next_page_token=next_page_token
    )


def sync_state(row: queries.ClusterRow) -> fleet_pb2.SyncState | None:
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


def node_pool(row: queries.NodePoolRow) -> fleet_pb2.NodePool:
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


def project(row: queries.ProjectRow) -> fleet_pb2.Project:
    return fleet_pb2.Project(id=str(row.id), name=row.name, alias=row.alias, namespaces=row.namespaces)


def namespace(row: queries.NamespaceRow) -> fleet_pb2.Namespace:
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


def ledger_count(row: queries.LedgerCountRow) -> fleet_pb2.LedgerCount:
    return fleet_pb2.LedgerCount(
        resource_type=row.resource_type, active=row.active, active_billable=row.active_billable
    )


def get_cluster_response(
    cluster: queries.ClusterRow,
    *,
    node_pools: Sequence[queries.NodePoolRow],
    projects: Sequence[queries.ProjectRow],
    namespaces: Sequence[queries.NamespaceRow],
    findings: Sequence[queries.FindingRow],
    ledger: Sequence[queries.LedgerCountRow],
    now: datetime,
    resolved: Sequence[queries.FindingRow] = (),
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


# ---- organizations, findings, ledger


def organization_summary(row: queries.OrganizationRow) -> fleet_pb2.OrganizationSummary:
    # The list's one spelling of the fields, so a single organization and a page never differ.
    return list_organizations_response([row], "").organizations[0]


def list_organizations_response(
    rows: Sequence[queries.OrganizationRow], next_page_token: str
) -> fleet_pb2.ListOrganizationsResponse:
    # Built in place (a page holds up to 500): a third cheaper than a message per row copied in. The
    # rows come in the response's own forms (queries.OrganizationRow): id text, times in integers.
    response = fleet_pb2.ListOrganizationsResponse(next_page_token=next_page_token)
    add = response.organizations.add
    for row in rows:
        item = add(
            id=row.id,
            name=row.name,
            alias=row.alias,
            listed_publicly=row.listed_publicly,
            clusters=row.clusters,
            projects=row.projects,
            namespaces=row.namespaces,
            ready_nodes=row.ready_nodes,
            pods=row.pods,
            clusters_needing_attention=row.clusters_needing_attention,
        )
        _set_time(item.created, row.created_micros)
        if row.deleted_micros is not None:
            _set_time(item.deleted, row.deleted_micros)
    return response


# Seconds from 1970-01-01 UTC, a Timestamp's zero, to queries.OrganizationRow's.
_POSTGRES_EPOCH_SECONDS = int(queries.POSTGRES_EPOCH.timestamp())


def _set_time(stamp: Timestamp, postgres_micros: int) -> None:
    """Set `stamp` to the time `postgres_micros` microseconds after 2000-01-01 UTC, in integers: floor
    division, so a time before an epoch has negative seconds and nanos in [0, 1e9), as protobuf's own."""
    seconds, micros = divmod(postgres_micros, 1_000_000)
    stamp.seconds = seconds + _POSTGRES_EPOCH_SECONDS
    stamp.nanos = micros * 1_000


def listing_change(row: queries.ListingChangeRow) -> fleet_pb2.ListingChange:
    return fleet_pb2.ListingChange(
        id=str(row.id),
        listed_publicly=row.listed_publicly,
        previously_listed=row.previously_listed,
        changed_by=row.changed_by,
        reason=row.reason,
        changed=row.changed,
    )


def get_organization_response(
    organization: queries.OrganizationRow, changes: Sequence[queries.ListingChangeRow]
) -> fleet_pb2.GetOrganizationResponse:
    return fleet_pb2.GetOrganizationResponse(
        organization=organization_summary(organization), listing_changes=[listing_change(row) for row in changes]
    )


def drift_finding(row: queries.FindingRow) -> fleet_pb2.DriftFinding:
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
    rows: Sequence[queries.FindingRow], next_page_token: str
) -> fleet_pb2.ListDriftFindingsResponse:
    return fleet_pb2.ListDriftFindingsResponse(
        findings=[drift_finding(row) for row in rows], next_page_token=next_page_token
    )


def infrastructure_resource(row: queries.ResourceRow) -> fleet_pb2.InfrastructureResource:
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
    )


def list_infrastructure_resources_response(
    rows: Sequence[queries.ResourceRow], next_page_token: str
) -> fleet_pb2.ListInfrastructureResourcesResponse:
    return fleet_pb2.ListInfrastructureResourcesResponse(
        resources=[infrastructure_resource(row) for row in rows], next_page_token=next_page_token
    )


# ---- the summary


def clusters_by_status(groups: Sequence[queries.StatusInputsRow]) -> dict[ClusterStatus, int]:
    """Live clusters per status, derived in Python from the groups of status inputs SQL counted."""
    counts: dict[ClusterStatus, int] = {}
    for group in groups:
        status = clusterstatus.cluster_status(
            deleted=False,
            sync_status=group.sync_status,
            shoot_status=group.shoot_status,
            shoot_operation=group.shoot_operation,
            ever_completed=group.ever_completed,
        )
        counts[status] = counts.get(status, 0) + group.clusters
    return counts


def recorded_by_status(recorded: Mapping[str, int]) -> dict[ClusterStatus, int]:
    """Live clusters per status as the history recorded them (keys are clusterstatus values)."""
    return {ClusterStatus(status): count for status, count in recorded.items()}


def recorded_kinds(recorded: Mapping[str, int]) -> list[queries.KindCountRow]:
    """Open findings per kind as the history recorded them, by kind as open_findings_by_kind gives them."""
    return [queries.KindCountRow(kind, count) for kind, count in sorted(recorded.items())]


def fleet_summary_response(
    totals: queries.FleetTotalsRow,
    per_status: Mapping[ClusterStatus, int],
    kinds: Sequence[queries.KindCountRow],
    loops: Sequence[queries.LoopRow],
    now: datetime,
    *,
    totals_recorded: datetime | None = None,
) -> fleet_pb2.GetFleetSummaryResponse:
    return fleet_pb2.GetFleetSummaryResponse(
        organizations=totals.organizations,
        organizations_listed=totals.organizations_listed,
        clusters=totals.clusters,
        projects=totals.projects,
        namespaces=totals.namespaces,
        clusters_ready=totals.clusters_ready,
        nodes=totals.nodes,
        ready_nodes=totals.ready_nodes,
        pods=totals.pods,
        allocatable_pods=totals.allocatable_pods,
        cpu_allocatable_millicores=totals.cpu_allocatable_millicores,
        memory_allocatable_bytes=totals.memory_allocatable_bytes,
        clusters_by_status=[
            fleet_pb2.ClusterStatusCount(status=status_to_proto(status), clusters=count)
            for status, count in sorted(per_status.items(), key=lambda item: status_to_proto(item[0]))
            if count
        ],
        clusters_needing_attention=sum(
            count for status, count in per_status.items() if clusterstatus.needs_attention(status)
        ),
        clusters_stale=totals.clusters_stale,
        open_findings_by_kind=[
            fleet_pb2.DriftKindCount(kind=kind_to_proto(row.kind), findings=row.findings) for row in kinds
        ],
        loops=[
            fleet_pb2.LoopFreshness(
                loop=row.loop,
                last_completed=row.last_completed,
                interval_seconds=row.interval_seconds,
                age_seconds=age_seconds(row.last_completed, now),
            )
            for row in loops
        ],
        read=now,
        totals_recorded=totals_recorded,
    )
