"""Each simulated shoot's monitoring: the `<shoot>.monitoring` secret in the garden and what its Prometheus exports.

Gardener publishes each shoot's Prometheus on an ingress of its own and describes it in a secret in
the shoot's garden project namespace, named `<shoot>.monitoring`, with the annotations
`prometheus-url` and `plutono-url` and the data keys `username` and `password` (basic auth, the
same for both). fleet-sim serves that Prometheus under `/prometheus/<project>--<name>/` on its one
port. The password derives from the shoot's uid and a generation that `rotate` moves on (a
credential rotation: the old password then gets 401); `labels_exported` plays a kube-state-metrics
whose label allow-list is (True, the default) or is not set (see
`sim/api/prometheus/kube_state_metrics.py`); `history` is what each Prometheus has scraped (see
`sim/api/prometheus/history.py`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

from sim.api.objects.meta import object_meta
from sim.api.prometheus.history import ScrapeHistory
from sim.world import derive
from sim.world.shoots import ShootState

Json = dict[str, object]
USERNAME = "admin"


def secret_name(shoot_name: str) -> str:
    return f"{shoot_name}.monitoring"


@dataclass
class MonitoringState:
    """Per shoot key: the credentials' generation, whether labels are exported, and what was scraped."""

    generations: dict[str, int] = field(default_factory=dict)
    labels_exported: dict[str, bool] = field(default_factory=dict)
    default_labels_exported: bool = True
    history: ScrapeHistory = field(default_factory=ScrapeHistory)

    def password(self, shoot: ShootState) -> str:
        generation = self.generations.get(shoot.key, 1)
        return derive.stable_uuid_text(shoot.uid, "monitoring", str(generation)).replace("-", "")

    def rotate(self, key: str) -> None:
        self.generations[key] = self.generations.get(key, 1) + 1

    def exports_labels(self, key: str) -> bool:
        return self.labels_exported.get(key, self.default_labels_exported)

    def reset(self) -> None:
        self.generations.clear()
        self.labels_exported.clear()
        self.default_labels_exported = True
        self.history.reset()


def render_secret(shoot: ShootState, *, prometheus_url: str, plutono_url: str, password: str) -> Json:
    """The shoot's monitoring secret as the garden serves it."""

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    return {
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": object_meta(
            name=secret_name(shoot.name),
            namespace=shoot.namespace,
            uid=derive.stable_uuid_text(shoot.uid, "monitoring-secret"),
            rv=shoot.rv,
            created=shoot.created,
            labels={"gardener.cloud/role": "monitoring"},
            annotations={"prometheus-url": prometheus_url, "plutono-url": plutono_url, "url": plutono_url},
        ),
        "type": "Opaque",
        "data": {"username": b64(USERNAME), "password": b64(password)},
    }
