"""Page sizes and keyset page tokens for the staff API's List RPCs (DESIGN.md §5 "Paging").

    request ──> page_size() ─────────────────────────────> LIMIT size + 1
            └─> PageTokens.decode(token, list, filters) ──> the sort key to continue after
    last row of a full page ──> PageTokens.encode(list, filters, key) ──> next_page_token

A token is the sort key of the last item returned (keyset paging: stable while rows are added,
constant cost at any depth), wrapped so that the caller cannot forge one:

    base64url( {"v": 1, "l": list name, "f": filter fingerprint, "k": [key values]} ) "." base64url(HMAC-SHA256)

The HMAC key is derived from the service's secret, so every replica accepts every replica's tokens.
The filter fingerprint binds a token to the filters it was issued with. A token that does not decode,
whose MAC does not verify, that belongs to another list or other filters, or whose key does not have
the expected shape is `InvalidArgument`, never a 500.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Generic, TypeVar

import orjson

from services.common.errors import InvalidArgument

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
TOKEN_VERSION = 1
# Tokens are a few hundred bytes; anything much larger is not one of ours and is refused unparsed.
MAX_TOKEN_CHARS = 2048
_MAC_BYTES = 16  # 128 bits: forging needs 2^128 tries, and the token stays short


def page_size(requested: int) -> int:
    """The page size to use: 0 means the default, above the cap means the cap, negative is refused."""
    if requested < 0:
        raise InvalidArgument(f"page_size must not be negative (got {requested})")
    if requested == 0:
        return DEFAULT_PAGE_SIZE
    return min(requested, MAX_PAGE_SIZE)


class KeyPart(StrEnum):
    """The type of one sort-key column, so a decoded key is checked before it reaches SQL."""

    TEXT = "text"
    UUID = "uuid"
    TIMESTAMP = "timestamp"


KeyValue = str | uuid.UUID | datetime
FilterValue = str | int | bool | None | tuple[str, ...] | tuple[int, ...]


def filter_fingerprint(filters: Mapping[str, FilterValue]) -> str:
    """A short digest of normalized filters; equal filters give equal fingerprints."""
    canonical = orjson.dumps(
        {k: list(v) if isinstance(v, tuple) else v for k, v in filters.items()}, option=orjson.OPT_SORT_KEYS
    )
    return hashlib.sha256(canonical).hexdigest()[:16]


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _encode_part(part: KeyPart, value: KeyValue) -> str:
    if part is KeyPart.TIMESTAMP:
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise TypeError("a timestamp key part needs an aware datetime")
        return value.isoformat()
    if part is KeyPart.UUID:
        return str(uuid.UUID(str(value)))
    if not isinstance(value, str):
        raise TypeError("a text key part needs a str")
    return value


def _decode_part(part: KeyPart, value: object) -> KeyValue:
    if not isinstance(value, str):
        raise ValueError("key part is not a string")
    if part is KeyPart.TIMESTAMP:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            raise ValueError("timestamp without a time zone")
        return parsed
    if part is KeyPart.UUID:
        return uuid.UUID(value)
    return value


@dataclass(frozen=True, slots=True)
class PageTokens:
    """Issues and checks the page tokens of one service; `secret` is the HMAC key."""

    secret: bytes

    @classmethod
    def derived_from(cls, service_secret: bytes) -> PageTokens:
        """Page tokens keyed by a key derived from the service's secret (a distinct purpose, one secret)."""
        return cls(hmac.new(service_secret, b"fleet-inventory page token v1", hashlib.sha256).digest())

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self.secret, payload, hashlib.sha256).digest()[:_MAC_BYTES]

    def encode(
        self,
        list_name: str,
        filters: Mapping[str, FilterValue],
        shape: Sequence[KeyPart],
        key: Sequence[KeyValue],
    ) -> str:
        """The token that continues `list_name` after the row whose sort key is `key`."""
        if len(shape) != len(key):
            raise TypeError("the key does not match its shape")
        payload = orjson.dumps(
            {
                "v": TOKEN_VERSION,
                "l": list_name,
                "f": filter_fingerprint(filters),
                "k": [_encode_part(part, value) for part, value in zip(shape, key, strict=True)],
            }
        )
        return f"{_b64encode(payload)}.{_b64encode(self._mac(payload))}"

    def decode(
        self,
        token: str,
        list_name: str,
        filters: Mapping[str, FilterValue],
        shape: Sequence[KeyPart],
    ) -> tuple[KeyValue, ...] | None:
        """The sort key a token continues after; None for an empty token (the first page).

        Raises `InvalidArgument` when the token is malformed, tampered with, issued by another list,
        or issued with other filters.
        """
        if not token:
            return None
        if len(token) > MAX_TOKEN_CHARS:
            raise InvalidArgument("page_token is not a token this service issued")
        body, dot, mac = token.partition(".")
        try:
            payload = _b64decode(body)
            given_mac = _b64decode(mac)
        except (binascii.Error, ValueError):
            raise InvalidArgument("page_token is malformed") from None
        if not dot or not hmac.compare_digest(given_mac, self._mac(payload)):
            raise InvalidArgument("page_token is malformed or was altered")
        try:
            decoded = orjson.loads(payload)
        except orjson.JSONDecodeError:
            raise InvalidArgument("page_token is malformed") from None
        if not isinstance(decoded, dict) or decoded.get("v") != TOKEN_VERSION:
            raise InvalidArgument("page_token is from another version of this service")
        if decoded.get("l") != list_name:
            raise InvalidArgument("page_token belongs to another list")
        if decoded.get("f") != filter_fingerprint(filters):
            raise InvalidArgument("page_token was issued with other filters: pass the same filters with it")
        parts = decoded.get("k")
        if not isinstance(parts, list) or len(parts) != len(shape):
            raise InvalidArgument("page_token is malformed")
        try:
            return tuple(_decode_part(part, value) for part, value in zip(shape, parts, strict=True))
        except ValueError:
            raise InvalidArgument("page_token is malformed") from None


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of rows and the key to continue after, if more may follow."""

    rows: Sequence[T]
    more: bool


def split_page(rows: Sequence[T], size: int) -> Page[T]:
    """Rows fetched with LIMIT size + 1: the page itself and whether another one follows."""
    return Page(rows[:size], len(rows) > size)
