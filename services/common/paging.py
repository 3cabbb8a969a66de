"""Keyset paging for the staff API's List RPCs: page sizes, signed page tokens, one spec per list.

    KeysetSpec (per list: name, key types, the key of a row)
    request ──> PageTokens.page_request(spec, filters, size=, token=) ──> PageRequest: after, limit
    rows fetched with LIMIT limit ──> PageRequest.page(rows) ──> Page: items, next_page_token

A list is ordered by a unique key, and a token is the key of the last item returned (keyset paging:
stable while rows are added, constant cost at any depth; docs/architecture.md, 'Keyset paging with
signed tokens'), wrapped so that the caller cannot forge one:

    base64url( {"v": 1, "l": list name, "f": filter fingerprint, "k": [key values]} ) "." base64url(HMAC-SHA256)

The HMAC key is derived from the service's secret, so every replica accepts every replica's tokens.
The filter fingerprint binds a token to the filters it was issued with. A token that does not decode,
whose MAC does not verify, that belongs to another list or other filters, or whose key does not have
the list's shape is `InvalidArgument`, never a 500.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import hmac
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import orjson

from services.common.errors import InvalidArgument

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
TOKEN_VERSION = 1
# Tokens are a few hundred bytes; anything much larger is not one of ours and is refused unparsed.
MAX_TOKEN_CHARS = 2048
_MAC_BYTES = 16  # 128 bits: forging needs 2^128 tries, and the token stays short
# An integer key part: a bigint's decimal digits at most, so a decoded key always fits its SQL type.
_DECIMAL = re.compile(r"^-?[0-9]{1,18}$")


def page_size(requested: int) -> int:
    """The page size to use: 0 means the default, above the cap means the cap, negative is refused."""
    if requested < 0:
        raise InvalidArgument(f"page_size must not be negative (got {requested})")
    if requested == 0:
        return DEFAULT_PAGE_SIZE
    return min(requested, MAX_PAGE_SIZE)


class KeyPart(StrEnum):
    """The type of one sort-key column, so a decoded key is checked before it reaches SQL.

    A decoded part is always the Python type named here: TEXT a `str`, UUID a `uuid.UUID`, TIMESTAMP
    an aware `datetime`, INTEGER an `int` (carried as decimal text).
    """

    TEXT = "text"
    UUID = "uuid"
    TIMESTAMP = "timestamp"
    INTEGER = "integer"


KeyValue = str | uuid.UUID | datetime | int
FilterValue = str | int | bool | None | tuple[str, ...] | tuple[int, ...]

R = TypeVar("R")
K = TypeVar("K", bound=tuple[Any, ...])


@dataclass(frozen=True, slots=True)
class KeysetSpec(Generic[R, K]):
    """One paged list: `name` (a token of one list is refused by another), the types of its sort key's
    parts in ORDER BY order (`shape`; K must be the tuple of the types `KeyPart` names for them), and
    `key_of`, the sort key of one of its rows."""

    name: str
    shape: tuple[KeyPart, ...]
    key_of: Callable[[R], K]


def filter_values(filters: DataclassInstance | None) -> dict[str, FilterValue]:
    """What a token is bound to: every field of a list's normalized filters, ids as text; {} for none.

    Binding every field means a filter added later binds its list's tokens without anyone listing it.
    """
    if filters is None:
        return {}
    values: dict[str, FilterValue] = {}
    for field in dataclasses.fields(filters):
        value = getattr(filters, field.name)
        if isinstance(value, uuid.UUID):
            value = str(value)
        if value is not None and not isinstance(value, str | int | bool | tuple):
            raise TypeError(f"filter {field.name} is a {type(value).__name__}, not a filter value")
        values[field.name] = value
    return values


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
    if part is KeyPart.INTEGER:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError("an integer key part needs an int")
        return str(value)
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
    if part is KeyPart.INTEGER:
        if not _DECIMAL.match(value):
            raise ValueError("integer key part is not a decimal number")
        return int(value)
    return value


@dataclass(frozen=True, slots=True)
class Page(Generic[R]):
    """The rows of one page and the token of the next one ("" when none follows)."""

    items: Sequence[R]
    next_page_token: str


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

    def page_request(
        self,
        spec: KeysetSpec[R, K],
        filters: DataclassInstance | None,
        *,
        size: int,
        token: str,
    ) -> PageRequest[R, K]:
        """A List request's page size and token checked against `spec` and its normalized `filters`.

        Raises `InvalidArgument` for a negative size or a token `decode` refuses.
        """
        rows = page_size(size)
        bound = filter_values(filters)
        return PageRequest(self, spec, bound, rows, self.decode(token, spec, bound))

    def encode(self, spec: KeysetSpec[Any, K], filters: Mapping[str, FilterValue], key: K) -> str:
        """The token that continues `spec`'s list, with these filters, after the row whose sort key is `key`."""
        if len(spec.shape) != len(key):
            raise TypeError("the key does not match its shape")
        payload = orjson.dumps(
            {
                "v": TOKEN_VERSION,
                "l": spec.name,
                "f": filter_fingerprint(filters),
                "k": [_encode_part(part, value) for part, value in zip(spec.shape, key, strict=True)],
            }
        )
        return f"{_b64encode(payload)}.{_b64encode(self._mac(payload))}"

    def decode(self, token: str, spec: KeysetSpec[Any, K], filters: Mapping[str, FilterValue]) -> K | None:
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
        if decoded.get("l") != spec.name:
            raise InvalidArgument("page_token belongs to another list")
        if decoded.get("f") != filter_fingerprint(filters):
            raise InvalidArgument("page_token was issued with other filters: pass the same filters with it")
        parts = decoded.get("k")
        if not isinstance(parts, list) or len(parts) != len(spec.shape):
            raise InvalidArgument("page_token is malformed")
        try:
            key = tuple(_decode_part(part, value) for part, value in zip(spec.shape, parts, strict=True))
        except ValueError:
            raise InvalidArgument("page_token is malformed") from None
        # Each part has the type its KeyPart names, and the spec's shape names K's parts.
        return cast(K, key)


@dataclass(frozen=True, slots=True)
class PageRequest(Generic[R, K]):
    """One checked request for a page of one list: the key to continue after and how many rows to fetch."""

    tokens: PageTokens
    spec: KeysetSpec[R, K]
    filters: Mapping[str, FilterValue]
    size: int
    after: K | None  # None: the first page

    @property
    def limit(self) -> int:
        """Rows to fetch: one more than the page holds, so the extra row says whether another follows."""
        return self.size + 1

    def page(self, rows: Sequence[R]) -> Page[R]:
        """Rows fetched with LIMIT `limit`: the page itself and the token of the next, if one follows."""
        items = rows[: self.size]
        if len(rows) <= self.size:
            return Page(items, "")
        return Page(items, self.tokens.encode(self.spec, self.filters, self.spec.key_of(items[-1])))
