"""The DCIM token: how platform-admin-api knows that a caller is Fundament staff
(docs/architecture.md, 'Staff tokens are DCIM tokens').

    request headers ──> credential_from_headers() ──> DcimTokenValidator.validate() ──> subject (UUID)
    (Bearer or dcim_auth cookie)   size, shape            pyjwt: HS256, iss, aud, exp, nbf

The request stack (`RequestStack(authenticate=...)`, services/common/serving/request_stack.py) calls a
`DcimAuthenticator` before any service code runs, on Connect and gRPC alike, so a bad credential never
reaches the database. Every failure is `Unauthenticated` with a short message that names the rule, never the token.

The secret is the platform's shared JWT secret, which signs console tokens and plugin tokens too; the
issuer pin (`dcim-authn-api`) and the audience (`dcim-user`) keep those out (a console token carries
another issuer).
`mint_token()` is the counterpart for local use (`fleet token`) and tests: it needs the secret, so it
is never a way in without it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import jwt
from connectrpc.request import Headers
from jwt.exceptions import InvalidSubjectError

from services.common.errors import Unauthenticated

DCIM_ISSUER = "dcim-authn-api"
DCIM_AUDIENCE = "dcim-user"
DCIM_COOKIE = "dcim_auth"
ALGORITHM = "HS256"
# pyjwt (and RFC 7518 §3.2) want an HS256 key of at least 256 bits; a shorter secret is refused at start.
MIN_SECRET_BYTES = 32
# Larger credentials are refused before they are parsed: real DCIM tokens are a few hundred bytes.
MAX_TOKEN_BYTES = 8 * 1024
DEFAULT_LEEWAY_SECONDS = 30

_CANONICAL_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# A JWS in compact form: three base64url segments.
_COMPACT_JWS = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$")


@dataclass(frozen=True, slots=True)
class DcimTokenRules:
    """What a DCIM token must satisfy. Issuer and audience are fixed in production (overridable in tests)."""

    secret: bytes
    issuer: str = DCIM_ISSUER
    audience: str = DCIM_AUDIENCE
    leeway_seconds: int = DEFAULT_LEEWAY_SECONDS
    """Clock skew tolerated on `exp` and `nbf`, in seconds."""

    def __post_init__(self) -> None:
        if len(self.secret) < MIN_SECRET_BYTES:
            raise ValueError(f"the JWT secret must be at least {MIN_SECRET_BYTES} bytes")


def canonical_uuid(value: str) -> str | None:
    """`value` in canonical lowercase 8-4-4-4-12 form, or None when it is not a UUID written that way."""
    lowered = value.lower()
    return lowered if _CANONICAL_UUID.match(lowered) else None


def credential_from_headers(headers: Iterable[tuple[str, str]], cookie_name: str = DCIM_COOKIE) -> str:
    """The token a call carries: `Authorization: Bearer` if present, else the `cookie_name` cookie.

    Raises `Unauthenticated` for no credential, two Authorization headers, an Authorization header
    that is not a Bearer token, the cookie set twice, or a credential over `MAX_TOKEN_BYTES`.
    """
    authorizations: list[str] = []
    cookies: list[str] = []
    for key, value in headers:
        lowered = key.lower()
        if lowered == "authorization":
            authorizations.append(value)
        elif lowered == "cookie":
            cookies.append(value)
    if len(authorizations) > 1:
        raise Unauthenticated("more than one Authorization header")
    if authorizations:
        # An Authorization header is the credential, even a broken one: no silent fall-back to a cookie.
        scheme, _, token = authorizations[0].strip().partition(" ")
        if scheme.lower() != "bearer":
            raise Unauthenticated("the Authorization header must carry a Bearer token")
        return _bounded(token.strip())
    found = [value for header in cookies for name, value in _cookie_pairs(header) if name == cookie_name]
    if len(found) > 1:
        raise Unauthenticated(f"the {cookie_name} cookie is set more than once")
    if not found:
        raise Unauthenticated(f"no credential: send Authorization: Bearer <token> or the {cookie_name} cookie")
    return _bounded(found[0])


def _cookie_pairs(header: str) -> Iterable[tuple[str, str]]:
    # RFC 6265 §4.2: `name=value` pairs separated by "; ". Parsed by hand because http.cookies
    # silently drops the rest of a header at the first value it dislikes.
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep:
            yield name.strip(), value.strip().strip('"')


def _bounded(token: str) -> str:
    if not token:
        raise Unauthenticated("empty credential")
    if len(token) > MAX_TOKEN_BYTES:
        raise Unauthenticated(f"credential larger than {MAX_TOKEN_BYTES} bytes")
    return token


@dataclass(frozen=True, slots=True)
class DcimTokenValidator:
    """Checks a DCIM token and returns its subject."""

    rules: DcimTokenRules

    def validate(self, token: str) -> str:
        """The token's subject as a canonical UUID; raises `Unauthenticated` for any broken rule."""
        if not _COMPACT_JWS.match(token):
            raise Unauthenticated("the credential is not a JWT")
        try:
            claims = jwt.decode(
                token,
                self.rules.secret,
                algorithms=[ALGORITHM],
                issuer=self.rules.issuer,
                audience=self.rules.audience,
                leeway=self.rules.leeway_seconds,
                options={
                    "require": ["exp", "iss", "aud", "sub"],
                    "verify_signature": True,
                    "verify_exp": True,
                    "verify_nbf": True,
                    "verify_iat": True,
                    "verify_iss": True,
                    "verify_aud": True,
                    "verify_sub": True,
                    "strict_aud": False,
                    "enforce_minimum_key_length": True,
                },
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise Unauthenticated("the token is not valid yet") from None
        except jwt.InvalidIssuerError:
            raise Unauthenticated("the token was not issued by DCIM") from None
        except jwt.InvalidAudienceError:
            raise Unauthenticated("the token is not meant for DCIM users") from None
        except jwt.MissingRequiredClaimError as e:
            raise Unauthenticated(f"the token has no {e.claim!r} claim") from None
        except jwt.InvalidAlgorithmError:
            raise Unauthenticated(f"the token is not signed with {ALGORITHM}") from None
        except InvalidSubjectError:
            raise Unauthenticated("the token's subject is not a UUID") from None
        except jwt.InvalidSignatureError:
            raise Unauthenticated("the token's signature does not verify") from None
        except jwt.InvalidTokenError:
            raise Unauthenticated("the token is malformed") from None
        subject = claims.get("sub")
        canonical = canonical_uuid(subject) if isinstance(subject, str) else None
        if canonical is None:
            raise Unauthenticated("the token's subject is not a UUID")
        return canonical


@dataclass(frozen=True, slots=True)
class DcimAuthenticator:
    """The request stack's `authenticate` hook: headers in, the caller's subject out."""

    validator: DcimTokenValidator
    cookie_name: str = DCIM_COOKIE

    def __call__(self, headers: Headers) -> str:
        # allitems(), not items(): a repeated header must be seen as repeated.
        return self.validator.validate(credential_from_headers(headers.allitems(), self.cookie_name))


def mint_token(
    rules: DcimTokenRules,
    *,
    subject: uuid.UUID,
    ttl: timedelta,
    now: datetime,
    name: str | None = None,
) -> str:
    """A DCIM-style token for `subject` valid for `ttl` from `now` (local use and tests only)."""
    if ttl <= timedelta(0):
        raise ValueError("ttl must be positive")
    claims: dict[str, object] = {
        "iss": rules.issuer,
        "aud": [rules.audience],
        "sub": str(subject),
        "iat": int(now.timestamp()),
        "exp": int((now + ttl).timestamp()),
    }
    if name:
        claims["name"] = name
    return jwt.encode(claims, rules.secret, algorithm=ALGORITHM)
