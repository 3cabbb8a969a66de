"""The kube-state-metrics queries of one cluster and what their answers mean, read strictly.

Up to six instant queries per cluster, in two groups. The node queries (`NODE_QUERIES`) need only
what a stock Gardener shoot Prometheus holds (its kube-state-metrics watches nodes and kube-system
alone, with every node label allow-listed); the pod queries (`POD_QUERIES`) need a kube-state-metrics
that watches every namespace, which only a landscape that runs its own has
(`collector/inventory/split.py` chooses which groups are sent). Each is aggregated on the
Prometheus so an answer is a handful of series (one per pool, resource or namespace), never one
per pod; the node ledger's is one per node:

- nodes per worker, and (summed) all nodes:
  `count by (<pool label>) (kube_node_labels)`;
- Ready nodes per worker, and (summed) all of them:
  `sum by (<pool label>) (<Ready condition> * on (node) group_left (<pool label>) kube_node_labels)`;
- allocatable cores, bytes and pods over every node:
  `sum by (resource, unit) (kube_node_status_allocatable{resource=~"cpu|memory|pods"})`;
- each node's cloud id, for the ledger's `kubernetes.node` rows:
  `max by (node, provider_id) (kube_node_info)`;
- pods not Succeeded or Failed per namespace:
  `sum by (namespace) (kube_pod_status_phase{phase!~"Succeeded|Failed"})`;
- each namespace's `fundament.io/namespace-id`:
  `max by (namespace, <namespace-id label>) (kube_namespace_labels)`.

All of them are evaluated at one time (`time=`, chosen once per collection), so they see one state
of the cluster even when a scrape lands between two of them: a node added meanwhile cannot make
the Ready nodes outnumber the nodes, nor the allocatable sums disagree with the node counts.
Prometheus stamps every sample of an instant query with its evaluation time; an answer stamped
otherwise comes from a Prometheus (or proxy) that ignored `time=`, and is refused.

kube-state-metrics exports a Kubernetes label on `kube_<kind>_labels` only when its allow-list
(`--metric-labels-allowlist`) names it, as `label_` plus the name with every character outside
`[a-zA-Z0-9_]` turned into `_`: `worker.gardener.cloud/pool` becomes
`label_worker_gardener_cloud_pool`, `fundament.io/namespace-id` becomes
`label_fundament_io_namespace_id`. Without the pool label the nodes cannot be told apart by pool:
the cluster's totals are still read and its pools keep their previous counts (`pools_known` is
False). Without the namespace-id label the answer gives every namespace by name (`pods_by_name`),
and the store matches each live namespace by the name Fundament's provisioning side generates for
it, only where that is certain (`collector/inventory/namespaces.py`). An empty `kube_namespace_labels` (every
cluster has namespaces) means no kube-state-metrics watching every namespace is scraped (a stock
Gardener shoot Prometheus has none): the collection fails instead of storing zeros. Gardener
allow-lists every node label (`nodes=[*]`), so the pool label is there on a stock shoot.

A node's cloud id is `kube_node_info`'s `provider_id` (kube-state-metrics copies `spec.providerID`; an
empty one is an absent label in Prometheus, as a node without one has no id in the API-server
source). No `kube_node_info` at all while there are nodes means it is not exported: the node ledger
is then not read (`node_ids` None), never read as "every node is gone".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from uuid import UUID

from collector.kube.errors import BadResponse, TooLarge
from common.labels import NAMESPACE_ID_LABEL, POOL_LABEL, exported_label, parse_id_label
from common.text import truncate

# More series in one answer than any real cluster has pools, resources or namespaces (Kubernetes
# is tested up to 10,000 namespaces): refused.
MAX_SERIES = 20_000

# The largest sample value taken, checked before any arithmetic: every count and byte sum of a real
# cluster is far below it (5,000 nodes of 1 TiB are 5.5e15 bytes), and up to it a float is an exact
# integer, so scaling (cores to millicores) and summing never overflow or lose a unit.
MAX_SAMPLE_VALUE = float(2**53)

POOL_SERIES_LABEL = exported_label(POOL_LABEL)
NAMESPACE_ID_SERIES_LABEL = exported_label(NAMESPACE_ID_LABEL)
READY = 'kube_node_status_condition{condition="Ready",status="true"}'

NODE_QUERIES: dict[str, str] = {
    "pool_nodes": f"count by ({POOL_SERIES_LABEL}) (kube_node_labels)",
    "pool_ready": (
        f"sum by ({POOL_SERIES_LABEL}) ({READY} * on (node) group_left ({POOL_SERIES_LABEL}) kube_node_labels)"
    ),
    "allocatable": 'sum by (resource, unit) (kube_node_status_allocatable{resource=~"cpu|memory|pods"})',
    "node_ids": "max by (node, provider_id) (kube_node_info)",
}
"""What a stock Gardener shoot Prometheus can answer: the nodes' numbers and ids."""
POD_QUERIES: dict[str, str] = {
    "namespace_pods": 'sum by (namespace) (kube_pod_status_phase{phase!~"Succeeded|Failed"})',
    "namespace_ids": f"max by (namespace, {NAMESPACE_ID_SERIES_LABEL}) (kube_namespace_labels)",
}
"""What only a kube-state-metrics watching every namespace can answer: pods per namespace."""
QUERIES: dict[str, str] = {**NODE_QUERIES, **POD_QUERIES}
"""Every query the collector may send (the differential test of fleet-sim's PromQL runs each)."""


