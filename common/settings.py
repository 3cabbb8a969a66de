"""Reading configuration from the environment: typed, with defaults that work locally, loud on bad values.

Each process builds one frozen settings object in its `main.py` from `os.environ` (no other module
reads the environment) out of the groups here and its own. Errors name the variable and the value.
Every variable is listed in the README's configuration table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from common.http_limits import HttpLimits

# The demo's embedded server (`fleet db up`): what every default DATABASE_URL points at. The port
# is below Linux's ephemeral range (32768-60999), so no outgoing connection or bind(0) can hold it.
LOCAL_DATABASE_HOST = "127.0.0.1"
LOCAL_DATABASE_PORT = 15432
LOCAL_DATABASE_NAME = "fleet"


def local_database_url(role: str) -> str:
    """The DSN of `role` on the local demo database."""
    return f"postgresql://{role}@{LOCAL_DATABASE_HOST}:{LOCAL_DATABASE_PORT}/{LOCAL_DATABASE_NAME}"


# The levels LOG_LEVEL may name, for every process.
LOG_LEVELS = ("debug", "info", "warning", "error")


class SettingsError(ValueError):
    """A configuration variable has a value that cannot be used."""


def env_str(env: Mapping[str, str], name: str, default: str) -> str:
    value = env.get(name)
    return default if value is None or value == "" else value


def env_int(env: Mapping[str, str], name: str, default: int, *, minimum: int | None = None) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected a whole number") from None
    if minimum is not None and value < minimum:
        raise SettingsError(f"{name}={raw!r}: must be at least {minimum}")
    return value


def env_float(env: Mapping[str, str], name: str, default: float, *, minimum: float | None = None) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected a number") from None
    if minimum is not None and value < minimum:
        raise SettingsError(f"{name}={raw!r}: must be at least {minimum}")
    return value


def env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise SettingsError(f"{name}={raw!r}: expected true or false")


def env_list(env: Mapping[str, str], name: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A comma-separated list; blanks are dropped."""
    raw = env.get(name)
    if raw is None:
        return default
    return tuple(item.strip() for item in raw.split(",") if item.strip())


def env_choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(env, name, default)
    if value not in choices:
        raise SettingsError(f"{name}={value!r}: expected one of {', '.join(choices)}")
    return value


def env_secret(env: Mapping[str, str], name: str) -> str | None:
    """A secret given inline (`NAME`) or as a file (`NAME_FILE`, which wins); None when neither is set."""
    path = env.get(f"{name}_FILE")
    if path:
        try:
            value = Path(path).read_text().strip()
        except OSError as e:
            raise SettingsError(f"{name}_FILE={path!r}: cannot read it ({e.strerror})") from None
        if not value:
            raise SettingsError(f"{name}_FILE={path!r}: the file is empty")
        return value
    inline = env.get(name)
    return inline if inline else None


@dataclass(frozen=True, slots=True)
class DatabaseSettings:
    """How a process connects to PostgreSQL, always as its own role."""

    url: str
    """DATABASE_URL: libpq connection string or URI; the role in it is the process's role."""
    pool_min: int = 1
    """DATABASE_POOL_MIN: connections kept open."""
    pool_max: int = 4
    """DATABASE_POOL_MAX: connections at most."""
    statement_timeout_ms: int = 5000
    """DATABASE_STATEMENT_TIMEOUT_MS: server-side limit for one statement, in milliseconds."""
    connect_timeout_seconds: float = 5.0
    """DATABASE_CONNECT_TIMEOUT: seconds to wait for a connection from the pool or the server."""

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], *, role: str, pool_max: int = 4, statement_timeout_ms: int = 5000
    ) -> DatabaseSettings:
        return cls(
            url=env_str(env, "DATABASE_URL", local_database_url(role)),
            pool_min=env_int(env, "DATABASE_POOL_MIN", 1, minimum=0),
            pool_max=env_int(env, "DATABASE_POOL_MAX", pool_max, minimum=1),
            statement_timeout_ms=env_int(env, "DATABASE_STATEMENT_TIMEOUT_MS", statement_timeout_ms, minimum=1),
            connect_timeout_seconds=env_float(env, "DATABASE_CONNECT_TIMEOUT", 5.0, minimum=0.1),
        )


