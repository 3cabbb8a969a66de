"""The values bound (collector/kube/values.py): counted before parsing, exact for valid JSON, refused unparsed.

The count is checked against a walk of the parsed document for documents built to confuse it
(escaped quotes and backslashes, structural characters inside strings, escapes across the chunk
boundary); the list splitter is checked to cut a dense batch smaller and to refuse one item that
holds too many values. The process-level proof (a worker under a memory cgroup) is
tests/collector/test_memory_cgroup.py.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from collector.kube.errors import BadResponse, TooLarge
from collector.kube.liststream import ItemTooLarge, ListSplitter
from collector.kube.values import MIN_BYTES_PER_VALUE, count_values, loads_bounded, over_bound


def walked(value: Any) -> int:
    """Values plus empty containers: what the count gives for valid JSON."""
    if isinstance(value, list):
        return 1 + (not value) + sum(walked(v) for v in value)
    if isinstance(value, dict):
        return 1 + (not value) + sum(walked(v) for v in value.values())
    return 1


TRICKY: list[Any] = [
    [],
    {},
    0,
    "a",
    [[0], [0]],
    {"a": 'x\\"[,{', "b": [1, 2, {"c": "\\\\"}]},
    '\\\\\\"',
    [1, "a,b", [], {}],
    ["x" * ((256 << 10) - 3) + '\\\\\\",[' + "," * 10, 1, 2],  # escapes across the chunk boundary
]


@pytest.mark.parametrize("document", TRICKY, ids=range(len(TRICKY)))
def test_the_count_is_the_values_of_valid_json(document: Any) -> None:
    assert count_values(orjson.dumps(document)) == walked(document)


def test_the_count_holds_for_random_documents_of_strings_that_look_like_json() -> None:
    pieces: list[Any] = ['\\",', "[{", [], {}, 1, 'ab"c', "\\\\", {"k": ["\\"]}]
    rng = random.Random(30)
    for _ in range(50):
        document = [rng.choice(pieces) for _ in range(rng.randint(0, 20_000))]
        assert count_values(orjson.dumps(document)) == walked(document)


def test_a_short_document_is_not_counted_and_a_dense_one_is_refused_unparsed() -> None:
    assert over_bound(b"[" + b"0," * 10 + b"0]", 100) is None  # too short to break it: never counted
    bomb = b"[" + b"[]," * 100_000 + b"[]]"
    assert over_bound(bomb, 1_000) == count_values(bomb) > 100_000
    with pytest.raises(TooLarge, match=r"more than 1,000 JSON values \(the test's bound\); refused unparsed"):
        loads_bounded(bomb, max_values=1_000, what="GET /x", bound="the test's bound")
    assert loads_bounded(bomb, max_values=200_002, what="GET /x", bound="b") == [[]] * 100_001
    with pytest.raises(BadResponse, match="not complete JSON"):
        loads_bounded(b"[1,", max_values=10, what="GET /x", bound="b")
    assert len(b"0,") == MIN_BYTES_PER_VALUE


def test_orjson_refuses_a_document_nested_deeper_than_1024() -> None:
    with pytest.raises(BadResponse, match="depth"):
        loads_bounded(b"[" * 1025 + b"]" * 1025, max_values=10_000, what="GET /x", bound="b")


def _list(items: list[Any]) -> bytes:
    return b'{"kind":"List","metadata":{"resourceVersion":"7"},"items":' + orjson.dumps(items) + b"}"


def test_a_dense_batch_is_cut_smaller_and_every_item_arrives() -> None:
    items = [{"metadata": {"name": f"n{i}", "fields": [[] for _ in range(50)]}} for i in range(2_000)]
    body = _list(items)
    batches: list[int] = []
    splitter = ListSplitter(lambda got: batches.append(len(got)), batch_bytes=64 << 10, max_values=5_000)
    for start in range(0, len(body), 16 << 10):
        splitter.feed(body[start : start + (16 << 10)])
    rest = splitter.finish()
    assert sum(batches) == len(items) and rest["metadata"] == {"resourceVersion": "7"}
    assert max(batches) * 53 <= 5_000  # every parsed batch under the values bound
    assert len(batches) > 2 * len(body) // (64 << 10)  # cut smaller than the bytes alone would have


def test_one_item_over_the_values_bound_is_refused_unparsed() -> None:
    items = [
        {"metadata": {"name": "ok"}},
        {"metadata": {"name": "bomb", "x": [[]] * 20_000}},
        {"metadata": {"name": "z"}},
    ]
    body = _list(items)
    splitter = ListSplitter(lambda got: None, batch_bytes=16 << 10, max_values=5_000)
    with pytest.raises(ItemTooLarge, match=r"holds more than 5,000 JSON values") as refused:
        for start in range(0, len(body), 4 << 10):
            splitter.feed(body[start : start + (4 << 10)])
        splitter.finish()
    assert refused.value.bound == "a list batch's bound"


def test_a_list_of_arrays_that_cannot_be_cut_is_refused_at_the_end() -> None:
    body = b'{"kind":"List","items":[' + b"[]," * 30_000 + b"[]]}"
    splitter = ListSplitter(lambda got: None, batch_bytes=1 << 20, max_values=5_000)
    splitter.feed(body)
    with pytest.raises(ItemTooLarge, match="could not be cut into batches of at most 5,000 JSON values"):
        splitter.finish()
