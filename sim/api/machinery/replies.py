"""Answers as the HTTP layer sends them: JSON bodies, Status errors and streamed lists."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from sim.api.machinery.kinds import Kind
from sim.api.machinery.listcache import ListCache
from sim.api.machinery.listing import (
    ListContext,
    ListOptions,
    ListPage,
    Representation,
    content_type,
    encode_items,
    list_head,
    list_page,
    metadata_only,
    negotiate,
)
from sim.api.machinery.status import ApiError, method_not_allowed, not_found
from sim.world.store import Store

Json = dict[str, Any]


@dataclass(slots=True)
class Reply:
    status: int
    content_type: str
    chunks: Iterable[bytes]
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(obj: Json, status: int = 200, *, media_type: str = "application/json") -> Reply:
    return Reply(status, media_type, [orjson.dumps(obj)])


def error_reply(error: ApiError) -> Reply:
    return json_reply(error.status_body(), error.code)


def text_reply(text: str, status: int = 200) -> Reply:
    return Reply(status, "text/plain; charset=utf-8", [text.encode()])


def read_objects(
    *,
    method: str,
    kind: Kind,
    store: Store[Any],
    render: Callable[[Any], Json],
    namespace: str | None,
    name: str | None,
    query: Mapping[str, str],
    accept: str,
    context: ListContext,
    chunk_bytes: int,
    cache: ListCache | None = None,
    render_key: Hashable = None,
) -> Reply:
    """GET of one object or a list of `kind` from `store` (other verbs: 405).

    With a `cache`, a whole list's encoded items are kept (`sim/api/machinery/listcache.py`);
    `render_key` must then name everything `render` reads besides the record.
    """
    if method != "GET":
        raise method_not_allowed()
    if query.get("watch") in {"1", "true"}:
        raise ApiError(400, "BadRequest", "watch is not supported by fleet-sim")
    if name is not None:
        representation = negotiate(accept, single=True)
        record = store.get(namespace or "", name) if (namespace is not None) == kind.namespaced else None
        if record is None:
            raise not_found(kind.group, kind.resource, name)
        obj = render(record)
        body = metadata_only(obj) if representation is Representation.METADATA else obj
        return json_reply(body, media_type=content_type(representation, single=True))
    representation = negotiate(accept, single=False)
    options = ListOptions.parse(query, kind)
    page = list_page(store, render, options, context, namespace=namespace)
    head = list_head(kind, representation, page.metadata)
    chunks = _list_chunks(head, page, representation, chunk_bytes, typed_items=kind.custom_resource)
    if cache is not None and page.complete:
        selectors = (query.get("labelSelector", ""), query.get("fieldSelector", ""))
        chunks = _through_cache(
            chunks, cache, lambda: (store.version, render_key, namespace, representation, *selectors)
        )
    return Reply(200, content_type(representation, single=False), chunks)


def _list_chunks(
    head: bytes, page: ListPage, representation: Representation, chunk_bytes: int, *, typed_items: bool
) -> Iterator[bytes]:
    yield head
    yield from encode_items(page.items, representation, chunk_bytes=chunk_bytes, typed_items=typed_items)


def _through_cache(chunks: Iterator[bytes], cache: ListCache, key: Callable[[], Hashable]) -> Iterator[bytes]:
    """A whole list's chunks with its items from `cache`, or into it when they fit one chunk."""
    yield next(chunks)  # the head, made for this request
    entry = key()  # taken as the items are produced, so it names the state they show
    items = cache.get(entry)
    if items is not None:
        yield items
        return
    first = next(chunks)
    following = next(chunks, None)
    if following is None:
        cache.put(entry, first)
        yield first
        return
    yield first
    yield following
    yield from chunks
