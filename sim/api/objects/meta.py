"""Object metadata as a real API server writes it: uid, resourceVersion, timestamps, managedFields."""

from __future__ import annotations

from collections.abc import Hashable
from datetime import datetime, timedelta
from typing import Any

from sim.world import derive
from sim.world.clock import rfc3339

Json = dict[str, Any]

# Objects are created within an hour after their shoot (derived, so every render agrees).
_SPREAD_SECONDS = 3600


def created_at(base: datetime, *parts: object) -> datetime:
    """A creation time derived from the object's identity, shortly after `base`."""
    return base + timedelta(seconds=derive.stable_int("created", *parts) % _SPREAD_SECONDS)


def fields_v1(value: Any) -> Json:
    """The FieldsV1 shape server-side apply records for `value` (`{"f:key": {...}}`)."""
    if not isinstance(value, dict):
        return {}
    fields: Json = {}
    for key, child in value.items():
        if isinstance(child, dict):
            fields[f"f:{key}"] = {".": {}, **fields_v1(child)} if child else {}
        else:
            fields[f"f:{key}"] = {}
    return fields


def object_meta(
    *,
    name: str,
    uid: str,
    rv: int,
    created: datetime,
    namespace: str = "",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: Json | None = None,
    finalizers: list[str] | None = None,
    generate_name: str | None = None,
) -> Json:
    """`metadata` without managedFields (see `with_managed_fields`)."""
    meta: Json = {"name": name}
    if generate_name is not None:
        meta["generateName"] = generate_name
    if namespace:
        meta["namespace"] = namespace
    meta["uid"] = uid
    meta["resourceVersion"] = str(rv)
    meta["creationTimestamp"] = rfc3339(created)
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    if owner is not None:
        meta["ownerReferences"] = [owner]
    if finalizers:
        meta["finalizers"] = finalizers
    return meta


# FieldsV1 of objects that share a shape (same keys, other values), computed once: a list of
# 150,000 pods has a handful of shapes.
_FIELDS_BY_SHAPE: dict[tuple[str, Hashable], tuple[Json, Json]] = {}


def with_managed_fields(
    obj: Json, spec_manager: str, status_manager: str | None, *, shape: Hashable | None = None
) -> Json:
    """Add the two usual managedFields entries: the writer of metadata+spec and the status writer.

    `shape`, when given, promises that every object of this kind with the same shape has the same
    keys (so their FieldsV1 can be shared).
    """
    meta = obj["metadata"]
    moment = meta["creationTimestamp"]
    cached = _FIELDS_BY_SHAPE.get((obj["kind"], shape)) if shape is not None else None
    if cached is None:
        owned_spec: Json = {key: meta[key] for key in ("labels", "annotations", "ownerReferences") if key in meta}
        owned: Json = {"metadata": owned_spec} if owned_spec else {}
        if "spec" in obj:
            owned["spec"] = obj["spec"]
        cached = (fields_v1(owned), fields_v1({"status": obj.get("status") or {}}))
        if shape is not None:
            _FIELDS_BY_SHAPE[(obj["kind"], shape)] = cached
    entries = [_entry(spec_manager, obj["apiVersion"], moment, cached[0])]
    if status_manager is not None and obj.get("status"):
        entries.append(_entry(status_manager, obj["apiVersion"], moment, cached[1], subresource="status"))
    meta["managedFields"] = entries
    return obj


def _entry(manager: str, api_version: str, moment: str, fields: Json, *, subresource: str | None = None) -> Json:
    entry: Json = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": api_version,
        "time": moment,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource is not None:
        entry["subresource"] = subresource
    return entry


def owner_reference(api_version: str, kind: str, name: str, uid: str) -> Json:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def condition(kind: str, status: str, reason: str, message: str, moment: str, *, heartbeat: bool = False) -> Json:
    entry: Json = {"type": kind, "status": status, "reason": reason, "message": message}
    if heartbeat:
        entry["lastHeartbeatTime"] = moment
    entry["lastTransitionTime"] = moment
    return entry
