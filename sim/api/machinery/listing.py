"""List semantics of a Kubernetes API server (as kube-apiserver before 1.34 lists), without I/O.

- `resourceVersion=0`: served from the watch cache, which (before Kubernetes 1.34) ignores `limit`
  and returns everything in one response.
- unset `resourceVersion` with `limit`: pages in key order; `metadata.continue` names the key to
  start after. A continue token expires (410 `Expired`) once history is compacted or after the
  token lifetime (etcd compacts every five minutes); the 410 carries an inconsistent token to go on
  with, as the real server does. A continued page comes from the current state: this store keeps no
  MVCC history, which only matters when the world changes mid-list.
- `resourceVersion` with `continue` is a 400; a `resourceVersion` ahead of the store's is a 504.
- Label and field selectors filter; `remainingItemCount` is reported only without selectors.
- `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` turns the answer into
  a metadata-only list (`as=PartialObjectMetadata` for a single object).
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import orjson

from sim.api.machinery.kinds import Kind
from sim.api.machinery.selectors import (
    FieldSelector,
    LabelSelector,
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)
from sim.api.machinery.status import bad_request, expired, not_acceptable, too_large_resource_version
from sim.world.store import Record, Store, record_key

Json = dict[str, Any]
Render = Callable[[Any], Json]

META_GROUP_VERSION = "meta.k8s.io/v1"
CONTINUE_FORMAT = "meta.k8s.io/v1"
EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)


class Representation(Enum):
    FULL = "full"
    METADATA = "metadata"


def negotiate(accept: str, *, single: bool) -> Representation:
    """Pick the answer's representation from an Accept header, like the server's content negotiation."""
    if not accept.strip():
        return Representation.FULL
    wanted_as = "PartialObjectMetadata" if single else "PartialObjectMetadataList"
    for media_range in accept.split(","):
        media_type, *raw_params = (part.strip() for part in media_range.split(";"))
        params = dict(p.split("=", 1) for p in raw_params if "=" in p)
        params.pop("q", None)
        if media_type not in {"application/json", "application/*", "*/*"}:
            continue
        as_kind = params.get("as")
        if as_kind is None:
            return Representation.FULL
        if as_kind == wanted_as and params.get("g") == "meta.k8s.io" and params.get("v") == "v1":
            return Representation.METADATA
    raise not_acceptable(accept)


def content_type(representation: Representation, *, single: bool) -> str:
    if representation is Representation.METADATA:
        kind = "PartialObjectMetadata" if single else "PartialObjectMetadataList"
        return f"application/json;as={kind};g=meta.k8s.io;v=v1"
    return "application/json"


def metadata_only(obj: Json) -> Json:
    return {"kind": "PartialObjectMetadata", "apiVersion": META_GROUP_VERSION, "metadata": obj["metadata"]}


@dataclass(frozen=True, slots=True)
class ContinueToken:
    rv: int  # the list's resourceVersion; -1 after a 410 ("go on inconsistently")
    start: str  # the key to start at
    issued: float  # when the first page was served (simulator clock)

    def encode(self) -> str:
        raw = orjson.dumps({"v": CONTINUE_FORMAT, "rv": self.rv, "start": self.start, "t": self.issued})
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> ContinueToken:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            data = orjson.loads(raw)
            if data.get("v") != CONTINUE_FORMAT:
                raise ValueError("unexpected version")
            return cls(int(data["rv"]), str(data["start"]), float(data.get("t", 0)))
        except (binascii.Error, ValueError, KeyError, TypeError, AttributeError, orjson.JSONDecodeError) as error:
            raise bad_request(f"continue key is not valid: {error}") from None


@dataclass(frozen=True, slots=True)
class ListOptions:
    limit: int | None
    continue_token: ContinueToken | None
    resource_version: str | None
    labels: LabelSelector
    fields: FieldSelector

    @classmethod
    def parse(cls, query: Mapping[str, str], kind: Kind) -> ListOptions:
        """Read the list parameters of a request (400 on anything malformed)."""
        try:
            labels = parse_label_selector(query.get("labelSelector", ""))
            fields = parse_field_selector(query.get("fieldSelector", ""), kind.supported_fields)
        except SelectorError as error:
            raise bad_request(str(error)) from None
        limit: int | None = None
        if query.get("limit"):
            try:
                limit = int(query["limit"])
            except ValueError:
                raise bad_request(f"limit: Invalid value: {query['limit']!r}: must be an integer") from None
            if limit <= 0:
                limit = None  # the server treats 0 and negatives as "no limit"
        resource_version = query.get("resourceVersion") or None
        token = ContinueToken.decode(query["continue"]) if query.get("continue") else None
        if token is not None and resource_version not in {None, "0"}:
            raise bad_request("specifying resource version is not allowed when using continue")
        if resource_version is not None and not resource_version.isdigit():
            raise bad_request(f"resourceVersion: Invalid value: {resource_version!r}: must be a non-negative integer")
        return cls(limit, token, resource_version, labels, fields)


def field_value(obj: Json, path: str) -> str | None:
    """The string value of a dotted field path (`status.phase`), as field selectors compare it."""
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None and path == "spec.hostNetwork":
        return "false"
    return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class ListPage:
    """One list answer: its metadata and the objects, produced lazily."""

    metadata: Json
    items: Iterator[Json]
    complete: bool = False
    """The items are every matching object (no continue token, no limit): the same for the same store."""


@dataclass(frozen=True, slots=True)
class ListContext:
    """What a list needs to know about the store it reads."""

    current_rv: int
    compacted_rv: int
    now: float
    continue_ttl_seconds: float


def _matching(records: Iterator[Any], render: Render, options: ListOptions) -> Iterator[tuple[Any, Json]]:
    for record in records:
        obj = render(record)
        if options.labels.matches(obj["metadata"].get("labels") or {}) and options.fields.matches(
            functools.partial(field_value, obj)
        ):
            yield record, obj


def list_page(
    store: Store[Any], render: Render, options: ListOptions, context: ListContext, *, namespace: str | None
) -> ListPage:
    """Answer a list request against `store` (see the module docstring for the rules)."""
    token = options.continue_token
    rv = context.current_rv
    if options.resource_version not in {None, "0"} and int(options.resource_version or 0) > rv:
        raise too_large_resource_version(int(options.resource_version or 0), rv)
    start = ""
    if token is not None:
        too_old = token.rv != -1 and (
            token.rv < context.compacted_rv or context.now - token.issued > context.continue_ttl_seconds
        )
        if too_old:
            fresh = ContinueToken(-1, token.start, context.now).encode()
            raise expired(EXPIRED_MESSAGE, list_continue=fresh)
        start = token.start
        rv = token.rv if token.rv != -1 else rv
    cached = options.resource_version == "0" and token is None
    limit = None if cached else options.limit
    filtered = not (options.labels.empty and options.fields.empty)
    metadata: Json = {"resourceVersion": str(rv)}
    records = store.iter_from(start, namespace=namespace)
    if limit is None:
        return ListPage(metadata, (obj for _, obj in _matching(records, render, options)), complete=not start)
    page: list[Json] = []
    last: Record | None = None
    for record, obj in _matching(records, render, options):
        page.append(obj)
        last = record
        if len(page) == limit:
            break
    if last is not None and len(page) == limit:
        next_start = record_key(last.namespace, last.name) + "\x00"
        remaining = store.count_from(next_start, namespace=namespace)
        if remaining:
            issued = token.issued if token is not None and token.rv != -1 else context.now
            metadata["continue"] = ContinueToken(rv, next_start, issued).encode()
            if not filtered:
                metadata["remainingItemCount"] = remaining
    return ListPage(metadata, iter(page))


def list_head(kind: Kind, representation: Representation, metadata: Json) -> bytes:
    """The opening of a list body up to `"items":[`, so items can be streamed after it."""
    if representation is Representation.METADATA:
        head: Json = {"kind": "PartialObjectMetadataList", "apiVersion": META_GROUP_VERSION, "metadata": metadata}
    else:
        head = {"kind": kind.list_kind, "apiVersion": kind.api_version, "metadata": metadata}
    return orjson.dumps(head)[:-1] + b',"items":['


def encode_items(
    items: Iterator[Json], representation: Representation, *, chunk_bytes: int, typed_items: bool = False
) -> Iterator[bytes]:
    """The list's items as JSON, comma-separated, in chunks of about `chunk_bytes`, then `]}`.

    A built-in type's list carries `kind` and `apiVersion` once, on the list, not on each item
    (`typed_items=False`); a custom resource's list (served as unstructured) repeats them per item.
    """
    buffer = bytearray()
    first = True
    for obj in items:
        if not first:
            buffer += b","
        first = False
        item = obj
        if representation is Representation.METADATA:
            item = metadata_only(obj)
        elif not typed_items:
            item.pop("kind", None)
            item.pop("apiVersion", None)
        buffer += orjson.dumps(item)
        if len(buffer) >= chunk_bytes:
            yield bytes(buffer)
            buffer.clear()
    buffer += b"]}"
    yield bytes(buffer)
