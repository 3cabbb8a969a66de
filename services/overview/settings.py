"""The configuration of `platform-public-api`, built once from the environment by `main.py`.

Groups: where it listens (`http`), how it reaches PostgreSQL (`database`, always as role
`fun_platform_public_api`), how long one answer is shared (`cache`) and how it logs (`logging`).
Every variable is named in the error when its value cannot be used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from common.settings import DatabaseSettings, LogSettings, SettingsError, env_float, env_given, env_int
from services.common.settings import HttpSettings, check_origins

ROLE = "fun_platform_public_api"
APPLICATION_NAME = "platform-public-api"

# No copy of the overview anywhere may be older than a minute (docs/architecture.md, 'One overview
# answer a minute: the single-flight cache'), so the answer may not be kept longer than that, whatever
# the configuration says.
MAX_CACHE_TTL_SECONDS = 60


@dataclass(frozen=True, slots=True)
class CacheSettings:
    """How the one shared answer is kept and read."""

    ttl_seconds: int = MAX_CACHE_TTL_SECONDS
    """CACHE_TTL_SECONDS: whole seconds one answer is served (and the largest max-age sent); 1 to 60, default 60."""
    read_timeout_seconds: float = 3.0
    """READ_TIMEOUT_SECONDS: seconds the shared database read may take, whoever waits for it; default 3."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> CacheSettings:
        ttl = env_int(env, "CACHE_TTL_SECONDS", MAX_CACHE_TTL_SECONDS, minimum=1, old="CACHE_TTL")
        if ttl > MAX_CACHE_TTL_SECONDS:
            given, raw = env_given(env, "CACHE_TTL_SECONDS", old="CACHE_TTL")
            raise SettingsError(
                f"{given}={raw!r}: must be at most {MAX_CACHE_TTL_SECONDS}, no copy may be older than a minute"
            )
        read_timeout = env_float(env, "READ_TIMEOUT_SECONDS", 3.0, minimum=0.05, old="READ_TIMEOUT")
        return cls(ttl_seconds=ttl, read_timeout_seconds=read_timeout)


@dataclass(frozen=True, slots=True)
class OverviewSettings:
    """Everything `platform-public-api` is configured with."""

    http: HttpSettings
    database: DatabaseSettings
    cache: CacheSettings
    logging: LogSettings

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> OverviewSettings:
        """Read the settings; raises `SettingsError` naming the variable when a value is unusable."""
        cache = CacheSettings.from_env(env)
        # The statement timeout is the server-side backstop behind the read deadline: a little longer,
        # so the deadline (which cancels the query itself) normally fires first.
        backstop_ms = round(cache.read_timeout_seconds * 1000) + 1000
        database = DatabaseSettings.from_env(env, role=ROLE, pool_max=2, statement_timeout_ms=backstop_ms)
        # No browser origin is allowed unless configured: the console (or the demo) names its own.
        http = HttpSettings.from_env(env, http_port=8080, grpc_port=9090, origins_var="CONSOLE_ORIGINS", origins=())
        check_origins("CONSOLE_ORIGINS", http.origins)
        return cls(http=http, database=database, cache=cache, logging=LogSettings.from_env(env))
