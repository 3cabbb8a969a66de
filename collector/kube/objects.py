"""The shapes of Kubernetes objects as the collector reads them: plain TypedDicts over parsed JSON.

Bodies are parsed with orjson, never into the client's typed models (those cost several times the
CPU; docs/architecture.md, 'Lists come from the watch cache and are parsed as they stream'). These
types only name the fields the collector looks at.
"""

from __future__ import annotations

from typing import Any, TypedDict


class ListMeta(TypedDict, total=False):
    """What a list response says about itself (its `metadata`)."""

    resourceVersion: str
    remainingItemCount: int


class ObjectMeta(TypedDict, total=False):
    """The part of every object's `metadata` the collector reads."""

    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    creationTimestamp: str
    deletionTimestamp: str
    resourceVersion: str


class KubeObject(TypedDict, total=False):
    """One object as the API server sent it: metadata plus whatever spec and status it has."""

    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: dict[str, Any]
    status: dict[str, Any]
