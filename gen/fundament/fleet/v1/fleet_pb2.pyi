import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ClusterStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLUSTER_STATUS_UNSPECIFIED: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_PROVISIONING: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_STARTING: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_RUNNING: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_UPGRADING: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_UNHEALTHY: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_ERROR: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_LOST: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_STOPPING: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_STOPPED: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_DELETING: _ClassVar[ClusterStatus]
    CLUSTER_STATUS_DELETED: _ClassVar[ClusterStatus]

class DriftKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DRIFT_KIND_UNSPECIFIED: _ClassVar[DriftKind]
    DRIFT_KIND_ORPHAN_SHOOT: _ClassVar[DriftKind]
    DRIFT_KIND_SHOOT_OF_DELETED_CLUSTER: _ClassVar[DriftKind]
    DRIFT_KIND_MISSING_SHOOT: _ClassVar[DriftKind]
    DRIFT_KIND_VERSION_MISMATCH: _ClassVar[DriftKind]
    DRIFT_KIND_ORGANIZATION_MISMATCH: _ClassVar[DriftKind]
    DRIFT_KIND_UNLABELED_SHOOT: _ClassVar[DriftKind]

class SnapshotSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SNAPSHOT_SOURCE_UNSPECIFIED: _ClassVar[SnapshotSource]
    SNAPSHOT_SOURCE_API_SERVER: _ClassVar[SnapshotSource]
    SNAPSHOT_SOURCE_PROMETHEUS: _ClassVar[SnapshotSource]
    SNAPSHOT_SOURCE_MOCK: _ClassVar[SnapshotSource]

