"""The settings of `cluster-worker`: one frozen object, built once from the environment by `main.py`.

Groups follow the jobs of the process: the database, the Gardener connection both modes share, the
inventory loop, the reconcile loop and the health port. Errors name the variable and the bad value
(`SettingsError`). Every variable is listed in docs/configuration.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from common.eventloop import DEFAULT_EVENT_LOOP, event_loop_from_env
from common.garbage_collection import DEFAULT_GC_THRESHOLD, gc_threshold_from_env
from common.settings import (
    DatabaseSettings,
    LogSettings,
    SettingsError,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_str,
)

ROLE = "fun_cluster_worker"
WORKER_MODES = ("inventory", "reconcile")
# /livez fails once a worker loop has not made progress (a beat) for this many of its intervals.
LIVENESS_INTERVALS = 3
# Without RECONCILE_DELETION_TIMEOUT_SECONDS, a deletion may be under way this many reconcile intervals.
DELETION_TIMEOUT_INTERVALS = 3
GARDENER_MODES = ("mock", "real")
CREDENTIAL_KINDS = ("admin", "viewer")
INVENTORY_SOURCES = ("apiserver", "prometheus")
# INVENTORY_SOURCE=prometheus: what PROMETHEUS_PARTS may name and where the rest may come from
# (collector/inventory/split.py says what each means).
PROMETHEUS_PARTS = ("nodes", "pods")
PROMETHEUS_OTHERS_FROM = ("viewer", "nowhere")

MIB = 1 << 20
# The answers' byte bounds (collector/kube/limits.py says how they are sized from Kubernetes' limits).
DEFAULT_LIST_MIB = 512.0
DEFAULT_ITEM_MIB = 3.0
DEFAULT_ANSWER_MIB = 16.0
DEFAULT_LIST_VALUES = 2_000_000  # collector/kube/limits.py keeps the same default
DEFAULT_LEDGER_MAX_PER_TYPE = 10_000

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True, slots=True)
class Shard:
    """This replica's share of the clusters: those whose stable hash modulo `count` is `index`."""

    index: int = 0
    count: int = 1

    @classmethod
    def parse(cls, name: str, raw: str) -> Shard:
        match = _SHARD.match(raw)
        if not match:
            raise SettingsError(f"{name}={raw!r}: expected i/N, e.g. 0/3")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or index >= count:
            raise SettingsError(f"{name}={raw!r}: needs N >= 1 and 0 <= i < N")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True, slots=True)
class GardenerSettings:
    """Where the garden is and which credential the collector asks it for."""

    mode: str = "mock"
    """GARDENER_MODE: `real` talks to the garden on GARDENER_KUBECONFIG; `mock` reads the database."""
    kubeconfig: Path | None = None
    """GARDENER_KUBECONFIG: path of the garden's kubeconfig; required when GARDENER_MODE=real."""
    credential: str = "admin"
    """INVENTORY_CREDENTIAL: `admin` mints shoots/adminkubeconfig, `viewer` shoots/viewerkubeconfig."""
    credential_lifetime_seconds: int = 3600
    """INVENTORY_CREDENTIAL_LIFETIME_SECONDS: seconds a minted shoot credential is asked to live (Gardener: >= 600)."""
    request_timeout_seconds: float = 30.0
    """GARDENER_TIMEOUT_SECONDS: seconds one request to the garden may take (a whole paged list takes several)."""


