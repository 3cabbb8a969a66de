"""Page sizes, page tokens and the split of a fetched page, without any I/O.

The API tests walk real pages over both protocols; these pin the edges of each rule.
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import pytest

from services.common.errors import InvalidArgument
from services.common.paging import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    FilterValue,
    KeyPart,
    KeysetSpec,
    PageTokens,
    filter_fingerprint,
    filter_values,
    page_size,
)

TOKENS = PageTokens.derived_from(b"a-service-secret-of-at-least-32-bytes!!")
SHAPE = (KeyPart.TEXT, KeyPart.UUID)
KEY = ("alpha-cluster", uuid.UUID("018f0000-0000-7000-8000-000000000042"))


@dataclass(frozen=True)
class Row:
    name: str
    id: uuid.UUID


CLUSTERS: KeysetSpec[Row, tuple[str, uuid.UUID]] = KeysetSpec("clusters", SHAPE, lambda row: (row.name, row.id))
ORGANIZATIONS: KeysetSpec[Row, tuple[str, uuid.UUID]] = KeysetSpec(
    "organizations", SHAPE, lambda row: (row.name, row.id)
)
FILTERS: dict[str, FilterValue] = {"organization_id": "", "statuses": (3, 5), "stale": False}


@pytest.mark.parametrize(
    ("requested", "expected"),
    [(0, DEFAULT_PAGE_SIZE), (1, 1), (7, 7), (499, 499), (500, 500), (501, 500), (2**31 - 1, MAX_PAGE_SIZE)],
    ids=["zero-is-default", "one", "seven", "just-under-cap", "cap", "just-over-cap", "int32-max"],
)
def test_page_size_defaults_and_caps(requested: int, expected: int) -> None:
    assert page_size(requested) == expected


@pytest.mark.parametrize("requested", [-1, -500, -(2**31)], ids=["minus-one", "minus-cap", "int32-min"])
def test_negative_page_size_is_invalid(requested: int) -> None:
    with pytest.raises(InvalidArgument, match="negative"):
        page_size(requested)


def test_token_round_trips_the_key() -> None:
    token = TOKENS.encode(CLUSTERS, FILTERS, KEY)
    assert TOKENS.decode(token, CLUSTERS, FILTERS) == KEY


def test_timestamp_keys_keep_microseconds_and_zone() -> None:
    moment = datetime(2026, 11, 30, 5, 41, 49, 123456, tzinfo=timezone(timedelta(hours=2)))
    findings: KeysetSpec[object, tuple[datetime, uuid.UUID]] = KeysetSpec(
        "findings", (KeyPart.TIMESTAMP, KeyPart.UUID), lambda row: (moment, KEY[1])
    )
    token = TOKENS.encode(findings, {}, (moment, KEY[1]))
    decoded = TOKENS.decode(token, findings, {})
    assert decoded == (moment, KEY[1])
    assert decoded is not None and decoded[0] == moment.astimezone(UTC)


def test_empty_token_is_the_first_page() -> None:
    assert TOKENS.decode("", CLUSTERS, FILTERS) is None


def test_token_is_opaque_text_safe_in_a_url() -> None:
    token = TOKENS.encode(CLUSTERS, FILTERS, KEY)
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")


def test_filter_fingerprint_ignores_key_order_but_not_values() -> None:
    assert filter_fingerprint({"a": 1, "b": True}) == filter_fingerprint({"b": True, "a": 1})
    assert filter_fingerprint({"a": 1, "b": True}) != filter_fingerprint({"a": 1, "b": False})
    assert filter_fingerprint({"s": (1, 2)}) != filter_fingerprint({"s": (1,)})


def _flip(text: str, index: int) -> str:
    replacement = "A" if text[index] != "A" else "B"
    return text[:index] + replacement + text[index + 1 :]


def _reforged_payload(token: str) -> str:
    """The token with its key changed and the old MAC kept: what a caller editing the JSON would send."""
    body, _, mac = token.partition(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["k"][0] = "zzz"
    edited = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    return f"{edited}.{mac}"


GOOD = TOKENS.encode(CLUSTERS, FILTERS, KEY)


@pytest.mark.parametrize(
    "token",
    [
        "garbage",
        "not base64!.also not",
        GOOD.split(".")[0],
        GOOD[: len(GOOD) // 2],
        GOOD[:-1],
        _flip(GOOD, 5),
        _flip(GOOD, len(GOOD) - 3),
        _reforged_payload(GOOD),
        GOOD + "." + GOOD,
        "x" * 5000,
        PageTokens(b"some-other-deployment-secret-0123456789").encode(CLUSTERS, FILTERS, KEY),
    ],
    ids=[
        "garbage",
        "not-base64",
        "payload-without-mac",
        "truncated-half",
        "truncated-one-char",
        "flipped-payload-char",
        "flipped-mac-char",
        "edited-payload-old-mac",
        "two-tokens-glued",
        "huge",
        "other-secret",
    ],
)
def test_malformed_or_tampered_token_is_invalid(token: str) -> None:
    with pytest.raises(InvalidArgument, match="page_token"):
        TOKENS.decode(token, CLUSTERS, FILTERS)


def test_token_with_other_filters_is_invalid() -> None:
    with pytest.raises(InvalidArgument, match="other filters"):
        TOKENS.decode(GOOD, CLUSTERS, {**FILTERS, "stale": True})


def test_token_of_another_list_is_invalid() -> None:
    with pytest.raises(InvalidArgument, match="another list"):
        TOKENS.decode(GOOD, ORGANIZATIONS, FILTERS)


def test_signed_token_whose_key_has_the_wrong_shape_is_invalid() -> None:
    # Validly signed, but the key does not decode as the list's shape: still a clean INVALID_ARGUMENT.
    texts: KeysetSpec[object, tuple[str, str]] = KeysetSpec(
        "clusters", (KeyPart.TEXT, KeyPart.TEXT), lambda _: ("", "")
    )
    token = TOKENS.encode(texts, FILTERS, ("alpha", "not-a-uuid"))
    with pytest.raises(InvalidArgument, match="malformed"):
        TOKENS.decode(token, CLUSTERS, FILTERS)
    one: KeysetSpec[object, tuple[str]] = KeysetSpec("clusters", (KeyPart.TEXT,), lambda _: ("",))
    short = TOKENS.encode(one, FILTERS, ("alpha",))
    with pytest.raises(InvalidArgument, match="malformed"):
        TOKENS.decode(short, CLUSTERS, FILTERS)


def _rows(count: int) -> list[Row]:
    return [Row(f"cluster-{i:03d}", uuid.UUID(int=i + 1)) for i in range(count)]


def test_a_page_request_checks_size_and_token() -> None:
    first = TOKENS.page_request(CLUSTERS, None, size=0, token="")
    assert (first.size, first.limit, first.after) == (DEFAULT_PAGE_SIZE, DEFAULT_PAGE_SIZE + 1, None)
    assert TOKENS.page_request(CLUSTERS, None, size=MAX_PAGE_SIZE + 1, token="").size == MAX_PAGE_SIZE
    with pytest.raises(InvalidArgument, match="page_size"):
        TOKENS.page_request(CLUSTERS, None, size=-1, token="")
    with pytest.raises(InvalidArgument, match="another list"):
        TOKENS.page_request(ORGANIZATIONS, None, size=7, token=TOKENS.encode(CLUSTERS, {}, KEY))


def test_a_full_page_carries_the_token_of_the_last_row_and_a_short_one_none() -> None:
    wanted = TOKENS.page_request(CLUSTERS, None, size=7, token="")
    rows = _rows(8)
    page = wanted.page(rows)
    assert page.items == rows[:7]
    after = TOKENS.page_request(CLUSTERS, None, size=7, token=page.next_page_token).after
    assert after == (rows[6].name, rows[6].id)
    assert wanted.page(rows[:7]) == type(page)(rows[:7], "")
    assert wanted.page([]).items == [] and wanted.page([]).next_page_token == ""


@dataclass(frozen=True)
class Filters:
    organization_id: uuid.UUID | None
    statuses: tuple[str, ...] | None
    stale: bool


def test_a_token_is_bound_to_every_field_of_the_filters() -> None:
    some = Filters(KEY[1], ("lost", "running"), stale=False)
    assert filter_values(some) == {"organization_id": str(KEY[1]), "statuses": ("lost", "running"), "stale": False}
    assert filter_values(None) == {}
    token = TOKENS.page_request(CLUSTERS, some, size=1, token="").page(_rows(2)).next_page_token
    assert TOKENS.page_request(CLUSTERS, some, size=1, token=token).after is not None
    with pytest.raises(InvalidArgument, match="other filters"):
        TOKENS.page_request(CLUSTERS, Filters(KEY[1], ("lost",), stale=False), size=1, token=token)
