"""The wire codecs both APIs serve over Connect: binary protobuf, and JSON without the whitespace.

connectrpc's google-protobuf JSON codec pretty-prints (`MessageToJson`, indent 2), which roughly
doubles the bytes of a list response. `CompactJsonCodec` writes proto3 JSON (field names in
lowerCamelCase, int64 as strings) with orjson and no whitespace. Scalars without presence are written
even when zero (`"clusters":0`), which the proto3 JSON mapping allows, so a page reading the JSON with
plain `fetch` needs no knowledge of proto defaults. Decoding is connectrpc's own.
"""

from __future__ import annotations

from typing import TypeVar

import orjson
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.compat._codec import ProtoJSONCodec
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


class CompactJsonCodec(ProtoJSONCodec[M]):
    """Proto3 JSON without whitespace, zero scalars included."""

    def encode(self, message: Message) -> bytes:
        return orjson.dumps(MessageToDict(message, always_print_fields_with_no_presence=True))


def connect_codecs() -> list[Codec]:
    """Binary protobuf first (the generated clients' default), then compact JSON (browsers, curl)."""
    return [google_protobuf_binary_codec(), CompactJsonCodec()]
