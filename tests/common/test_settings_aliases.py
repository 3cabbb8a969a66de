"""Renamed variables: the old name still works for one release, and the two names never silently disagree.

A variable whose name did not say its unit was renamed (`INVENTORY_INTERVAL` became
`INVENTORY_INTERVAL_SECONDS`). The helpers of common/settings.py read the old name when the new one
is not set, log once that it is deprecated, name whichever was used in their errors, and refuse the
two set to different values. tests/project/test_configuration_table.py holds every rename of the
code to these rules and to the configuration table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

import pytest

from collector.settings import Settings
from common.settings import SettingsError, env_choice, env_float, env_given, env_int, env_str
from services.common.malloc_tuning import malloc_settings_from_env
from services.common.settings import HttpSettings
from services.fleet.settings import FleetSettings
from services.overview.settings import OverviewSettings
from tests.project.test_configuration_table import code_reads

# Every reader of the variables a rename touched: the worker's, both APIs' and the APIs' malloc settings.
READERS: list[Callable[[Mapping[str, str]], object]] = [
    Settings.from_env,
    OverviewSettings.from_env,
    lambda env: FleetSettings.from_env({**env, "JWT_SECRET": "s" * 32}),
    malloc_settings_from_env,
]


def test_the_new_name_wins_and_the_old_one_is_read_when_the_new_one_is_unset() -> None:
    assert env_int({"NEW_SECONDS": "5"}, "NEW_SECONDS", 1, old="NEW") == 5
    assert env_int({"NEW": "6"}, "NEW_SECONDS", 1, old="NEW") == 6
    assert env_int({"NEW_SECONDS": "", "NEW": "6"}, "NEW_SECONDS", 1, old="NEW") == 6
    assert env_int({}, "NEW_SECONDS", 1, old="NEW") == 1
    assert env_float({"NEW": "0.5"}, "NEW_SECONDS", 1.0, old="NEW") == 0.5
    assert env_str({"NEW": "x"}, "NEW_SECONDS", "d", old="NEW") == "x"
    assert env_choice({"NEW": "b"}, "NEW_SECONDS", "a", ("a", "b"), old="NEW") == "b"
    # Both set to the same value (an old deployment half-migrated) is no conflict.
    assert env_int({"NEW_SECONDS": "7", "NEW": " 7 "}, "NEW_SECONDS", 1, old="NEW") == 7


def test_both_names_set_to_different_values_is_refused_naming_both() -> None:
    with pytest.raises(SettingsError) as raised:
        env_int({"NEW_SECONDS": "5", "NEW": "6"}, "NEW_SECONDS", 1, old="NEW")
    assert str(raised.value) == (
        "NEW_SECONDS='5' and NEW='6': both are set and differ; NEW is the old name of NEW_SECONDS, set only NEW_SECONDS"
    )


def test_an_error_names_the_variable_that_was_set() -> None:
    with pytest.raises(SettingsError, match=r"^NEW='soon': expected a number$"):
        env_float({"NEW": "soon"}, "NEW_SECONDS", 1.0, old="NEW")
    with pytest.raises(SettingsError, match=r"^NEW_SECONDS='soon': expected a number$"):
        env_float({"NEW_SECONDS": "soon"}, "NEW_SECONDS", 1.0, old="NEW")
    with pytest.raises(SettingsError, match=r"^NEW='0': must be at least 1$"):
        env_int({"NEW": "0"}, "NEW_SECONDS", 5, minimum=1, old="NEW")
    assert env_given({"NEW": "3"}, "NEW_SECONDS", "NEW") == ("NEW", "3")


def test_an_old_name_in_use_is_logged_as_deprecated(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="common.settings"):
        env_int({"OLD_ONLY_HERE": "3"}, "OLD_ONLY_HERE_SECONDS", 1, old="OLD_ONLY_HERE")
        env_int({"OLD_ONLY_HERE": "3"}, "OLD_ONLY_HERE_SECONDS", 1, old="OLD_ONLY_HERE")
    said = [r.getMessage() for r in caplog.records if "OLD_ONLY_HERE" in r.getMessage()]
    assert said == [
        "OLD_ONLY_HERE is the old name of OLD_ONLY_HERE_SECONDS and stops working in the next release;"
        " set OLD_ONLY_HERE_SECONDS"
    ], "once per process, naming both"


def test_the_processes_read_their_old_names() -> None:
    worker = Settings.from_env({"INVENTORY_INTERVAL": "60", "HISTORY_HOUR_RETENTION": "10", "RECONCILE_INTERVAL": "20"})
    assert worker.inventory.interval_seconds == 60
    assert worker.inventory.history_hour_retention_days == 10
    assert worker.reconcile.deletion_bound_seconds == 60  # three of the interval read under its old name
    http = HttpSettings.from_env(
        {"HTTP_HEAD_TIMEOUT": "2", "SHUTDOWN_GRACE": "9"}, http_port=1, grpc_port=2, origins_var="O", origins=()
    )
    assert (http.limits.head_timeout_seconds, http.shutdown_grace_seconds) == (2.0, 9.0)
    public = OverviewSettings.from_env({"CACHE_TTL": "5", "READ_TIMEOUT": "1.5"})
    assert (public.cache.ttl_seconds, public.cache.read_timeout_seconds) == (5, 1.5)


def test_a_limit_broken_under_the_old_name_names_the_old_name() -> None:
    with pytest.raises(SettingsError, match=r"^CACHE_TTL='61': must be at most 60"):
        OverviewSettings.from_env({"CACHE_TTL": "61"})
    with pytest.raises(SettingsError, match=r"^CACHE_TTL_SECONDS='61': must be at most 60"):
        OverviewSettings.from_env({"CACHE_TTL_SECONDS": "61"})


@pytest.mark.parametrize(("old", "new"), sorted(code_reads().old_names.items()))
def test_every_renamed_variable_refuses_its_two_names_set_differently(old: str, new: str) -> None:
    refusals = []
    for read in READERS:
        try:
            read({new: "7", old: "8"})
        except SettingsError as e:
            refusals.append(str(e))
    assert any(f"{new}='7' and {old}='8'" in message for message in refusals), refusals