class OrganizationOrder(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ORGANIZATION_ORDER_UNSPECIFIED: _ClassVar[OrganizationOrder]
    ORGANIZATION_ORDER_NAME: _ClassVar[OrganizationOrder]
    ORGANIZATION_ORDER_ALIAS: _ClassVar[OrganizationOrder]
    ORGANIZATION_ORDER_CREATED: _ClassVar[OrganizationOrder]

class ClusterOrder(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLUSTER_ORDER_UNSPECIFIED: _ClassVar[ClusterOrder]
    CLUSTER_ORDER_NAME: _ClassVar[ClusterOrder]
    CLUSTER_ORDER_ORGANIZATION: _ClassVar[ClusterOrder]
    CLUSTER_ORDER_PODS: _ClassVar[ClusterOrder]
    CLUSTER_ORDER_NODES: _ClassVar[ClusterOrder]
    CLUSTER_ORDER_OBSERVED: _ClassVar[ClusterOrder]
    CLUSTER_ORDER_STATUS_SINCE: _ClassVar[ClusterOrder]

class UsageAggregate(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    USAGE_AGGREGATE_UNSPECIFIED: _ClassVar[UsageAggregate]
    USAGE_AGGREGATE_ORGANIZATION: _ClassVar[UsageAggregate]
    USAGE_AGGREGATE_CLUSTER: _ClassVar[UsageAggregate]
    USAGE_AGGREGATE_RESOURCE_TYPE: _ClassVar[UsageAggregate]
CLUSTER_STATUS_UNSPECIFIED: ClusterStatus
CLUSTER_STATUS_PROVISIONING: ClusterStatus
CLUSTER_STATUS_STARTING: ClusterStatus
CLUSTER_STATUS_RUNNING: ClusterStatus
CLUSTER_STATUS_UPGRADING: ClusterStatus
CLUSTER_STATUS_UNHEALTHY: ClusterStatus
CLUSTER_STATUS_ERROR: ClusterStatus
CLUSTER_STATUS_LOST: ClusterStatus
CLUSTER_STATUS_STOPPING: ClusterStatus
CLUSTER_STATUS_STOPPED: ClusterStatus
CLUSTER_STATUS_DELETING: ClusterStatus
CLUSTER_STATUS_DELETED: ClusterStatus
DRIFT_KIND_UNSPECIFIED: DriftKind
DRIFT_KIND_ORPHAN_SHOOT: DriftKind
DRIFT_KIND_SHOOT_OF_DELETED_CLUSTER: DriftKind
DRIFT_KIND_MISSING_SHOOT: DriftKind
DRIFT_KIND_VERSION_MISMATCH: DriftKind
DRIFT_KIND_ORGANIZATION_MISMATCH: DriftKind
DRIFT_KIND_UNLABELED_SHOOT: DriftKind
SNAPSHOT_SOURCE_UNSPECIFIED: SnapshotSource
SNAPSHOT_SOURCE_API_SERVER: SnapshotSource
SNAPSHOT_SOURCE_PROMETHEUS: SnapshotSource
SNAPSHOT_SOURCE_MOCK: SnapshotSource
ORGANIZATION_ORDER_UNSPECIFIED: OrganizationOrder
ORGANIZATION_ORDER_NAME: OrganizationOrder
ORGANIZATION_ORDER_ALIAS: OrganizationOrder
ORGANIZATION_ORDER_CREATED: OrganizationOrder
CLUSTER_ORDER_UNSPECIFIED: ClusterOrder
CLUSTER_ORDER_NAME: ClusterOrder
CLUSTER_ORDER_ORGANIZATION: ClusterOrder
CLUSTER_ORDER_PODS: ClusterOrder
CLUSTER_ORDER_NODES: ClusterOrder
CLUSTER_ORDER_OBSERVED: ClusterOrder
CLUSTER_ORDER_STATUS_SINCE: ClusterOrder
USAGE_AGGREGATE_UNSPECIFIED: UsageAggregate
USAGE_AGGREGATE_ORGANIZATION: UsageAggregate
USAGE_AGGREGATE_CLUSTER: UsageAggregate
USAGE_AGGREGATE_RESOURCE_TYPE: UsageAggregate

class ListOrganizationsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "query", "order", "descending")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    DESCENDING_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    query: str
    order: OrganizationOrder
    descending: bool
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., query: _Optional[str] = ..., order: _Optional[_Union[OrganizationOrder, str]] = ..., descending: _Optional[bool] = ...) -> None: ...

class ListOrganizationsResponse(_message.Message):
    __slots__ = ("organizations", "next_page_token")
    ORGANIZATIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    organizations: _containers.RepeatedCompositeFieldContainer[OrganizationSummary]
    next_page_token: str
    def __init__(self, organizations: _Optional[_Iterable[_Union[OrganizationSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class OrganizationSummary(_message.Message):
    __slots__ = ("id", "name", "alias", "listed_publicly", "created", "deleted", "clusters", "projects", "namespaces", "ready_nodes", "pods", "clusters_needing_attention")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ALIAS_FIELD_NUMBER: _ClassVar[int]
    LISTED_PUBLICLY_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    READY_NODES_FIELD_NUMBER: _ClassVar[int]
    PODS_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_NEEDING_ATTENTION_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    alias: str
    listed_publicly: bool
    created: _timestamp_pb2.Timestamp
    deleted: _timestamp_pb2.Timestamp
    clusters: int
    projects: int
    namespaces: int
    ready_nodes: int
    pods: int
    clusters_needing_attention: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., alias: _Optional[str] = ..., listed_publicly: _Optional[bool] = ..., created: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., clusters: _Optional[int] = ..., projects: _Optional[int] = ..., namespaces: _Optional[int] = ..., ready_nodes: _Optional[int] = ..., pods: _Optional[int] = ..., clusters_needing_attention: _Optional[int] = ...) -> None: ...

class ListClustersRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "organization_id", "statuses", "needs_attention", "stale", "region", "include_deleted", "query", "order", "descending")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    NEEDS_ATTENTION_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DELETED_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    DESCENDING_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    organization_id: str
    statuses: _containers.RepeatedScalarFieldContainer[ClusterStatus]
    needs_attention: bool
    stale: bool
    region: str
    include_deleted: bool
    query: str
    order: ClusterOrder
    descending: bool
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., organization_id: _Optional[str] = ..., statuses: _Optional[_Iterable[_Union[ClusterStatus, str]]] = ..., needs_attention: _Optional[bool] = ..., stale: _Optional[bool] = ..., region: _Optional[str] = ..., include_deleted: _Optional[bool] = ..., query: _Optional[str] = ..., order: _Optional[_Union[ClusterOrder, str]] = ..., descending: _Optional[bool] = ...) -> None: ...

class ListClustersResponse(_message.Message):
    __slots__ = ("clusters", "next_page_token")
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    clusters: _containers.RepeatedCompositeFieldContainer[ClusterSummary]
    next_page_token: str
    def __init__(self, clusters: _Optional[_Iterable[_Union[ClusterSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ClusterSummary(_message.Message):
    __slots__ = ("id", "name", "organization_id", "organization_name", "organization_alias", "region", "kubernetes_version", "observed_kubernetes_version", "status", "snapshot", "stale", "open_drift_findings", "created", "deleted", "shoot_status_changed")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_NAME_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ALIAS_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    KUBERNETES_VERSION_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_KUBERNETES_VERSION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    OPEN_DRIFT_FINDINGS_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    SHOOT_STATUS_CHANGED_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    organization_id: str
    organization_name: str
    organization_alias: str
    region: str
    kubernetes_version: str
    observed_kubernetes_version: str
    status: ClusterStatus
    snapshot: ClusterSnapshot
    stale: bool
    open_drift_findings: int
    created: _timestamp_pb2.Timestamp
    deleted: _timestamp_pb2.Timestamp
    shoot_status_changed: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., organization_id: _Optional[str] = ..., organization_name: _Optional[str] = ..., organization_alias: _Optional[str] = ..., region: _Optional[str] = ..., kubernetes_version: _Optional[str] = ..., observed_kubernetes_version: _Optional[str] = ..., status: _Optional[_Union[ClusterStatus, str]] = ..., snapshot: _Optional[_Union[ClusterSnapshot, _Mapping]] = ..., stale: _Optional[bool] = ..., open_drift_findings: _Optional[int] = ..., created: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., shoot_status_changed: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ClusterSnapshot(_message.Message):
    __slots__ = ("observed", "age_seconds", "nodes", "ready_nodes", "pods", "allocatable_pods", "cpu_allocatable_millicores", "memory_allocatable_bytes", "last_error", "last_error_at", "source")
    OBSERVED_FIELD_NUMBER: _ClassVar[int]
    AGE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    READY_NODES_FIELD_NUMBER: _ClassVar[int]
    PODS_FIELD_NUMBER: _ClassVar[int]
    ALLOCATABLE_PODS_FIELD_NUMBER: _ClassVar[int]
    CPU_ALLOCATABLE_MILLICORES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ALLOCATABLE_BYTES_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_AT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    observed: _timestamp_pb2.Timestamp
    age_seconds: int
    nodes: int
    ready_nodes: int
    pods: int
    allocatable_pods: int
    cpu_allocatable_millicores: int
    memory_allocatable_bytes: int
    last_error: str
    last_error_at: _timestamp_pb2.Timestamp
    source: SnapshotSource
    def __init__(self, observed: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., age_seconds: _Optional[int] = ..., nodes: _Optional[int] = ..., ready_nodes: _Optional[int] = ..., pods: _Optional[int] = ..., allocatable_pods: _Optional[int] = ..., cpu_allocatable_millicores: _Optional[int] = ..., memory_allocatable_bytes: _Optional[int] = ..., last_error: _Optional[str] = ..., last_error_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., source: _Optional[_Union[SnapshotSource, str]] = ...) -> None: ...

class ListDriftFindingsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "kind", "organization_id", "cluster_id", "include_resolved")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RESOLVED_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    kind: DriftKind
    organization_id: str
    cluster_id: str
    include_resolved: bool
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., kind: _Optional[_Union[DriftKind, str]] = ..., organization_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., include_resolved: _Optional[bool] = ...) -> None: ...

class ListDriftFindingsResponse(_message.Message):
    __slots__ = ("findings", "next_page_token")
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    findings: _containers.RepeatedCompositeFieldContainer[DriftFinding]
    next_page_token: str
    def __init__(self, findings: _Optional[_Iterable[_Union[DriftFinding, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DriftFinding(_message.Message):
    __slots__ = ("id", "kind", "subject", "cluster_id", "cluster_name", "organization_id", "organization_name", "shoot_uid", "shoot_name", "shoot_namespace", "details", "first_detected", "last_detected", "resolved")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_NAME_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_NAME_FIELD_NUMBER: _ClassVar[int]
    SHOOT_UID_FIELD_NUMBER: _ClassVar[int]
    SHOOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SHOOT_NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    FIRST_DETECTED_FIELD_NUMBER: _ClassVar[int]
    LAST_DETECTED_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: DriftKind
    subject: str
    cluster_id: str
    cluster_name: str
    organization_id: str
    organization_name: str
    shoot_uid: str
    shoot_name: str
    shoot_namespace: str
    details: _struct_pb2.Struct
    first_detected: _timestamp_pb2.Timestamp
    last_detected: _timestamp_pb2.Timestamp
    resolved: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[_Union[DriftKind, str]] = ..., subject: _Optional[str] = ..., cluster_id: _Optional[str] = ..., cluster_name: _Optional[str] = ..., organization_id: _Optional[str] = ..., organization_name: _Optional[str] = ..., shoot_uid: _Optional[str] = ..., shoot_name: _Optional[str] = ..., shoot_namespace: _Optional[str] = ..., details: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., first_detected: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_detected: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resolved: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetClusterRequest(_message.Message):
    __slots__ = ("id", "include_resolved")
    ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RESOLVED_FIELD_NUMBER: _ClassVar[int]
    id: str
    include_resolved: bool
    def __init__(self, id: _Optional[str] = ..., include_resolved: _Optional[bool] = ...) -> None: ...

class GetClusterResponse(_message.Message):
    __slots__ = ("cluster", "node_pools", "projects", "namespaces", "open_findings", "ledger", "sync", "resolved_findings", "resolved_findings_truncated")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    NODE_POOLS_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    OPEN_FINDINGS_FIELD_NUMBER: _ClassVar[int]
    LEDGER_FIELD_NUMBER: _ClassVar[int]
    SYNC_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FINDINGS_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FINDINGS_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    cluster: ClusterSummary
    node_pools: _containers.RepeatedCompositeFieldContainer[NodePool]
    projects: _containers.RepeatedCompositeFieldContainer[Project]
    namespaces: _containers.RepeatedCompositeFieldContainer[Namespace]
    open_findings: _containers.RepeatedCompositeFieldContainer[DriftFinding]
    ledger: _containers.RepeatedCompositeFieldContainer[LedgerCount]
    sync: SyncState
    resolved_findings: _containers.RepeatedCompositeFieldContainer[DriftFinding]
    resolved_findings_truncated: bool
    def __init__(self, cluster: _Optional[_Union[ClusterSummary, _Mapping]] = ..., node_pools: _Optional[_Iterable[_Union[NodePool, _Mapping]]] = ..., projects: _Optional[_Iterable[_Union[Project, _Mapping]]] = ..., namespaces: _Optional[_Iterable[_Union[Namespace, _Mapping]]] = ..., open_findings: _Optional[_Iterable[_Union[DriftFinding, _Mapping]]] = ..., ledger: _Optional[_Iterable[_Union[LedgerCount, _Mapping]]] = ..., sync: _Optional[_Union[SyncState, _Mapping]] = ..., resolved_findings: _Optional[_Iterable[_Union[DriftFinding, _Mapping]]] = ..., resolved_findings_truncated: _Optional[bool] = ...) -> None: ...

class NodePool(_message.Message):
    __slots__ = ("id", "name", "machine_type", "autoscale_min", "autoscale_max", "snapshot")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MACHINE_TYPE_FIELD_NUMBER: _ClassVar[int]
    AUTOSCALE_MIN_FIELD_NUMBER: _ClassVar[int]
    AUTOSCALE_MAX_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    machine_type: str
    autoscale_min: int
    autoscale_max: int
    snapshot: NodePoolSnapshot
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., machine_type: _Optional[str] = ..., autoscale_min: _Optional[int] = ..., autoscale_max: _Optional[int] = ..., snapshot: _Optional[_Union[NodePoolSnapshot, _Mapping]] = ...) -> None: ...

class NodePoolSnapshot(_message.Message):
    __slots__ = ("observed", "nodes", "ready_nodes")
    OBSERVED_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    READY_NODES_FIELD_NUMBER: _ClassVar[int]
    observed: _timestamp_pb2.Timestamp
    nodes: int
    ready_nodes: int
    def __init__(self, observed: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., nodes: _Optional[int] = ..., ready_nodes: _Optional[int] = ...) -> None: ...

class Project(_message.Message):
    __slots__ = ("id", "name", "alias", "namespaces")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ALIAS_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    alias: str
    namespaces: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., alias: _Optional[str] = ..., namespaces: _Optional[int] = ...) -> None: ...

class Namespace(_message.Message):
    __slots__ = ("id", "name", "project_id", "project_name", "snapshot", "kubernetes_name")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_NAME_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    KUBERNETES_NAME_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    project_id: str
    project_name: str
    snapshot: NamespaceSnapshot
    kubernetes_name: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., project_id: _Optional[str] = ..., project_name: _Optional[str] = ..., snapshot: _Optional[_Union[NamespaceSnapshot, _Mapping]] = ..., kubernetes_name: _Optional[str] = ...) -> None: ...

class NamespaceSnapshot(_message.Message):
    __slots__ = ("observed", "pods")
    OBSERVED_FIELD_NUMBER: _ClassVar[int]
    PODS_FIELD_NUMBER: _ClassVar[int]
    observed: _timestamp_pb2.Timestamp
    pods: int
    def __init__(self, observed: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., pods: _Optional[int] = ...) -> None: ...

class LedgerCount(_message.Message):
    __slots__ = ("resource_type", "active", "active_billable")
    RESOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_BILLABLE_FIELD_NUMBER: _ClassVar[int]
    resource_type: str
    active: int
    active_billable: int
    def __init__(self, resource_type: _Optional[str] = ..., active: _Optional[int] = ..., active_billable: _Optional[int] = ...) -> None: ...

class SyncState(_message.Message):
    __slots__ = ("sync_status", "sync_attempts", "sync_error", "sync_updated", "first_completed", "shoot_status", "shoot_operation", "shoot_message", "shoot_status_changed")
    SYNC_STATUS_FIELD_NUMBER: _ClassVar[int]
    SYNC_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    SYNC_ERROR_FIELD_NUMBER: _ClassVar[int]
    SYNC_UPDATED_FIELD_NUMBER: _ClassVar[int]
    FIRST_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    SHOOT_STATUS_FIELD_NUMBER: _ClassVar[int]
    SHOOT_OPERATION_FIELD_NUMBER: _ClassVar[int]
    SHOOT_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SHOOT_STATUS_CHANGED_FIELD_NUMBER: _ClassVar[int]
    sync_status: str
    sync_attempts: int
    sync_error: str
    sync_updated: _timestamp_pb2.Timestamp
    first_completed: _timestamp_pb2.Timestamp
    shoot_status: str
    shoot_operation: str
    shoot_message: str
    shoot_status_changed: _timestamp_pb2.Timestamp
    def __init__(self, sync_status: _Optional[str] = ..., sync_attempts: _Optional[int] = ..., sync_error: _Optional[str] = ..., sync_updated: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., first_completed: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., shoot_status: _Optional[str] = ..., shoot_operation: _Optional[str] = ..., shoot_message: _Optional[str] = ..., shoot_status_changed: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetFleetSummaryRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetFleetSummaryResponse(_message.Message):
    __slots__ = ("organizations", "organizations_listed", "clusters", "projects", "namespaces", "clusters_ready", "nodes", "ready_nodes", "pods", "allocatable_pods", "cpu_allocatable_millicores", "memory_allocatable_bytes", "clusters_by_status", "clusters_needing_attention", "clusters_stale", "open_findings_by_kind", "loops", "read", "totals_recorded", "standby")
    ORGANIZATIONS_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATIONS_LISTED_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_READY_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    READY_NODES_FIELD_NUMBER: _ClassVar[int]
    PODS_FIELD_NUMBER: _ClassVar[int]
    ALLOCATABLE_PODS_FIELD_NUMBER: _ClassVar[int]
    CPU_ALLOCATABLE_MILLICORES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ALLOCATABLE_BYTES_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_BY_STATUS_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_NEEDING_ATTENTION_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_STALE_FIELD_NUMBER: _ClassVar[int]
    OPEN_FINDINGS_BY_KIND_FIELD_NUMBER: _ClassVar[int]
    LOOPS_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    TOTALS_RECORDED_FIELD_NUMBER: _ClassVar[int]
    STANDBY_FIELD_NUMBER: _ClassVar[int]
    organizations: int
    organizations_listed: int
    clusters: int
    projects: int
    namespaces: int
    clusters_ready: int
    nodes: int
    ready_nodes: int
    pods: int
    allocatable_pods: int
    cpu_allocatable_millicores: int
    memory_allocatable_bytes: int
    clusters_by_status: _containers.RepeatedCompositeFieldContainer[ClusterStatusCount]
    clusters_needing_attention: int
    clusters_stale: int
    open_findings_by_kind: _containers.RepeatedCompositeFieldContainer[DriftKindCount]
    loops: _containers.RepeatedCompositeFieldContainer[LoopFreshness]
    read: _timestamp_pb2.Timestamp
    totals_recorded: _timestamp_pb2.Timestamp
    standby: StandbyReplay
    def __init__(self, organizations: _Optional[int] = ..., organizations_listed: _Optional[int] = ..., clusters: _Optional[int] = ..., projects: _Optional[int] = ..., namespaces: _Optional[int] = ..., clusters_ready: _Optional[int] = ..., nodes: _Optional[int] = ..., ready_nodes: _Optional[int] = ..., pods: _Optional[int] = ..., allocatable_pods: _Optional[int] = ..., cpu_allocatable_millicores: _Optional[int] = ..., memory_allocatable_bytes: _Optional[int] = ..., clusters_by_status: _Optional[_Iterable[_Union[ClusterStatusCount, _Mapping]]] = ..., clusters_needing_attention: _Optional[int] = ..., clusters_stale: _Optional[int] = ..., open_findings_by_kind: _Optional[_Iterable[_Union[DriftKindCount, _Mapping]]] = ..., loops: _Optional[_Iterable[_Union[LoopFreshness, _Mapping]]] = ..., read: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., totals_recorded: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., standby: _Optional[_Union[StandbyReplay, _Mapping]] = ...) -> None: ...

class StandbyReplay(_message.Message):
    __slots__ = ("lag_milliseconds", "last_replayed")
    LAG_MILLISECONDS_FIELD_NUMBER: _ClassVar[int]
    LAST_REPLAYED_FIELD_NUMBER: _ClassVar[int]
    lag_milliseconds: int
    last_replayed: _timestamp_pb2.Timestamp
    def __init__(self, lag_milliseconds: _Optional[int] = ..., last_replayed: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ClusterStatusCount(_message.Message):
    __slots__ = ("status", "clusters")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    status: ClusterStatus
    clusters: int
    def __init__(self, status: _Optional[_Union[ClusterStatus, str]] = ..., clusters: _Optional[int] = ...) -> None: ...

class DriftKindCount(_message.Message):
    __slots__ = ("kind", "findings")
    KIND_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    kind: DriftKind
    findings: int
    def __init__(self, kind: _Optional[_Union[DriftKind, str]] = ..., findings: _Optional[int] = ...) -> None: ...

class LoopFreshness(_message.Message):
    __slots__ = ("loop", "last_completed", "interval_seconds", "age_seconds", "shards", "shards_reporting")
    LOOP_FIELD_NUMBER: _ClassVar[int]
    LAST_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    AGE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    SHARDS_FIELD_NUMBER: _ClassVar[int]
    SHARDS_REPORTING_FIELD_NUMBER: _ClassVar[int]
    loop: str
    last_completed: _timestamp_pb2.Timestamp
    interval_seconds: int
    age_seconds: int
    shards: int
    shards_reporting: int
    def __init__(self, loop: _Optional[str] = ..., last_completed: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., interval_seconds: _Optional[int] = ..., age_seconds: _Optional[int] = ..., shards: _Optional[int] = ..., shards_reporting: _Optional[int] = ...) -> None: ...

class GetOrganizationRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetOrganizationResponse(_message.Message):
    __slots__ = ("organization", "listing_changes")
    ORGANIZATION_FIELD_NUMBER: _ClassVar[int]
    LISTING_CHANGES_FIELD_NUMBER: _ClassVar[int]
    organization: OrganizationSummary
    listing_changes: _containers.RepeatedCompositeFieldContainer[ListingChange]
    def __init__(self, organization: _Optional[_Union[OrganizationSummary, _Mapping]] = ..., listing_changes: _Optional[_Iterable[_Union[ListingChange, _Mapping]]] = ...) -> None: ...

class ListingChange(_message.Message):
    __slots__ = ("id", "listed_publicly", "previously_listed", "changed_by", "reason", "changed")
    ID_FIELD_NUMBER: _ClassVar[int]
    LISTED_PUBLICLY_FIELD_NUMBER: _ClassVar[int]
    PREVIOUSLY_LISTED_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    id: str
    listed_publicly: bool
    previously_listed: bool
    changed_by: str
    reason: str
    changed: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., listed_publicly: _Optional[bool] = ..., previously_listed: _Optional[bool] = ..., changed_by: _Optional[str] = ..., reason: _Optional[str] = ..., changed: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListInfrastructureResourcesRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "cluster_id", "resource_type", "billable", "include_destroyed")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    BILLABLE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DESTROYED_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    cluster_id: str
    resource_type: str
    billable: bool
    include_destroyed: bool
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., cluster_id: _Optional[str] = ..., resource_type: _Optional[str] = ..., billable: _Optional[bool] = ..., include_destroyed: _Optional[bool] = ...) -> None: ...

class ListInfrastructureResourcesResponse(_message.Message):
    __slots__ = ("resources", "next_page_token")
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    resources: _containers.RepeatedCompositeFieldContainer[InfrastructureResource]
    next_page_token: str
    def __init__(self, resources: _Optional[_Iterable[_Union[InfrastructureResource, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class InfrastructureResource(_message.Message):
    __slots__ = ("id", "cluster_id", "cluster_name", "organization_name", "resource_type", "resource_id", "name", "namespace", "billable", "created", "last_seen", "destroyed", "destroyed_reason", "worker_pool")
    ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_NAME_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    BILLABLE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    LAST_SEEN_FIELD_NUMBER: _ClassVar[int]
    DESTROYED_FIELD_NUMBER: _ClassVar[int]
    DESTROYED_REASON_FIELD_NUMBER: _ClassVar[int]
    WORKER_POOL_FIELD_NUMBER: _ClassVar[int]
    id: str
    cluster_id: str
    cluster_name: str
    organization_name: str
    resource_type: str
    resource_id: str
    name: str
    namespace: str
    billable: bool
    created: _timestamp_pb2.Timestamp
    last_seen: _timestamp_pb2.Timestamp
    destroyed: _timestamp_pb2.Timestamp
    destroyed_reason: str
    worker_pool: WorkerPoolSpec
    def __init__(self, id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., cluster_name: _Optional[str] = ..., organization_name: _Optional[str] = ..., resource_type: _Optional[str] = ..., resource_id: _Optional[str] = ..., name: _Optional[str] = ..., namespace: _Optional[str] = ..., billable: _Optional[bool] = ..., created: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_seen: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., destroyed: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., destroyed_reason: _Optional[str] = ..., worker_pool: _Optional[_Union[WorkerPoolSpec, _Mapping]] = ...) -> None: ...

class WorkerPoolSpec(_message.Message):
    __slots__ = ("machine_type", "minimum", "maximum")
    MACHINE_TYPE_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_FIELD_NUMBER: _ClassVar[int]
    machine_type: str
    minimum: int
    maximum: int
    def __init__(self, machine_type: _Optional[str] = ..., minimum: _Optional[int] = ..., maximum: _Optional[int] = ...) -> None: ...

class SearchNamespacesRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "query")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    query: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., query: _Optional[str] = ...) -> None: ...

class SearchNamespacesResponse(_message.Message):
    __slots__ = ("namespaces", "next_page_token")
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    namespaces: _containers.RepeatedCompositeFieldContainer[NamespaceMatch]
    next_page_token: str
    def __init__(self, namespaces: _Optional[_Iterable[_Union[NamespaceMatch, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class NamespaceMatch(_message.Message):
    __slots__ = ("id", "name", "project_id", "project_name", "cluster_id", "cluster_name", "organization_id", "organization_name", "organization_alias", "kubernetes_name")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_NAME_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_NAME_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_NAME_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ALIAS_FIELD_NUMBER: _ClassVar[int]
    KUBERNETES_NAME_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    project_id: str
    project_name: str
    cluster_id: str
    cluster_name: str
    organization_id: str
    organization_name: str
    organization_alias: str
    kubernetes_name: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., project_id: _Optional[str] = ..., project_name: _Optional[str] = ..., cluster_id: _Optional[str] = ..., cluster_name: _Optional[str] = ..., organization_id: _Optional[str] = ..., organization_name: _Optional[str] = ..., organization_alias: _Optional[str] = ..., kubernetes_name: _Optional[str] = ...) -> None: ...

class GetFleetTrendsRequest(_message.Message):
    __slots__ = ("start", "end", "step_seconds", "organization_id")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    STEP_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    step_seconds: int
    organization_id: str
    def __init__(self, start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., step_seconds: _Optional[int] = ..., organization_id: _Optional[str] = ...) -> None: ...

class GetFleetTrendsResponse(_message.Message):
    __slots__ = ("points",)
    POINTS_FIELD_NUMBER: _ClassVar[int]
    points: _containers.RepeatedCompositeFieldContainer[TrendPoint]
    def __init__(self, points: _Optional[_Iterable[_Union[TrendPoint, _Mapping]]] = ...) -> None: ...

class TrendPoint(_message.Message):
    __slots__ = ("at", "clusters", "clusters_by_status", "nodes", "ready_nodes", "pods", "cpu_allocatable_millicores", "memory_allocatable_bytes", "open_findings_by_kind")
    AT_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_BY_STATUS_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    READY_NODES_FIELD_NUMBER: _ClassVar[int]
    PODS_FIELD_NUMBER: _ClassVar[int]
    CPU_ALLOCATABLE_MILLICORES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ALLOCATABLE_BYTES_FIELD_NUMBER: _ClassVar[int]
    OPEN_FINDINGS_BY_KIND_FIELD_NUMBER: _ClassVar[int]
    at: _timestamp_pb2.Timestamp
    clusters: int
    clusters_by_status: _containers.RepeatedCompositeFieldContainer[ClusterStatusCount]
    nodes: int
    ready_nodes: int
    pods: int
    cpu_allocatable_millicores: int
    memory_allocatable_bytes: int
    open_findings_by_kind: _containers.RepeatedCompositeFieldContainer[DriftKindCount]
    def __init__(self, at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., clusters: _Optional[int] = ..., clusters_by_status: _Optional[_Iterable[_Union[ClusterStatusCount, _Mapping]]] = ..., nodes: _Optional[int] = ..., ready_nodes: _Optional[int] = ..., pods: _Optional[int] = ..., cpu_allocatable_millicores: _Optional[int] = ..., memory_allocatable_bytes: _Optional[int] = ..., open_findings_by_kind: _Optional[_Iterable[_Union[DriftKindCount, _Mapping]]] = ...) -> None: ...

class ListUsageRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "start", "end", "step_seconds", "aggregate", "organization_id", "cluster_id", "resource_type", "include_non_billable")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    STEP_SECONDS_FIELD_NUMBER: _ClassVar[int]
    AGGREGATE_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_NON_BILLABLE_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    step_seconds: int
    aggregate: UsageAggregate
    organization_id: str
    cluster_id: str
    resource_type: str
    include_non_billable: bool
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., step_seconds: _Optional[int] = ..., aggregate: _Optional[_Union[UsageAggregate, str]] = ..., organization_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., resource_type: _Optional[str] = ..., include_non_billable: _Optional[bool] = ...) -> None: ...

class ListUsageResponse(_message.Message):
    __slots__ = ("groups", "next_page_token", "read")
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    groups: _containers.RepeatedCompositeFieldContainer[UsageGroup]
    next_page_token: str
    read: _timestamp_pb2.Timestamp
    def __init__(self, groups: _Optional[_Iterable[_Union[UsageGroup, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., read: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class UsageGroup(_message.Message):
    __slots__ = ("organization_id", "organization_name", "cluster_id", "cluster_name", "resource_type", "steps")
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_NAME_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    organization_id: str
    organization_name: str
    cluster_id: str
    cluster_name: str
    resource_type: str
    steps: _containers.RepeatedCompositeFieldContainer[UsageStep]
    def __init__(self, organization_id: _Optional[str] = ..., organization_name: _Optional[str] = ..., cluster_id: _Optional[str] = ..., cluster_name: _Optional[str] = ..., resource_type: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[UsageStep, _Mapping]]] = ...) -> None: ...

class UsageStep(_message.Message):
    __slots__ = ("start", "end", "lower_resource_seconds", "upper_resource_seconds", "peak")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    LOWER_RESOURCE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    UPPER_RESOURCE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    PEAK_FIELD_NUMBER: _ClassVar[int]
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    lower_resource_seconds: float
    upper_resource_seconds: float
    peak: int
    def __init__(self, start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., lower_resource_seconds: _Optional[float] = ..., upper_resource_seconds: _Optional[float] = ..., peak: _Optional[int] = ...) -> None: ...

class ListFindingHistoryRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "kind", "organization_id", "cluster_id", "open_only")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ORGANIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    OPEN_ONLY_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    kind: DriftKind
    organization_id: str
    cluster_id: str
    open_only: bool
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., kind: _Optional[_Union[DriftKind, str]] = ..., organization_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., open_only: _Optional[bool] = ...) -> None: ...

class ListFindingHistoryResponse(_message.Message):
    __slots__ = ("findings", "next_page_token")
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    findings: _containers.RepeatedCompositeFieldContainer[FindingHistory]
    next_page_token: str
    def __init__(self, findings: _Optional[_Iterable[_Union[FindingHistory, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class FindingHistory(_message.Message):
    __slots__ = ("kind", "subject", "latest", "first_detected", "last_detected", "opened", "resolved", "open_seconds", "open")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    LATEST_FIELD_NUMBER: _ClassVar[int]
    FIRST_DETECTED_FIELD_NUMBER: _ClassVar[int]
    LAST_DETECTED_FIELD_NUMBER: _ClassVar[int]
    OPENED_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FIELD_NUMBER: _ClassVar[int]
    OPEN_SECONDS_FIELD_NUMBER: _ClassVar[int]
    OPEN_FIELD_NUMBER: _ClassVar[int]
    kind: DriftKind
    subject: str
    latest: DriftFinding
    first_detected: _timestamp_pb2.Timestamp
    last_detected: _timestamp_pb2.Timestamp
    opened: int
    resolved: int
    open_seconds: int
    open: bool
    def __init__(self, kind: _Optional[_Union[DriftKind, str]] = ..., subject: _Optional[str] = ..., latest: _Optional[_Union[DriftFinding, _Mapping]] = ..., first_detected: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_detected: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., opened: _Optional[int] = ..., resolved: _Optional[int] = ..., open_seconds: _Optional[int] = ..., open: _Optional[bool] = ...) -> None: ...
