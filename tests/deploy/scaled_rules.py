"""deploy/monitoring/rules.yaml on a faster clock, for a real Prometheus that must see each alert fire
within minutes: every time constant of the rules divided by one factor (each rule's `for`, and the range
windows and offsets of its expression), nothing else changed. The processes it watches run with their
own intervals divided likewise (tests/deploy/test_alerts_fire.py), so every rule keeps its meaning.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

RULES = Path(__file__).resolve().parents[2] / "deploy" / "monitoring" / "rules.yaml"

# A range window (`[30m]`) or an offset (`offset 30m`) in PromQL: the only durations the rules hold.
DURATION = re.compile(r"(?P<before>\[|\boffset\s+)(?P<amount>\d+)(?P<unit>[smhd])\b")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def seconds(duration: str) -> int:
    """A Prometheus duration of one unit (`5m`) in seconds."""
    match = re.fullmatch(r"(\d+)([smhd])", duration)
    if match is None:
        raise ValueError(f"{duration!r}: not a duration of one unit")
    return int(match.group(1)) * UNIT_SECONDS[match.group(2)]


def divided(duration: str, factor: int) -> str:
    """`duration` divided by `factor`, in whole seconds (a duration that does not divide is refused)."""
    total = seconds(duration)
    if total % factor:
        raise ValueError(f"{duration} is not a whole number of seconds when divided by {factor}")
    return f"{total // factor}s"


def durations(expr: str) -> list[str]:
    """The range windows and offsets of a PromQL expression, in order."""
    return [m["amount"] + m["unit"] for m in DURATION.finditer(expr)]


def without_durations(expr: str) -> str:
    """The expression with each range window and offset replaced by a placeholder."""
    return DURATION.sub(lambda m: m["before"] + "<duration>", expr)


def scaled_rules(rules: dict[str, Any], factor: int) -> dict[str, Any]:
    """A copy of a rules file (as YAML loads it) with every `for`, range window and offset divided by `factor`."""
    faster = copy.deepcopy(rules)
    for group in faster["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = divided(rule["for"], factor)
            rule["expr"] = DURATION.sub(lambda m: m["before"] + divided(m["amount"] + m["unit"], factor), rule["expr"])
    return faster


def write_scaled_rules(path: Path, factor: int) -> Path:
    """deploy/monitoring/rules.yaml, scaled, written to `path`."""
    path.write_text(yaml.safe_dump(scaled_rules(yaml.safe_load(RULES.read_text()), factor), sort_keys=False))
    return path
