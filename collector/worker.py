"""What both worker modes share, opened once per process: settings, the one pool, the Gardener client, the clock.

    main.py ──> open_worker(settings) ──> Worker ──┬─> build_inventory ──> InventoryLoop + its ClusterReader
                                                   └─> build_reconcile ──> ReconcileLoop

GARDENER_MODE decides, here and nowhere else, whether the garden and the shoots are real (kube/) or
described by the database (mock.py); INVENTORY_SOURCE whether a real shoot is read through its API
server (kube/) or its Prometheus (prometheus/), and for the latter PROMETHEUS_PARTS and
PROMETHEUS_OTHERS_FROM what it lacks is read with (inventory/split.py: viewerkubeconfig, never admin).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from psycopg_pool import AsyncConnectionPool

from collector.inventory.garden_reader import GardenReader
from collector.inventory.loop import InventoryLoop
from collector.inventory.monitoring_reader import MonitoringReader
from collector.inventory.reading import ClusterReader
from collector.inventory.sources import SOURCES, LedgerSource
from collector.inventory.split import Split
from collector.kube.client import garden_client
from collector.kube.credential_cache import CredentialCache, renew_margin
from collector.kube.garden import Gardener, RealGardener
from collector.kube.limits import ResponseLimits
from collector.mock import MockGardener, MockReader
from collector.prometheus.address import AddressPolicy
from collector.prometheus.http import tls_context
from collector.prometheus.resolve import MonitoringResolver
from collector.reconcile.loop import ReconcileLoop
from collector.settings import Settings
from common.clock import Clock, utc_now
from common.database import CheckUnlessRecent, make_pool, require_schema
from common.errors import DatabaseUnavailable, SchemaTooOld
from common.text import truncate

logger = logging.getLogger(__name__)

# While the database does not answer at start, `run` asks again after this long, doubling up to the
# most (the APIs' readiness check backs off the same way: services/common/startup.py).
DATABASE_RETRY_SECONDS = 1.0
DATABASE_RETRY_MAX_SECONDS = 15.0


class StoppedWaiting(Exception):
    """SIGTERM or SIGINT came while the worker still waited for the database."""


@dataclass
class Worker:
    """What both modes share: settings, the one pool, the Gardener client and the clock."""

    settings: Settings
    pool: AsyncConnectionPool[Any]
    gardener: Gardener
    clock: Clock = utc_now
    checks: CheckUnlessRecent | None = None
    """The pool's connection check (`worker_checks()`), which the inventory loop consults after a failed store."""


# A worker's connection that came back within this many seconds is lent again unchecked: the
# collector checks out one or two per cluster, many a second. A store that finds such a connection
# dead goes out once more on a checked one (inventory/loop.py). The APIs check every checkout.
WORKER_CHECK_BYPASS_SECONDS = 1.0


def worker_checks() -> CheckUnlessRecent:
    """The connection check of a worker's pool."""
    return CheckUnlessRecent(WORKER_CHECK_BYPASS_SECONDS)


@contextlib.asynccontextmanager
async def open_worker(
    settings: Settings, *, clock: Clock = utc_now, until: asyncio.Event | None = None
) -> AsyncIterator[Worker]:
    """Open the pool (checking the schema) and the Gardener client; close both at the end.

    Raises DatabaseUnavailable when the database cannot be reached, SchemaTooOld when its schema is too old, and
    collector.kube.errors.KubeError when the garden kubeconfig cannot be loaded. With `until` (the
    long-running loop's stop signal), a database that does not answer is waited for instead, as long
    as it takes (`StoppedWaiting` when `until` is set first): an outage at start only delays readiness.
    """
    checks = worker_checks()
    pool: AsyncConnectionPool[Any] = make_pool(
        settings.database, application_name=f"cluster-worker-{settings.mode}", checks=checks
    )
    if until is None:
        try:
            await pool.open(wait=True, timeout=settings.database.connect_timeout_seconds)
        except Exception as e:
            await pool.close()
            raise DatabaseUnavailable(f"cannot connect to the database: {type(e).__name__}") from e
    else:
        await pool.open(wait=False)
    try:
        if until is None:
            await require_schema(pool)
        else:
            await wait_for_database(pool, until)
        if settings.gardener.mode == "real" and settings.gardener.kubeconfig is not None:
            client = await garden_client(
                settings.gardener.kubeconfig,
                timeout_seconds=settings.gardener.request_timeout_seconds,
                limits=response_limits(settings),
            )
            gardener: Gardener = RealGardener(client)
        else:
            gardener = MockGardener(pool)
        try:
            yield Worker(settings, pool, gardener, clock, checks)
        finally:
            await gardener.close()
    finally:
        await pool.close()


async def wait_for_database(pool: AsyncConnectionPool[Any], until: asyncio.Event) -> None:
    """Return once the database answers with a schema this code can use; meanwhile ask again and again.

    Raises SchemaTooOld at once (waiting would not help) and StoppedWaiting when `until` is set first.
    """
    retry = DATABASE_RETRY_SECONDS
    waiting = False
    while True:
        try:
            await require_schema(pool)
        except SchemaTooOld:
            raise
        except Exception as e:  # unreachable, refusing, too slow: wait and ask again
            if not waiting:
                logger.warning(
                    "waiting for the database",
                    extra={"cause": type(e).__name__, "error": truncate(str(e), 300)},
                )
                waiting = True
        else:
            if waiting:
                logger.info("the database answers")
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(until.wait(), timeout=retry)
        if until.is_set():
            raise StoppedWaiting
        retry = min(retry * 2, DATABASE_RETRY_MAX_SECONDS)