@dataclass(frozen=True, slots=True)
class InventorySettings:
    """The inventory loop."""

    interval_seconds: float = 900.0
    """INVENTORY_INTERVAL_SECONDS: seconds between rounds; 900 (15 min) in production, 60 locally."""
    workers: int = 4
    """INVENTORY_WORKERS: clusters collected at the same time."""
    timeout_seconds: float = 30.0
    """INVENTORY_TIMEOUT_SECONDS: seconds one cluster may take for reading and storing together."""
    failure_grace_seconds: float = 10.0
    """Seconds recording a failed collection gets on top of INVENTORY_TIMEOUT_SECONDS (fixed, not a variable)."""
    shard: Shard = field(default_factory=Shard)
    """INVENTORY_SHARD: `i/N` collects only the clusters whose stable hash modulo N is i; default 0/1."""
    max_list_bytes: int = int(DEFAULT_LIST_MIB * MIB)
    """INVENTORY_MAX_LIST_MIB: MiB of one list answer of a shoot (streamed, its items parsed in batches)."""
    max_item_bytes: int = int(DEFAULT_ITEM_MIB * MIB)
    """INVENTORY_MAX_ITEM_MIB: MiB of one item of a list."""
    max_answer_bytes: int = int(DEFAULT_ANSWER_MIB * MIB)
    """GARDENER_MAX_ANSWER_MIB: MiB of one answer parsed whole (a page of the garden's shoots)."""
    max_list_values: int = DEFAULT_LIST_VALUES
    """GARDENER_MAX_LIST_VALUES: JSON values of every page of one garden list together (its shoots, its projects)."""
    ledger_max_per_type: int = DEFAULT_LEDGER_MAX_PER_TYPE
    """INVENTORY_LEDGER_MAX_PER_TYPE: resources of one type in one cluster the ledger records; more: not listed."""
    history_round_retention_hours: int = 48
    """HISTORY_ROUND_RETENTION_HOURS: hours the per-round fleet totals are kept (trends)."""
    history_hour_retention_days: int = 35
    """HISTORY_HOUR_RETENTION_DAYS: days the hourly fleet and organization totals are kept (trends)."""
    source: str = "apiserver"
    """INVENTORY_SOURCE: `apiserver` (each shoot's API server) or `prometheus` (each shoot's Prometheus)."""
    prometheus_ca_file: Path | None = None
    """PROMETHEUS_CA_FILE: CA bundle the shoots' Prometheus endpoints are verified with (development);
    None: the system's trust store."""
    monitoring_ttl_seconds: float = 300.0
    """PROMETHEUS_RESOLVE_TTL_SECONDS: seconds a resolved monitoring secret (address and credentials) is reused."""
    prometheus_parts: tuple[str, ...] = ("nodes",)
    """PROMETHEUS_PARTS: what the Prometheus source reads from the shoot's Prometheus: `nodes` (always), and
    `pods` where a kube-state-metrics watching every namespace is scraped (a stock Gardener shoot has none)."""
    prometheus_allowed_domains: tuple[str, ...] = ()
    """PROMETHEUS_ALLOWED_DOMAINS: domains a `prometheus-url` host must be under (the landscape's seed ingress
    domains); empty: any host but loopback, link-local and the database's (collector/prometheus/address.py)."""
    prometheus_allow_loopback: bool = False
    """PROMETHEUS_ALLOW_LOOPBACK: a `prometheus-url` on loopback is allowed (tests and the demo: fleet-sim)."""
    prometheus_others_from: str = "viewer"
    """PROMETHEUS_OTHERS_FROM: what reads the rest (tenant namespaces, pods unless from the Prometheus, the other
    ledger types): `viewer` (the shoot's API server with viewerkubeconfig) or `nowhere` (those types not read)."""


@dataclass(frozen=True, slots=True)
class ReconcileSettings:
    """The reconcile loop."""

    interval_seconds: float = 300.0
    """RECONCILE_INTERVAL_SECONDS: seconds between reconcile passes (5 min)."""
    deletion_timeout_seconds: float | None = None
    """RECONCILE_DELETION_TIMEOUT_SECONDS: seconds a cluster's deletion may be under way before a shoot it leaves
    is reported as `shoot_of_deleted_cluster`; None: three reconcile intervals."""

    @property
    def deletion_bound_seconds(self) -> float:
        """The bound in force: RECONCILE_DELETION_TIMEOUT_SECONDS, else three intervals."""
        if self.deletion_timeout_seconds is not None:
            return self.deletion_timeout_seconds
        return DELETION_TIMEOUT_INTERVALS * self.interval_seconds


