"""The enums and scalars every message of the staff API spells the same way: a cluster's status, a
drift kind, a snapshot's source, an age, an optional text. Each enum is mapped by name once, at import:
a member missing on either side fails loudly here."""

from __future__ import annotations

from datetime import datetime

from fundament.fleet.v1 import fleet_pb2

from common.clusterstatus import ClusterStatus
from common.drift_kinds import DRIFT_KINDS

_STATUS_TO_PROTO: dict[ClusterStatus, fleet_pb2.ClusterStatus] = {
    status: getattr(fleet_pb2, f"CLUSTER_STATUS_{status.name}") for status in ClusterStatus
}
_KIND_TO_PROTO: dict[str, fleet_pb2.DriftKind] = {
    kind: getattr(fleet_pb2, f"DRIFT_KIND_{kind.upper()}") for kind in DRIFT_KINDS
}


_SOURCE_TO_PROTO: dict[str, fleet_pb2.SnapshotSource] = {
    "apiserver": fleet_pb2.SNAPSHOT_SOURCE_API_SERVER,
    "prometheus": fleet_pb2.SNAPSHOT_SOURCE_PROMETHEUS,
    "mock": fleet_pb2.SNAPSHOT_SOURCE_MOCK,
}


def source_to_proto(source: str | None) -> fleet_pb2.SnapshotSource:
    """The snapshot's source column as the enum; UNSPECIFIED for a row written before it was recorded."""
    return _SOURCE_TO_PROTO.get(source or "", fleet_pb2.SNAPSHOT_SOURCE_UNSPECIFIED)


def status_to_proto(status: ClusterStatus) -> fleet_pb2.ClusterStatus:
    return _STATUS_TO_PROTO[status]


def kind_to_proto(kind: str) -> fleet_pb2.DriftKind:
    return _KIND_TO_PROTO[kind]


def age_seconds(then: datetime, now: datetime) -> int:
    """Whole seconds from `then` to `now`; never negative (a clock a little ahead is not the future)."""
    return max(0, int((now - then).total_seconds()))


def text(value: object | None) -> str:
    return "" if value is None else str(value)
