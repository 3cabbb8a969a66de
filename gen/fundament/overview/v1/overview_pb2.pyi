import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetPlatformOverviewRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetPlatformOverviewResponse(_message.Message):
    __slots__ = ("organizations", "totals", "read")
    ORGANIZATIONS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    organizations: _containers.RepeatedCompositeFieldContainer[OrganizationOverview]
    totals: OverviewTotals
    read: _timestamp_pb2.Timestamp
    def __init__(self, organizations: _Optional[_Iterable[_Union[OrganizationOverview, _Mapping]]] = ..., totals: _Optional[_Union[OverviewTotals, _Mapping]] = ..., read: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class OrganizationOverview(_message.Message):
    __slots__ = ("name", "alias", "clusters", "projects", "namespaces")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ALIAS_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    name: str
    alias: str
    clusters: int
    projects: int
    namespaces: int
    def __init__(self, name: _Optional[str] = ..., alias: _Optional[str] = ..., clusters: _Optional[int] = ..., projects: _Optional[int] = ..., namespaces: _Optional[int] = ...) -> None: ...

class OverviewTotals(_message.Message):
    __slots__ = ("organizations", "clusters", "projects", "namespaces")
    ORGANIZATIONS_FIELD_NUMBER: _ClassVar[int]
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    organizations: int
    clusters: int
    projects: int
    namespaces: int
    def __init__(self, organizations: _Optional[int] = ..., clusters: _Optional[int] = ..., projects: _Optional[int] = ..., namespaces: _Optional[int] = ...) -> None: ...