@dataclass(frozen=True, slots=True)
class HealthSettings:
    """The port for /livez, /readyz and /metrics."""

    host: str = "127.0.0.1"
    """BIND_HOST: address the health port binds to; loopback by default."""
    port: int = 8097
    """HEALTH_PORT: /livez, /readyz, /metrics; 0 picks a free port."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything `cluster-worker` is configured with."""

    database: DatabaseSettings
    mode: str = "inventory"
    """WORKER_MODE: `inventory` (the collector) or `reconcile` (the Gardener mirror and drift)."""
    gardener: GardenerSettings = field(default_factory=GardenerSettings)
    inventory: InventorySettings = field(default_factory=InventorySettings)
    reconcile: ReconcileSettings = field(default_factory=ReconcileSettings)
    health: HealthSettings = field(default_factory=HealthSettings)
    logging: LogSettings = field(default_factory=LogSettings)
    """LOG_LEVEL and LOG_FORMAT (common/settings.py)."""
    event_loop: str = DEFAULT_EVENT_LOOP
    """EVENT_LOOP: `uvloop` or `asyncio` (common/eventloop.py)."""
    gc_threshold: int = DEFAULT_GC_THRESHOLD
    """GC_THRESHOLD: allocations between first-generation collections (common/garbage_collection.py)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Read every variable; raise `SettingsError` naming the first bad one."""
        workers = env_int(env, "INVENTORY_WORKERS", 4, minimum=1)
        gardener_mode = env_choice(env, "GARDENER_MODE", "mock", GARDENER_MODES)
        kubeconfig_raw = env_str(env, "GARDENER_KUBECONFIG", "")
        kubeconfig = Path(kubeconfig_raw).expanduser() if kubeconfig_raw else None
        if gardener_mode == "real" and kubeconfig is None:
            raise SettingsError("GARDENER_KUBECONFIG is required when GARDENER_MODE=real")
        if kubeconfig is not None and gardener_mode == "real" and not kubeconfig.is_file():
            raise SettingsError(f"GARDENER_KUBECONFIG={kubeconfig_raw!r}: no such file")
        shard_raw = env_str(env, "INVENTORY_SHARD", "")
        source = env_choice(env, "INVENTORY_SOURCE", "apiserver", INVENTORY_SOURCES)
        if source == "prometheus" and gardener_mode != "real":
            raise SettingsError(
                "INVENTORY_SOURCE=prometheus needs GARDENER_MODE=real (the monitoring secrets are in the garden)"
            )
        parts, others_from = _prometheus_split(env)
        ca_raw = env_str(env, "PROMETHEUS_CA_FILE", "")
        ca_file = Path(ca_raw).expanduser() if ca_raw else None
        if ca_file is not None and not ca_file.is_file():
            raise SettingsError(f"PROMETHEUS_CA_FILE={ca_raw!r}: no such file")
        reconcile_interval = env_float(env, "RECONCILE_INTERVAL_SECONDS", 300.0, minimum=1.0, old="RECONCILE_INTERVAL")
        return cls(
            # Every worker may hold a connection while it stores, plus one for the loop itself.
            database=DatabaseSettings.from_env(env, role=ROLE, pool_max=workers + 2, statement_timeout_ms=10_000),
            mode=env_choice(env, "WORKER_MODE", "inventory", WORKER_MODES),
            gardener=GardenerSettings(
                mode=gardener_mode,
                kubeconfig=kubeconfig,
                credential=env_choice(env, "INVENTORY_CREDENTIAL", "admin", CREDENTIAL_KINDS),
                credential_lifetime_seconds=env_int(
                    env,
                    "INVENTORY_CREDENTIAL_LIFETIME_SECONDS",
                    3600,
                    minimum=600,
                    old="INVENTORY_CREDENTIAL_LIFETIME",
                ),
                request_timeout_seconds=env_float(
                    env, "GARDENER_TIMEOUT_SECONDS", 30.0, minimum=0.1, old="GARDENER_TIMEOUT"
                ),
            ),
            inventory=InventorySettings(
                interval_seconds=env_float(
                    env, "INVENTORY_INTERVAL_SECONDS", 900.0, minimum=1.0, old="INVENTORY_INTERVAL"
                ),
                workers=workers,
                timeout_seconds=env_float(env, "INVENTORY_TIMEOUT_SECONDS", 30.0, minimum=0.1, old="INVENTORY_TIMEOUT"),
                shard=Shard.parse("INVENTORY_SHARD", shard_raw) if shard_raw else Shard(),
                max_list_bytes=_mib(env, "INVENTORY_MAX_LIST_MIB", DEFAULT_LIST_MIB),
                max_item_bytes=_mib(env, "INVENTORY_MAX_ITEM_MIB", DEFAULT_ITEM_MIB),
                max_answer_bytes=_mib(env, "GARDENER_MAX_ANSWER_MIB", DEFAULT_ANSWER_MIB),
                max_list_values=env_int(env, "GARDENER_MAX_LIST_VALUES", DEFAULT_LIST_VALUES, minimum=1000),
                ledger_max_per_type=env_int(
                    env, "INVENTORY_LEDGER_MAX_PER_TYPE", DEFAULT_LEDGER_MAX_PER_TYPE, minimum=1
                ),
                history_round_retention_hours=env_int(
                    env, "HISTORY_ROUND_RETENTION_HOURS", 48, minimum=1, old="HISTORY_ROUND_RETENTION"
                ),
                history_hour_retention_days=env_int(
                    env, "HISTORY_HOUR_RETENTION_DAYS", 35, minimum=1, old="HISTORY_HOUR_RETENTION"
                ),
                source=source,
                prometheus_ca_file=ca_file,
                monitoring_ttl_seconds=env_float(
                    env, "PROMETHEUS_RESOLVE_TTL_SECONDS", 300.0, minimum=1.0, old="PROMETHEUS_RESOLVE_TTL"
                ),
                prometheus_parts=parts,
                prometheus_others_from=others_from,
                prometheus_allowed_domains=_domains(env),
                prometheus_allow_loopback=env_bool(env, "PROMETHEUS_ALLOW_LOOPBACK", False),
            ),
            reconcile=ReconcileSettings(
                interval_seconds=reconcile_interval,
                deletion_timeout_seconds=env_float(
                    env,
                    "RECONCILE_DELETION_TIMEOUT_SECONDS",
                    DELETION_TIMEOUT_INTERVALS * reconcile_interval,
                    minimum=1.0,
                    old="RECONCILE_DELETION_TIMEOUT",
                ),
            ),
            health=HealthSettings(
                host=env_str(env, "BIND_HOST", "127.0.0.1"),
                port=env_int(env, "HEALTH_PORT", 8097, minimum=0),
            ),
            logging=LogSettings.from_env(env),
            event_loop=event_loop_from_env(env),
            gc_threshold=gc_threshold_from_env(env),
        )


