"""GetFleetTrends: the request checked and the points converted (trend_queries.py reads them).

Which history answers: one organization's hourly rows, or the fleet's per-round rows for steps under
an hour and its hourly rows otherwise. The range is bounded (at most MAX_STEPS steps), so an answer
is at most that many points whatever the caller asks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from uuid import UUID

from fundament.fleet.v1 import fleet_pb2
from google.protobuf import timestamp_pb2

from common.clusterstatus import ClusterStatus
from services.common.errors import InvalidArgument
from services.fleet.convert import kind_to_proto, status_to_proto
from services.fleet.trend_queries import TrendRow
from services.fleet.validate import optional_uuid

DEFAULT_STEP_SECONDS = 3600
MIN_STEP_SECONDS = 60
MAX_STEPS = 2000


@dataclass(frozen=True, slots=True)
class TrendRequest:
    """A checked GetFleetTrends request."""

    start: datetime
    end: datetime
    step_seconds: int
    organization_id: UUID | None

    @property
    def resolution(self) -> str:
        fine = self.organization_id is None and self.step_seconds < 3600
        return "round" if fine else "hour"


def _time(field: str, value: timestamp_pb2.Timestamp) -> datetime:
    try:
        return value.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError):
        raise InvalidArgument(f"{field} is not a valid time") from None


def trend_request(request: fleet_pb2.GetFleetTrendsRequest, now: datetime) -> TrendRequest:
    """The request's range and step, checked; `InvalidArgument` names the first bad field."""
    if not request.HasField("start"):
        raise InvalidArgument("start is required")
    start = _time("start", request.start)
    end = _time("end", request.end) if request.HasField("end") else now
    if end <= start:
        raise InvalidArgument("end must be after start")
    if request.step_seconds < 0:
        raise InvalidArgument("step_seconds must not be negative")
    step = request.step_seconds or DEFAULT_STEP_SECONDS
    if step < MIN_STEP_SECONDS:
        raise InvalidArgument(f"step_seconds must be at least {MIN_STEP_SECONDS}")
    if (end - start) / timedelta(seconds=step) > MAX_STEPS:
        raise InvalidArgument(f"the range holds more than {MAX_STEPS} steps: shorten it or take a longer step")
    return TrendRequest(start, end, step, optional_uuid("organization_id", request.organization_id))


# Counts of the history's JSON objects by their keys (clusterstatus values and drift kind ids).
_STATUS_BY_VALUE = {status.value: status_to_proto(status) for status in ClusterStatus}


def trends_response(rows: Iterable[TrendRow]) -> fleet_pb2.GetFleetTrendsResponse:
    """The points of `rows`, built in place: an answer holds up to MAX_STEPS points of a dozen counts
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
