"""Each FleetService request turned into the inputs of its queries: the one place request fields are read.

One function per RPC returns what its queries take (filters, an id, a search, a range), every field
checked and normalized, or raises `InvalidArgument` naming the first bad field, so nothing unchecked
reaches SQL. Enums are mapped by value here, and a value this service does not know is refused. The
paging fields (`page_size`, `page_token`) are the one exception: they go as they are to the page
tokens, which check them against the list's key (`services/common/paging.py`).
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
from services.common.paging import page_size
from services.fleet.parse.fields import optional_resource_type, optional_text, optional_uuid, required_uuid
from services.fleet.parse.search import cluster_search, name_search, namespace_patterns
from services.fleet.queries.clusters import ClusterFilters, ClusterOrder
from services.fleet.queries.findings import FindingFilters, HistoryFilters
from services.fleet.queries.ledger import ResourceFilters
from services.fleet.queries.organizations import OrganizationFilters, OrganizationOrder
from services.fleet.queries.search import NamespaceSearch
from services.fleet.queries.trends import TrendRange
from services.fleet.queries.usage import UsageAggregate, UsageFilters

# GetFleetTrends' step when none is asked for, the shortest it may ask for, and the most steps a range
# may hold: an answer is at most MAX_STEPS points whatever the caller asks.
DEFAULT_STEP_SECONDS = 3600
MIN_STEP_SECONDS = 60
MAX_STEPS = 2000
# ListUsage: the longest window, and the most points (groups x steps) one page may hold. A point costs
# a probe in the sort that adds the page up, and some 40 bytes of answer.
MAX_USAGE_WINDOW = timedelta(days=366)
MAX_USAGE_POINTS = 50_000
_USAGE_AGGREGATES: dict[int, UsageAggregate] = {
    fleet_pb2.USAGE_AGGREGATE_UNSPECIFIED: UsageAggregate.ORGANIZATION,
    fleet_pb2.USAGE_AGGREGATE_ORGANIZATION: UsageAggregate.ORGANIZATION,
    fleet_pb2.USAGE_AGGREGATE_CLUSTER: UsageAggregate.CLUSTER,
    fleet_pb2.USAGE_AGGREGATE_RESOURCE_TYPE: UsageAggregate.RESOURCE_TYPE,
}

_CLUSTER_ORDERS: dict[int, ClusterOrder] = {
    fleet_pb2.CLUSTER_ORDER_UNSPECIFIED: ClusterOrder.NAME,
    fleet_pb2.CLUSTER_ORDER_NAME: ClusterOrder.NAME,
    fleet_pb2.CLUSTER_ORDER_ORGANIZATION: ClusterOrder.ORGANIZATION,
    fleet_pb2.CLUSTER_ORDER_PODS: ClusterOrder.PODS,
    fleet_pb2.CLUSTER_ORDER_NODES: ClusterOrder.NODES,
    fleet_pb2.CLUSTER_ORDER_OBSERVED: ClusterOrder.OBSERVED,
    fleet_pb2.CLUSTER_ORDER_STATUS_SINCE: ClusterOrder.STATUS_SINCE,
}
_ORGANIZATION_ORDERS: dict[int, OrganizationOrder] = {
    fleet_pb2.ORGANIZATION_ORDER_UNSPECIFIED: OrganizationOrder.NAME,
    fleet_pb2.ORGANIZATION_ORDER_NAME: OrganizationOrder.NAME,
    fleet_pb2.ORGANIZATION_ORDER_ALIAS: OrganizationOrder.ALIAS,
    fleet_pb2.ORGANIZATION_ORDER_CREATED: OrganizationOrder.CREATED,
}


# ---- one function per RPC


def organization_filters(request: fleet_pb2.ListOrganizationsRequest) -> OrganizationFilters:
    """ListOrganizations' query and order."""
    return OrganizationFilters(
        pattern=name_search("query", request.query),
        order=organization_order(request.order),
        descending=request.descending,
    )


def organization_id(request: fleet_pb2.GetOrganizationRequest) -> UUID:
    """GetOrganization's organization."""
    return required_uuid("id", request.id)


def cluster_filters(request: fleet_pb2.ListClustersRequest) -> ClusterFilters:
    """ListClusters' filters, query and order."""
    found = cluster_search(request.query)
    return ClusterFilters(
        organization_id=optional_uuid("organization_id", request.organization_id),
        statuses=statuses_from_proto(request.statuses),
        needs_attention=request.needs_attention,
        stale=request.stale,
        region=optional_text("region", request.region),
        include_deleted=request.include_deleted,
        either_pattern=found.either,
        cluster_pattern=found.cluster,
        organization_pattern=found.organization,
        order=cluster_order(request.order),
        descending=request.descending,
    )


@dataclass(frozen=True, slots=True)
class ClusterDetail:
    """GetCluster's request, checked: which cluster, and whether its resolved findings are wanted."""

    id: UUID
    include_resolved: bool


def cluster_detail(request: fleet_pb2.GetClusterRequest) -> ClusterDetail:
    """GetCluster's cluster and what to show of it."""
    return ClusterDetail(required_uuid("id", request.id), request.include_resolved)


