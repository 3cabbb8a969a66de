"""Finding history, unlabeled shoots and organization listing changes through the staff API, on every protocol."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from fundament.fleet.v1 import fleet_pb2
from google.protobuf.json_format import MessageToDict

from common.organizations import SYSTEM_ORGANIZATION_ID
from db.seed.write import SEED_AUTHOR
from tests.fixtures.fleet_api import PROTOCOLS, CallFailed, FleetApiUnderTest
from tests.fleet.test_fields import rows, when


async def walk(api: FleetApiUnderTest, protocol: str, **filters: Any) -> list[fleet_pb2.DriftFinding]:
    """Every finding the filters select, page by page (small pages, so paging is exercised)."""
    findings: list[fleet_pb2.DriftFinding] = []
    token = ""
    while True:
        request = fleet_pb2.ListDriftFindingsRequest(page_size=97, page_token=token, **filters)
        page = await api.call(protocol, "ListDriftFindings", request)
        findings += list(page.findings)
        token = page.next_page_token
        if not token:
            return findings


def visible(api: FleetApiUnderTest, where: str) -> list[tuple[Any, ...]]:
    """Findings of the database as the staff API may show them (the system organization's left out)."""
    return rows(
        api.database,
        "SELECT f.id::text, f.resolved FROM tenant.drift_findings f LEFT JOIN tenant.clusters c ON c.id = f.cluster_id"
        " WHERE coalesce(c.organization_id, f.organization_id) IS DISTINCT FROM %s AND "
        + where
        + " ORDER BY f.first_detected, f.id",
        (SYSTEM_ORGANIZATION_ID,),
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_resolved_findings_are_listed_only_when_asked_for(
    shared_fleet_api: FleetApiUnderTest, protocol: str
) -> None:
    open_only = await walk(shared_fleet_api, protocol)
    history = await walk(shared_fleet_api, protocol, include_resolved=True)
    assert [f.id for f in open_only] == [r[0] for r in visible(shared_fleet_api, "f.resolved IS NULL")]
    everything = visible(shared_fleet_api, "true")
    assert [f.id for f in history] == [r[0] for r in everything]
    resolved = {r[0]: r[1] for r in everything if r[1] is not None}
    assert len(resolved) > 100  # more than one page of history
    for finding in history:
        assert when(finding, "resolved") == resolved.get(finding.id)
    assert not any(f.HasField("resolved") for f in open_only)


async def test_a_page_token_is_bound_to_the_history_filter(shared_fleet_api: FleetApiUnderTest) -> None:
    first = await shared_fleet_api.call(
        "grpc", "ListDriftFindings", fleet_pb2.ListDriftFindingsRequest(page_size=5, include_resolved=False)
    )
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call(
            "grpc",
            "ListDriftFindings",
            fleet_pb2.ListDriftFindingsRequest(page_size=5, page_token=first.next_page_token, include_resolved=True),
        )
    assert caught.value.code == "invalid_argument"
    assert "other filters" in caught.value.message


async def test_history_of_one_cluster_through_the_list_filters(shared_fleet_api: FleetApiUnderTest) -> None:
    cluster = shared_fleet_api.world.fleet.clusters[0]
    findings = await walk(shared_fleet_api, "connect", cluster_id=str(cluster.id), include_resolved=True)
    kinds = sorted((fleet_pb2.DriftKind.Name(f.kind), f.HasField("resolved")) for f in findings)
    assert ("DRIFT_KIND_MISSING_SHOOT", True) in kinds
    assert ("DRIFT_KIND_VERSION_MISMATCH", True) in kinds


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_get_cluster_shows_its_finding_history_newest_resolved_first(
    shared_fleet_api: FleetApiUnderTest, protocol: str
) -> None:
    cluster = shared_fleet_api.world.fleet.clusters[0]
    plain = await shared_fleet_api.call("grpc", "GetCluster", fleet_pb2.GetClusterRequest(id=str(cluster.id)))
    assert list(plain.resolved_findings) == []
    answer = await shared_fleet_api.call(
        protocol, "GetCluster", fleet_pb2.GetClusterRequest(id=str(cluster.id), include_resolved=True)
    )
    expected = rows(
        shared_fleet_api.database,
        "SELECT id::text FROM tenant.drift_findings WHERE cluster_id = %s AND resolved IS NOT NULL"
        " ORDER BY resolved DESC, id DESC",
        (cluster.id,),
    )
    assert [f.id for f in answer.resolved_findings] == [r[0] for r in expected]
    assert len(expected) == 2
    assert all(f.HasField("resolved") for f in answer.resolved_findings)
    assert not answer.resolved_findings_truncated
    assert [f.id for f in answer.open_findings] == [f.id for f in plain.open_findings]


async def test_get_cluster_cuts_a_long_history_and_says_so(fleet_api: FleetApiUnderTest) -> None:
    cluster = fleet_api.world.fleet.clusters[0]
    with fleet_api.database.admin() as conn:
        conn.execute(
            "INSERT INTO tenant.drift_findings (kind, subject, cluster_id, details, first_detected, last_detected,"
            " resolved) SELECT 'missing_shoot', %s, %s, '{}', now() - make_interval(hours => 100 + i),"
            " now() - make_interval(hours => 100 + i), now() - make_interval(hours => 99 + i)"
            " FROM generate_series(1, 120) AS i",
            (str(cluster.id), cluster.id),
        )
    answer = await fleet_api.call(
        "grpc", "GetCluster", fleet_pb2.GetClusterRequest(id=str(cluster.id), include_resolved=True)
    )
    assert len(answer.resolved_findings) == 100
    assert answer.resolved_findings_truncated
    stamps = [f.resolved.ToDatetime() for f in answer.resolved_findings]
    assert stamps == sorted(stamps, reverse=True)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_unlabeled_shoot_is_shown_with_its_organization_and_shoot(
    shared_fleet_api: FleetApiUnderTest, protocol: str
) -> None:
    fleet = shared_fleet_api.world.fleet
    planted = fleet.notes["drift.unlabeled_shoot"]
    (spec,) = [s for s in fleet.shoots if str(s.uid) == planted]
    owner = fleet.organizations[0]
    answer = await shared_fleet_api.call(
        protocol,
        "ListDriftFindings",
        fleet_pb2.ListDriftFindingsRequest(kind=fleet_pb2.DRIFT_KIND_UNLABELED_SHOOT, organization_id=str(owner.id)),
    )
    (finding,) = answer.findings
    assert (finding.subject, finding.shoot_uid, finding.cluster_id) == (planted, planted, "")
    assert (finding.organization_id, finding.organization_name) == (str(owner.id), owner.name)
    assert (finding.shoot_name, finding.shoot_namespace) == (spec.name, spec.namespace)
    # A time inside details reads like every other time of the API: RFC 3339 with Z.
    details = MessageToDict(finding.details)
    assert details["shoot_created"] == spec.created.strftime("%Y-%m-%dT%H:%M:%SZ")
    summary = await shared_fleet_api.call(protocol, "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest())
    by_kind = {c.kind: c.findings for c in summary.open_findings_by_kind}
    assert by_kind[fleet_pb2.DRIFT_KIND_UNLABELED_SHOOT] == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_get_organization_shows_its_listing_changes_newest_first(
    shared_fleet_api: FleetApiUnderTest, protocol: str
) -> None:
    owner = shared_fleet_api.world.fleet.organizations[0]
    answer = await shared_fleet_api.call(
        protocol, "GetOrganization", fleet_pb2.GetOrganizationRequest(id=str(owner.id))
    )
    assert (answer.organization.id, answer.organization.name) == (str(owner.id), owner.name)
    # The seed's own record (its organizations written listed) is the seed's; these are the operator's.
    changes = [c for c in answer.listing_changes if c.changed_by != SEED_AUTHOR]
    assert [c.reason for c in changes] == ["back", "asked to"]
    latest = changes[0]
    assert (latest.listed_publicly, latest.previously_listed, latest.changed_by) == (
        owner.listed_publicly,
        not owner.listed_publicly,
        "operator",
    )
    assert UUID(latest.id)
    other = shared_fleet_api.world.fleet.organizations[1]
    quiet = await shared_fleet_api.call("grpc", "GetOrganization", fleet_pb2.GetOrganizationRequest(id=str(other.id)))
    assert quiet.organization.name == other.name
    assert [c for c in quiet.listing_changes if c.changed_by != SEED_AUTHOR] == []


@pytest.mark.parametrize(
    ("organization_id", "code"),
    [
        (str(SYSTEM_ORGANIZATION_ID), "not_found"),
        ("6f1d7c1e-0000-4000-8000-000000000000", "not_found"),
        ("not-a-uuid", "invalid_argument"),
        ("", "invalid_argument"),
    ],
)
async def test_get_organization_refuses_what_it_does_not_show(
    shared_fleet_api: FleetApiUnderTest, organization_id: str, code: str
) -> None:
    with pytest.raises(CallFailed) as caught:
        await shared_fleet_api.call("connect", "GetOrganization", fleet_pb2.GetOrganizationRequest(id=organization_id))
    assert caught.value.code == code
