"""Reading configuration from the environment: typed, with defaults that work locally, loud on bad values.

Each process builds one frozen settings object in its `main.py` from `os.environ` (no other module
reads the environment) out of the groups here and its own; the APIs' serving groups are in
`services/common/settings.py`. Errors name the variable and the value. Every variable is listed in
the configuration table of docs/configuration.md.

A variable whose name did not say its unit was renamed (`INVENTORY_INTERVAL` became
`INVENTORY_INTERVAL_SECONDS`); for one release each helper also accepts the old name (`old=`), logs
that it is deprecated, and refuses the two names set to different values.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

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


_warned_old_names: set[str] = set()


def env_given(env: Mapping[str, str], name: str, old: str | None = None) -> tuple[str, str | None]:
    """The variable as given: the name it was set under (`name`, or its old name `old`) and its raw value.

    Raises SettingsError when both names are set to different values, since neither can be chosen
    without guessing what was meant.
    """
    value = env.get(name)
    if old is None:
        return name, value
    previous = env.get(old)
    if previous is None or previous == "":
        return name, value
    if value is not None and value != "":
        if value.strip() != previous.strip():
            raise SettingsError(
                f"{name}={value!r} and {old}={previous!r}: both are set and differ;"
                f" {old} is the old name of {name}, set only {name}"
            )
        return name, value
    if old not in _warned_old_names:
        _warned_old_names.add(old)
        logger.warning("%s is the old name of %s and stops working in the next release; set %s", old, name, name)
    return old, previous


def env_str(env: Mapping[str, str], name: str, default: str, *, old: str | None = None) -> str:
    _, value = env_given(env, name, old)
    return default if value is None or value == "" else value


def env_int(
    env: Mapping[str, str],
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    old: str | None = None,
) -> int:
    given, raw = env_given(env, name, old)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{given}={raw!r}: expected a whole number") from None
    if minimum is not None and value < minimum:
        raise SettingsError(f"{given}={raw!r}: must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise SettingsError(f"{given}={raw!r}: must be at most {maximum}")
    return value


def env_float(
    env: Mapping[str, str], name: str, default: float, *, minimum: float | None = None, old: str | None = None
) -> float:
    given, raw = env_given(env, name, old)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{given}={raw!r}: expected a number") from None
    if minimum is not None and value < minimum:
        raise SettingsError(f"{given}={raw!r}: must be at least {minimum}")
    return value


def env_bool(env: Mapping[str, str], name: str, default: bool, *, old: str | None = None) -> bool:
    given, raw = env_given(env, name, old)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise SettingsError(f"{given}={raw!r}: expected true or false")


def env_list(
    env: Mapping[str, str], name: str, default: tuple[str, ...] = (), *, old: str | None = None
) -> tuple[str, ...]:
    """A comma-separated list; blanks are dropped."""
    _, raw = env_given(env, name, old)
    if raw is None:
        return default
    return tuple(item.strip() for item in raw.split(",") if item.strip())


def env_choice(
    env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...], *, old: str | None = None
) -> str:
    given, raw = env_given(env, name, old)
    value = default if raw is None or raw == "" else raw
    if value not in choices:
        raise SettingsError(f"{given}={value!r}: expected one of {', '.join(choices)}")
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
    """DATABASE_CONNECT_TIMEOUT_SECONDS: seconds to wait for a connection from the pool or the server."""

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], *, role: str, pool_max: int = 4, statement_timeout_ms: int = 5000
    ) -> DatabaseSettings:
        return cls(
            url=env_str(env, "DATABASE_URL", local_database_url(role)),
            pool_min=env_int(env, "DATABASE_POOL_MIN", 1, minimum=0),
            pool_max=env_int(env, "DATABASE_POOL_MAX", pool_max, minimum=1),
            statement_timeout_ms=env_int(env, "DATABASE_STATEMENT_TIMEOUT_MS", statement_timeout_ms, minimum=1),
            connect_timeout_seconds=env_float(
                env, "DATABASE_CONNECT_TIMEOUT_SECONDS", 5.0, minimum=0.1, old="DATABASE_CONNECT_TIMEOUT"
            ),
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