@dataclass(frozen=True, slots=True)
class GrpcLimits:
    """What the gRPC port allows a client: HTTP/2 streams, calls in progress, connection lifetimes.

    The stream limit is announced in SETTINGS; streams a client opens and resets at once (rapid
    reset) still count until gRPC core has dropped them, and calls beyond the in-progress limit are
    answered RESOURCE_EXHAUSTED before any handler runs, so neither grows the process without bound.
    """

    max_concurrent_streams: int = 100
    """GRPC_MAX_CONCURRENT_STREAMS: streams one connection may have open at once."""
    max_concurrent_rpcs: int = 200
    """GRPC_MAX_CONCURRENT_RPCS: calls the whole server runs at once; more are RESOURCE_EXHAUSTED."""
    max_connection_idle_seconds: int = 300
    """GRPC_MAX_CONNECTION_IDLE: a connection without calls for this long is closed (GOAWAY)."""
    max_connection_age_seconds: int = 1800
    """GRPC_MAX_CONNECTION_AGE: a connection is asked to go away after this long (calls get SHUTDOWN_GRACE)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GrpcLimits:
        default = cls()
        return cls(
            max_concurrent_streams=env_int(
                env, "GRPC_MAX_CONCURRENT_STREAMS", default.max_concurrent_streams, minimum=1
            ),
            max_concurrent_rpcs=env_int(env, "GRPC_MAX_CONCURRENT_RPCS", default.max_concurrent_rpcs, minimum=1),
            max_connection_idle_seconds=env_int(
                env, "GRPC_MAX_CONNECTION_IDLE", default.max_connection_idle_seconds, minimum=1
            ),
            max_connection_age_seconds=env_int(
                env, "GRPC_MAX_CONNECTION_AGE", default.max_connection_age_seconds, minimum=1
            ),
        )


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Where an API listens: Connect, health and metrics on one port, gRPC on another."""

    host: str
    """BIND_HOST: address both ports bind to; loopback by default."""
    http_port: int
    """HTTP_PORT: Connect (HTTP/1.1), /livez, /readyz, /metrics."""
    grpc_port: int
    """GRPC_PORT: gRPC (HTTP/2) with reflection and grpc.health.v1."""
    origins: tuple[str, ...]
    """Browser origins CORS allows (CONSOLE_ORIGINS or DCIM_ORIGINS)."""
    shutdown_grace_seconds: float = 5.0
    """SHUTDOWN_GRACE: seconds in-flight calls get after SIGTERM."""
    limits: HttpLimits = field(default_factory=HttpLimits)
    """HTTP_HEAD_TIMEOUT, HTTP_BODY_TIMEOUT, HTTP_IDLE_TIMEOUT, HTTP_MAX_CONNECTIONS: what HTTP allows a client."""
    grpc_limits: GrpcLimits = field(default_factory=GrpcLimits)
    """GRPC_MAX_CONCURRENT_STREAMS, GRPC_MAX_CONCURRENT_RPCS, GRPC_MAX_CONNECTION_IDLE, GRPC_MAX_CONNECTION_AGE."""

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], *, http_port: int, grpc_port: int, origins_var: str, origins: tuple[str, ...]
    ) -> HttpSettings:
        http = HttpLimits()
        return cls(
            host=env_str(env, "BIND_HOST", "127.0.0.1"),
            http_port=env_int(env, "HTTP_PORT", http_port, minimum=0),
            grpc_port=env_int(env, "GRPC_PORT", grpc_port, minimum=0),
            origins=env_list(env, origins_var, origins),
            shutdown_grace_seconds=env_float(env, "SHUTDOWN_GRACE", 5.0, minimum=0),
            limits=HttpLimits(
                head_timeout_seconds=env_float(env, "HTTP_HEAD_TIMEOUT", http.head_timeout_seconds, minimum=0.1),
                body_timeout_seconds=env_float(env, "HTTP_BODY_TIMEOUT", http.body_timeout_seconds, minimum=0.1),
                idle_timeout_seconds=env_int(env, "HTTP_IDLE_TIMEOUT", http.idle_timeout_seconds, minimum=1),
                max_connections=env_int(env, "HTTP_MAX_CONNECTIONS", http.max_connections, minimum=2),
            ),
            grpc_limits=GrpcLimits.from_env(env),
        )


@dataclass(frozen=True, slots=True)
class LogSettings:
    """What is logged and how."""

    level: str = "info"
    """LOG_LEVEL: debug, info, warning or error; default info."""
    json: bool = True
    """LOG_FORMAT: `json` (one object per line, the default) or `text` (for a terminal)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LogSettings:
        level = env_choice(env, "LOG_LEVEL", "info", LOG_LEVELS)
        return cls(level=level, json=env_choice(env, "LOG_FORMAT", "json", ("json", "text")) == "json")
