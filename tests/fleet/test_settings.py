"""platform-admin-api's configuration: defaults that work locally, loud errors that name the variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.settings import SettingsError, local_database_url
from services.fleet.settings import FleetSettings

SECRET = "s" * 32


def test_defaults() -> None:
    settings = FleetSettings.from_env({"JWT_SECRET": SECRET})
    assert settings.database.url == local_database_url("fun_platform_admin_api")
    assert (settings.http.host, settings.http.http_port, settings.http.grpc_port) == ("127.0.0.1", 8081, 9091)
    assert settings.auth.secret == SECRET.encode()
    rules = settings.auth.token_rules()
    assert (rules.issuer, rules.audience, rules.leeway_seconds) == ("dcim-authn-api", "dcim-user", 30)
    assert settings.logging.level == "info"
    assert settings.http.origins == ()
    assert (settings.summary.cache_seconds, settings.summary.read_timeout_seconds) == (15.0, 10.0)


def test_every_variable_is_read() -> None:
    settings = FleetSettings.from_env(
        {
            "DATABASE_URL": "postgresql://fun_platform_admin_api@db:5432/fleet",
            "HTTP_PORT": "18081",
            "GRPC_PORT": "19091",
            "JWT_SECRET": SECRET,
            "JWT_LEEWAY_SECONDS": "5",
            "DCIM_ORIGINS": "https://dcim.example, https://dcim.other.example",
            "LOG_LEVEL": "debug",
            "SUMMARY_CACHE_SECONDS": "0",
            "SUMMARY_READ_TIMEOUT_SECONDS": "2.5",
        }
    )
    assert settings.database.url == "postgresql://fun_platform_admin_api@db:5432/fleet"
    assert (settings.http.http_port, settings.http.grpc_port) == (18081, 19091)
    assert settings.http.origins == ("https://dcim.example", "https://dcim.other.example")
    assert settings.auth.leeway_seconds == 5 and settings.logging.level == "debug"
    assert (settings.summary.cache_seconds, settings.summary.read_timeout_seconds) == (0.0, 2.5)


def test_secret_file_wins_over_the_inline_secret(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text("f" * 40 + "\n")
    settings = FleetSettings.from_env({"JWT_SECRET": SECRET, "JWT_SECRET_FILE": str(path)})
    assert settings.auth.secret == b"f" * 40


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "JWT_SECRET or JWT_SECRET_FILE must be set"),
        ({"JWT_SECRET": "short"}, "JWT_SECRET: the secret must be at least 32 bytes"),
        ({"JWT_SECRET_FILE": "/nonexistent/secret"}, "JWT_SECRET_FILE='/nonexistent/secret': cannot read it"),
        ({"JWT_SECRET": SECRET, "DCIM_ORIGINS": "*"}, "DCIM_ORIGINS='*'"),
        ({"JWT_SECRET": SECRET, "DCIM_ORIGINS": "dcim.example"}, "is not an origin"),
        ({"JWT_SECRET": SECRET, "HTTP_PORT": "http"}, "HTTP_PORT='http': expected a whole number"),
        ({"JWT_SECRET": SECRET, "GRPC_PORT": "-1"}, "GRPC_PORT='-1': must be at least 0"),
        ({"JWT_SECRET": SECRET, "LOG_LEVEL": "loud"}, "LOG_LEVEL='loud'"),
        ({"JWT_SECRET": SECRET, "JWT_LEEWAY_SECONDS": "-3"}, "JWT_LEEWAY_SECONDS='-3'"),
        ({"JWT_SECRET": SECRET, "SUMMARY_CACHE_SECONDS": "-1"}, "SUMMARY_CACHE_SECONDS='-1'"),
        ({"JWT_SECRET": SECRET, "SUMMARY_READ_TIMEOUT_SECONDS": "0"}, "SUMMARY_READ_TIMEOUT_SECONDS='0'"),
    ],
    ids=[
        "no-secret",
        "short-secret",
        "missing-file",
        "wildcard-origin",
        "origin-without-scheme",
        "bad-http-port",
        "bad-grpc-port",
        "bad-log-level",
        "negative-leeway",
        "negative-cache",
        "zero-read-timeout",
    ],
)
def test_bad_configuration_names_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        FleetSettings.from_env(env)
    assert message in str(caught.value)
    assert SECRET not in str(caught.value)
