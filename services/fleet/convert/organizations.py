"""Organizations as fleet.v1 messages: ListOrganizations' page and GetOrganization's answer."""

from __future__ import annotations

from collections.abc import Sequence

from fundament.fleet.v1 import fleet_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from common.timestamps import clamp_postgres_micros
from services.fleet.queries.organizations import POSTGRES_EPOCH, ListingChangeRow, OrganizationRow


def organization_summary(row: OrganizationRow) -> fleet_pb2.OrganizationSummary:
    # The list's one spelling of the fields, so a single organization and a page never differ.
    return list_organizations_response([row], "").organizations[0]


def list_organizations_response(
    rows: Sequence[OrganizationRow], next_page_token: str
) -> fleet_pb2.ListOrganizationsResponse:
    # Built in place (a page holds up to 500): a third cheaper than a message per row copied in. The
    # rows come in the response's own forms (OrganizationRow): id text, times in integers.
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


# Seconds from 1970-01-01 UTC, a Timestamp's zero, to OrganizationRow's.
_POSTGRES_EPOCH_SECONDS = int(POSTGRES_EPOCH.timestamp())


def _set_time(stamp: Timestamp, postgres_micros: int) -> None:
    """Set `stamp` to the time `postgres_micros` microseconds after 2000-01-01 UTC, in integers: floor
    division, so a time before an epoch has negative seconds and nanos in [0, 1e9), as protobuf's own."""
    seconds, micros = divmod(clamp_postgres_micros(postgres_micros), 1_000_000)
    stamp.seconds = seconds + _POSTGRES_EPOCH_SECONDS
    stamp.nanos = micros * 1_000


def listing_change(row: ListingChangeRow) -> fleet_pb2.ListingChange:
    return fleet_pb2.ListingChange(
        id=str(row.id),
        listed_publicly=row.listed_publicly,
        previously_listed=row.previously_listed,
        changed_by=row.changed_by,
        reason=row.reason,
        changed=row.changed,
    )


def get_organization_response(
    organization: OrganizationRow, changes: Sequence[ListingChangeRow]
) -> fleet_pb2.GetOrganizationResponse:
    return fleet_pb2.GetOrganizationResponse(
        organization=organization_summary(organization), listing_changes=[listing_change(row) for row in changes]
    )
