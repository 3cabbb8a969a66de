"""Compact records of the objects a simulated shoot holds, one frozen dataclass per kind.

A record carries only what differs between objects of its kind; `sim/api/objects/` renders the full,
schema-complete Kubernetes object from it on demand. That keeps a shoot at Kubernetes' limits
(150,000 pods) at a few tens of megabytes instead of gigabytes of dictionaries. Cluster-scoped
records have `namespace == ""`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class NodeRecord:
    name: str
    worker: str  # the `worker.gardener.cloud/pool` label
    machine_type: str
    zone: str
    ready: bool
    cores: int
    memory_gib: int
    max_pods: int
    rv: int
    namespace: str = ""


@dataclass(frozen=True, slots=True)
class NamespaceRecord:
    name: str
    namespace_id: str | None  # `fundament.io/namespace-id`; None for system namespaces
    project_id: str | None
    rv: int
    namespace: str = ""


@dataclass(frozen=True, slots=True)
class PodRecord:
    name: str
    namespace: str
    app: str  # the owning workload, also the `app` label
    node: str | None  # None while Pending unscheduled
    phase: str
    rv: int
    daemon: bool = False  # run by a DaemonSet on its node (else a ReplicaSet, or a Job once terminal)


@dataclass(frozen=True, slots=True)
class VolumeRecord:
    """A PersistentVolume; `claim` is (namespace, claim name) when bound."""

    name: str
    capacity_gib: int
    csi_handle: str | None  # None for a non-CSI (local) volume
    claim: tuple[str, str] | None
    phase: str  # Bound | Available | Released
    storage_class: str
    rv: int
    namespace: str = ""


@dataclass(frozen=True, slots=True)
class ClaimRecord:
    name: str
    namespace: str
    volume: str
    capacity_gib: int
    storage_class: str
    rv: int


@dataclass(frozen=True, slots=True)
class ServiceRecord:
    name: str
    namespace: str
    app: str
    type: str  # ClusterIP | LoadBalancer
    cluster_ip: str
    lb_hostname: str | None  # status.loadBalancer.ingress[0].hostname
    lb_ip: str | None  # status.loadBalancer.ingress[0].ip
    rv: int


@dataclass(frozen=True, slots=True)
class IngressRecord:
    name: str
    namespace: str
    host: str
    service: str
    address: str | None  # status.loadBalancer.ingress[0].ip
    tls_secret: str | None
    rv: int


@dataclass(frozen=True, slots=True)
class CertificateRecord:
    name: str
    namespace: str
    secret_name: str
    dns_name: str
    ready: bool
    rv: int
