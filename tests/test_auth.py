"""DCIM credentials: the table of bad ones (shared with the API tests on both protocols) and the validator.

Each bad case is a name plus the request headers that carry it; every one must be refused with
UNAUTHENTICATED. The tokens are made here with pyjwt and `cryptography`, independently of
`services.common.auth`, except for the one good token that `mint_token` makes (so the minting
function is checked against the validator too).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from services.common.auth import (
    MAX_TOKEN_BYTES,
    DcimTokenRules,
    DcimTokenValidator,
    credential_from_headers,
    mint_token,
)
from services.common.errors import Unauthenticated

SECRET = b"test-secret-for-dcim-tokens-0123456789abcdef-0123456789abcdef!!!"  # 64 bytes: enough for HS512 too
OTHER_SECRET = b"another-secret-nobody-shared-with-us-0123456789abcdef-012345678"
SUBJECT = "0b9a3c1e-7d4f-4a52-9c1b-2f6e8d0a4b11"
RULES = DcimTokenRules(SECRET)

Headers = list[tuple[str, str]]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(**overrides: object) -> dict[str, object]:
    """Valid DCIM claims for now + 1h, with `overrides` applied (a value of None removes the claim)."""
    now = datetime.now(UTC)
    base: dict[str, object] = {
        "iss": "dcim-authn-api",
        "aud": ["dcim-user"],
        "sub": SUBJECT,
        "iat": int(now.timestamp()),
        "exp": int((now + timedelta(hours=1)).timestamp()),
        "name": "Test Staff",
    }
    for key, value in overrides.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def sign(payload: dict[str, object], *, key: bytes = SECRET, algorithm: str = "HS256") -> str:
    return jwt.encode(payload, key, algorithm=algorithm)


def good_token() -> str:
    return mint_token(RULES, subject=uuid.UUID(SUBJECT), ttl=timedelta(minutes=10), now=datetime.now(UTC))


def bearer(token: str) -> Headers:
    return [("authorization", f"Bearer {token}")]


def _unsigned() -> str:
    header = _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    return f"{header}.{_b64(json.dumps(claims()).encode())}."


def _rs256() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return jwt.encode(claims(), key, algorithm="RS256")


def _tampered() -> str:
    header, _, signature = sign(claims()).split(".")
    forged = _b64(json.dumps(claims(sub="6d0c6a6e-0000-4000-8000-00000000beef")).encode())
    return f"{header}.{forged}.{signature}"


def _hs256_header_on_hs512_signature() -> str:
    # The header says HS256 but the signature is HS512 over the same input.
    token = sign(claims(), algorithm="HS512")
    _, payload, signature = token.split(".")
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    return f"{header}.{payload}.{signature}"


def _huge() -> str:
    # Validly signed, but larger than 8 KiB: refused before it is parsed.
    return sign(claims(padding="x" * 9000))


@dataclass(frozen=True)
class BadCredential:
    name: str
    headers: Callable[[], Headers]


def _now_plus(seconds: int) -> int:
    return int((datetime.now(UTC) + timedelta(seconds=seconds)).timestamp())


BAD_CREDENTIALS: tuple[BadCredential, ...] = (
    BadCredential("no-credential", list),
    BadCredential("empty-bearer", lambda: [("authorization", "Bearer ")]),
    BadCredential("bearer-scheme-only", lambda: [("authorization", "Bearer")]),
    BadCredential("basic-scheme", lambda: [("authorization", "Basic " + _b64(b"staff:secret"))]),
    BadCredential("garbage", lambda: bearer("not-a-token-at-all")),
    BadCredential("three-dots-of-garbage", lambda: bearer("abc.def.ghi")),
    BadCredential("alg-none", lambda: bearer(_unsigned())),
    BadCredential("hs512", lambda: bearer(sign(claims(), algorithm="HS512"))),
    BadCredential("hs256-header-hs512-signature", lambda: bearer(_hs256_header_on_hs512_signature())),
    BadCredential("rs256", lambda: bearer(_rs256())),
    BadCredential("wrong-secret", lambda: bearer(sign(claims(), key=OTHER_SECRET))),
    BadCredential("tampered-payload", lambda: bearer(_tampered())),
    BadCredential("wrong-issuer", lambda: bearer(sign(claims(iss="someone-else")))),
    BadCredential(
        "console-token",
        lambda: bearer(sign(claims(iss="fundament-authn-api", aud=["fundament-user"], organization_ids=[]))),
    ),
    BadCredential("dcim-issuer-console-audience", lambda: bearer(sign(claims(aud=["fundament-user"])))),
    BadCredential("plugin-audience", lambda: bearer(sign(claims(aud="fundament-plugin")))),
    BadCredential("no-audience", lambda: bearer(sign(claims(aud=None)))),
    BadCredential("expired", lambda: bearer(sign(claims(exp=_now_plus(-600))))),
    BadCredential("no-exp", lambda: bearer(sign(claims(exp=None)))),
    BadCredential("exp-not-a-number", lambda: bearer(sign(claims(exp="tomorrow")))),
    BadCredential("nbf-in-future", lambda: bearer(sign(claims(nbf=_now_plus(600))))),
    BadCredential("iat-in-future", lambda: bearer(sign(claims(iat=_now_plus(600))))),
    BadCredential("sub-not-a-uuid", lambda: bearer(sign(claims(sub="alice")))),
    BadCredential("sub-a-number", lambda: bearer(sign(claims(sub=12345)))),
    BadCredential("no-sub", lambda: bearer(sign(claims(sub=None)))),
    BadCredential("no-issuer", lambda: bearer(sign(claims(iss=None)))),
    BadCredential("token-over-8-kib", lambda: bearer(_huge())),
    BadCredential("cookie-with-wrong-name", lambda: [("cookie", f"fundament_auth={good_token()}")]),
    BadCredential("cookie-with-bad-token", lambda: [("cookie", f"dcim_auth={sign(claims(), key=OTHER_SECRET)}")]),
    BadCredential("dcim-cookie-twice", lambda: [("cookie", f"dcim_auth={good_token()}; dcim_auth={good_token()}")]),
    BadCredential(
        "two-authorization-headers",
        lambda: [("authorization", f"Bearer {good_token()}"), ("authorization", f"Bearer {good_token()}")],
    ),
    BadCredential(
        "bad-bearer-beats-good-cookie",
        lambda: [("authorization", "Bearer garbage"), ("cookie", f"dcim_auth={good_token()}")],
    ),
)

BAD_IDS = [case.name for case in BAD_CREDENTIALS]


# ---- the validator itself, without any server (the API tests run the same table over both protocols)

VALIDATOR = DcimTokenValidator(RULES)


def authenticate(headers: Headers) -> str:
    return VALIDATOR.validate(credential_from_headers(headers))


@pytest.mark.parametrize("case", BAD_CREDENTIALS, ids=BAD_IDS)
def test_bad_credential_is_unauthenticated(case: BadCredential) -> None:
    with pytest.raises(Unauthenticated) as caught:
        authenticate(case.headers())
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
    assert lenient.validate(sign(claims(exp=_now_plus(-10)))) == SUBJECT
    with pytest.raises(Unauthenticated, match="expired"):
        lenient.validate(sign(claims(exp=_now_plus(-120))))


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
