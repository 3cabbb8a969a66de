"""Reading one shoot's API server into a `Reading`: nodes, pods per namespace and the ledger sources.

    loop.py ──> GardenReader ──> read_shoot(client) ──> KubeClient.stream_list ──> fold functions (this module)

Per cluster: the namespaces carrying `fundament.io/namespace-id` come first (metadata only; they
decide which objects are a tenant's), then each ledger source's list, every node (full objects:
readiness, allocatable CPU, memory, pods) and the metadata of every pod not Succeeded or Failed, all
requested at once and served in that order over the client's connection. Every list asks for
`resourceVersion=0`, so the API server answers from its watch cache instead of a quorum read from
etcd; since the cache then ignores `limit`, items are folded batch by batch as the body streams in
(kube/liststream.py) and never kept: a node becomes a few integers, a pod one count
(docs/architecture.md, 'Lists come from the watch cache and are parsed as they stream').

Nodes are grouped onto node pools by the label `worker.gardener.cloud/pool`, whose value is the
worker name `common.naming.worker_name` derives from the pool name. Nodes of a pool the
database does not know still count for the cluster.

A failure of nodes, namespaces or pods fails the whole reading (nothing is stored). A ledger
source's failure only marks that source `Unlisted`, bounded by its own shorter timeout, so a broken
or missing CRD never costs the cluster its snapshot.

What is kept while a list streams is bounded too, since a tenant can create as many objects as it
likes: a ledger source stops at `ledger_max_per_type` resources (INVENTORY_LEDGER_MAX_PER_TYPE) and
is then `Unlisted` with reason `over_cap` (its rows stay as they were), and pods are counted per
tenant namespace only, so an endless list of pods in ever new namespaces costs nothing but time.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from collector.inventory.reading import Reading
from collector.inventory.sources import (
    NODES_PATH,
    OVER_CAP,
    Discovered,
    LedgerSource,
    SourceResult,
    Unlisted,
    sources_by_path,
)
from collector.kube.client import METADATA_LIST, KubeClient
from collector.kube.errors import BadResponse, KubeError, TooLarge
from collector.kube.objects import KubeObject
from collector.kube.quantity import millis, whole
from common.labels import NAMESPACE_ID_LABEL, POOL_LABEL, parse_id_label

logger = logging.getLogger(__name__)

NAMESPACES_PATH = "/api/v1/namespaces"
PODS_PATH = "/api/v1/pods"
# Running and pending pods; finished ones hold no resources.
UNFINISHED_PODS = "status.phase!=Succeeded,status.phase!=Failed"
WATCH_CACHE = "0"
DEFAULT_LEDGER_MAX_PER_TYPE = 10_000
# What the snapshot folds may tell apart, so a hostile list cannot grow them without end: Kubernetes
# is tested up to 10,000 namespaces and 5,000 nodes per cluster, so more of either is no real cluster.
MAX_TENANT_NAMESPACES = 10_000
MAX_NODE_POOLS = 5_000
# Ledger lists are small, unless a tenant floods one: smaller batches keep each parse-and-fold step
# (which holds the event loop) short, so /livez stays quick during a flood.
LEDGER_BATCH_BYTES = 1 << 20


class _OverCap(Exception):
    """Raised out of a fold to stop reading a list whose ledger type passed its cap."""


@dataclass
class NodeTally:
    """Nodes folded into counts as they stream in."""

    nodes: int = 0
    ready: int = 0
    allocatable_pods: int = 0
    cpu_millicores: int = 0
    memory_bytes: int = 0
    by_worker: dict[str, list[int]] = field(default_factory=dict)
    """Worker name (the pool label) -> [nodes, ready]; nodes without the label are not in here."""

    def add(self, items: Sequence[dict[str, Any]]) -> None:
        for node in items:
            ready = node_is_ready(node)
            self.nodes += 1
            self.ready += ready
            allocatable = (node.get("status") or {}).get("allocatable") or {}
            name = (node.get("metadata") or {}).get("name", "?")
            try:
                self.allocatable_pods += whole(allocatable.get("pods", 0))
                self.cpu_millicores += millis(allocatable.get("cpu", 0))
                self.memory_bytes += whole(allocatable.get("memory", 0))
            except (ValueError, TypeError) as e:
                raise BadResponse(f"node {name}: allocatable is not a set of quantities ({e})") from None
            worker = ((node.get("metadata") or {}).get("labels") or {}).get(POOL_LABEL)
            if isinstance(worker, str):
                if worker not in self.by_worker and len(self.by_worker) >= MAX_NODE_POOLS:
                    raise TooLarge(f"GET {NODES_PATH}: more than {MAX_NODE_POOLS} node pools; refused")
                counts = self.by_worker.setdefault(worker, [0, 0])
                counts[0] += 1
                counts[1] += ready


def node_is_ready(node: dict[str, Any]) -> bool:
    """The node's `Ready` condition is `True` (Unknown and False are not ready)."""
    for condition in (node.get("status") or {}).get("conditions") or ():
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def tenant_namespaces(items: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Kubernetes namespace name -> the raw `fundament.io/namespace-id` of each tenant namespace."""
    found: dict[str, str] = {}
    for item in items:
        meta = item.get("metadata") or {}
        label = (meta.get("labels") or {}).get(NAMESPACE_ID_LABEL)
        if isinstance(meta.get("name"), str) and isinstance(label, str):
            found[meta["name"]] = label
    return found


def namespace_pods(labels: dict[str, str], pods_by_name: Counter[str]) -> dict[UUID, int]:
    """Pods per Fundament namespace id; namespaces whose label is not a UUID are left out."""
    counts: dict[UUID, int] = {}
    for name, label in labels.items():
        namespace_id = parse_id_label(label)
        if namespace_id is None:
            continue
        counts[namespace_id] = counts.get(namespace_id, 0) + pods_by_name.get(name, 0)
    return counts


def _over_cap(source: LedgerSource, path: str, cap: int) -> Unlisted:
    return Unlisted(
        OVER_CAP,
        f"GET {path}: more than {cap} {source.kind} objects count for the ledger"
        " (INVENTORY_LEDGER_MAX_PER_TYPE); left as it was",
    )


async def read_shoot(
    client: KubeClient,
    sources: Sequence[LedgerSource],
    *,
    ledger_timeout_seconds: float,
    ledger_max_per_type: int = DEFAULT_LEDGER_MAX_PER_TYPE,
    nodes: bool = True,
) -> Reading:
    """Read one shoot completely. Raises KubeError when nodes, namespaces or pods cannot be read.

    `nodes=False` leaves the node list out unless a ledger source needs it (the Prometheus source
    reads the nodes from kube-state-metrics, collector/inventory/split.py): the reading's node
    numbers are then 0.
    """
    start_requests, start_bytes = client.requests, client.bytes_read
    labels: dict[str, str] = {}

    def fold_namespaces(items: list[dict[str, Any]]) -> None:
        labels.update(tenant_namespaces(items))
        if len(labels) > MAX_TENANT_NAMESPACES:
            raise TooLarge(f"GET {NAMESPACES_PATH}: more than {MAX_TENANT_NAMESPACES} tenant namespaces; refused")

    await client.stream_list(
        NAMESPACES_PATH,
        fold_namespaces,
        query={"resourceVersion": WATCH_CACHE, "labelSelector": NAMESPACE_ID_LABEL},
        accept=METADATA_LIST,
    )
    tenants = frozenset(labels)
    cap = ledger_max_per_type

    grouped = sources_by_path(sources)
    node_sources = grouped.pop(NODES_PATH, [])
    found_on_nodes: dict[str, list[Discovered]] = {source.resource_type: [] for source in node_sources}
    nodes_over_cap: set[str] = set()
    tally = NodeTally()

    def fold_nodes(items: list[dict[str, Any]]) -> None:
        tally.add(items)
        for source in node_sources:
            if source.resource_type in nodes_over_cap:
                continue
            found = found_on_nodes[source.resource_type]
            found.extend(_discover(source, items, tenants))
            if len(found) > cap:  # the snapshot still counts every node; the ledger type is not listed
                nodes_over_cap.add(source.resource_type)
                found.clear()

    pods: Counter[str] = Counter()
    all_pods = [0]

    def fold_pods(items: list[dict[str, Any]]) -> None:
        all_pods[0] += len(items)
        # Counter.update over a generator runs its counting loop in C.
        pods.update(ns for ns in ((item.get("metadata") or {}).get("namespace", "") for item in items) if ns in tenants)

    ledger: dict[str, SourceResult] = {}
    # Small lists first: requests queue for the client's connection in this order, and a ledger
    # source's own timeout must not run out waiting behind 150,000 pods.
    jobs: list[Awaitable[Any]] = [
        *(
            _list_sources(
                client, path, group, tenants=tenants, into=ledger, timeout_seconds=ledger_timeout_seconds, cap=cap
            )
            for path, group in grouped.items()
        ),
        *(
            (client.stream_list(NODES_PATH, fold_nodes, query={"resourceVersion": WATCH_CACHE}),)
            if nodes or node_sources
            else ()
        ),
        client.stream_list(
            PODS_PATH,
            fold_pods,
            query={"resourceVersion": WATCH_CACHE, "fieldSelector": UNFINISHED_PODS},
            accept=METADATA_LIST,
        ),
    ]
    await _all_or_nothing(jobs)
    for source in node_sources:
        over = source.resource_type in nodes_over_cap
        ledger[source.resource_type] = (
            _over_cap(source, NODES_PATH, cap) if over else tuple(found_on_nodes[source.resource_type])
        )
    return Reading(
        nodes=tally.nodes,
        ready_nodes=tally.ready,
        pods=all_pods[0],
        allocatable_pods=tally.allocatable_pods,
        cpu_allocatable_millicores=tally.cpu_millicores,
        memory_allocatable_bytes=tally.memory_bytes,
        pool_nodes={worker: (counts[0], counts[1]) for worker, counts in tally.by_worker.items()},
        namespace_pods=namespace_pods(labels, pods),
        ledger={source.resource_type: ledger[source.resource_type] for source in sources},
        requests=client.requests - start_requests,
        bytes_read=client.bytes_read - start_bytes,
    )


def _discover(source: LedgerSource, items: Sequence[dict[str, Any]], tenants: frozenset[str]) -> list[Discovered]:
    found: list[Discovered] = []
    for item in items:
        discovered = source.discover(_as_object(item), tenants)
        if discovered is not None:
            found.append(discovered)
    return found


def _as_object(item: dict[str, Any]) -> KubeObject:
    return item  # type: ignore[return-value]  # a parsed object is a KubeObject by shape


async def _list_sources(
    client: KubeClient,
    path: str,
    group: Sequence[LedgerSource],
    *,
    tenants: frozenset[str],
    into: dict[str, SourceResult],
    timeout_seconds: float,
    cap: int,
) -> None:
    """List one path for the ledger sources reading it; a failure marks them Unlisted, never raises KubeError.

    Once one of the sources found more than `cap` resources the list is not read further: those
    over it are Unlisted with reason `over_cap`, and so are the others of the path (their list did
    not arrive whole).
    """
    found: dict[str, list[Discovered]] = {source.resource_type: [] for source in group}
    over: list[LedgerSource] = []

    def fold(items: list[dict[str, Any]]) -> None:
        for source in group:
            kept = found[source.resource_type]
            kept.extend(_discover(source, items, tenants))
            if len(kept) > cap:
                over.append(source)
        if over:
            found.clear()
            raise _OverCap

    try:
        async with asyncio.timeout(timeout_seconds):
            await client.stream_list(
                path,
                fold,
                query={"resourceVersion": WATCH_CACHE},
                request_timeout_seconds=timeout_seconds,
                batch_bytes=LEDGER_BATCH_BYTES,
            )
    except _OverCap:
        for source in group:
            into[source.resource_type] = (
                _over_cap(source, path, cap)
                if source in over
                else Unlisted(OVER_CAP, f"GET {path}: not read whole, another type of it is over its cap")
            )
        return
    except KubeError as e:
        for source in group:
            into[source.resource_type] = Unlisted(e.reason, str(e))
        return
    except TimeoutError:
        for source in group:
            into[source.resource_type] = Unlisted("timeout", f"GET {path}: no complete answer in {timeout_seconds:g} s")
        return
    for source in group:
        into[source.resource_type] = tuple(found[source.resource_type])


async def _all_or_nothing(jobs: Sequence[Awaitable[Any]]) -> None:
    """Run the jobs at once; on the first failure cancel the rest, wait for them, and raise it."""
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
