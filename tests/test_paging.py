"""Page sizes and page tokens without any I/O: the rules of DESIGN.md §5 "Paging".

The API tests walk real pages over both protocols; these pin the edges of each rule.
"""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest

from services.common.errors import InvalidArgument
from services.common.paging import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    FilterValue,
    KeyPart,
    PageTokens,
    filter_fingerprint,
    page_size,
    split_page,
)

TOKENS = PageTokens.derived_from(b"a-service-secret-of-at-least-32-bytes!!")
SHAPE = (KeyPart.TEXT, KeyPart.UUID)
KEY = ("alpha-cluster", uuid.UUID("018f0000-0000-7000-8000-000000000042"))
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
    token = TOKENS.encode("clusters", FILTERS, SHAPE, KEY)
    assert TOKENS.decode(token, "clusters", FILTERS, SHAPE) == KEY


def test_timestamp_keys_keep_microseconds_and_zone() -> None:
    moment = datetime(2026, 11, 30, 5, 41, 49, 123456, tzinfo=timezone(timedelta(hours=2)))
    shape = (KeyPart.TIMESTAMP, KeyPart.UUID)
    token = TOKENS.encode("findings", {}, shape, (moment, KEY[1]))
    decoded = TOKENS.decode(token, "findings", {}, shape)
    assert decoded == (moment, KEY[1])
    assert decoded is not None and decoded[0] == moment.astimezone(UTC)


def test_empty_token_is_the_first_page() -> None:
    assert TOKENS.decode("", "clusters", FILTERS, SHAPE) is None


def test_token_is_opaque_text_safe_in_a_url() -> None:
    token = TOKENS.encode("clusters", FILTERS, SHAPE, KEY)
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


GOOD = TOKENS.encode("clusters", FILTERS, SHAPE, KEY)


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
        PageTokens(b"some-other-deployment-secret-0123456789").encode("clusters", FILTERS, SHAPE, KEY),
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
        TOKENS.decode(token, "clusters", FILTERS, SHAPE)


def test_token_with_other_filters_is_invalid() -> None:
    with pytest.raises(InvalidArgument, match="other filters"):
        TOKENS.decode(GOOD, "clusters", {**FILTERS, "stale": True}, SHAPE)


def test_token_of_another_list_is_invalid() -> None:
    with pytest.raises(InvalidArgument, match="another list"):
        TOKENS.decode(GOOD, "organizations", FILTERS, SHAPE)


def test_signed_token_whose_key_has_the_wrong_shape_is_invalid() -> None:
    # Validly signed, but the key does not decode as the list's shape: still a clean INVALID_ARGUMENT.
    token = TOKENS.encode("clusters", FILTERS, (KeyPart.TEXT, KeyPart.TEXT), ("alpha", "not-a-uuid"))
    with pytest.raises(InvalidArgument, match="malformed"):
        TOKENS.decode(token, "clusters", FILTERS, SHAPE)
    short = TOKENS.encode("clusters", FILTERS, (KeyPart.TEXT,), ("alpha",))
    with pytest.raises(InvalidArgument, match="malformed"):
        TOKENS.decode(short, "clusters", FILTERS, SHAPE)


def test_split_page_reports_whether_more_follow() -> None:
    rows = list(range(8))
    assert split_page(rows, 7).rows == list(range(7)) and split_page(rows, 7).more
    assert split_page(rows[:7], 7).rows == list(range(7)) and not split_page(rows[:7], 7).more
    assert split_page([], 7).rows == [] and not split_page([], 7).more
