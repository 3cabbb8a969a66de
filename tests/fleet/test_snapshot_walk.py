"""ListClusters by snapshot time while the inventory runs: a walk newest first never skips a cluster.

Between pages the test refreshes snapshots as an inventory round would (their `observed` moves to a
time after the walk began): clusters the walk has not reached yet (which jump to the front of the
order, behind the cursor) and clusters it already listed. Every cluster must come at least once; the
ones listed twice are exactly those refreshed after they were listed (the page shows each once).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from fundament.fleet.v1 import fleet_pb2

from tests.fixtures.fleet_api import NOW, CallFailed, FleetApiUnderTest
from tests.fleet.test_fields import rows

PAGE = 40


def listed_ids(api: FleetApiUnderTest) -> set[str]:
    """The clusters ListClusters lists without filters: live, of live organizations (the listing's `live`)."""
    return {str(r[0]) for r in rows(api.database, "SELECT id FROM tenant.cluster_listing WHERE live")}


def refresh(api: FleetApiUnderTest, cluster_ids: list[str], at: object) -> None:
    with api.database.admin() as conn:
        for cluster_id in cluster_ids:
            conn.execute("UPDATE tenant.cluster_snapshots SET observed = %s WHERE cluster_id = %s", (at, cluster_id))


def by_snapshot_age(api: FleetApiUnderTest) -> list[str]:
    """The listed clusters with a snapshot, newest first (the order's key: observed, name, id)."""
    found = rows(
        api.database,
        "SELECT id::text FROM tenant.cluster_listing WHERE live AND observed > '-infinity'"
        " ORDER BY observed DESC, name DESC, id DESC",
    )
    return [str(r[0]) for r in found]


@pytest.mark.parametrize("protocol", ["grpc", "connect"])
async def test_a_walk_by_snapshot_time_skips_nothing_while_snapshots_are_refreshed(
    fleet_api: FleetApiUnderTest, protocol: str
) -> None:
    everyone = listed_ids(fleet_api)
    order = by_snapshot_age(fleet_api)
    assert len(order) > 4 * PAGE
    seen: list[str] = []
    refreshed_after_listed: set[str] = set()
    token = ""
    step = 0
    while True:
        request = fleet_pb2.ListClustersRequest(
            page_size=PAGE, page_token=token, order=fleet_pb2.CLUSTER_ORDER_OBSERVED, descending=True
        )
        page = await fleet_api.call(protocol, "ListClusters", request)
        seen += [c.id for c in page.clusters]
        token = page.next_page_token
        if not token:
            break
        step += 1
        if step <= 3:
            # An inventory round between pages: three clusters the walk has not reached (a plain keyset
            # walk would skip them: they jump before its cursor) and two it already listed.
            shown = set(seen)
            ahead = [c for c in order if c not in shown][PAGE : PAGE + 3]
            behind = seen[-2:]
            refresh(fleet_api, ahead + behind, NOW + timedelta(seconds=step))
            refreshed_after_listed.update(behind)
    assert set(seen) == everyone, f"skipped: {sorted(everyone - set(seen))[:5]}"
    repeated = {c for c in seen if seen.count(c) > 1}
    assert repeated == refreshed_after_listed
    assert all(seen.count(c) == 2 for c in repeated)


async def test_a_walk_token_belongs_to_its_order(fleet_api: FleetApiUnderTest) -> None:
    first = await fleet_api.call(
        "connect",
        "ListClusters",
        fleet_pb2.ListClustersRequest(page_size=5, order=fleet_pb2.CLUSTER_ORDER_OBSERVED, descending=True),
    )
    rising = fleet_pb2.ListClustersRequest(
        page_size=5, page_token=first.next_page_token, order=fleet_pb2.CLUSTER_ORDER_OBSERVED
    )
    with pytest.raises(CallFailed) as refused:
        await fleet_api.call("connect", "ListClusters", rising)
    assert refused.value.code == "invalid_argument"
