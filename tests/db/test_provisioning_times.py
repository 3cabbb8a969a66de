"""A time outside the years 1 to 9999 in Fundament's tables reads as the nearest end, never as a failure.

PostgreSQL takes 'infinity', '-infinity' and times from 4713 BC to 294276 AD; psycopg's datetime and a
protobuf Timestamp hold only the years 1 to 9999. Fundament's tables do not refuse the rest and fleet
inventory adds no constraint to them (nothing of ours may refuse a write of Fundament's), so every
process loads such a time clamped (common/timestamps.py) and counts it. Here each kind of time is set
out of range by hand, as a careless edit would, and the staff API still answers over the real server.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fundament.fleet.v1 import fleet_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from common.timestamps import EARLIEST, LATEST
from tests.fixtures.fleet_api import FleetApiUnderTest

LATE = ["infinity", "10000-01-01 00:00:00+00"]
EARLY = ["-infinity", "4713-01-01 00:00:00+00 BC"]


def stamp(moment: datetime) -> Timestamp:
    result = Timestamp()
    result.FromDatetime(moment)
    return result


async def a_cluster(api: FleetApiUnderTest) -> str:
    page = await api.call("grpc", "ListClusters", fleet_pb2.ListClustersRequest(page_size=1))
    return str(page.clusters[0].id)


@pytest.mark.parametrize("value", LATE + EARLY)
async def test_a_clusters_created_out_of_range_reads_clamped(fleet_api: FleetApiUnderTest, value: str) -> None:
    cluster = await a_cluster(fleet_api)
    with fleet_api.database.admin() as conn:
        conn.execute("UPDATE tenant.clusters SET created = %s::timestamptz WHERE id = %s", (value, cluster))
    answer = await fleet_api.call("grpc", "GetCluster", fleet_pb2.GetClusterRequest(id=cluster))
    assert answer.cluster.created == stamp(LATEST if value in LATE else EARLIEST)
    page = await fleet_api.call("connect", "ListClusters", fleet_pb2.ListClustersRequest(page_size=500))
    assert cluster in {c.id for c in page.clusters}


@pytest.mark.parametrize("value", LATE + EARLY)
async def test_an_organizations_created_out_of_range_reads_clamped(fleet_api: FleetApiUnderTest, value: str) -> None:
    page = await fleet_api.call("grpc", "ListOrganizations", fleet_pb2.ListOrganizationsRequest(page_size=1))
    organization = page.organizations[0].id
    with fleet_api.database.admin() as conn:
        conn.execute("UPDATE tenant.organizations SET created = %s::timestamptz WHERE id = %s", (value, organization))
    answer = await fleet_api.call("grpc", "GetOrganization", fleet_pb2.GetOrganizationRequest(id=organization))
    assert answer.organization.created == stamp(LATEST if value in LATE else EARLIEST)
    listed = await fleet_api.call("connect", "ListOrganizations", fleet_pb2.ListOrganizationsRequest(page_size=500))
    times = {o.id: o.created for o in listed.organizations}
    assert times[organization] == stamp(LATEST if value in LATE else EARLIEST)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE tenant.node_pools SET created = 'infinity' WHERE cluster_id = %(cluster)s",
        "UPDATE tenant.projects SET created = '-infinity' WHERE cluster_id = %(cluster)s",
        "UPDATE tenant.namespaces SET created = 'infinity' WHERE project_id IN"
        " (SELECT id FROM tenant.projects WHERE cluster_id = %(cluster)s)",
        "UPDATE tenant.clusters SET shoot_status_updated = '-infinity' WHERE id = %(cluster)s",
        "UPDATE tenant.cluster_outbox SET processed = '10000-01-01 00:00:00+00' WHERE cluster_id = %(cluster)s",
    ],
    ids=["node pools", "projects", "namespaces", "shoot status time", "outbox processed"],
)
async def test_every_other_time_of_a_cluster_reads_clamped(fleet_api: FleetApiUnderTest, statement: str) -> None:
    cluster = await a_cluster(fleet_api)
    with fleet_api.database.admin() as conn:
        conn.execute(statement, {"cluster": cluster})
    for protocol in ("grpc", "connect"):
        answer = await fleet_api.call(protocol, "GetCluster", fleet_pb2.GetClusterRequest(id=cluster))
        assert answer.cluster.id == cluster
    summary = await fleet_api.call("grpc", "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest())
    assert summary.clusters > 0


def test_the_bounds_are_the_years_one_and_9999() -> None:
    assert (EARLIEST.year, LATEST.year, LATEST.tzinfo) == (1, 9999, UTC)
    assert stamp(LATEST).ToDatetime(tzinfo=UTC) == LATEST
