"""The Prometheus source (INVENTORY_SOURCE=prometheus) against fleet-sim over HTTPS and real PostgreSQL.

The collector resolves each shoot's monitoring secret in the garden, queries its Prometheus with
basic auth and stores the same snapshot tables as the API-server source; what it stores is compared
with the simulator's own expected counts, and each failure of the monitoring stack must keep the
cluster's previous numbers, name the source in `last_error` and leave the other clusters alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.collector import Collector, shoot_key_of
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest
from tests.test_collector_sim import assert_stored_equals_expected, rows


def _snapshot_numbers(database: TestDatabase, cluster_id: Any) -> dict[str, Any]:
    [snap] = rows(database, "SELECT * FROM tenant.cluster_snapshots WHERE cluster_id = %s", cluster_id)
    return snap


async def test_a_round_through_prometheus_stores_what_the_simulator_holds(
    monitoring_collector: Collector, sim: SimUnderTest, sim_database: TestDatabase
) -> None:
    summary = await monitoring_collector.round()
    assert summary.collected >= 10
    for result in summary.results:
        if not result.ok:
            assert result.reason == "no_shoot", result.error
            continue
        expected = sim.control.expected(shoot_key_of(sim, result.cluster.id))
        assert_stored_equals_expected(sim_database, result.cluster.id, expected, ledger=False)
        assert _snapshot_numbers(sim_database, result.cluster.id)["source"] == "prometheus"
