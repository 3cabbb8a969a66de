"""GetFleetSummary's answer: the totals, clusters per status (derived with `common.clusterstatus`),
open findings per kind and the loops' freshness, read or recorded at one instant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from fundament.fleet.v1 import fleet_pb2

from common import clusterstatus
from common.clusterstatus import ClusterStatus
from services.fleet.convert.scalars import age_seconds, kind_to_proto, status_to_proto
from services.fleet.queries.summary import FleetTotalsRow, KindCountRow, LoopRow, StandbyRow, StatusInputsRow


def clusters_by_status(groups: Sequence[StatusInputsRow]) -> dict[ClusterStatus, int]:
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


def recorded_kinds(recorded: Mapping[str, int]) -> list[KindCountRow]:
    """Open findings per kind as the history recorded them, by kind as open_findings_by_kind gives them."""
    return [KindCountRow(kind, count) for kind, count in sorted(recorded.items())]


def fleet_summary_response(
    totals: FleetTotalsRow,
    per_status: Mapping[ClusterStatus, int],
    kinds: Sequence[KindCountRow],
    loops: Sequence[LoopRow],
    now: datetime,
    *,
    totals_recorded: datetime | None = None,
    standby: StandbyRow | None = None,
) -> fleet_pb2.GetFleetSummaryResponse:
    return fleet_pb2.GetFleetSummaryResponse(
        standby=standby_replay(standby),
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
                shards=row.shards,
                shards_reporting=row.shards_reporting,
            )
            for row in loops
        ],
        read=now,
        totals_recorded=totals_recorded,
    )


def standby_replay(row: StandbyRow | None) -> fleet_pb2.StandbyReplay | None:
    """The standby's replay lag, or None (the field unset) when the answer was read from the primary."""
    if row is None:
        return None
    replay = fleet_pb2.StandbyReplay(lag_milliseconds=row.lag_milliseconds or 0)
    if row.last_replayed is not None:
        replay.last_replayed.FromDatetime(row.last_replayed)
    return replay