def response_limits(settings: Settings) -> ResponseLimits:
    """The bounds (bytes, values) of every answer the worker reads, from its settings."""
    inventory = settings.inventory
    return ResponseLimits(
        max_list_bytes=inventory.max_list_bytes,
        max_item_bytes=inventory.max_item_bytes,
        max_answer_bytes=inventory.max_answer_bytes,
        max_list_values=inventory.max_list_values,
    )


def build_reader(worker: Worker) -> ClusterReader:
    """The reader GARDENER_MODE and INVENTORY_SOURCE name: the database, the shoots' API servers or Prometheus."""
    settings = worker.settings
    if settings.gardener.mode == "mock":
        return MockReader(worker.pool, sources=SOURCES)
    if settings.inventory.source == "prometheus":
        return monitoring_reader(worker)
    return garden_reader(worker, kind=settings.gardener.credential)


def garden_reader(
    worker: Worker, *, kind: str, sources: Sequence[LedgerSource] = SOURCES, nodes: bool = True
) -> GardenReader:
    """The shoots' API servers read with a credential of `kind` (`admin` or `viewer`) minted from Gardener."""
    settings = worker.settings
    credentials = CredentialCache(
        worker.gardener,
        kind=kind,
        lifetime_seconds=settings.gardener.credential_lifetime_seconds,
        renew_before=renew_margin(settings.inventory.timeout_seconds),
        clock=worker.clock,
    )
    return GardenReader(
        worker.gardener,
        credentials,
        sources=sources,
        timeout_seconds=settings.inventory.timeout_seconds,
        limits=response_limits(settings),
        ledger_max_per_type=settings.inventory.ledger_max_per_type,
        nodes=nodes,
    )


def monitoring_reader(worker: Worker) -> MonitoringReader:
    """INVENTORY_SOURCE=prometheus: the shoots' Prometheus (the monitoring secret's read-only credential), and
    for what it lacks (collector/inventory/split.py) their API servers with viewerkubeconfig, never admin."""
    inventory = worker.settings.inventory
    split = Split.from_settings(inventory.prometheus_parts, inventory.prometheus_others_from)
    apiserver = (
        garden_reader(worker, kind="viewer", sources=split.apiserver_sources(SOURCES), nodes=False)
        if split.reads_apiserver
        else None
    )
    return MonitoringReader(
        worker.gardener,
        MonitoringResolver(
            worker.gardener, ttl_seconds=inventory.monitoring_ttl_seconds, policy=address_policy(worker.settings)
        ),
        sources=SOURCES,
        timeout_seconds=inventory.timeout_seconds,
        context=tls_context(inventory.prometheus_ca_file),
        split=split,
        apiserver=apiserver,
        limits=response_limits(worker.settings),
        clock=worker.clock,
        ledger_max_per_type=inventory.ledger_max_per_type,
    )


def address_policy(settings: Settings) -> AddressPolicy:
    """Where a shoot's Prometheus may be: the configured domains, loopback if opted in, never the database."""
    inventory = settings.inventory
    return AddressPolicy(
        domains=inventory.prometheus_allowed_domains,
        allow_loopback=inventory.prometheus_allow_loopback,
        database=database_hosts(settings.database.url),
    )


_KEYWORD = re.compile(r"\b(host|hostaddr|port)\s*=\s*('(?:[^'\\]|\\.)*'|\S+)")
DEFAULT_DATABASE_PORT = 5432


def database_hosts(url: str) -> frozenset[tuple[str, int]]:
    """The (host, port) pairs DATABASE_URL names, as a URI or as keywords; sockets (a path) are not hosts."""
    pairs: list[tuple[str, str]] = []
    if url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(url)
        for item in parts.netloc.rpartition("@")[2].split(","):
            host, _, port = item.rpartition(":") if not item.endswith("]") and ":" in item else (item, "", "")
            pairs.append((host, port))
        query = parse_qs(parts.query)
        ports = query.get("port", [""])[0].split(",")
        for key in ("host", "hostaddr"):
            for value in query.get(key, []):
                pairs += [(h, ports[i] if i < len(ports) else ports[-1]) for i, h in enumerate(value.split(","))]
    else:
        found: dict[str, list[str]] = {}
        for key, value in _KEYWORD.findall(url):
            found.setdefault(key, []).extend(value.strip("'").split(","))
        ports = found.get("port", [""])
        for key in ("host", "hostaddr"):
            pairs += [(h, ports[i] if i < len(ports) else ports[-1]) for i, h in enumerate(found.get(key, []))]
    out: set[tuple[str, int]] = set()
    for host, port in pairs:
        name = unquote(host).strip().strip("[]").lower()
        if name and not name.startswith("/"):
            out.add((name, int(port) if port.strip().isdigit() else DEFAULT_DATABASE_PORT))
    return frozenset(out)


def build_inventory(worker: Worker) -> InventoryLoop:
    """WORKER_MODE=inventory: snapshots of every ready cluster and the ledger."""
    return InventoryLoop(
        pool=worker.pool,
        reader=build_reader(worker),
        settings=worker.settings.inventory,
        clock=worker.clock,
        checks=worker.checks,
    )


def build_reconcile(worker: Worker) -> ReconcileLoop:
    """WORKER_MODE=reconcile: the shoot mirror and drift findings."""
    return ReconcileLoop(
        pool=worker.pool,
        gardener=worker.gardener,
        interval_seconds=worker.settings.reconcile.interval_seconds,
        deletion_timeout_seconds=worker.settings.reconcile.deletion_bound_seconds,
        clock=worker.clock,
    )
