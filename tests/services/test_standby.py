"""Read scale on a hot standby: both APIs read from the real streaming standby of
tests/fixtures/replication.py, chosen by libpq (`target_session_attrs=prefer-standby`).

The staff API's summary then says how far the standby trails (beside the loops' freshness) and holds
what the primary committed once the standby replayed it; read from the primary, it says nothing of a
standby. The public API answers from the standby what it answers from the primary.
"""

from __future__ import annotations

import pytest
from fundament.fleet.v1 import fleet_pb2

from services.overview.app import running_overview
from tests.fixtures.collector import make_world
from tests.fixtures.fleet_api import ROLE as STAFF_ROLE
from tests.fixtures.fleet_api import serving_fleet
from tests.fixtures.overview import ROLE as PUBLIC_ROLE
from tests.fixtures.overview import Endpoints, FakeClock, overview_settings
from tests.fixtures.overview import _grpc as overview_call
from tests.fixtures.replication import Replicated

pytestmark = pytest.mark.slow

SUMMARY = fleet_pb2.GetFleetSummaryRequest()


def session_port(pair: Replicated, dsn_attrs: str) -> int:
    """Which server libpq picks for `dsn_attrs` (the port of the session it opens)."""
    import psycopg  # noqa: PLC0415 - only this helper connects directly

    with psycopg.connect(pair.dsn("postgres", dsn_attrs)) as conn:
        return int(conn.info.port)


async def test_both_apis_read_from_the_standby_and_the_staff_view_shows_its_lag(replicated: Replicated) -> None:
    pair = replicated
    with pair.admin(pair.primary) as admin:
        world = make_world(admin, clusters=4)
        admin.execute("UPDATE tenant.organizations SET listed_publicly = true WHERE id = %s", [world.organization_id])
    pair.caught_up()
    assert session_port(pair, "prefer-standby") == pair.standby.port

    async with serving_fleet(pair.dsn(STAFF_ROLE, "read-write"), SUMMARY_CACHE_SECONDS="0") as (_, on_primary):
        from_primary = await on_primary.call("grpc", "GetFleetSummary", SUMMARY)
    assert not from_primary.HasField("standby")

    async with serving_fleet(pair.dsn(STAFF_ROLE, "prefer-standby"), SUMMARY_CACHE_SECONDS="0") as (_, staff):
        from_standby = await staff.call("grpc", "GetFleetSummary", SUMMARY)
    assert from_standby.HasField("standby")
    assert from_standby.standby.lag_milliseconds >= 0
    assert from_standby.standby.HasField("last_replayed")
    assert from_standby.clusters == from_primary.clusters >= 4

    answers = []
    for attrs in ("read-write", "prefer-standby"):
        async with running_overview(overview_settings(pair.dsn(PUBLIC_ROLE, attrs)), clock=FakeClock()) as public:
            endpoints = Endpoints(public.server.http_port, public.server.grpc_port)
            try:
                answers.append((await overview_call(endpoints)).response)
            finally:
                await endpoints.aclose()
    from_public_primary, from_public_standby = answers
    assert from_public_standby.organizations == from_public_primary.organizations
    assert len(from_public_standby.organizations) >= 1