@dataclass(frozen=True, slots=True)
class Sample:
    labels: dict[str, str]
    value: float


@dataclass(frozen=True, slots=True)
class NodeMetrics:
    """One cluster's node numbers and node ids as its Prometheus gave them (NODE_QUERIES)."""

    nodes: int
    ready_nodes: int
    allocatable_pods: int
    cpu_allocatable_millicores: int
    memory_allocatable_bytes: int
    pool_nodes: dict[str, tuple[int, int]]
    pools_known: bool
    node_ids: dict[str, str | None] | None
    """Node name -> its cloud id (`provider_id`; None when the node has none), or None when
    `kube_node_info` is not exported at all although there are nodes (the node ledger is then not read)."""


@dataclass(frozen=True, slots=True)
class PodMetrics:
    """One cluster's pods as its Prometheus gave them (POD_QUERIES)."""

    pods: int
    namespace_pods: dict[UUID, int]
    """By namespace id, when the id label is exported (else empty)."""
    pods_by_name: dict[str, int] | None
    """By Kubernetes namespace name, every namespace of the shoot (0 when it runs none), when the id
    label is not exported (else None)."""


def vector(answer: Mapping[str, object], what: str, *, at: float | None = None) -> list[Sample]:
    """The samples of an instant-vector answer, each evaluated at `at` when given. Raises BadResponse or TooLarge."""
    if answer.get("status") != "success":
        raise BadResponse(f"{what}: status is {truncate(repr(answer.get('status')), 40)}, not success")
    data = answer.get("data")
    if not isinstance(data, Mapping) or data.get("resultType") != "vector":
        raise BadResponse(f"{what}: the answer is not an instant vector")
    result = data.get("result")
    if not isinstance(result, list):
        raise BadResponse(f"{what}: data.result is not an array")
    if len(result) > MAX_SERIES:
        raise TooLarge(f"{what}: more than {MAX_SERIES} series in one answer; refused")
    samples: list[Sample] = []
    for item in result:
        metric = item.get("metric") if isinstance(item, dict) else None
        value = item.get("value") if isinstance(item, dict) else None
        if not isinstance(metric, dict) or not all(isinstance(v, str) for v in metric.values()):
            raise BadResponse(f"{what}: a series' metric is not a set of string labels")
        if not isinstance(value, list) or len(value) != 2 or not isinstance(value[1], str):
            raise BadResponse(f'{what}: a sample is not [time, "value"]')
        if at is not None and not _evaluated_at(value[0], at):
            raise BadResponse(
                f"{what}: a sample is of time {truncate(repr(value[0]), 40)}, not of the asked time {at:.3f}; "
                "the Prometheus did not evaluate the query at the time asked"
            )
        try:
            number = float(value[1])
        except ValueError:
            raise BadResponse(f"{what}: sample value {truncate(repr(value[1]), 40)} is not a number") from None
        if not math.isfinite(number) or number < 0:
            raise BadResponse(f"{what}: sample value {truncate(value[1], 40)!r} is not a finite count")
        if number > MAX_SAMPLE_VALUE:
            raise BadResponse(
                f"{what}: sample value {truncate(value[1], 40)!r} is out of range (over 2^53); refused unused"
            )
        samples.append(Sample(metric, number))
    return samples


def _evaluated_at(stamp: object, at: float) -> bool:
    # Prometheus evaluates at whole milliseconds and writes the time as a JSON number.
    if isinstance(stamp, bool) or not isinstance(stamp, int | float):
        return False
    return abs(stamp - at) < 0.001


def whole(value: float, what: str) -> int:
    """A count or a byte sum: a whole number (within float rounding), else BadResponse."""
    rounded = round(value)
    if abs(value - rounded) > 1e-6 * max(1.0, abs(value)):
        raise BadResponse(f"{what}: {value!r} is not a whole number")
    return int(rounded)


