"""GetFleetTrends' answer: one point per step of the range, each with the fleet's (or an
organization's) counts as the history recorded them."""

from __future__ import annotations

from collections.abc import Iterable

from fundament.fleet.v1 import fleet_pb2

from common.clusterstatus import ClusterStatus
from services.fleet.convert.scalars import kind_to_proto, status_to_proto
from services.fleet.queries.trends import TrendRow

# Counts of the history's JSON objects by their keys (clusterstatus values and drift kind ids).
_STATUS_BY_VALUE = {status.value: status_to_proto(status) for status in ClusterStatus}


def trends_response(rows: Iterable[TrendRow]) -> fleet_pb2.GetFleetTrendsResponse:
    """The points of `rows`, built in place: an answer holds up to 2,000 points of a dozen counts
    each, and adding to the repeated fields costs half of building every message and copying it in."""
    response = fleet_pb2.GetFleetTrendsResponse()
    for row in rows:
        point = response.points.add(
            clusters=row.clusters,
            nodes=row.nodes,
            ready_nodes=row.ready_nodes,
            pods=row.pods,
            cpu_allocatable_millicores=row.cpu_allocatable_millicores,
            memory_allocatable_bytes=row.memory_allocatable_bytes,
        )
        point.at.FromDatetime(row.at)
        add_status = point.clusters_by_status.add
        for status, count in sorted(row.clusters_by_status.items()):
            add_status(status=_STATUS_BY_VALUE[status], clusters=count)
        add_kind = point.open_findings_by_kind.add
        for kind, count in sorted(row.open_findings_by_kind.items()):
            add_kind(kind=kind_to_proto(kind), findings=count)
    return response
