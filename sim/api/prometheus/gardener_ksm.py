"""The kube-state-metrics series of a stock Gardener shoot Prometheus, rendered from a simulated shoot.

Gardener (v1.149) runs each shoot's kube-state-metrics (v2.19) in the seed with
`--resources=daemonsets,deployments,nodes,pods,statefulsets,replicasets`, `--namespaces=kube-system`,
`--metric-labels-allowlist=nodes=[*],pods=[origin]` and a metric allow-list. So its Prometheus holds
every node (nodes are cluster-scoped) and the pods of `kube-system` alone: no namespace, volume,
service, ingress or certificate series, and no pod of a tenant namespace. fleet-sim renders the
allow-listed node and pod families kube-state-metrics derives from the same objects the shoot's API
server serves (`sim/api/objects/core.py`), with kube-state-metrics' own names and labels:

- `kube_node_info{node, kernel_version, os_image, container_runtime_version, kubelet_version,
  kubeproxy_version="deprecated", provider_id, pod_cidr, system_uuid, internal_ip}` 1;
- `kube_node_labels{node, label_<every node label>}` 1 (`nodes=[*]`);
- `kube_node_created{node}`: the creation time in Unix seconds;
- `kube_node_spec_unschedulable{node}` 0;
- `kube_node_status_condition{node, condition, status}`: per condition of the node, status true,
  false and unknown, 1 for the one that holds;
- `kube_node_status_allocatable` and `kube_node_status_capacity{node, resource, unit}`: per resource
  of the node (`cpu`/`core`, `memory`, `ephemeral_storage`, `hugepages_*`/`byte`, `pods`/`integer`);
- for each pod of `kube-system`: `kube_pod_info{namespace, pod, uid, host_ip, pod_ip, node,
  created_by_kind, created_by_name, host_network}` 1, `kube_pod_labels{namespace, pod, uid}` 1 (no
  pod carries `origin`), `kube_pod_status_phase{namespace, pod, uid, phase}` (five phases, 1 for the
  pod's) and `kube_pod_status_ready{namespace, pod, uid, condition}` (true, false, unknown) once the
  pod has a Ready condition.

The deployment, daemonset, replicaset, statefulset, container and VPA families of the allow-list
are not played: nothing here asks for them. Labels with an empty value are left out, as Prometheus
drops them at ingestion. The scrape adds `job="kube-state-metrics"`, `instance="kube-state-metrics"`
and `type="shoot"` (Gardener's scrape config, `TARGET`), never the exposition itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from sim.api.objects.core import render_node, render_pod
from sim.api.prometheus.evaluation import Sample
from sim.api.prometheus.promql import NAME_LABEL, Labels
from sim.world.records import NodeRecord, PodRecord
from sim.world.shoots import ShootState

NAMESPACE = "kube-system"
"""The one namespace Gardener's shoot kube-state-metrics watches (`--namespaces=kube-system`)."""
TARGET = {"job": "kube-state-metrics", "instance": "kube-state-metrics", "type": "shoot"}
POD_PHASES = ("Pending", "Succeeded", "Failed", "Unknown", "Running")
NODE_FAMILIES = (
    "kube_node_info",
    "kube_node_labels",
    "kube_node_created",
    "kube_node_spec_unschedulable",
    "kube_node_status_condition",
    "kube_node_status_allocatable",
    "kube_node_status_capacity",
)
POD_FAMILIES = ("kube_pod_info", "kube_pod_labels", "kube_pod_status_phase", "kube_pod_status_ready")
HELP = {
    "kube_node_info": "Information about a cluster node.",
    "kube_node_labels": "Kubernetes labels converted to Prometheus labels.",
    "kube_node_created": "Unix creation timestamp",
    "kube_node_spec_unschedulable": "Whether a node can schedule new pods.",
    "kube_node_status_condition": "The condition of a cluster node.",
    "kube_node_status_allocatable": "The allocatable for different resources of a node available for scheduling.",
    "kube_node_status_capacity": "The capacity for different resources of a node.",
    "kube_pod_info": "Information about pod.",
    "kube_pod_labels": "Kubernetes labels converted to Prometheus labels.",
    "kube_pod_status_phase": "The pods current phase.",
    "kube_pod_status_ready": "Describes whether the pod is ready to serve requests.",
}

