"""The alert rules (deploy/monitoring/rules.yaml) checked and unit-tested by a real `promtool`, and held to
the rest of the repository: every alert fires and clears in deploy/monitoring/tests.yaml, over the series
the processes really export (tests/deploy/promtool_input.py), has its runbook in docs/operations.md at the
address its runbook_url names, and the dashboard is well-formed and plots no age of a timestamp never set.
The copy of the rules a real Prometheus runs on a faster clock (tests/deploy/test_alerts_fire.py) differs
from them in its durations only.

`scripts/install-prometheus` (run by `make tools`) installs Debian's prometheus package, which brings
promtool; without it the promtool tests skip and say why.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.promtool_input import (
    INSTANCE,
    Series,
    exported,
    unknown_series,
    with_exported_series,
)
from tests.deploy.scaled_rules import divided, durations, scaled_rules, without_durations
from tests.fixtures.deployables import INVENTORY, JOBS, PUBLIC, RECONCILE, make_traffic, running_deployables
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest
from tests.fixtures.tools import needs, tool_path
from tests.fixtures.waiting import eventually

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "deploy" / "monitoring"
VALUES = ROOT / "deploy" / "fleet-inventory" / "values.yaml"
needs_promtool = needs("promtool")


def alerts() -> list[dict[str, Any]]:
    groups = yaml.safe_load((MONITORING / "rules.yaml").read_text())["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def unit_tests() -> dict[str, Any]:
    tests: dict[str, Any] = yaml.safe_load((MONITORING / "tests.yaml").read_text())
    return tests


def promtool(*args: str, cwd: Path = MONITORING) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool_path("promtool"), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


@needs_promtool
def test_promtool_checks_the_rules() -> None:
    result = promtool("check", "rules", "rules.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in result.stdout


@needs_promtool
def test_promtool_unit_tests_pass_as_written() -> None:
    result = promtool("test", "rules", "tests.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
def test_the_unit_tests_fail_when_a_rule_changes(tmp_path: Path) -> None:
    """The unit tests can fail: with one threshold changed, promtool names the alert that no longer fires."""
    rules = (MONITORING / "rules.yaml").read_text()
    changed = rules.replace("> 3 * fleet_reconcile_interval_seconds", "> 30 * fleet_reconcile_interval_seconds")
    assert changed != rules
    (tmp_path / "rules.yaml").write_text(changed)
    shutil.copy(MONITORING / "tests.yaml", tmp_path / "tests.yaml")
    result = promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode != 0
    assert "FleetReconcileLate" in result.stdout + result.stderr


# --- the unit tests over what the processes really export --------------------------------------------------


def scrape(sim: SimUnderTest, database: TestDatabase, tmp_path: Path) -> dict[str, list[Series]]:
    """Every series the four processes export once they have done their work and served calls of every
    outcome (a shoot refuses the collector, so failures carry their reason), by job."""
    refusing = sim.serving_shoot()
    sim.control.fault(refusing.key, "forbidden", resource=None, seconds=0.0)
    settings = {
        PUBLIC: {"CACHE_TTL_SECONDS": "1", "READ_TIMEOUT_SECONDS": "0.5"},
        INVENTORY: {"INVENTORY_INTERVAL_SECONDS": "5", "INVENTORY_TIMEOUT_SECONDS": "20"},
        RECONCILE: {"RECONCILE_INTERVAL_SECONDS": "5"},
    }
    with ExitStack() as stack:
        stack.callback(sim.control.clear_faults)
        running = stack.enter_context(running_deployables(sim, database, tmp_path, settings))
        for job in JOBS:
            running.wait_serving(job)
        make_traffic(running, database)

        def every_scripted_series_exported() -> dict[str, list[Series]] | None:
            scraped = {job: exported(job, running.metrics(job)) for job in JOBS}
            return None if unknown_series(unit_tests(), scraped) else scraped

        try:
            return eventually(every_scripted_series_exported, "every series tests.yaml names exported", within=120)
        except AssertionError as e:
            scraped = {job: exported(job, running.metrics(job)) for job in JOBS}
            raise AssertionError(f"{e}; never exported: {unknown_series(unit_tests(), scraped)}") from e


def promtool_over(scraped: dict[str, list[Series]], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    fed = with_exported_series(unit_tests(), scraped, MONITORING / "rules.yaml")
    (tmp_path / "fed.yaml").write_text(yaml.safe_dump(fed, sort_keys=False))
    return promtool("test", "rules", "fed.yaml", cwd=tmp_path)


def check_each_worker_exports_only_its_own_modes_series(scraped: dict[str, list[Series]]) -> None:
    modes = ((INVENTORY, "fleet_inventory_", "fleet_reconcile_"), (RECONCILE, "fleet_reconcile_", "fleet_inventory_"))
    for job, own, other in modes:
        names = {s.name for s in scraped[job]}
        assert any(n.startswith(own) for n in names), f"{job} exports none of its own series"
        assert not [n for n in names if n.startswith(other)], f"{job} exports the other mode's series"


def check_the_unit_tests_pass_beside_every_exported_series(scraped: dict[str, list[Series]], tmp_path: Path) -> None:
    result = promtool_over(scraped, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def check_another_modes_gauges_at_zero_would_fail_them(scraped: dict[str, list[Series]], tmp_path: Path) -> None:
    """The reconcile worker as it once was: exporting the inventory's gauges, never set, as 0."""
    target = {"namespace": "fleet", "job": RECONCILE, "instance": INSTANCE[RECONCILE]}
    zeros = [
        Series(name, tuple(sorted(target.items())), 0.0)
        for name in ("fleet_inventory_last_round_timestamp_seconds", "fleet_inventory_interval_seconds")
    ]
    result = promtool_over({**scraped, RECONCILE: scraped[RECONCILE] + zeros}, tmp_path)
    assert result.returncode != 0
    assert "FleetInventoryLoopLate" in result.stdout + result.stderr