def by_pool(samples: list[Sample], what: str) -> tuple[int, dict[str, int]]:
    """(the sum over every series, per non-empty pool label)."""
    total = 0
    pools: dict[str, int] = {}
    for sample in samples:
        count = whole(sample.value, what)
        total += count
        worker = sample.labels.get(POOL_SERIES_LABEL, "")
        if worker:
            pools[worker] = pools.get(worker, 0) + count
    return total, pools


def node_metrics(samples: Mapping[str, list[Sample]], what: str) -> NodeMetrics:
    """The node numbers of one cluster from the samples of NODE_QUERIES (by name). Raises BadResponse."""
    nodes, pool_nodes = by_pool(samples["pool_nodes"], f"{what} query pool_nodes")
    ready, pool_ready = by_pool(samples["pool_ready"], f"{what} query pool_ready")
    if ready > nodes:
        raise BadResponse(f"{what}: {ready} Ready nodes of {nodes}; the series disagree")
    allocatable = {(s.labels.get("resource", ""), s.labels.get("unit", "")): s.value for s in samples["allocatable"]}
    return NodeMetrics(
        nodes=nodes,
        ready_nodes=ready,
        allocatable_pods=whole(allocatable.get(("pods", "integer"), 0.0), f"{what}: allocatable pods"),
        cpu_allocatable_millicores=round(allocatable.get(("cpu", "core"), 0.0) * 1000),
        memory_allocatable_bytes=whole(allocatable.get(("memory", "byte"), 0.0), f"{what}: allocatable memory"),
        pool_nodes={worker: (count, pool_ready.get(worker, 0)) for worker, count in pool_nodes.items()},
        # Nodes but no pool label on any of them: the label is not exported (not allow-listed).
        pools_known=nodes == 0 or bool(pool_nodes),
        node_ids=_node_ids(samples["node_ids"], nodes, f"{what} query node_ids"),
    )


def _node_ids(samples: list[Sample], nodes: int, what: str) -> dict[str, str | None] | None:
    """Node name -> provider id; None when kube_node_info is not exported. Raises BadResponse."""
    if nodes and not samples:
        return None  # no kube_node_info at all: "not exported", never "no nodes" (that would close every row)
    ids: dict[str, str | None] = {}
    for sample in samples:
        name = sample.labels.get("node", "")
        if not name:
            raise BadResponse(f"{what}: a kube_node_info series has no node label")
        if name in ids:
            raise BadResponse(f"{what}: node {truncate(name, 80)!r} has two provider ids; the series disagree")
        # An empty label is an absent one in Prometheus: a node without spec.providerID.
        ids[name] = sample.labels.get("provider_id", "").strip() or None
    if len(ids) != nodes:
        raise BadResponse(f"{what}: kube_node_info has {len(ids)} nodes, kube_node_labels {nodes}; the series disagree")
    return ids


def pod_metrics(samples: Mapping[str, list[Sample]], what: str) -> PodMetrics:
    """The pods of one cluster from the samples of POD_QUERIES (by name). Raises BadResponse."""
    ids: dict[str, UUID] = {}
    namespaces = samples["namespace_ids"]
    if not namespaces:
        raise BadResponse(
            f"{what}: kube_namespace_labels is empty, so no kube-state-metrics watching every namespace is scraped"
            " (a stock Gardener shoot Prometheus has none: read pods from the API server, PROMETHEUS_PARTS=nodes);"
            " nothing was stored"
        )
    exported = any(s.labels.get(NAMESPACE_ID_SERIES_LABEL) for s in namespaces)
    for sample in namespaces:
        # No id: not a tenant namespace (or a label that is no id), as for the API-server source.
        namespace_id = parse_id_label(sample.labels.get(NAMESPACE_ID_SERIES_LABEL))
        if namespace_id is not None:
            ids[sample.labels.get("namespace", "")] = namespace_id
    # Every namespace of the shoot by name, those without unfinished pods too: a name match needs to
    # know what the shoot has, not only what runs pods.
    pods_by_name: dict[str, int] = {sample.labels.get("namespace", ""): 0 for sample in namespaces}
    pods = 0
    for sample in samples["namespace_pods"]:
        count = whole(sample.value, f"{what} query namespace_pods")
        pods += count
        name = sample.labels.get("namespace", "")
        pods_by_name[name] = pods_by_name.get(name, 0) + count
    by_id: dict[UUID, int] = {}
    if exported:
        for name, namespace_id in ids.items():
            by_id[namespace_id] = by_id.get(namespace_id, 0) + pods_by_name.get(name, 0)
    return PodMetrics(pods=pods, namespace_pods=by_id, pods_by_name=None if exported else pods_by_name)
