"""ListSplitter: bounded batches of whole items from a streamed list body, or a clear failure."""

from __future__ import annotations

import gc
from typing import Any

import orjson
import pytest

from collector.kube.liststream import ItemTooLarge, ListSplitter, MalformedList


def metadata_list(count: int, *, with_managed_fields: bool = True) -> bytes:
    items = []
    for i in range(count):
        meta: dict[str, Any] = {
            "name": f"pod-{i}",
            "namespace": f"ns-{i % 7}",
            "uid": f"uid-{i}",
            "labels": {"app": f"a{i % 3}", "note": 'has "quotes" and {"kind":"PartialObjectMetadata",}'},
            "annotations": {"raw": '{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1"}'},
        }
        if with_managed_fields:
            meta["managedFields"] = [{"manager": "kubelet", "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}]
        items.append({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta})
    return orjson.dumps(
        {
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": {"resourceVersion": "4711"},
            "items": items,
        }
    )


def node_list(count: int) -> bytes:
    # Like a Go apiserver: items carry no kind, and start with {"metadata":{"name":
    items = [
        {
            "metadata": {"name": f"node-{i}", "labels": {"worker.gardener.cloud/pool": "w"}},
            "spec": {"providerID": f"aws:///eu/i-{i}"},
            "status": {"allocatable": {"cpu": "3880m"}, "conditions": [{"type": "Ready", "status": "True"}]},
        }
        for i in range(count)
    ]
    return orjson.dumps({"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "9"}, "items": items})


def split(body: bytes, *, chunk: int, batch_bytes: int) -> tuple[list[dict[str, Any]], dict[str, Any], ListSplitter]:
    received: list[dict[str, Any]] = []
    splitter = ListSplitter(received.extend, batch_bytes=batch_bytes)
    for start in range(0, len(body), chunk):
        splitter.feed(body[start : start + chunk])
    rest = splitter.finish()
    return received, rest, splitter


@pytest.mark.parametrize(
    ("body", "chunk", "batch_bytes"),
    [
        (metadata_list(500), 1 << 20, 4 << 10),
        (metadata_list(500), 977, 8 << 10),
        (metadata_list(50), 1, 1 << 10),
        (node_list(300), 4096, 2 << 10),
        (metadata_list(3), 10, 1 << 20),
    ],
    ids=["metadata-big-chunks", "metadata-odd-chunks", "byte-by-byte", "go-style-nodes", "fewer-than-a-batch"],
)
def test_items_arrive_whole_and_in_order(body: bytes, chunk: int, batch_bytes: int) -> None:
    expected = orjson.loads(body)
    received, rest, splitter = split(body, chunk=chunk, batch_bytes=batch_bytes)
    assert received == expected["items"]
    assert rest == {k: v for k, v in expected.items() if k != "items"}
    assert splitter.items_seen == len(expected["items"])


def test_batches_stay_bounded_for_a_large_list() -> None:
    body = metadata_list(3000)
    sizes: list[int] = []
    splitter = ListSplitter(lambda items: sizes.append(len(items)), batch_bytes=64 << 10)
    for start in range(0, len(body), 1 << 16):
        splitter.feed(body[start : start + (1 << 16)])
    splitter.finish()
    assert sum(sizes) == 3000
    assert len(sizes) > 10, "a list many times the batch size must arrive in many batches"
    item_bytes = len(body) / 3000
    # A batch holds about batch_bytes plus at most one chunk of items.
    assert max(sizes) * item_bytes < (64 << 10) + (1 << 16) + 2 * item_bytes


def test_an_empty_list_has_no_items() -> None:
    body = orjson.dumps({"kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": []})
    received, rest, _ = split(body, chunk=3, batch_bytes=1)
    assert received == []
    assert rest["metadata"] == {"resourceVersion": "1"}


def test_items_before_metadata_still_split() -> None:
    items = [{"kind": "PartialObjectMetadata", "metadata": {"name": f"p{i}"}} for i in range(200)]
    body = orjson.dumps({"items": items, "kind": "List", "metadata": {"resourceVersion": "5"}})
    received, rest, splitter = split(body, chunk=512, batch_bytes=1024)
    assert received == items
    assert rest == {"kind": "List", "metadata": {"resourceVersion": "5"}}
    assert splitter.batches > 1


def test_pretty_printed_lists_split_too() -> None:
    items = [{"kind": "Thing", "metadata": {"name": f"t{i}"}} for i in range(100)]
    body = orjson.dumps({"kind": "ThingList", "items": items}, option=orjson.OPT_INDENT_2)
    received, _, splitter = split(body, chunk=256, batch_bytes=512)
    assert received == items
    assert splitter.batches > 1


def test_a_nested_object_that_starts_like_an_item_never_breaks_an_item() -> None:
    # Every item holds a nested object that begins with the same bytes as the items themselves.
    items = [{"metadata": {"name": f"n{i}", "x": [{"metadata": {"name": "inner"}}]}} for i in range(300)]
    body = orjson.dumps({"kind": "List", "items": items})
    received, _, splitter = split(body, chunk=700, batch_bytes=900)
    assert received == items
    assert splitter.batches > 1, "a misleading nested object must not turn splitting off"


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9, 0.999])
def test_a_truncated_body_fails_even_after_good_batches(cut: float) -> None:
    body = metadata_list(400)
    truncated = body[: int(len(body) * cut)]
    splitter = ListSplitter(lambda items: None, batch_bytes=4 << 10)
    splitter.feed(truncated)
    with pytest.raises(MalformedList, match="not complete JSON"):
        splitter.finish()


@pytest.mark.parametrize(
    "body",
    [b"", b"not json", b"[1,2,3]", b'{"items": 5}', b'{"items":[1,2'],
    ids=["empty", "text", "array", "items-not-array", "cut-short"],
)
def test_bodies_that_are_no_list_are_refused(body: bytes) -> None:
    splitter = ListSplitter(lambda items: None, batch_bytes=1)
    splitter.feed(body)
    with pytest.raises(MalformedList):
        splitter.finish()


def test_a_status_object_comes_back_whole() -> None:
    body = orjson.dumps({"kind": "Status", "status": "Failure", "message": "nope", "code": 500})
    received, rest, _ = split(body, chunk=4, batch_bytes=1)
    assert received == []
    assert rest["message"] == "nope"


def test_the_cyclic_gc_is_restored_after_parsing() -> None:
    assert gc.isenabled()
    split(metadata_list(100), chunk=1024, batch_bytes=2048)
    assert gc.isenabled()


def test_an_item_that_never_ends_is_refused_with_the_buffer_bounded() -> None:
    received: list[dict[str, Any]] = []
    splitter = ListSplitter(received.extend, batch_bytes=4 << 10, max_item_bytes=16 << 10)
    splitter.feed(node_list(3)[:-2] + b',{"metadata":{"name":"endless","annotations":{"a":"')
    with pytest.raises(ItemTooLarge, match="one item of the list is over"):
        for _ in range(1000):
            splitter.feed(b"a" * 1024)
    assert [item["metadata"]["name"] for item in received] == ["node-0", "node-1", "node-2"][: len(received)]


def test_items_under_the_bound_still_arrive() -> None:
    big = {"metadata": {"name": "big", "annotations": {"a": "a" * (12 << 10)}}}
    body = orjson.dumps({"kind": "List", "metadata": {}, "items": [big, big, big]})
    received: list[dict[str, Any]] = []
    splitter = ListSplitter(received.extend, batch_bytes=4 << 10, max_item_bytes=16 << 10)
    for start in range(0, len(body), 1000):
        splitter.feed(body[start : start + 1000])
    splitter.finish()
    assert len(received) == 3


@pytest.mark.parametrize(
    "body",
    [b'{"kind":"List","items":[' + b" " * (64 << 10), b'{"kind":"List","metadata":{"x":"' + b"a" * (64 << 10)],
    ids=["no-item-ever-starts", "no-items-key"],
)
def test_bytes_that_never_become_items_are_refused_too(body: bytes) -> None:
    splitter = ListSplitter(lambda _: None, batch_bytes=4 << 10, max_item_bytes=16 << 10)
    with pytest.raises(ItemTooLarge, match="over"):
        for start in range(0, len(body), 1024):
            splitter.feed(body[start : start + 1024])
