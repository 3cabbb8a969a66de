"""fleet-sim's Prometheus answers an instant query as of its `time=`, over HTTPS with basic auth.

A real Prometheus keeps its scrapes, so a query pinned to a time sees the cluster as it was then;
the simulator keeps the states its Prometheus was asked about (sim/api/prometheus/history.py), and
a change can be queued to land right after the N-th answer.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.fixtures.sim import SimUnderTest

NODES = "count(kube_node_labels)"


@pytest.fixture
def prometheus(sim: SimUnderTest) -> Iterator[tuple[httpx.Client, str]]:
    """A client of one serving shoot's Prometheus, logged in with its monitoring secret's password; its key."""
    shoot = sim.serving_shoot()
    password = sim.server.sim.monitoring.password(shoot)
    context = ssl.create_default_context(cadata=sim.server.sim.tls.ca_pem.decode())
    with httpx.Client(
        base_url=sim.server.sim.prometheus_url(shoot.key), auth=("admin", password), verify=context, timeout=10
    ) as client:
        yield client, shoot.key


def query(client: httpx.Client, expression: str, at: str | None = None) -> tuple[float, float | None]:
    """(the answer's evaluation time, the single sample's value, or None for an empty answer)."""
    params = {"query": expression} if at is None else {"query": expression, "time": at}
    response = client.get("/api/v1/query", params=params)
    assert response.status_code == 200, response.text
    result: list[dict[str, Any]] = response.json()["data"]["result"]
    if not result:
        return (float("nan"), None)
    [sample] = result
    return (sample["value"][0], float(sample["value"][1]))


def test_a_query_pinned_to_a_time_sees_the_shoot_as_it_was_then(
    sim: SimUnderTest, prometheus: tuple[httpx.Client, str]
) -> None:
    client, key = prometheus
    then, nodes = query(client, NODES)
    assert nodes == sim.control.expected(key).nodes
    worker = sim.control.shoot(key).workers[0]
    sim.control.scale_pool(key, worker.name, worker.minimum + 3)
    assert query(client, NODES)[1] == nodes + 3, "now: the new state"
    assert query(client, NODES, f"{then:.3f}") == (then, nodes), "at the earlier time: the old state, stamped then"
    rfc3339 = datetime.fromtimestamp(then, UTC).isoformat().replace("+00:00", "Z")
    assert query(client, NODES, rfc3339)[1] == nodes
    assert query(client, NODES, f"{then + 3600:.3f}")[1] == nodes + 3, "a later time sees the latest state"
    sim.control.advance_clock(3600)
    query(client, NODES)
    assert query(client, NODES, f"{then:.3f}")[1] is None, "older than every state kept: no series, as Prometheus"


def test_a_bad_time_is_refused_as_prometheus_refuses_it(prometheus: tuple[httpx.Client, str]) -> None:
    client, _ = prometheus
    response = client.get("/api/v1/query", params={"query": NODES, "time": "yesterday"})
    assert response.status_code == 400
    assert response.json()["errorType"] == "bad_data" and 'invalid parameter "time"' in response.json()["error"]


def test_a_change_can_land_right_after_the_nth_answer(sim: SimUnderTest, prometheus: tuple[httpx.Client, str]) -> None:
    client, key = prometheus
    nodes = sim.control.expected(key).nodes
    worker = sim.control.shoot(key).workers[0]
    sim.control.scale_pool_after_queries(key, worker.name, worker.minimum + 2, queries=2)
    first, _ = query(client, NODES)
    assert query(client, NODES)[1] == nodes and sim.control.expected(key).nodes == nodes + 2
    assert query(client, NODES)[1] == nodes + 2
    assert query(client, NODES, f"{first:.3f}")[1] == nodes, "the state at the first answer's time is kept"
    with pytest.raises(ValueError, match="queries"):
        sim.control.scale_pool_after_queries(key, worker.name, 1, queries=0)
