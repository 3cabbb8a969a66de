"""The promtool unit tests of the alert rules, fed the series the processes really export.

deploy/monitoring/tests.yaml tells each alert's story on the series it names. Those names are held to
what the four processes' /metrics served (`unknown_series`: a series no process of its job exports, or
exports with other labels, is a mistake of the tests), and every other series the processes served is
added to every test case as a constant (`with_exported_series`). So a process that exports a series it
should not (the reconcile worker exporting the inventory's gauges as 0, as it once did) fires alerts the
tests do not expect, and promtool fails.

Each scraped series gets the labels Prometheus adds to a target's series: `namespace`, `job` (the
deployable's name) and `instance`, one fixed instance per job, the one tests.yaml uses for it.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.fixtures.deployables import INVENTORY, PUBLIC, RECONCILE, STAFF

NAMESPACE = "fleet"
INSTANCE = {PUBLIC: "p:8080", STAFF: "a:8081", INVENTORY: "w:8097", RECONCILE: "r:8097"}
TARGET_LABELS = frozenset({"namespace", "job", "instance"})
# Series Prometheus makes for each target itself: no process exports them.
SYNTHETIC = frozenset({"up"})

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Series:
    name: str
    labels: Labels
    """Sorted (name, value) pairs."""
    value: float = 0.0

    @property
    def key(self) -> tuple[str, Labels]:
        return self.name, self.labels

    @property
    def label_names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.labels)

    def selector(self) -> str:
        """The series as promtool's input_series names it."""
        inner = ", ".join(f'{name}="{_escape(value)}"' for name, value in self.labels)
        return f"{self.name}{{{inner}}}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: dict[str, str]) -> Labels:
    return tuple(sorted(pairs.items()))


def exported(job: str, text: str) -> list[Series]:
    """The series of one scrape of `job`'s /metrics, with the target labels Prometheus adds, and its `up`."""
    target = {"namespace": NAMESPACE, "job": job, "instance": INSTANCE[job]}
    series = [Series("up", _labels(target), 1.0)]
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            series.append(Series(sample.name, _labels({**sample.labels, **target}), sample.value))
    return series


_SELECTOR = re.compile(r"(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)\{(?P<labels>.*)\}")
_LABEL = re.compile(r'\s*(?P<name>[a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"(?P<value>(?:[^"\\]|\\.)*)"\s*,?')


def parse_selector(text: str) -> Series:
    """An input series of a promtool test (`name{label="value", ...}`)."""
    match = _SELECTOR.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r}: not a series with labels")
    labels = {m["name"]: m["value"] for m in _LABEL.finditer(match["labels"])}
    return Series(match["name"], _labels(labels))


def input_series(tests: dict[str, Any]) -> list[Series]:
    return [parse_selector(given["series"]) for case in tests["tests"] for given in case["input_series"]]


def unknown_series(tests: dict[str, Any], scraped: dict[str, list[Series]]) -> list[str]:
    """The input series of `tests` that no process of their job exports with the same label names."""
    unknown: list[str] = []
    for series in input_series(tests):
        if series.name in SYNTHETIC:
            continue
        job = dict(series.labels).get("job", "")
        own = series.label_names - TARGET_LABELS
        if not any(s.name == series.name and s.label_names - TARGET_LABELS == own for s in scraped.get(job, [])):
            unknown.append(f"{series.selector()} (job {job or '?'} exports no {series.name} with labels {sorted(own)})")
    return unknown


def _constant(value: float, samples: int) -> str:
    if math.isnan(value):
        text = "NaN"
    elif math.isinf(value):
        text = "Inf" if value > 0 else "-Inf"
    else:
        text = repr(value)
    return f"{text}x{samples}"


def _minutes(duration: str) -> int:
    match = re.fullmatch(r"(\d+)m", str(duration))
    if match is None:
        raise ValueError(f"{duration!r}: tests.yaml counts its times in whole minutes")
    return int(match.group(1))


def with_exported_series(tests: dict[str, Any], scraped: dict[str, list[Series]], rules: Path) -> dict[str, Any]:
    """`tests` evaluating `rules`, each case also given every scraped series it does not script, as a constant."""
    fed = copy.deepcopy(tests)
    fed["rule_files"] = [str(rules)]
    background = [series for job in sorted(scraped) for series in scraped[job]]
    for case in fed["tests"]:
        assert case["interval"] == "1m", "a constant's samples are counted in minutes"
        samples = max(_minutes(check["eval_time"]) for check in case["alert_rule_test"]) + 2
        scripted = {parse_selector(given["series"]).key for given in case["input_series"]}
        case["input_series"] = case["input_series"] + [
            {"series": series.selector(), "values": _constant(series.value, samples)}
            for series in background
            if series.key not in scripted
        ]
    return fed
