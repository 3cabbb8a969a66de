"""INVENTORY_SOURCE=prometheus: which parts of a reading come from the shoot's Prometheus, which from its API server.

    MonitoringReader ──> the shoot's Prometheus: Split.queries() ──> NodeMetrics (+ PodMetrics) ─┐
                    └──> the shoot's API server (viewerkubeconfig): Split.apiserver_sources() ───┴─> merge() ──> Reading

A stock Gardener shoot Prometheus runs kube-state-metrics with `--namespaces=kube-system` and a
metric allow-list: it holds every node's series (`kube_node_info` with `provider_id`, conditions,
allocatable, every node label) and the pods of kube-system, but no namespaces, no pods of tenant
namespaces and no volumes, services, ingresses or certificates. So the parts are:

- `nodes`, always from the Prometheus: nodes and Ready nodes per pool, allocatable CPU, memory and
  pods, and the ledger's `kubernetes.node` rows (name and `provider_id`);
- `pods`, unfinished pods per namespace: from the Prometheus only when PROMETHEUS_PARTS names it (a
  landscape that scrapes a kube-state-metrics of its own watching every namespace); by default from
  the API server, with the tenant namespaces;
- everything else, the other ledger types (volumes, load balancers, ingresses, certificates): from
  the API server with Gardener's read-only `viewerkubeconfig` (PROMETHEUS_OTHERS_FROM=viewer, the
  default), never an admin credential; or, with `nowhere`, not at all: those types are then recorded
  as not visible (reason `not_visible`, counted per round) and their rows are left as they were.

The default (`nodes` from the Prometheus, the rest with the viewer) is what a stock Gardener shoot
serves; nothing is read from nowhere silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from collector.inventory.reading import Reading
from collector.inventory.sources import (
    NODES_PATH,
    NOT_VISIBLE,
    OVER_CAP,
    Discovered,
    LedgerSource,
    SourceResult,
    Unlisted,
    provider_id,
)
from collector.prometheus.queries import NODE_QUERIES, POD_QUERIES, NodeMetrics, PodMetrics

SOURCE = "prometheus"
NODES = "nodes"
PODS = "pods"
PARTS = (NODES, PODS)
"""What PROMETHEUS_PARTS may name."""
VIEWER = "viewer"
NOWHERE = "nowhere"
OTHERS_FROM = (VIEWER, NOWHERE)
"""What PROMETHEUS_OTHERS_FROM may name."""
# The Unlisted reason of the node ledger when kube_node_info is not exported although there are nodes.
NOT_EXPORTED = "not_exported"


@dataclass(frozen=True, slots=True)
class Split:
    """Where each part of a reading comes from under INVENTORY_SOURCE=prometheus."""

    pods_from_prometheus: bool = False
    """PROMETHEUS_PARTS names `pods`: the pods per namespace from kube-state-metrics, not the API server."""
    others_from: str = VIEWER
    """PROMETHEUS_OTHERS_FROM: `viewer` reads the rest from the API server with viewerkubeconfig, `nowhere` does not."""

    def __post_init__(self) -> None:
        if self.others_from not in OTHERS_FROM:
            raise ValueError(f"others_from {self.others_from!r}: expected one of {OTHERS_FROM}")
        if self.others_from == NOWHERE and not self.pods_from_prometheus:
            raise ValueError("with nothing read from the API server the pods must come from the Prometheus")

    @classmethod
    def from_settings(cls, parts: Sequence[str], others_from: str) -> Split:
        return cls(pods_from_prometheus=PODS in parts, others_from=others_from)

    @property
    def reads_apiserver(self) -> bool:
        return self.others_from == VIEWER

    def queries(self) -> dict[str, str]:
        """The instant queries sent to the shoot's Prometheus."""
        return {**NODE_QUERIES, **POD_QUERIES} if self.pods_from_prometheus else dict(NODE_QUERIES)

    def apiserver_sources(self, sources: Sequence[LedgerSource]) -> tuple[LedgerSource, ...]:
        """The ledger sources read from the API server: every one the Prometheus cannot answer."""
        if not self.reads_apiserver:
            return ()
        return tuple(source for source in sources if not from_node_info(source))

    def __str__(self) -> str:
        parts = f"{NODES},{PODS}" if self.pods_from_prometheus else NODES
        return f"{parts} from the Prometheus, the rest from {self.others_from}"


def from_node_info(source: LedgerSource) -> bool:
    """Whether `kube_node_info` answers the source: every node, identified by its `spec.providerID`."""
    return source.path == NODES_PATH and source.resource_id is provider_id


def node_ledger(source: LedgerSource, nodes: NodeMetrics, cap: int) -> SourceResult:
    """The node ledger's result from kube_node_info."""
    if nodes.node_ids is None:
        return Unlisted(NOT_EXPORTED, "kube_node_info is not exported by the shoot's Prometheus; left as it was")
    if len(nodes.node_ids) > cap:
        return Unlisted(
            OVER_CAP,
            f"kube_node_info: more than {cap} {source.kind} objects count for the ledger"
            " (INVENTORY_LEDGER_MAX_PER_TYPE); left as it was",
        )
    return tuple(
        Discovered(source.resource_type, "", name, resource_id, source.billable)
        for name, resource_id in sorted(nodes.node_ids.items())
    )


def merge(
    split: Split,
    sources: Sequence[LedgerSource],
    nodes: NodeMetrics,
    pods: PodMetrics | None,
    api: Reading | None,
    *,
    requests: int,
    bytes_read: int,
    cap: int,
) -> Reading:
    """One reading from the Prometheus's parts and (when the split reads it) the API server's.

    `pods` is given when the split takes them from the Prometheus, `api` when it reads the API server
    (its own node numbers are none: it was asked for no nodes).
    """
    if split.pods_from_prometheus != (pods is not None) or split.reads_apiserver != (api is not None):
        raise ValueError(f"the parts read do not match the split ({split})")
    unseen = Unlisted(NOT_VISIBLE, "the Prometheus source reads this type from nowhere (PROMETHEUS_OTHERS_FROM)")
    ledger: dict[str, SourceResult] = {}
    for source in sources:
        if from_node_info(source):
            ledger[source.resource_type] = node_ledger(source, nodes, cap)
        elif api is not None:
            ledger[source.resource_type] = api.ledger[source.resource_type]
        else:
            ledger[source.resource_type] = unseen
    if pods is not None:
        pod_count, by_id, by_name = pods.pods, pods.namespace_pods, pods.pods_by_name
    else:
        assert api is not None  # a Split reads pods from one side or the other
        pod_count, by_id, by_name = api.pods, api.namespace_pods, api.pods_by_namespace_name
    return Reading(
        nodes=nodes.nodes,
        ready_nodes=nodes.ready_nodes,
        pods=pod_count,
        allocatable_pods=nodes.allocatable_pods,
        cpu_allocatable_millicores=nodes.cpu_allocatable_millicores,
        memory_allocatable_bytes=nodes.memory_allocatable_bytes,
        pool_nodes=nodes.pool_nodes,
        namespace_pods=by_id,
        ledger=ledger,
        requests=requests + (api.requests if api is not None else 0),
        source=SOURCE,
        pools_known=nodes.pools_known,
        pods_by_namespace_name=by_name,
        bytes_read=bytes_read + (api.bytes_read if api is not None else 0),
    )
