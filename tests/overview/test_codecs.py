"""The Connect codecs of the APIs: compact JSON with zero counts, and encoding a shared answer only once."""

from __future__ import annotations

import json

from fundament.overview.v1 import overview_pb2

from services.common.codecs import CompactJsonCodec, RememberLastEncoding, connect_codecs


class CountingCodec:
    def __init__(self) -> None:
        self.encoded = 0

    def name(self) -> str:
        return "counting"

    def encode(self, message: overview_pb2.GetPlatformOverviewResponse) -> bytes:
        self.encoded += 1
        return message.SerializeToString()

    def decode(self, data: bytes | bytearray, message_class: type[object]) -> object:
        return message_class


def answer(organizations: int) -> overview_pb2.GetPlatformOverviewResponse:
    return overview_pb2.GetPlatformOverviewResponse(totals=overview_pb2.OverviewTotals(organizations=organizations))


def test_compact_json_has_no_whitespace_and_writes_zero_counts() -> None:
    message = overview_pb2.GetPlatformOverviewResponse(
        organizations=[overview_pb2.OrganizationOverview(name="acme", alias="Acme Corp")]
    )
    data = CompactJsonCodec().encode(message)
    assert data == json.dumps(json.loads(data), separators=(",", ":")).encode()
    assert json.loads(data)["organizations"] == [
        {"name": "acme", "alias": "Acme Corp", "clusters": 0, "projects": 0, "namespaces": 0}
    ]


def test_the_same_message_object_is_encoded_once_and_a_new_one_again() -> None:
    inner = CountingCodec()
    codec = RememberLastEncoding(inner)
    first = answer(1)
    assert codec.encode(first) == codec.encode(first) == first.SerializeToString()
    assert inner.encoded == 1
    second = answer(2)  # a new read: a new object, encoded afresh
    assert codec.encode(second) == second.SerializeToString()
    equal_but_new = answer(2)
    codec.encode(equal_but_new)
    assert inner.encoded == 3
    assert codec.name() == "counting"


def test_connect_codecs_offer_binary_then_json_with_or_without_memory() -> None:
    assert [codec.name() for codec in connect_codecs()] == ["proto", "json"]
    remembering = connect_codecs(remember_last=True)
    assert [codec.name() for codec in remembering] == ["proto", "json"]
    assert all(isinstance(codec, RememberLastEncoding) for codec in remembering)
