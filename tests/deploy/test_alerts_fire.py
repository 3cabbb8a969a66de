"""Every alert of deploy/monitoring/rules.yaml, evaluated by a real Prometheus scraping the real processes
(both APIs and both worker modes against fleet-sim): none while the system is healthy, and each one
firing, with the labels that say where, once its own failure is made.

The rules run on a clock FACTOR times faster (tests/deploy/scaled_rules.py: every `for`, range window and
offset divided, nothing else changed) and the processes with short intervals, so the whole story takes a
few minutes. The failures come in two stages, each breaking one part of every deployable at once:

    stage A   the shoots refuse the collector          FleetCollectionsFailing{reason="forbidden"},
                                                        then FleetClustersStale
              a shoot turns up for no cluster          FleetDriftOpened{kind="orphan_shoot"}
              the public API restarts with CACHE_TTL_SECONDS=1, under steady traffic
                                                        FleetPublicCacheIneffective
              the staff API stops                      FleetDeployableDown{job="platform-admin-api"}
    stage B   a shoot hangs longer than three rounds   FleetInventoryLoopLate
              the garden refuses to list shoots        FleetReconcileLate
              the public API's database is cut off     FleetPublicApiUnavailable
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
import yaml

from tests.deploy.scaled_rules import RULES, seconds, write_scaled_rules
from tests.fixtures.deployables import INVENTORY, PUBLIC, RECONCILE, STAFF, Deployables, running_deployables
from tests.fixtures.overview import PATH as OVERVIEW_PATH
from tests.fixtures.overview import ROLE as PUBLIC_ROLE
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.prometheus import RunningPrometheus, needs_prometheus, running_prometheus
from tests.fixtures.sim import SimUnderTest
from tests.fixtures.tcp_proxy import TcpProxy, tcp_proxy
from tests.fixtures.waiting import eventually

pytestmark = [needs_prometheus, pytest.mark.slow]

# The rules' clock runs this many times faster: 5 minutes are 20 s, half an hour 2 minutes. Any faster,
# and FleetPublicCacheIneffective's window (10 minutes, 40 s) could not hold the 26 reads a second's TTL
# allows on a loaded machine.
FACTOR = 15
NAMESPACE = "fleet"
INVENTORY_INTERVAL_SECONDS = 3
RECONCILE_INTERVAL_SECONDS = 3
# The public API's default (60 s), on the rules' clock; CACHE_TTL_SECONDS=1 is then a misconfiguration.
CACHE_TTL_SECONDS = 60 // FACTOR
# A hung shoot holds its round this long: far past three intervals and FleetInventoryLoopLate's `for`.
INVENTORY_TIMEOUT_SECONDS = 90
# How long Prometheus may run: more than the whole test, which never waits that long in total.
PROMETHEUS_LIFETIME_SECONDS = 420

Expected = dict[str, dict[str, str]]
"""Alert name -> labels it must carry (a subset of its labels)."""


@dataclass
class System:
    prometheus: RunningPrometheus
    deployables: Deployables
    sim: SimUnderTest
    public_database: TcpProxy


class Traffic:
    """Callers of the public overview, many a second, for as long as the test runs (as pages would): the
    cache is asked again as soon as its answer runs out."""

    CALLERS = 4

    def __init__(self, url: str) -> None:
        self._url = url
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._call, name=f"overview-caller-{i}", daemon=True) for i in range(self.CALLERS)
        ]

    def _call(self) -> None:
        with httpx.Client(timeout=5) as client:
            while not self._stop.wait(0.05):
                # Any answer will do: the process may be restarting, or its database cut off.
                with contextlib.suppress(httpx.TransportError):
                    client.get(self._url, params={"encoding": "json", "message": "{}"})

    @contextmanager
    def running(self) -> Iterator[Traffic]:
        for thread in self._threads:
            thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            for thread in self._threads:
                thread.join(10)


def rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def rule_names() -> set[str]:
    return {rule["alert"] for rule in rules()}


def rule_windows() -> list[int]:
    """Every rule's `for`, in seconds on the rules' own clock."""
    return [seconds(rule["for"]) for rule in rules() if "for" in rule]


def heal(sim: SimUnderTest) -> None:
    """Put back the shoots the test fleet plants as missing: each fails its collections (reason `no_shoot`),
    which FleetCollectionsFailing rightly reports; a healthy system has none."""
    missing = sim.fleet.notes.get("scenario.missing_shoot", "")
    for cluster in (c for c in sim.fleet.clusters if str(c.id) in missing.split(",")):
        sim.control.add_shoot(
            "recreated",
            f"c{cluster.id.hex[:8]}",
            cluster_label=str(cluster.id),
            organization_label=str(cluster.organization_id),
            kubernetes_version=cluster.kubernetes_version,
        )


@pytest.fixture
def system(sim: SimUnderTest, sim_database: TestDatabase, tmp_path: Path) -> Iterator[System]:
    """The four deployables, the public API reaching its database through a proxy the test can cut, steady
    traffic on the public overview, and Prometheus evaluating the scaled rules over all of them."""
    rules = write_scaled_rules(tmp_path / "rules.yaml", FACTOR)
    heal(sim)
    with ExitStack() as stack:
        stack.callback(sim.control.clear_faults)
        proxy = stack.enter_context(tcp_proxy(sim_database.server.host, sim_database.server.port))
        settings = {
            PUBLIC: {
                "DATABASE_URL": f"postgresql://{PUBLIC_ROLE}@127.0.0.1:{proxy.port}/{sim_database.name}",
                "CACHE_TTL_SECONDS": str(CACHE_TTL_SECONDS),
                "READ_TIMEOUT_SECONDS": "1",
            },
            INVENTORY: {
                "INVENTORY_INTERVAL_SECONDS": str(INVENTORY_INTERVAL_SECONDS),
                "INVENTORY_TIMEOUT_SECONDS": str(INVENTORY_TIMEOUT_SECONDS),
            },
            RECONCILE: {"RECONCILE_INTERVAL_SECONDS": str(RECONCILE_INTERVAL_SECONDS)},
        }
        deployables = stack.enter_context(running_deployables(sim, sim_database, tmp_path, settings))
        prometheus = stack.enter_context(
            running_prometheus(
                tmp_path,
                deployables.targets(),
                [rules],
                {"namespace": NAMESPACE},
                lifetime_seconds=PROMETHEUS_LIFETIME_SECONDS,
            )
        )
        stack.enter_context(Traffic(deployables.url(PUBLIC) + OVERVIEW_PATH).running())
        prometheus.wait_until(lambda: len(prometheus.query("up == 1")) == 4, "every deployable up")
        prometheus.wait_until(lambda: bool(prometheus.query("fleet_inventory_round_clusters > 0")), "a round")
        prometheus.wait_until(
            lambda: bool(prometheus.query("fleet_reconcile_last_completed_timestamp_seconds > 0")), "a pass"
        )
        prometheus.wait_until(
            lambda: bool(prometheus.query('fleet_overview_database_reads_total{outcome="ok"} > 0')), "an overview read"
        )
        yield System(prometheus, deployables, sim, proxy)


def describe(alerts: list[dict[str, Any]]) -> str:
    return "; ".join(f"{a['labels'].get('alertname')} {a['state']} {a['labels']}" for a in alerts) or "none"


def firing_names(prometheus: RunningPrometheus) -> set[str]:
    return {a["labels"]["alertname"] for a in prometheus.alerts() if a["state"] == "firing"}


def stay_quiet(prometheus: RunningPrometheus, seconds: float) -> None:
    """No alert firing at any evaluation for `seconds` of Prometheus's own time (one pending for a moment,
    as FleetDeployableDown is after a scrape that timed out on a loaded machine, must not fire)."""
    until = float(prometheus.query("vector(time())")[0]["value"][1]) + seconds

    def quiet_until_then() -> bool:
        alerts = [a for a in prometheus.alerts() if a["state"] == "firing"]
        assert not alerts, f"an alert fired on a healthy system: {describe(alerts)}"
        return float(prometheus.query("vector(time())")[0]["value"][1]) >= until

    eventually(quiet_until_then, "a healthy system's whole window", within=seconds + 60, every=1.0)


def watch_until_fired(prometheus: RunningPrometheus, expected: Expected, within: float) -> set[str]:
    """Until each expected alert has fired with its labels (at some evaluation: FleetDriftOpened fires only
    for a while after a finding opens); the names of every alert seen firing meanwhile."""
    seen: set[str] = set()
    fired: set[str] = set()

    def all_fired() -> bool:
        for alert in (a for a in prometheus.alerts() if a["state"] == "firing"):
            name = alert["labels"]["alertname"]
            seen.add(name)
            if name in expected and expected[name].items() <= alert["labels"].items():
                fired.add(name)
        return fired == set(expected)

    try:
        eventually(all_fired, "every alert of the stage firing", within=within, every=1.0)
    except AssertionError as e:
        never = sorted(set(expected) - fired)
        raise AssertionError(f"{e}: never fired: {never}; alerts now: {describe(prometheus.alerts())}") from e
    return seen


STAGE_A: Expected = {
    "FleetCollectionsFailing": {"job": INVENTORY, "reason": "forbidden", "namespace": NAMESPACE},
    "FleetClustersStale": {"job": INVENTORY, "namespace": NAMESPACE},
    "FleetDriftOpened": {"kind": "orphan_shoot", "namespace": NAMESPACE},
    "FleetPublicCacheIneffective": {"job": PUBLIC, "namespace": NAMESPACE},
    "FleetDeployableDown": {"job": STAFF, "namespace": NAMESPACE},
}
STAGE_B: Expected = {
    "FleetInventoryLoopLate": {"job": INVENTORY, "namespace": NAMESPACE},
    "FleetReconcileLate": {"job": RECONCILE, "namespace": NAMESPACE},
    "FleetPublicApiUnavailable": {"namespace": NAMESPACE},
}


def break_stage_a(system: System) -> None:
    sim, deployables = system.sim, system.deployables
    # Every shoot refuses the collector (as when the garden's account lost its rights): more than 5 % fail.
    sim.control.fault("*", "forbidden", resource=None, seconds=0.0)
    sim.control.add_shoot("strays", f"o{uuid4().hex[:8]}", cluster_label=str(uuid4()), organization_label="")
    deployables.stop(PUBLIC)
    deployables.start(PUBLIC, CACHE_TTL_SECONDS="1")
    deployables.wait_serving(PUBLIC)
    deployables.stop(STAFF)


def break_stage_b(system: System) -> None:
    sim = system.sim
    sim.control.clear_faults()
    hanging = sim.serving_shoot()
    sim.control.fault(hanging.key, "hang", resource=None, seconds=INVENTORY_TIMEOUT_SECONDS)
    sim.control.fault("garden", "server_error", resource="shoots")
    system.public_database.cut()


def test_every_alert_quiet_on_a_healthy_system_and_firing_on_its_own_failure(system: System) -> None:
    prometheus = system.prometheus
    longest = max(rule_windows()) / FACTOR
    stay_quiet(prometheus, longest + 5)

    assert set(STAGE_A) | set(STAGE_B) == rule_names(), "every alert has its failure"
    break_stage_a(system)
    # The slowest: FleetClustersStale (three intervals, a round, then its `for`) and FleetPublicCacheIneffective
    # (its window filled with a read a second, then its `for`).
    seen = watch_until_fired(prometheus, STAGE_A, within=2 * longest + 30)
    assert seen <= set(STAGE_A), describe(prometheus.alerts())

    still_firing = firing_names(prometheus)
    assert not still_firing & set(STAGE_B)
    break_stage_b(system)
    seen = watch_until_fired(prometheus, STAGE_B, within=2 * longest + 30)
    assert seen <= set(STAGE_B) | still_firing, describe(prometheus.alerts())
