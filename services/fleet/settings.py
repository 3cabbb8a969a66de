"""The settings of platform-admin-api, built once in `main.py` from the environment.

Groups: `database` (connects as `fun_platform_admin_api`), `http` (ports and the DCIM origins CORS
allows, with credentials), `auth` (the shared JWT secret; issuer and audience are fixed and only tests
construct other values), `summary` (how long one fleet summary is shared). Errors name the variable
and the bad value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from common.settings import (
    DatabaseSettings,
    LogSettings,
    SettingsError,
    env_float,
    env_int,
    env_secret,
)
from services.common.auth import DEFAULT_LEEWAY_SECONDS, MIN_SECRET_BYTES, DcimTokenRules
from services.common.settings import HttpSettings, check_origins

ROLE = "fun_platform_admin_api"
HTTP_PORT = 8081
GRPC_PORT = 9091
# No browser origin by default: credentials are allowed for these, so each must be named on purpose.
DEFAULT_DCIM_ORIGINS: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AuthSettings:
    """How DCIM tokens are checked."""

    secret: bytes
    """JWT_SECRET or JWT_SECRET_FILE (the file wins): the platform's shared HS256 secret, at least 32 bytes."""
    leeway_seconds: int = DEFAULT_LEEWAY_SECONDS
    """JWT_LEEWAY_SECONDS: clock skew tolerated on exp and nbf, in seconds (default 30)."""

    def token_rules(self) -> DcimTokenRules:
        return DcimTokenRules(self.secret, leeway_seconds=self.leeway_seconds)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> AuthSettings:
        secret = env_secret(env, "JWT_SECRET")
        if secret is None:
            raise SettingsError("JWT_SECRET or JWT_SECRET_FILE must be set: the secret DCIM tokens are signed with")
        raw = secret.encode()
        if len(raw) < MIN_SECRET_BYTES:
            source = "JWT_SECRET_FILE" if env.get("JWT_SECRET_FILE") else "JWT_SECRET"
            raise SettingsError(f"{source}: the secret must be at least {MIN_SECRET_BYTES} bytes (got {len(raw)})")
        return cls(secret=raw, leeway_seconds=env_int(env, "JWT_LEEWAY_SECONDS", DEFAULT_LEEWAY_SECONDS, minimum=0))


@dataclass(frozen=True, slots=True)
class SummarySettings:
    """How long one GetFleetSummary answer is shared.

    The summary counts across the whole platform (a million namespaces at the design scale), which no
    index makes cheap, and its answer is the same for every staff member, so each replica reads it at
    most once per `cache_seconds` behind a single flight; the answer's `read` field says when.
    """

    cache_seconds: float = 15.0
    """SUMMARY_CACHE_SECONDS: seconds one summary is shared (default 15); 0 reads it on every call."""
    read_timeout_seconds: float = 10.0
    """SUMMARY_READ_TIMEOUT_SECONDS: deadline of one shared summary read, in seconds (default 10)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SummarySettings:
        return cls(
            cache_seconds=env_float(env, "SUMMARY_CACHE_SECONDS", 15.0, minimum=0),
            read_timeout_seconds=env_float(env, "SUMMARY_READ_TIMEOUT_SECONDS", 10.0, minimum=0.1),
        )


@dataclass(frozen=True, slots=True)
class FleetSettings:
    """Everything platform-admin-api reads from its environment."""

    database: DatabaseSettings
    http: HttpSettings
    auth: AuthSettings
    summary: SummarySettings = SummarySettings()
    logging: LogSettings = field(default_factory=LogSettings)
    """LOG_LEVEL and LOG_FORMAT."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> FleetSettings:
        return cls(
            database=DatabaseSettings.from_env(env, role=ROLE),
            http=HttpSettings.from_env(
                env,
                http_port=HTTP_PORT,
                grpc_port=GRPC_PORT,
                origins_var="DCIM_ORIGINS",
                origins=DEFAULT_DCIM_ORIGINS,
            ),
            auth=AuthSettings.from_env(env),
            summary=SummarySettings.from_env(env),
            logging=LogSettings.from_env(env),
        )

    def __post_init__(self) -> None:
        # Credentials are allowed for these origins, so a wildcard would hand any site a staff session.
        if "*" in self.http.origins:
            raise SettingsError("DCIM_ORIGINS='*': list the DCIM origins explicitly, credentials are allowed")
        check_origins("DCIM_ORIGINS", self.http.origins)
