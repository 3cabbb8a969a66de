"""ListUsage's groups and steps as fleet.v1 messages."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from fundament.fleet.v1 import fleet_pb2

from services.fleet.queries.usage import UsageFilters, UsageGroupRow, UsageStepRow


def list_usage_response(
    filters: UsageFilters,
    groups: Sequence[UsageGroupRow],
    steps: Sequence[UsageStepRow],
    read: datetime,
    next_page_token: str,
) -> fleet_pb2.ListUsageResponse:
    """The page: each group with every step of the window (a step the query did not return holds zeros)."""
    starts = filters.step_starts
    ends = [*starts[1:], filters.end]
    found = {(row.ordinal, row.step): row for row in steps}
    messages = []
    for ordinal, group in enumerate(groups, start=1):
        message = fleet_pb2.UsageGroup(
            organization_id="" if group.organization_id is None else str(group.organization_id),
            organization_name=group.organization_name or "",
            cluster_id="" if group.cluster_id is None else str(group.cluster_id),
            cluster_name=group.cluster_name or "",
            resource_type=group.resource_type,
        )
        for index, (start, end) in enumerate(zip(starts, ends, strict=True)):
            row = found.get((ordinal, index))
            message.steps.append(
                fleet_pb2.UsageStep(
                    start=start,
                    end=end,
                    lower_resource_seconds=0.0 if row is None else float(row.lower_seconds),
                    upper_resource_seconds=0.0 if row is None else float(row.upper_seconds),
                    peak=0 if row is None else row.peak,
                )
            )
        messages.append(message)
    return fleet_pb2.ListUsageResponse(groups=messages, next_page_token=next_page_token, read=read)
