"""The alert rules (deploy/monitoring/rules.yaml) checked and unit-tested by a real `promtool`, and held to
the rest of the repository: every alert fires and clears in deploy/monitoring/tests.yaml, has its runbook
in docs/operations.md, and the dashboard is well-formed.

`scripts/install-prometheus` (run by `make tools`) installs Debian's prometheus package, which brings
promtool; without it the promtool tests skip and say why.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.fixtures.tools import needs, tool_path

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "deploy" / "monitoring"
needs_promtool = needs("promtool")


def alerts() -> list[dict[str, Any]]:
    groups = yaml.safe_load((MONITORING / "rules.yaml").read_text())["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


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
def test_promtool_unit_tests_pass() -> None:
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


def test_every_alert_fires_and_clears_in_the_unit_tests() -> None:
    tests = yaml.safe_load((MONITORING / "tests.yaml").read_text())["tests"]
    fired: dict[str, list[int]] = {}
    quiet: dict[str, list[int]] = {}
    for case in tests:
        for check in case["alert_rule_test"]:
            minutes = int(str(check["eval_time"]).removesuffix("m"))
            (fired if check["exp_alerts"] else quiet).setdefault(check["alertname"], []).append(minutes)
    for rule in alerts():
        name = rule["alert"]
        assert name in fired, f"{name} never fires in tests.yaml"
        # Cleared: quiet again at a time after it fired.
        assert any(q > min(fired[name]) for q in quiet.get(name, [])), f"{name} never clears in tests.yaml"


def test_every_alert_has_a_runbook_section() -> None:
    operations = (ROOT / "docs" / "operations.md").read_text()
    headings = {
        re.sub(r"[^a-z0-9-]", "", line.lstrip("#").strip().lower())
        for line in operations.splitlines()
        if line.startswith("### ")
    }
    for rule in alerts():
        runbook = rule["annotations"]["runbook"]
        assert runbook == f"docs/operations.md#{rule['alert'].lower()}"
        assert rule["alert"].lower() in headings, f"docs/operations.md has no '### {rule['alert']}' section"
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}


def test_the_dashboard_is_grafana_json_with_a_query_per_panel() -> None:
    dashboard = json.loads((MONITORING / "dashboard.json").read_text())
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert panels
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in panels:
        assert panel["targets"], panel["title"]
        assert all(t["expr"] for t in panel["targets"])
    assert {v["name"] for v in dashboard["templating"]["list"]} == {"datasource", "namespace"}
