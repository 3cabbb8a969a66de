"""A real Prometheus scrapes every deployable, running as the processes an operator runs (both APIs and both
worker modes against fleet-sim), and evaluates deploy/monitoring/rules.yaml over what it scraped: every
series the rules and the dashboard use exists, with the labels they group and print by.

The job of each deployable is its name, as the chart's PodMonitors set it; the rules select by it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
import yaml

from collector.inventory.shards import shard_of
from tests.fixtures.deployables import INVENTORY, PUBLIC, RECONCILE, make_traffic, running_deployables
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.prometheus import RunningPrometheus, needs_prometheus, running_prometheus
from tests.fixtures.sim import SimUnderTest

pytestmark = [needs_prometheus, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "deploy" / "monitoring"
INVENTORY_INTERVAL_SECONDS = 30
RECONCILE_INTERVAL_SECONDS = 20
NAMESPACE = "fleet"


def _in_first_of_two_shards(cluster_label: str) -> bool:
    try:
        return shard_of(UUID(cluster_label), 2) == 0
    except ValueError:  # the test fleet plants shoots whose label is no cluster id
        return False


@pytest.fixture
def scraped(sim: SimUnderTest, sim_database: TestDatabase, tmp_path: Path) -> Iterator[RunningPrometheus]:
    """Both APIs and both workers running, traffic of every kind made, and Prometheus scraping them all."""
    # One shoot refuses the collector, so collections fail with a reason the rules and dashboard group by.
    # It must be one this inventory worker collects (shard 0 of 2 below).
    refusing = sim.serving_shoot(lambda s: _in_first_of_two_shards(s.cluster_label))
    sim.control.fault(refusing.key, "forbidden", resource=None, seconds=0.0)
    settings = {
        PUBLIC: {"CACHE_TTL_SECONDS": "1", "READ_TIMEOUT_SECONDS": "0.5"},
        INVENTORY: {
            "INVENTORY_INTERVAL_SECONDS": str(INVENTORY_INTERVAL_SECONDS),
            "INVENTORY_SHARD": "0/2",
            "INVENTORY_TIMEOUT_SECONDS": "20",
        },
        RECONCILE: {"RECONCILE_INTERVAL_SECONDS": str(RECONCILE_INTERVAL_SECONDS)},
    }
    with ExitStack() as stack:
        stack.callback(sim.control.clear_faults)
        running = stack.enter_context(running_deployables(sim, sim_database, tmp_path, settings))
        prometheus = stack.enter_context(
            running_prometheus(tmp_path, running.targets(), [MONITORING / "rules.yaml"], {"namespace": NAMESPACE})
        )
        prometheus.wait_until(lambda: len(prometheus.query("up == 1")) == 4, "every deployable up")
        make_traffic(running, sim_database)
        prometheus.wait_until(lambda: bool(prometheus.query("fleet_reconcile_passes_total > 0")), "a reconcile pass")
        prometheus.wait_until(
            lambda: bool(prometheus.query("fleet_inventory_clusters_failed_total > 0")), "a failed collection"
        )
        prometheus.wait_until(lambda: bool(prometheus.query("fleet_inventory_clusters_collected_total > 0")), "a round")
        # Enough samples of everything for the rate windows.
        prometheus.wait_until(lambda: bool(prometheus.query("count_over_time(up[30s]) > 5")), "a few scrapes")
        # A rule with `offset` needs its series to exist that long ago too: on a busy machine the first
        # reconcile pass may land just before this point.
        prometheus.wait_until(
            lambda: all(prometheus.query(as_bool(expr)) for expr in rule_exprs().values()), "every rule's series"
        )
        yield prometheus


def rule_exprs() -> dict[str, str]:
    groups = yaml.safe_load((MONITORING / "rules.yaml").read_text())["groups"]
    return {rule["alert"]: rule["expr"] for group in groups for rule in group["rules"]}


def as_bool(expr: str) -> str:
    """The rule's comparison as a `bool` one: one series per matched pair, whichever side is larger. A fresh
    server has no half-hour history, so `offset 30m` looks back a few seconds instead."""
    return re.sub(r"(==|>)(\s)", r"\1 bool\2", expr, count=1).replace("offset 30m", "offset 5s")


def labels_printed(text: str) -> set[str]:
    return set(re.findall(r"\$labels\.([a-z_]+)", text)) | set(re.findall(r"\{\{\s*([a-z_]+)\s*\}\}", text))


def check_every_deployable_is_scraped_under_its_name(scraped: RunningPrometheus) -> None:
    up = {r["metric"]["job"]: r["value"][1] for r in scraped.query("up")}
    assert up == dict.fromkeys(
        ["platform-public-api", "platform-admin-api", "cluster-worker-inventory", "cluster-worker-reconcile"], "1"
    )


def check_each_worker_exports_only_its_own_modes_series(scraped: RunningPrometheus) -> None:
    for job, own, other in ((INVENTORY, "inventory", "reconcile"), (RECONCILE, "reconcile", "inventory")):
        assert scraped.query(f'{{job="{job}", __name__=~"fleet_{own}_.+"}}'), f"{job} exports none of its series"
        assert not scraped.query(f'{{job="{job}", __name__=~"fleet_{other}_.+"}}'), f"{job} exports {other}'s"


def check_every_rule_evaluates_over_real_series_with_the_labels_it_prints(scraped: RunningPrometheus) -> None:
    groups = yaml.safe_load((MONITORING / "rules.yaml").read_text())["groups"]
    for rule in (r for group in groups for r in group["rules"]):
        result = scraped.query(as_bool(rule["expr"]))
        assert result, f"{rule['alert']}: no series for {as_bool(rule['expr'])}"
        printed = labels_printed(json.dumps(rule["annotations"])) - {"value"}
        for series in result:
            missing = {label for label in printed if not series["metric"].get(label)}
            assert not missing, f"{rule['alert']} prints {missing}, which its series lack: {series['metric']}"


def check_prometheus_evaluates_the_loaded_rules_without_errors(scraped: RunningPrometheus) -> None:
    loaded = scraped.rules()
    assert {r["name"] for r in loaded} == set(rule_exprs())
    scraped.wait_until(lambda: all(r.get("lastEvaluation", "").startswith("20") for r in scraped.rules()), "rules run")
    for rule in scraped.rules():
        assert rule["health"] == "ok", rule


def dashboard_targets() -> list[dict[str, Any]]:
    dashboard = json.loads((MONITORING / "dashboard.json").read_text())
    return [t for p in dashboard["panels"] if p["type"] != "row" for t in p["targets"]]


def check_every_dashboard_query_has_series_with_its_legend_labels(scraped: RunningPrometheus) -> None:
    for target in dashboard_targets():
        expr = target["expr"].replace("$namespace", ".*").replace("$__rate_interval", "30s")
        result = scraped.query(expr)
        assert result, f"the dashboard's {expr!r} has no series"
        for series in result:
            missing = {label for label in labels_printed(target["legendFormat"]) if not series["metric"].get(label)}
            assert not missing, f"{expr!r}: its legend prints {missing}, absent from {series['metric']}"


def check_the_series_carry_the_label_values_the_rules_select(scraped: RunningPrometheus) -> None:
    codes = {r["metric"]["code"] for r in scraped.query('fleet_rpc_requests_total{job="platform-public-api"}')}
    assert {"ok", "unavailable"} <= codes
    staff = scraped.query('fleet_rpc_requests_total{job="platform-admin-api", code="unauthenticated"}')
    assert staff and staff[0]["metric"]["service"] == "fundament.fleet.v1.FleetService"
    assert scraped.query('fleet_inventory_clusters_failed_total{reason="forbidden"}')
    assert scraped.query(f"fleet_inventory_interval_seconds == {INVENTORY_INTERVAL_SECONDS}")
    assert scraped.query(f"fleet_reconcile_interval_seconds == {RECONCILE_INTERVAL_SECONDS}")
    kinds = {r["metric"]["kind"] for r in scraped.query("fleet_reconcile_open_findings")}
    assert kinds, "reconcile exports its open findings per kind"


def test_a_real_prometheus_scrapes_every_deployable_and_finds_what_rules_and_dashboard_use(
    scraped: RunningPrometheus,
) -> None:
    """One system start for every check (each is a function above, so a failure names what broke)."""
    check_every_deployable_is_scraped_under_its_name(scraped)
    check_each_worker_exports_only_its_own_modes_series(scraped)
    check_the_series_carry_the_label_values_the_rules_select(scraped)
    check_every_rule_evaluates_over_real_series_with_the_labels_it_prints(scraped)
    check_prometheus_evaluates_the_loaded_rules_without_errors(scraped)
    check_every_dashboard_query_has_series_with_its_legend_labels(scraped)
