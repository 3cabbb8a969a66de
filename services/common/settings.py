"""The settings groups only the APIs read: where they listen, which browser origins CORS allows, what the
HTTP and gRPC ports allow a client, and how long in-flight calls get at shutdown.

They live here rather than in the kernel (`common/settings.py`, whose helpers they use) because the
worker and the simulator serve no API; the worker's image holds the kernel without them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from common.http_limits import HttpLimits
from common.settings import SettingsError, env_float, env_int, env_list, env_str


def check_origins(name: str, origins: tuple[str, ...]) -> None:
    """Refuse what no browser sends as an `Origin`: a wildcard (anywhere in it) or a value without its
    scheme. The chart's values.schema.json refuses the same at install, so no pod crash-loops on it."""
    for origin in origins:
        if "*" in origin or not origin.startswith(("http://", "https://")):
            raise SettingsError(
                f"{name}={','.join(origins)!r}: {origin!r} is not an origin like https://console.example"
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
    """GRPC_MAX_CONNECTION_IDLE_SECONDS: a connection without calls for this long is closed (GOAWAY)."""
    max_connection_age_seconds: int = 1800
    """GRPC_MAX_CONNECTION_AGE_SECONDS: a connection is asked to go away after this long (calls get the
    shutdown grace)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GrpcLimits:
        default = cls()
        return cls(
            max_concurrent_streams=env_int(
                env, "GRPC_MAX_CONCURRENT_STREAMS", default.max_concurrent_streams, minimum=1
            ),
            max_concurrent_rpcs=env_int(env, "GRPC_MAX_CONCURRENT_RPCS", default.max_concurrent_rpcs, minimum=1),
            max_connection_idle_seconds=env_int(
                env,
                "GRPC_MAX_CONNECTION_IDLE_SECONDS",
                default.max_connection_idle_seconds,
                minimum=1,
                old="GRPC_MAX_CONNECTION_IDLE",
            ),
            max_connection_age_seconds=env_int(
                env,
                "GRPC_MAX_CONNECTION_AGE_SECONDS",
                default.max_connection_age_seconds,
                minimum=1,
                old="GRPC_MAX_CONNECTION_AGE",
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
    """SHUTDOWN_GRACE_SECONDS: seconds in-flight calls get after SIGTERM."""
    limits: HttpLimits = field(default_factory=HttpLimits)
    """HTTP_HEAD_TIMEOUT_SECONDS, HTTP_BODY_TIMEOUT_SECONDS, HTTP_IDLE_TIMEOUT_SECONDS, HTTP_MAX_CONNECTIONS:
    what HTTP allows a client."""
    grpc_limits: GrpcLimits = field(default_factory=GrpcLimits)
    """GRPC_MAX_CONCURRENT_STREAMS, GRPC_MAX_CONCURRENT_RPCS, GRPC_MAX_CONNECTION_IDLE_SECONDS,
    GRPC_MAX_CONNECTION_AGE_SECONDS."""

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
            shutdown_grace_seconds=env_float(env, "SHUTDOWN_GRACE_SECONDS", 5.0, minimum=0, old="SHUTDOWN_GRACE"),
            limits=HttpLimits(
                head_timeout_seconds=env_float(
                    env, "HTTP_HEAD_TIMEOUT_SECONDS", http.head_timeout_seconds, minimum=0.1, old="HTTP_HEAD_TIMEOUT"
                ),
                body_timeout_seconds=env_float(
                    env, "HTTP_BODY_TIMEOUT_SECONDS", http.body_timeout_seconds, minimum=0.1, old="HTTP_BODY_TIMEOUT"
                ),
                idle_timeout_seconds=env_int(
                    env, "HTTP_IDLE_TIMEOUT_SECONDS", http.idle_timeout_seconds, minimum=1, old="HTTP_IDLE_TIMEOUT"
                ),
                max_connections=env_int(env, "HTTP_MAX_CONNECTIONS", http.max_connections, minimum=2),
            ),
            grpc_limits=GrpcLimits.from_env(env),
        )
