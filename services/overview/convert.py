"""Rows to `overview.v1` messages: the only place the public API builds protobuf messages.

The totals are computed here from the rows themselves, so they add up to exactly what is listed
(the page must not let anyone count the organizations that are not listed).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from fundament.overview.v1 import overview_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from services.overview.queries import OrganizationCounts


def timestamp(moment: datetime) -> Timestamp:
    """A protobuf Timestamp of an aware datetime; raises ValueError for a naive one."""
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def organization(row: OrganizationCounts) -> overview_pb2.OrganizationOverview:
    return overview_pb2.OrganizationOverview(
        name=row.name, alias=row.alias, clusters=row.clusters, projects=row.projects, namespaces=row.namespaces
    )


def overview_response(rows: Sequence[OrganizationCounts], read: datetime) -> overview_pb2.GetPlatformOverviewResponse:
    """The whole public answer: the organizations in the given order, their sums, and when it was read."""
    totals = overview_pb2.OverviewTotals(
        organizations=len(rows),
        clusters=sum(row.clusters for row in rows),
        projects=sum(row.projects for row in rows),
        namespaces=sum(row.namespaces for row in rows),
    )
    return overview_pb2.GetPlatformOverviewResponse(
        organizations=[organization(row) for row in rows], totals=totals, read=timestamp(read)
    )