_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


def _domains(env: Mapping[str, str]) -> tuple[str, ...]:
    """PROMETHEUS_ALLOWED_DOMAINS: DNS domains, lower case, without a leading dot."""
    domains = tuple(d.lower().strip(".") for d in env_list(env, "PROMETHEUS_ALLOWED_DOMAINS"))
    for domain in domains:
        if not _DOMAIN.match(domain):
            raise SettingsError(f"PROMETHEUS_ALLOWED_DOMAINS: {domain!r} is not a DNS domain")
    return domains


def _prometheus_split(env: Mapping[str, str]) -> tuple[tuple[str, ...], str]:
    """PROMETHEUS_PARTS and PROMETHEUS_OTHERS_FROM, checked against each other. (INVENTORY_CREDENTIAL is not
    read by the Prometheus source: what it reads from the API server it reads with viewerkubeconfig.)"""
    raw = env_str(env, "PROMETHEUS_PARTS", "nodes")
    parts = tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))
    unknown = [part for part in parts if part not in PROMETHEUS_PARTS]
    if unknown or "nodes" not in parts:
        raise SettingsError(
            f"PROMETHEUS_PARTS={raw!r}: expected `nodes` or `nodes,pods` (what the shoot's Prometheus is read for)"
        )
    others_from = env_choice(env, "PROMETHEUS_OTHERS_FROM", "viewer", PROMETHEUS_OTHERS_FROM)
    if others_from == "nowhere" and "pods" not in parts:
        raise SettingsError(
            "PROMETHEUS_OTHERS_FROM=nowhere needs PROMETHEUS_PARTS=nodes,pods (the pods must come from somewhere)"
        )
    return parts, others_from


def _mib(env: Mapping[str, str], name: str, default: float) -> int:
    """A byte bound given in MiB (fractions allowed: `1.5`), at least 64 KiB."""
    return int(env_float(env, name, default, minimum=1 / 16) * MIB)