@needs_promtool
@pytest.mark.slow
def test_the_unit_tests_pass_over_the_series_the_processes_really_export(
    sim: SimUnderTest, sim_database: TestDatabase, tmp_path: Path
) -> None:
    """One system start for every check (each is a function above, so a failure names what broke)."""
    scraped = scrape(sim, sim_database, tmp_path)
    check_each_worker_exports_only_its_own_modes_series(scraped)
    check_the_unit_tests_pass_beside_every_exported_series(scraped, tmp_path)
    check_another_modes_gauges_at_zero_would_fail_them(scraped, tmp_path)


def test_a_series_no_process_exports_is_refused() -> None:
    text = (
        "# TYPE fleet_reconcile_interval_seconds gauge\nfleet_reconcile_interval_seconds 20.0\n"
        '# TYPE fleet_reconcile_open_findings gauge\nfleet_reconcile_open_findings{kind="orphan_shoot"} 2.0\n'
    )
    scraped = {RECONCILE: exported(RECONCILE, text)}

    def case(*series: str) -> dict[str, Any]:
        return {"tests": [{"input_series": [{"series": s, "values": "1"} for s in series]}]}

    target = 'namespace="fleet", job="cluster-worker-reconcile", instance="r:8097"'
    assert not unknown_series(case(f"fleet_reconcile_interval_seconds{{{target}}}"), scraped)
    assert not unknown_series(case(f'fleet_reconcile_open_findings{{{target}, kind="missing_shoot"}}'), scraped)
    assert not unknown_series(case(f"up{{{target}}}"), scraped), "up is Prometheus's own"
    for wrong in (
        f"fleet_reconcile_interval{{{target}}}",  # a name nobody exports
        f'fleet_reconcile_open_findings{{{target}, reason="x"}}',  # other labels
        f"fleet_reconcile_interval_seconds{{{target.replace('reconcile', 'inventory')}}}",  # another job
    ):
        assert unknown_series(case(wrong), scraped), wrong


# --- the unit tests, the runbooks, the dashboard ------------------------------------------------------------


def test_every_alert_fires_and_clears_in_the_unit_tests() -> None:
    fired: dict[str, list[int]] = {}
    quiet: dict[str, list[int]] = {}
    for case in unit_tests()["tests"]:
        for check in case["alert_rule_test"]:
            minutes = int(str(check["eval_time"]).removesuffix("m"))
            (fired if check["exp_alerts"] else quiet).setdefault(check["alertname"], []).append(minutes)
    for rule in alerts():
        name = rule["alert"]
        assert name in fired, f"{name} never fires in tests.yaml"
        # Cleared: quiet again at a time after it fired.
        assert any(q > min(fired[name]) for q in quiet.get(name, [])), f"{name} never clears in tests.yaml"


