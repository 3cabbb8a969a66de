"""Bearer tokens: the garden's, the control endpoint's, and the ones minted into shoot kubeconfigs.

Real Gardener kubeconfigs carry a client certificate; the simulator uses bearer tokens (one TLS
port, one certificate) with the same observable contract: each minted kubeconfig works only for
its shoot (and only for that shoot's uid: a recreated shoot voids it) until `expirationTimestamp`,
then the API answers 401. Tokens are random; they are never logged, only their kind is.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from enum import StrEnum

SWEEP_EVERY = 4096
MAX_LIFETIME_SECONDS = 24 * 3600


class TokenKind(StrEnum):
    GARDEN = "garden"
    CONTROL = "control"
    ADMIN = "admin"  # from shoots/adminkubeconfig
    VIEWER = "viewer"  # from shoots/viewerkubeconfig
    NONE = "none"  # no Authorization header
    UNKNOWN = "unknown"  # a token the simulator never issued (or forgot on reset)
    EXPIRED = "expired"  # a minted token past its expiry


@dataclass(frozen=True, slots=True)
class Principal:
    kind: TokenKind
    shoot_key: str | None = None
    shoot_uid: str | None = None
    expires: float | None = None

    @property
    def user(self) -> str:
        """The user name a real server would put in a 403 message."""
        if self.kind is TokenKind.GARDEN:
            return "system:serviceaccount:garden-fundament:cluster-worker"
        if self.kind in {TokenKind.ADMIN, TokenKind.VIEWER}:
            return f"fundament:{self.kind.value}"
        return "system:anonymous"


class Tokens:
    """Issues and resolves bearer tokens; shared between the server thread and callers."""

    def __init__(self) -> None:
        self.garden_token = secrets.token_urlsafe(32)
        self.control_token = secrets.token_urlsafe(32)
        self._minted: dict[str, Principal] = {}
        self._mints = 0
        self._lock = threading.Lock()

    def mint(self, kind: TokenKind, shoot_key: str, shoot_uid: str, expires: float) -> str:
        if kind not in {TokenKind.ADMIN, TokenKind.VIEWER}:
            raise ValueError(f"only admin and viewer tokens are minted, not {kind}")
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._minted[token] = Principal(kind, shoot_key, shoot_uid, expires)
            self._mints += 1
            if self._mints % SWEEP_EVERY == 0:
                # A soak mints for hours; forget tokens long expired (they then answer 401 as unknown).
                horizon = expires - 2 * MAX_LIFETIME_SECONDS
                self._minted = {t: p for t, p in self._minted.items() if (p.expires or horizon) > horizon}
        return token

    def resolve(self, authorization: str | None, now: float) -> Principal:
        """Who presents this `Authorization` header value."""
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if not authorization or scheme.lower() != "bearer" or not token:
            return Principal(TokenKind.NONE if not authorization else TokenKind.UNKNOWN)
        for fixed, kind in ((self.garden_token, TokenKind.GARDEN), (self.control_token, TokenKind.CONTROL)):
            if secrets.compare_digest(token, fixed):
                return Principal(kind)
        with self._lock:
            principal = self._minted.get(token, Principal(TokenKind.UNKNOWN))
        if principal.expires is not None and now >= principal.expires:
            return Principal(TokenKind.EXPIRED, principal.shoot_key, principal.shoot_uid, principal.expires)
        return principal

    def forget_minted(self) -> None:
        with self._lock:
            self._minted.clear()

    @property
    def minted_count(self) -> int:
        with self._lock:
            return len(self._minted)
