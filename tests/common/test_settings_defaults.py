"""Every setting read from an empty environment is its dataclass field's default.

Each settings group states a default twice: on its field (what code and tests that build the group
directly get) and in its `from_env` (what a process gets when the variable is unset; the table of
docs/configuration.md is checked against these). This holds the two together, group by group, so a
default changed in one place only fails here instead of making a process and its tests disagree.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from collector.settings import GardenerSettings, HealthSettings, InventorySettings, ReconcileSettings, Settings
from common.http_limits import HttpLimits
from common.settings import DatabaseSettings, LogSettings
from services.common.settings import GrpcLimits, HttpSettings
from services.fleet.settings import AuthSettings, FleetSettings, SummarySettings
from services.overview.settings import CacheSettings, OverviewSettings

SECRET = {"JWT_SECRET": "s" * 32}


def differences(read: Any, default: Any, *, skip: tuple[str, ...] = ()) -> dict[str, tuple[Any, Any]]:
    """Fields of two instances of one dataclass that differ: name -> (from the environment, the default)."""
    assert type(read) is type(default)
    return {
        f.name: (getattr(read, f.name), getattr(default, f.name))
        for f in dataclasses.fields(read)
        if f.name not in skip and getattr(read, f.name) != getattr(default, f.name)
    }


def test_the_workers_groups_default_as_their_fields() -> None:
    settings = Settings.from_env({})
    assert differences(settings.gardener, GardenerSettings()) == {}
    assert differences(settings.inventory, InventorySettings()) == {}
    assert differences(settings.health, HealthSettings()) == {}
    assert differences(settings.logging, LogSettings()) == {}
    # The field's None means "three intervals"; from_env writes the same bound out.
    assert settings.reconcile.interval_seconds == ReconcileSettings().interval_seconds
    assert settings.reconcile.deletion_bound_seconds == ReconcileSettings().deletion_bound_seconds
    assert differences(settings, Settings(database=settings.database), skip=("reconcile",)) == {}


def test_the_database_group_defaults_as_its_fields() -> None:
    # The role's URL and the two sizes a process passes in are the process's own.
    read = DatabaseSettings.from_env({}, role="fun_cluster_worker")
    assert differences(read, DatabaseSettings(url=read.url)) == {}


@pytest.mark.parametrize(
    "settings", [OverviewSettings.from_env({}), FleetSettings.from_env(SECRET)], ids=["public API", "staff API"]
)
def test_the_api_groups_default_as_their_fields(settings: Any) -> None:
    http: HttpSettings = settings.http
    assert http.shutdown_grace_seconds == HttpSettings.__dataclass_fields__["shutdown_grace_seconds"].default
    assert http.host == "127.0.0.1"
    assert differences(http.limits, HttpLimits()) == {}
    assert differences(http.grpc_limits, GrpcLimits()) == {}
    assert differences(settings.logging, LogSettings()) == {}


def test_the_public_apis_cache_and_the_staff_apis_groups_default_as_their_fields() -> None:
    assert differences(OverviewSettings.from_env({}).cache, CacheSettings()) == {}
    staff = FleetSettings.from_env(SECRET)
    assert differences(staff.summary, SummarySettings()) == {}
    assert differences(staff.auth, AuthSettings(secret=staff.auth.secret)) == {}