def runbook_base_url() -> str:
    base: str = yaml.safe_load(VALUES.read_text())["monitoring"]["runbookBaseUrl"]
    return base


def test_every_alert_has_a_runbook_section_at_its_runbook_url() -> None:
    operations = (ROOT / "docs" / "operations.md").read_text()
    anchors = {
        re.sub(r"[^a-z0-9-]", "", line.lstrip("#").strip().lower().replace(" ", "-"))
        for line in operations.splitlines()
        if line.startswith("#")
    }
    base = runbook_base_url()
    assert base.startswith("https://") and base.endswith("/operations.md")
    for rule in alerts():
        # The chart's default address, which its PrometheusRule replaces with monitoring.runbookBaseUrl.
        assert rule["annotations"]["runbook_url"] == f"{base}#{rule['alert'].lower()}"
        assert "runbook" not in rule["annotations"]
        assert rule["alert"].lower() in anchors, f"docs/operations.md has no '### {rule['alert']}' section"
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}


def dashboard() -> dict[str, Any]:
    board: dict[str, Any] = json.loads((MONITORING / "dashboard.json").read_text())
    return board


def test_the_dashboard_is_grafana_json_with_a_query_per_panel() -> None:
    panels = [p for p in dashboard()["panels"] if p["type"] != "row"]
    assert panels
    ids = [p["id"] for p in dashboard()["panels"]]
    assert len(ids) == len(set(ids))
    for panel in panels:
        assert panel["targets"], panel["title"]
        assert all(t["expr"] for t in panel["targets"])
    assert {v["name"] for v in dashboard()["templating"]["list"]} == {"datasource", "namespace"}


@needs_promtool
def test_the_dashboard_plots_no_age_of_a_timestamp_never_set(tmp_path: Path) -> None:
    """A worker exports its last round's or pass's time as 0 until it has one: an age panel plots nothing
    then, rather than 56 years."""
    ages = [
        t["expr"].replace("$namespace", ".*")
        for p in dashboard()["panels"]
        if p["type"] != "row"
        for t in p["targets"]
        if t["expr"].startswith("time() -")
    ]
    assert len(ages) == 2, ages
    timestamps = [re.search(r"(fleet_\w+_timestamp_seconds)", expr).group(1) for expr in ages]  # type: ignore[union-attr]
    tests = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": f'{name}{{namespace="fleet", job="j", instance="i"}}', "values": "0x10"}
                    for name in timestamps
                ],
                "promql_expr_test": [{"expr": expr, "eval_time": "5m", "exp_samples": []} for expr in ages],
            }
        ],
    }
    (tmp_path / "ages.yaml").write_text(yaml.safe_dump(tests))
    result = promtool("test", "rules", "ages.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


# --- the faster copy a real Prometheus runs -------------------------------------------------------------------


def test_the_scaled_copy_of_the_rules_differs_only_in_its_durations() -> None:
    original = yaml.safe_load((MONITORING / "rules.yaml").read_text())
    factor = 20
    copy = scaled_rules(original, factor)
    assert [g["name"] for g in copy["groups"]] == [g["name"] for g in original["groups"]]
    pairs = [
        (rule, scaled)
        for group, scaled_group in zip(original["groups"], copy["groups"], strict=True)
        for rule, scaled in zip(group["rules"], scaled_group["rules"], strict=True)
    ]
    assert len(pairs) == len(alerts())
    windows = 0
    for rule, scaled in pairs:
        rest = {k: v for k, v in rule.items() if k not in ("for", "expr")}
        assert {k: v for k, v in scaled.items() if k not in ("for", "expr")} == rest
        assert ("for" in scaled) == ("for" in rule)
        if "for" in rule:
            assert scaled["for"] == divided(rule["for"], factor)
        assert without_durations(scaled["expr"]) == without_durations(rule["expr"])
        assert durations(scaled["expr"]) == [divided(d, factor) for d in durations(rule["expr"])]
        windows += len(durations(rule["expr"]))
    assert windows >= 6, "every range window and offset of the rules is found"
    assert copy != original
    assert original == yaml.safe_load((MONITORING / "rules.yaml").read_text()), "the original is left alone"
