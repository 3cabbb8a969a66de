"""The DCIM token validator against the table of bad credentials, without any server.

tests/fleet/test_auth.py runs the same table over both protocols against a running service.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from services.common.auth import (
    MAX_TOKEN_BYTES,
    DcimTokenRules,
    DcimTokenValidator,
    credential_from_headers,
    mint_token,
)
from services.common.errors import Unauthenticated
from tests.fixtures.credentials import (
    BAD_CREDENTIALS,
    BAD_IDS,
    RULES,
    SECRET,
    SUBJECT,
    BadCredential,
    Headers,
    bearer,
    claims,
    good_token,
    now_plus,
    sign,
)

VALIDATOR = DcimTokenValidator(RULES)


def authenticate(headers: Headers) -> str:
    return VALIDATOR.validate(credential_from_headers(headers))


@pytest.mark.parametrize("case", BAD_CREDENTIALS, ids=BAD_IDS)
def test_bad_credential_is_unauthenticated(case: BadCredential) -> None:
    with pytest.raises(Unauthenticated) as caught:
        authenticate(case.headers())
    assert case.breaks in caught.value.message
    # The message names the rule, never the token.
    assert "eyJ" not in caught.value.message


def test_the_table_has_at_least_twenty_cases_with_unique_names() -> None:
    assert len(BAD_CREDENTIALS) >= 20
    assert len(set(BAD_IDS)) == len(BAD_IDS)


@pytest.mark.parametrize(
    "headers",
    [
        lambda: bearer(good_token()),
        lambda: [("Authorization", f"bearer {good_token()}")],
        lambda: [("cookie", f"theme=dark; dcim_auth={good_token()}; lang=en")],
        lambda: [("cookie", "theme=dark"), ("cookie", f"dcim_auth={good_token()}")],
        lambda: [("authorization", f"Bearer {good_token()}"), ("cookie", "dcim_auth=garbage")],
    ],
    ids=["bearer", "lowercase-scheme", "cookie-among-others", "cookie-in-second-header", "bearer-wins-over-cookie"],
)
def test_valid_token_yields_the_subject(headers: Callable[[], Headers]) -> None:
    assert authenticate(headers()) == SUBJECT


def test_expiry_within_the_leeway_is_accepted_and_beyond_it_refused() -> None:
    lenient = DcimTokenValidator(DcimTokenRules(SECRET, leeway_seconds=60))
    assert lenient.validate(sign(claims(exp=now_plus(-10)))) == SUBJECT
    with pytest.raises(Unauthenticated, match="expired"):
        lenient.validate(sign(claims(exp=now_plus(-120))))


def test_audience_list_needs_only_contain_dcim_user() -> None:
    assert VALIDATOR.validate(sign(claims(aud=["something-else", "dcim-user"]))) == SUBJECT
    assert VALIDATOR.validate(sign(claims(aud="dcim-user"))) == SUBJECT


def test_uppercase_subject_comes_back_canonical() -> None:
    assert VALIDATOR.validate(sign(claims(sub=SUBJECT.upper()))) == SUBJECT


def test_token_at_the_size_limit_is_parsed_and_one_byte_more_is_not() -> None:
    at_limit = "a" * MAX_TOKEN_BYTES
    with pytest.raises(Unauthenticated, match="not a JWT"):
        authenticate(bearer(at_limit))
    with pytest.raises(Unauthenticated, match="larger than"):
        authenticate(bearer(at_limit + "a"))


def test_issuer_and_audience_can_be_changed_for_tests_only_through_the_rules() -> None:
    rules = DcimTokenRules(SECRET, issuer="test-issuer", audience="test-audience")
    token = mint_token(rules, subject=uuid.UUID(SUBJECT), ttl=timedelta(minutes=1), now=datetime.now(UTC))
    assert DcimTokenValidator(rules).validate(token) == SUBJECT
    with pytest.raises(Unauthenticated, match="issued by DCIM"):
        VALIDATOR.validate(token)


def test_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        DcimTokenRules(b"short")


def test_mint_refuses_a_non_positive_ttl() -> None:
    with pytest.raises(ValueError, match="positive"):
        mint_token(RULES, subject=uuid.UUID(SUBJECT), ttl=timedelta(0), now=datetime.now(UTC))


# ---- robustness: whatever a signed token holds, the answer is Unauthenticated or a subject

_ODD_VALUES: tuple[object, ...] = (
    None,
    True,
    0,
    -1,
    2**70,
    1.5e300,
    "",
    "x",
    "dcim-user",
    "dcim-authn-api",
    SUBJECT,
    [],
    ["dcim-user", 3],
    [None],
    {},
    {"a": 1},
    "9" * 400,
)


def _signed_raw(header: dict[str, object], payload: object) -> str:
    """A token with any header and payload, correctly HMAC-SHA256-signed with the shared secret."""

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"
    signature = hmac.new(SECRET, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


def test_signed_tokens_with_odd_claims_and_headers_never_escape_as_other_errors() -> None:
    rng = random.Random(20261130)
    outcomes: Counter[str] = Counter()
    for _ in range(600):
        payload: dict[str, object] = dict(claims())
        for name in rng.sample(["iss", "aud", "sub", "exp", "nbf", "iat", "jti"], k=rng.randint(1, 3)):
            payload[name] = rng.choice(_ODD_VALUES)
        header: dict[str, object] = {"alg": "HS256", "typ": "JWT"}
        if rng.random() < 0.3:
            header[rng.choice(["kid", "crit", "typ", "b64", "jku"])] = rng.choice(_ODD_VALUES)
        body: object = payload if rng.random() < 0.95 else rng.choice(_ODD_VALUES)
        try:
            subject = VALIDATOR.validate(_signed_raw(header, body))
        except Unauthenticated:
            outcomes["refused"] += 1
        else:
            assert subject == SUBJECT
            outcomes["accepted"] += 1
    assert outcomes["refused"] > 400
