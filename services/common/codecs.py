"""The wire codecs both APIs serve over Connect: binary protobuf, and JSON without the whitespace.

connectrpc's google-protobuf JSON codec pretty-prints (`MessageToJson`, indent 2), which roughly
doubles the bytes of a list response. `CompactJsonCodec` writes proto3 JSON (field names in
lowerCamelCase, int64 as strings) with orjson and no whitespace. Scalars without presence are written
even when zero (`"clusters":0`), which the proto3 JSON mapping allows, so a page reading the JSON with
plain `fetch` needs no knowledge of proto defaults. Decoding is connectrpc's own, made strict: the
library ignores unknown fields by default, and protobuf's JSON parser then drops unknown enum names as
well (`{"statuses":["NOT_A_STATUS"]}` would read as "no filter", widening the answer). Strict, both
are `INVALID_ARGUMENT`, the proto3 JSON mapping's default. Unknown enum numbers (binary, or a number
in JSON) stay in the message and are refused by each service's own validation.
"""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.compat._codec import ProtoJSONCodec
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


class CompactJsonCodec(ProtoJSONCodec[M]):
    """Proto3 JSON without whitespace, zero scalars included; strict decoding (unknown names refused)."""

    def __init__(self) -> None:
        super().__init__(ignore_unknown_fields=False)

    def encode(self, message: Message) -> bytes:
        return orjson.dumps(MessageToDict(message, always_print_fields_with_no_presence=True))


class RememberLastEncoding:
    """Wraps a codec so that encoding the very same message object again costs nothing.

    For a service that answers many calls with one shared message (the public overview's cached
    answer), each call would otherwise serialize the same object again, which for JSON is most of the
    work of a call. Only the last message is remembered, by identity, together with a strong
    reference to it (so its id cannot be reused). The contract: a message handed to `encode` is never
    changed afterwards, which holds for a cached answer and for every fresh response.
    """

    def __init__(self, codec: Codec) -> None:
        self._codec = codec
        self._message: object = None
        self._data = b""

    def name(self) -> str:
        return self._codec.name()

    def encode(self, message: Any) -> bytes:
        if message is not self._message:
            data = self._codec.encode(message)
            self._message, self._data = message, data
        return self._data

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        return self._codec.decode(data, message_class)


def connect_codecs(*, remember_last: bool = False) -> list[Codec]:
    """Binary protobuf first (the generated clients' default), then compact JSON (browsers, curl).

    `remember_last` wraps both in `RememberLastEncoding`, for a service answering one shared message.
    """
    codecs: list[Codec] = [google_protobuf_binary_codec(), CompactJsonCodec()]
    if remember_last:
        return [RememberLastEncoding(codec) for codec in codecs]
    return codecs
