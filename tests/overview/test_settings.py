"""The configuration of platform-public-api: defaults that work locally, and the limits the design sets."""

from __future__ import annotations

import pytest

from common.settings import SettingsError, local_database_url
from services.overview.settings import OverviewSettings


def test_defaults_listen_on_loopback_and_read_the_local_database_as_the_public_role() -> None:
    settings = OverviewSettings.from_env({})
    assert settings.database.url == local_database_url("fun_platform_public_api")
    assert (settings.http.host, settings.http.http_port, settings.http.grpc_port) == ("127.0.0.1", 8080, 9090)
    assert settings.http.origins == ()
    assert (settings.cache.ttl_seconds, settings.cache.read_timeout_seconds) == (60, 3.0)
    assert settings.database.pool_max == 2
    # The statement timeout backs the read deadline up on the server, a second behind it.
    assert settings.database.statement_timeout_ms == 4000
    assert (settings.logging.level, settings.logging.json) == ("info", True)


def test_values_from_the_environment() -> None:
    settings = OverviewSettings.from_env(
        {
            "CONSOLE_ORIGINS": " https://console.example , http://localhost:5173,,",
            "CACHE_TTL_SECONDS": "5",
            "READ_TIMEOUT_SECONDS": "1.5",
            "HTTP_PORT": "18080",
            "LOG_FORMAT": "text",
        }
    )
    assert settings.http.origins == ("https://console.example", "http://localhost:5173")
    assert (settings.cache.ttl_seconds, settings.cache.read_timeout_seconds) == (5, 1.5)
    assert settings.database.statement_timeout_ms == 2500
    assert settings.http.http_port == 18080
    assert settings.logging.json is False


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CACHE_TTL_SECONDS": "61"}, "CACHE_TTL_SECONDS='61': must be at most 60"),
        ({"CACHE_TTL_SECONDS": "0"}, "CACHE_TTL_SECONDS='0': must be at least 1"),
        ({"READ_TIMEOUT_SECONDS": "fast"}, "READ_TIMEOUT_SECONDS='fast': expected a number"),
        ({"CONSOLE_ORIGINS": "console.example"}, "'console.example' is not an origin"),
        ({"LOG_FORMAT": "xml"}, "LOG_FORMAT='xml': expected one of json, text"),
    ],
    ids=["ttl-over-a-minute", "ttl-zero", "timeout-not-a-number", "origin-without-scheme", "log-format"],
)
def test_unusable_values_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("(", r"\(")):
        OverviewSettings.from_env(env)
