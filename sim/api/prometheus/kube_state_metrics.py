"""The kube-state-metrics series of one simulated shoot, as its Prometheus holds them.

Rendered from the same records as the shoot's API server (`sim/world/`), as the shoot's Prometheus
holds them at one time (`history.py`), so both sources of the collector see one world. The metric
and label names are kube-state-metrics' own (v2):

- `kube_node_info{node, provider_id, kubelet_version, internal_ip}` 1;
- `kube_node_labels{node, label_<name>...}` 1, a `label_*` for each allow-listed node label;
- `kube_node_status_condition{node, condition, status}`: conditions Ready, MemoryPressure,
  DiskPressure, PIDPressure, each with status true, false and unknown, 1 for the one that holds;
- `kube_node_status_allocatable{node, resource, unit}`: cpu (core), memory (byte), pods
  (integer), ephemeral_storage (byte);
- `kube_pod_status_phase{namespace, pod, uid, phase}`: phases Pending, Running, Succeeded,
  Failed, Unknown, 1 for the pod's;
- `kube_namespace_labels{namespace, label_<name>...}` 1, a `label_*` for each allow-listed label.

kube-state-metrics exports an object's Kubernetes labels only when `--metric-labels-allowlist`
names them, as `label_` plus the name with each character outside `[a-zA-Z0-9_]` turned into `_`
(`worker.gardener.cloud/pool` -> `label_worker_gardener_cloud_pool`). The simulator's stack
allow-lists `nodes=[worker.gardener.cloud/pool]` and
`namespaces=[fundament.io/namespace-id,fundament.io/project-id]`; `labels_exported=False` for a shoot
plays a stack without that allow-list (the `kube_*_labels` series then carry no `label_*` at all).
Every series also carries the scrape's `job="kube-state-metrics"` and `instance`.

That is the `fuller` stack: a landscape that scrapes a kube-state-metrics of its own watching every
namespace. The default stack is a stock Gardener shoot Prometheus (`gardener_ksm.py`); `shoot_series`
serves the stack a state was captured with, `exposition_series` the same without the labels the
scrape adds (what a kube-state-metrics `/metrics` page shows).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from common.labels import NAMESPACE_ID_LABEL, POOL_LABEL, exported_label
from sim.api.objects.core import node_ip, provider_id, ready_status
from sim.api.prometheus import gardener_ksm
from sim.api.prometheus.evaluation import Sample
from sim.api.prometheus.history import ScrapedState
from sim.api.prometheus.monitoring import GARDENER
from sim.api.prometheus.promql import NAME_LABEL, Labels
from sim.world import derive
from sim.world.records import NamespaceRecord, NodeRecord, PodRecord
from sim.world.shoots import ShootState

PROJECT_ID_LABEL = "fundament.io/project-id"
TARGET = {"job": "kube-state-metrics", "instance": "100.64.0.10:8080"}
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


def _series(name: str, labels: Labels, value: float) -> Sample:
    return ({NAME_LABEL: name, **labels}, value)


def _nodes(shoot: ShootState, nodes: Iterable[NodeRecord], exported: bool) -> Iterator[Sample]:
    for node in nodes:
        base = {"node": node.name}
        yield _series(
            "kube_node_info",
            {
                **base,
                "provider_id": provider_id(shoot, node),
                "kubelet_version": f"v{shoot.kubernetes_version}",
                "internal_ip": node_ip(shoot, node.name),
            },
            1,
        )
        labels = {exported_label(POOL_LABEL): node.worker} if exported else {}
        yield _series("kube_node_labels", {**base, **labels}, 1)
        ready = ready_status(node).lower()
        for condition in CONDITIONS:
            status = ready if condition == "Ready" else "false"
            for candidate in ("true", "false", "unknown"):
                yield _series(
                    "kube_node_status_condition",
                    {**base, "condition": condition, "status": candidate},
                    1 if candidate == status else 0,
                )
        millicores, memory_bytes = derive.allocatable(node.machine_type, node.cores, node.memory_gib)
        for resource, unit, value in (
            ("cpu", "core", millicores / 1000),
            ("memory", "byte", float(memory_bytes)),
            ("pods", "integer", float(node.max_pods)),
            ("ephemeral_storage", "byte", 49243029417.0),
        ):
            yield _series("kube_node_status_allocatable", {**base, "resource": resource, "unit": unit}, value)


def _pods(shoot: ShootState, pods: Iterable[PodRecord]) -> Iterator[Sample]:
    for pod in pods:
        base = {
            "namespace": pod.namespace,
            "pod": pod.name,
            "uid": derive.stable_uuid_text(shoot.uid, "pod", pod.namespace, pod.name),
        }
        for phase in POD_PHASES:
            yield _series("kube_pod_status_phase", {**base, "phase": phase}, 1 if phase == pod.phase else 0)


def _namespaces(namespaces: Iterable[NamespaceRecord], exported: bool) -> Iterator[Sample]:
    for namespace in namespaces:
        labels = {"namespace": namespace.name}
        if exported and namespace.namespace_id is not None:
            labels[exported_label(NAMESPACE_ID_LABEL)] = namespace.namespace_id
        if exported and namespace.project_id is not None:
            labels[exported_label(PROJECT_ID_LABEL)] = namespace.project_id
        yield _series("kube_namespace_labels", labels, 1)


_FAMILY_OF = {
    "kube_node_info": "node",
    "kube_node_labels": "node",
    "kube_node_status_condition": "node",
    "kube_node_status_allocatable": "node",
    "kube_pod_status_phase": "pod",
    "kube_namespace_labels": "namespace",
}


def exposition_series(shoot: ShootState, state: ScrapedState, *, name: str | None) -> Iterator[Sample]:
    """The series of one metric name (None: all of them) the shoot's kube-state-metrics exposes in `state`,
    without the labels the scrape adds."""
    if state.stack == GARDENER:
        yield from gardener_ksm.series(shoot, state.nodes, state.pods, name)
        return

    def family(which: str) -> Iterator[Sample]:
        if which == "node":
            return _nodes(shoot, state.nodes, state.labels_exported)
        if which == "pod":
            return _pods(shoot, state.pods)
        return _namespaces(state.namespaces, state.labels_exported)

    if name is None:
        for which in ("node", "pod", "namespace"):
            yield from family(which)
        return
    named = _FAMILY_OF.get(name)
    if named is None:
        return
    for sample in family(named):
        if sample[0][NAME_LABEL] == name:
            yield sample


def shoot_series(shoot: ShootState, state: ScrapedState, *, name: str | None) -> Iterator[Sample]:
    """The series of one metric name (None: all of them) the shoot's Prometheus holds in `state`."""
    target = gardener_ksm.TARGET if state.stack == GARDENER else TARGET
    for labels, value in exposition_series(shoot, state, name=name):
        yield ({**labels, **target}, value)