def finding_filters(request: fleet_pb2.ListDriftFindingsRequest) -> FindingFilters:
    """ListDriftFindings' filters."""
    return FindingFilters(
        kind=kind_from_proto(request.kind),
        organization_id=optional_uuid("organization_id", request.organization_id),
        cluster_id=optional_uuid("cluster_id", request.cluster_id),
        include_resolved=request.include_resolved,
    )


def history_filters(request: fleet_pb2.ListFindingHistoryRequest) -> HistoryFilters:
    """ListFindingHistory's filters."""
    return HistoryFilters(
        kind=kind_from_proto(request.kind),
        organization_id=optional_uuid("organization_id", request.organization_id),
        cluster_id=optional_uuid("cluster_id", request.cluster_id),
        open_only=request.open_only,
    )


def resource_filters(request: fleet_pb2.ListInfrastructureResourcesRequest) -> ResourceFilters:
    """ListInfrastructureResources' filters."""
    return ResourceFilters(
        cluster_id=optional_uuid("cluster_id", request.cluster_id),
        resource_type=optional_resource_type(request.resource_type),
        billable=request.billable if request.HasField("billable") else None,
        include_destroyed=request.include_destroyed,
    )


def namespace_search(request: fleet_pb2.SearchNamespacesRequest) -> NamespaceSearch:
    """SearchNamespaces' query (required) as the patterns of a name and a Kubernetes name."""
    patterns = namespace_patterns("query", request.query)
    return NamespaceSearch(patterns.name, patterns.name_start, patterns.project, patterns.project_names)


def trend_range(request: fleet_pb2.GetFleetTrendsRequest, now: datetime) -> TrendRange:
    """GetFleetTrends' range and step (the range ends `now` unless asked otherwise)."""
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
    return TrendRange(start, end, step, optional_uuid("organization_id", request.organization_id))


def usage_filters(request: fleet_pb2.ListUsageRequest, now: datetime) -> UsageFilters:
    """ListUsage's window (ending `now` unless asked otherwise), step, aggregate and filters, bounded:
    the window by MAX_USAGE_WINDOW, its steps by MAX_STEPS and the page's points (groups x steps) by
    MAX_USAGE_POINTS, so a hostile request is refused before any database work."""
    if not request.HasField("start"):
        raise InvalidArgument("start is required")
    start = _time("start", request.start)
    end = _time("end", request.end) if request.HasField("end") else now
    if end <= start:
        raise InvalidArgument("end must be after start")
    if end - start > MAX_USAGE_WINDOW:
        raise InvalidArgument(f"end must be at most {MAX_USAGE_WINDOW.days} days after start")
    if request.step_seconds < 0:
        raise InvalidArgument("step_seconds must not be negative")
    if 0 < request.step_seconds < MIN_STEP_SECONDS:
        raise InvalidArgument(f"step_seconds must be 0 (one step) or at least {MIN_STEP_SECONDS}")
    steps = 1 if request.step_seconds == 0 else -(-(end - start) // timedelta(seconds=request.step_seconds))
    if steps > MAX_STEPS:
        raise InvalidArgument(
            f"the window holds {steps} steps, more than {MAX_STEPS}: shorten it or take a longer step"
        )
    groups = page_size(request.page_size)
    if groups * steps > MAX_USAGE_POINTS:
        raise InvalidArgument(
            f"page_size {groups} x {steps} steps is more than {MAX_USAGE_POINTS} points:"
            f" ask for at most {MAX_USAGE_POINTS // steps} groups per page, or take a longer step"
        )
    return UsageFilters(
        start=start,
        end=end,
        step_seconds=int(request.step_seconds),
        aggregate=usage_aggregate(request.aggregate),
        organization_id=optional_uuid("organization_id", request.organization_id),
        cluster_id=optional_uuid("cluster_id", request.cluster_id),
        resource_type=optional_resource_type(request.resource_type),
        include_non_billable=request.include_non_billable,
    )


# ---- enums and times


def usage_aggregate(value: int) -> UsageAggregate:
    """ListUsage's `aggregate`; a value this service does not know is `InvalidArgument`."""
    try:
        return _USAGE_AGGREGATES[value]
    except KeyError:
        raise InvalidArgument(f"aggregate: {value} is not a UsageAggregate") from None


def cluster_order(value: int) -> ClusterOrder:
    """ListClusters' `order`; a value this service does not know is `InvalidArgument`."""
    try:
        return _CLUSTER_ORDERS[value]
    except KeyError:
        raise InvalidArgument(f"order: {value} is not a ClusterOrder") from None


def organization_order(value: int) -> OrganizationOrder:
    """ListOrganizations' `order`; a value this service does not know is `InvalidArgument`."""
    try:
        return _ORGANIZATION_ORDERS[value]
    except KeyError:
        raise InvalidArgument(f"order: {value} is not an OrganizationOrder") from None


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


def kind_from_proto(value: int) -> str | None:
    """A DriftKind filter as the database's kind name; None for UNSPECIFIED (every kind)."""
    if value == fleet_pb2.DRIFT_KIND_UNSPECIFIED:
        return None
    try:
        name = fleet_pb2.DriftKind.Name(value)
    except ValueError:
        raise InvalidArgument(f"kind: {value} is not a DriftKind") from None
    return name.removeprefix("DRIFT_KIND_").lower()


def _time(field: str, value: timestamp_pb2.Timestamp) -> datetime:
    try:
        return value.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError):
        raise InvalidArgument(f"{field} is not a valid time") from None
