"""Each simulated shoot's monitoring: the `<shoot>.monitoring` secret in the garden and what its Prometheus exports.

Gardener publishes each shoot's Prometheus on an ingress of its own and describes it in a secret in
the shoot's garden project namespace, named `<shoot>.monitoring`, with the annotations
`prometheus-url` and `plutono-url` and the data keys `username` and `password` (basic auth, the
same for both). fleet-sim serves that Prometheus under `/prometheus/<project>--<name>/` on its one
port (or, where a test set one, the secret names another address: a real Prometheus scraping the
shoot's kube-state-metrics exposition). The password derives from the shoot's uid and a generation
that `rotate` moves on (a credential rotation: the old password then gets 401).

What each Prometheus holds is its stack's (`stack`): `gardener`, the default, is a stock Gardener
shoot Prometheus (`gardener_ksm.py`: node series and kube-system pods only); `fuller` plays a
landscape that scrapes a kube-state-metrics of its own watching every namespace
(`kube_state_metrics.py`), where `labels_exported` plays its label allow-list set (True, the default)
or not. `history` is what each Prometheus has scraped (`history.py`). `external_labels` are the
labels a Gardener shoot Prometheus's configuration carries (`/api/v1/status/config`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

from sim.api.objects.meta import object_meta, owner_reference
from sim.api.prometheus.history import ScrapeHistory
from sim.world import derive
from sim.world.shoots import ShootState

Json = dict[str, object]
USERNAME = "admin"
GARDENER = "gardener"
FULLER = "fuller"
STACKS = (GARDENER, FULLER)
"""The monitoring stacks fleet-sim plays: a stock Gardener shoot Prometheus, or one with a fuller kube-state-metrics."""


def secret_name(shoot_name: str) -> str:
    return f"{shoot_name}.monitoring"


@dataclass
class MonitoringState:
    """Per shoot key: the credentials' generation, whether labels are exported, and what was scraped."""

    generations: dict[str, int] = field(default_factory=dict)
    labels_exported: dict[str, bool] = field(default_factory=dict)
    default_labels_exported: bool = True
    stacks: dict[str, str] = field(default_factory=dict)
    default_stack: str = GARDENER
    started_stack: str = GARDENER
    """The default stack the simulator started with (`--monitoring-stack`), which `reset` restores."""
    urls: dict[str, str] = field(default_factory=dict)
    """Per shoot key, a `prometheus-url` of a test's own (a real Prometheus); else fleet-sim's."""
    history: ScrapeHistory = field(default_factory=ScrapeHistory)

    def password(self, shoot: ShootState) -> str:
        generation = self.generations.get(shoot.key, 1)
        return derive.stable_uuid_text(shoot.uid, "monitoring", str(generation)).replace("-", "")

    def rotate(self, key: str) -> None:
        self.generations[key] = self.generations.get(key, 1) + 1

    def exports_labels(self, key: str) -> bool:
        return self.labels_exported.get(key, self.default_labels_exported)

    def start_with(self, stack: str) -> None:
        self.set_stack(stack)
        self.started_stack = stack

    def stack(self, key: str) -> str:
        return self.stacks.get(key, self.default_stack)

    def set_stack(self, stack: str, key: str | None = None) -> None:
        if stack not in STACKS:
            raise ValueError(f"monitoring stack {stack!r}: expected one of {STACKS}")
        if key is None:
            self.default_stack = stack
        else:
            self.stacks[key] = stack

    def reset(self) -> None:
        self.generations.clear()
        self.labels_exported.clear()
        self.default_labels_exported = True
        self.stacks.clear()
        self.default_stack = self.started_stack
        self.urls.clear()
        self.history.reset()


def external_labels(shoot: ShootState) -> dict[str, str]:
    """The `global.external_labels` Gardener gives a shoot's Prometheus (gardenlet's `DefaultPrometheus`)."""
    return {
        "cluster": shoot.technical_id,
        "project": shoot.project,
        "shoot_name": shoot.name,
        "name": shoot.name,
        "seed_api": "api.local-seed.fleet-sim.local",
        "seed_region": "local",
        "seed_provider": "local",
        "shoot_infra": "local",
        "ignoreAlerts": "false",
    }


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
        )
        # Gardener's one controller reference, to the Shoot (whose uid the collector checks).
        | {"ownerReferences": [owner_reference("core.gardener.cloud/v1beta1", "Shoot", shoot.name, shoot.uid)]},
        "type": "Opaque",
        "data": {"username": b64(USERNAME), "password": b64(password)},
    }
