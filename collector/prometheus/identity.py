"""Whose Prometheus answers: its external labels, read from its configuration, against the shoot read.

Gardener gives every shoot Prometheus the external labels `cluster` (the shoot's technical id, its
control-plane namespace) and `shoot_name` (gardenlet's `DefaultPrometheus`). They are not on query
results, only in the configuration (`GET /api/v1/status/config`, `global.external_labels`), so the
collector reads that once per monitoring target and refuses a Prometheus whose labels name another
shoot, or none: another cluster's numbers are never stored as this one's. Together with the owner
reference of the monitoring secret (target.py) this ties the numbers to the shoot they are read for.

Only the `global:` section of the configuration is parsed (a few lines; the scrape configurations
after it can be long), with PyYAML's safe loader.
"""

from __future__ import annotations

from collections.abc import Mapping

import yaml

from collector.kube.errors import BadResponse
from collector.prometheus.target import WrongPrometheus
from common.text import truncate

CLUSTER_LABEL = "cluster"
SHOOT_NAME_LABEL = "shoot_name"
# The global section holds a handful of settings and the external labels.
MAX_GLOBAL_CHARS = 64 << 10


def external_labels(answer: Mapping[str, object], what: str) -> dict[str, str]:
    """`global.external_labels` of a `/api/v1/status/config` answer. Raises BadResponse."""
    data = answer.get("data")
    text = data.get("yaml") if answer.get("status") == "success" and isinstance(data, Mapping) else None
    if not isinstance(text, str):
        raise BadResponse(f"{what}: the answer carries no data.yaml")
    section = _global_section(text)
    if len(section) > MAX_GLOBAL_CHARS:
        raise BadResponse(f"{what}: the global section is over {MAX_GLOBAL_CHARS} characters")
    try:
        parsed = yaml.safe_load(section) if section else None
    except yaml.YAMLError:
        raise BadResponse(f"{what}: the global section is not YAML") from None
    config = parsed.get("global") if isinstance(parsed, dict) else None
    labels = config.get("external_labels") if isinstance(config, dict) else None
    if not isinstance(labels, dict):
        return {}
    return {str(k): str(v) for k, v in labels.items() if isinstance(v, str | int)}


def _global_section(text: str) -> str:
    lines: list[str] = []
    inside = False
    for line in text.splitlines():
        top = bool(line) and not line[0].isspace() and not line.startswith("#")
        if top:
            if inside:
                break
            inside = line.rstrip() == "global:"
        if inside:
            lines.append(line)
            if sum(len(x) + 1 for x in lines) > MAX_GLOBAL_CHARS:
                break
    return "\n".join(lines)


def check_identity(labels: Mapping[str, str], *, shoot: str, name: str, technical_id: str, what: str) -> None:
    """Refuse a Prometheus whose external labels are not those of shoot `shoot` (named `name`, with
    `technical_id` when known). Raises WrongPrometheus."""
    expected = {SHOOT_NAME_LABEL: name}
    if technical_id:
        expected[CLUSTER_LABEL] = technical_id
    for label, value in expected.items():
        found = labels.get(label)
        if found != value:
            shown = "none" if found is None else repr(truncate(found, 80))
            raise WrongPrometheus(
                f"{what}: external label {label} is {shown}, not {value!r}; not the Prometheus of shoot {shoot}"
            )
