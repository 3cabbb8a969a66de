"""A shoot's kube-state-metrics `/metrics` page: what a real Prometheus scrapes to hold the series fleet-sim serves.

`GET /kube-state-metrics/<project>--<name>/metrics` (no authentication: kube-state-metrics is scraped
inside the seed) answers the Prometheus text format (0.0.4) of the shoot's series now, for its
monitoring stack (`gardener` or `fuller`, monitoring.py), without the labels the scrape adds (`job`,
`instance`, `type`: the scraping Prometheus's configuration sets those). Tests point a real
Prometheus at it to compare it with fleet-sim's PromQL, and to run the collector against it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from sim.api.machinery.replies import Reply
from sim.api.prometheus.evaluation import Sample, format_value
from sim.api.prometheus.gardener_ksm import HELP
from sim.api.prometheus.history import capture
from sim.api.prometheus.kube_state_metrics import exposition_series
from sim.api.prometheus.promql import NAME_LABEL
from sim.api.simulator import Simulator

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _value(value: float) -> str:
    if math.isnan(value) or math.isinf(value):
        return format_value(value)
    return repr(value)  # the shortest text that reads back as the same float


def exposition(samples: list[Sample]) -> Iterator[bytes]:
    """The text format of the samples, grouped by metric name (each family once, with HELP and TYPE)."""
    families: dict[str, list[Sample]] = {}
    for sample in samples:
        families.setdefault(sample[0][NAME_LABEL], []).append(sample)
    for name, members in families.items():
        lines = [f"# HELP {name} {HELP.get(name, name)}", f"# TYPE {name} gauge"]
        for labels, value in members:
            pairs = ",".join(f'{k}="{_escaped(v)}"' for k, v in labels.items() if k != NAME_LABEL)
            lines.append(f"{name}{{{pairs}}} {_value(value)}" if pairs else f"{name} {_value(value)}")
        yield ("\n".join(lines) + "\n").encode()


def handle_metrics(sim: Simulator, key: str) -> Reply:
    """The shoot's kube-state-metrics exposition now (404 for a shoot the garden does not hold)."""
    shoot = sim.world.shoot(key)
    if shoot is None:
        return Reply(404, "text/plain; charset=utf-8", [b"404 page not found\n"])
    state = capture(
        sim.world.contents(key),
        labels_exported=sim.monitoring.exports_labels(key),
        stack=sim.monitoring.stack(key),
        since=sim.clock.time(),
    )
    return Reply(200, CONTENT_TYPE, list(exposition(list(exposition_series(shoot, state, name=None)))))