_NOT_IN_A_LABEL = re.compile(r"[^a-zA-Z0-9_]")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_QUANTITY = re.compile(r"^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$")
_FACTOR = {None: 1.0, "m": 0.001, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_FACTOR.update({"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40})


def label_name(kubernetes_label: str) -> str:
    """kube-state-metrics' name for a Kubernetes label: `label_` + snake case of the sanitized key."""
    return "label_" + _CAMEL.sub(r"\1_\2", _NOT_IN_A_LABEL.sub("_", kubernetes_label)).lower()


def quantity(text: str) -> float:
    """A Kubernetes quantity as kube-state-metrics exports it (cores for CPU, bytes, counts)."""
    match = _QUANTITY.match(text)
    if match is None:
        raise ValueError(f"fleet-sim renders no quantity like {text!r}")
    if match.group(2) == "m":
        return float(match.group(1)) / 1000  # 3880m is 3.88 cores, not 3880 * 0.001
    return float(match.group(1)) * _FACTOR[match.group(2)]


def unit(resource: str) -> str:
    if resource == "cpu":
        return "core"
    if resource == "pods":
        return "integer"
    return "byte"


def _present(labels: Mapping[str, str]) -> Labels:
    # An empty value is no label in Prometheus: gone at ingestion.
    return {name: value for name, value in labels.items() if value}


def _sample(name: str, labels: Mapping[str, str], value: float) -> Sample:
    return ({NAME_LABEL: name, **_present(labels)}, value)


def _created(meta: Mapping[str, Any]) -> float:
    return datetime.fromisoformat(str(meta["creationTimestamp"]).replace("Z", "+00:00")).timestamp()


def node_series(shoot: ShootState, nodes: Iterable[NodeRecord]) -> Iterator[Sample]:
    for record in nodes:
        node = render_node(record, shoot)
        meta, spec, status = node["metadata"], node["spec"], node["status"]
        base = {"node": record.name}
        info = status["nodeInfo"]
        internal = [a["address"] for a in status.get("addresses", ()) if a.get("type") == "InternalIP"]
        yield _sample(
            "kube_node_info",
            {
                **base,
                "kernel_version": info.get("kernelVersion", ""),
                "os_image": info.get("osImage", ""),
                "container_runtime_version": info.get("containerRuntimeVersion", ""),
                "kubelet_version": info.get("kubeletVersion", ""),
                "kubeproxy_version": "deprecated",
                "provider_id": spec.get("providerID", ""),
                "pod_cidr": spec.get("podCIDR", ""),
                "system_uuid": info.get("systemUUID", ""),
                "internal_ip": internal[-1] if internal else "",
            },
            1,
        )
        labels = {label_name(key): value for key, value in sorted(meta.get("labels", {}).items())}
        yield _sample("kube_node_labels", {**base, **labels}, 1)
        yield _sample("kube_node_created", base, _created(meta))
        yield _sample("kube_node_spec_unschedulable", base, 1 if spec.get("unschedulable") else 0)
        for condition in status.get("conditions", ()):
            holds = str(condition["status"]).lower()
            for candidate in ("true", "false", "unknown"):
                yield _sample(
                    "kube_node_status_condition",
                    {**base, "condition": condition["type"], "status": candidate},
                    1 if candidate == holds else 0,
                )
        for family, resources in (
            ("kube_node_status_allocatable", status["allocatable"]),
            ("kube_node_status_capacity", status["capacity"]),
        ):
            for resource, amount in sorted(resources.items()):
                labels = {**base, "resource": _NOT_IN_A_LABEL.sub("_", resource), "unit": unit(resource)}
                yield _sample(family, labels, quantity(amount))


def pod_series(shoot: ShootState, pods: Iterable[PodRecord]) -> Iterator[Sample]:
    for record in pods:
        if record.namespace != NAMESPACE:
            continue  # --namespaces=kube-system
        pod = render_pod(record, shoot)
        meta, spec, status = pod["metadata"], pod["spec"], pod["status"]
        base = {"namespace": record.namespace, "pod": record.name, "uid": meta["uid"]}
        owners = meta.get("ownerReferences") or [{}]
        yield _sample(
            "kube_pod_info",
            {
                **base,
                "host_ip": status.get("hostIP", ""),
                "pod_ip": status.get("podIP", ""),
                "node": spec.get("nodeName", ""),
                "created_by_kind": owners[0].get("kind", ""),
                "created_by_name": owners[0].get("name", ""),
                "priority_class": spec.get("priorityClassName", ""),
                "host_network": "true" if spec.get("hostNetwork") else "false",
            },
            1,
        )
        yield _sample("kube_pod_labels", base, 1)  # pods=[origin]: no pod here carries it
        for phase in POD_PHASES:
            yield _sample("kube_pod_status_phase", {**base, "phase": phase}, 1 if phase == record.phase else 0)
        for condition in status.get("conditions", ()):
            if condition.get("type") != "Ready":
                continue
            holds = str(condition["status"]).lower()
            for candidate in ("true", "false", "unknown"):
                yield _sample("kube_pod_status_ready", {**base, "condition": candidate}, 1 if candidate == holds else 0)


def series(
    shoot: ShootState, nodes: Iterable[NodeRecord], pods: Iterable[PodRecord], name: str | None
) -> Iterator[Sample]:
    """The series of one metric name (None: all) a stock Gardener shoot Prometheus holds, without target labels."""
    if name is None or name in NODE_FAMILIES:
        yield from (s for s in node_series(shoot, nodes) if name is None or s[0][NAME_LABEL] == name)
    if name is None or name in POD_FAMILIES:
        yield from (s for s in pod_series(shoot, pods) if name is None or s[0][NAME_LABEL] == name)
