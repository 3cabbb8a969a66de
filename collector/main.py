"""Entry point of `cluster-worker`: the inventory collector or the reconcile loop, and their one-shot commands.

    cluster-worker [run]                 the loop WORKER_MODE names, with /livez, /readyz, /metrics
    cluster-worker collect [--cluster X] one collection now; a summary per cluster and per ledger type
    cluster-worker reconcile --once      one reconcile pass now

The only module of the collector that reads `os.environ`: it builds one `Settings`, configures JSON
logs, opens the process's one database pool (as fun_cluster_worker) and the Gardener client
(worker.py's `Worker`), and hands them to the loops. SIGTERM and SIGINT stop the loop gracefully: a round in
progress is cancelled, which rolls back each cluster's transaction.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any, TextIO

import prometheus_client
from psycopg_pool import AsyncConnectionPool

from collector.inventory import metrics as inventory_metrics
from collector.inventory import store
from collector.inventory.loop import InventoryLoop
from collector.inventory.reading import ClusterRow
from collector.inventory.report import ProgressBar, print_summary
from collector.kube.errors import KubeError
from collector.reconcile import metrics as reconcile_metrics
from collector.reconcile.loop import ReconcileLoop
from collector.settings import Settings
from collector.worker import StoppedWaiting, Worker, build_inventory, build_reconcile, open_worker
from common import eventloop, tracing
from common.database import require_schema
from common.errors import DatabaseUnavailable, SchemaTooOld
from common.garbage_collection import set_gc_threshold
from common.health import Readiness, health_server
from common.logs import configure_logging
from common.settings import SettingsError
from common.signals import stop_event

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


async def reconcile_once(worker: Worker, out: TextIO) -> int:
    """`cluster-worker reconcile --once`: one pass now, printing findings opened, still open and resolved."""
    try:
        summary = await build_reconcile(worker).run_once()
    except Exception as e:
        # Listing or storing failed: the pass recorded nothing (not even the heartbeat).
        logger.error("reconcile pass failed, nothing was recorded: %s: %s", type(e).__name__, e)
        return EXIT_FAILED
    print(summary.render(), file=out)
    return EXIT_OK


class _Running:
    """The loop once it runs: the health port serves before the database answers (the worker waits
    for it), so its probes ask this, which knows the loop only once the pool is open."""

    def __init__(self) -> None:
        self.runner: InventoryLoop | ReconcileLoop | None = None
        self.pool: AsyncConnectionPool[Any] | None = None

    @property
    def stall_after_seconds(self) -> float:
        return self.runner.liveness.stall_after_seconds if self.runner else 0.0

    @property
    def silent_seconds(self) -> float:
        return self.runner.liveness.silent_seconds if self.runner else 0.0

    def alive(self) -> bool:
        # Waiting for the database is no stall: a restart would not bring it back.
        return self.runner.liveness.alive() if self.runner else True

    async def first_round_or_pass_done(self) -> bool:
        # Ready once the loop completed its first round (inventory) or stored its first pass
        # (reconcile), against a schema this code can use; then it stays ready.
        if self.runner is None or self.pool is None:
            return False
        first_done = (
            self.runner.first_round_done if isinstance(self.runner, InventoryLoop) else self.runner.first_pass_done
        )
        if not first_done.is_set():
            return False
        await require_schema(self.pool)
        return True


async def serve(settings: Settings) -> int:
    """Run the loop of WORKER_MODE until SIGTERM or SIGINT, with the health port.

    The health port listens first: while the database does not answer, /livez says alive, /readyz not
    ready, and the worker waits for it (collector/worker.py, `wait_for_database`).
    """
    stop = stop_event()
    running = _Running()
    # /metrics: the process's own metrics and this mode's, never the other mode's (each module has a registry).
    mode_metrics = inventory_metrics.REGISTRY if settings.mode == "inventory" else reconcile_metrics.REGISTRY
    health = health_server(
        Readiness(running.first_round_or_pass_done),
        settings.health.host,
        settings.health.port,
        liveness=running,
        registries=(prometheus_client.REGISTRY, mode_metrics),
    )
    await health.start()
    logger.info("health port listening", extra={"address": f"{health.host}:{health.port}"})
    try:
        async with open_worker(settings, until=stop) as worker:
            running.pool = worker.pool
            running.runner = build_inventory(worker) if settings.mode == "inventory" else build_reconcile(worker)
            logger.info("cluster-worker started", extra={"mode": settings.mode, "gardener": settings.gardener.mode})
            await running.runner.run(stop)
    except StoppedWaiting:
        logger.info("stopped while waiting for the database")
    finally:
        await health.stop()
    logger.info("cluster-worker stopped")
    return EXIT_OK


async def collect(settings: Settings, refs: list[str] | None, out: TextIO, progress: TextIO | None) -> int:
    """`cluster-worker collect`: collect the named (or every ready) cluster now; non-zero if any failed."""
    async with open_worker(settings) as worker:
        inventory = build_inventory(worker)
        async with worker.pool.connection() as conn:
            if refs:
                clusters, problems = await _resolve(conn, refs)
                if problems:
                    for problem in problems:
                        print(f"cluster-worker collect: {problem}", file=sys.stderr)  # noqa: T201 - a command's answer
                    return EXIT_USAGE
            else:
                clusters = await store.ready_clusters(conn)
        if not clusters:
            print("no ready clusters to collect", file=out)
            return EXIT_OK
        bar = ProgressBar(len(clusters), progress) if progress is not None else None
        summary = await inventory.run_once(clusters, on_result=bar.advance if bar else None)
        if bar is not None:
            bar.close()
        print_summary(summary, out)
    return EXIT_OK if summary.failed == 0 else EXIT_FAILED


async def _resolve(conn: Any, refs: list[str]) -> tuple[list[ClusterRow], list[str]]:
    clusters: list[ClusterRow] = []
    problems: list[str] = []
    for ref in refs:
        found = await store.find_clusters(conn, ref)
        if not found:
            problems.append(f"no live cluster has the id, name or organization/name {ref!r}")
        elif len(found) > 1:
            names = ", ".join(f"{c.organization_name}/{c.name}" for c in found)
            problems.append(f"{ref!r} names several clusters ({names}); use organization/name or the id")
        elif not found[0].ready:
            problems.append(f"cluster {ref!r} is not ready (shoot status {found[0].shoot_status or 'unknown'})")
        elif all(c.id != found[0].id for c in clusters):
            clusters.append(found[0].row())
    return clusters, problems


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cluster-worker",
        description="Fleet inventory's worker: WORKER_MODE=inventory collects every ready cluster, "
        "WORKER_MODE=reconcile mirrors Gardener's shoots and records drift.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("run", help="run the loop WORKER_MODE names (the default)")
    collect_cmd = commands.add_parser("collect", help="collect ready clusters now and print what was found")
    collect_cmd.add_argument(
        "--cluster",
        action="append",
        metavar="ID|NAME",
        help="a cluster id, name or organization/name (repeatable); default: every ready cluster",
    )
    reconcile_cmd = commands.add_parser("reconcile", help="reconcile with Gardener")
    reconcile_cmd.add_argument("--once", action="store_true", required=True, help="one pass now, then exit")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env(os.environ)
        tracing.configured(os.environ)
    except SettingsError as e:
        print(f"cluster-worker: {e}", file=sys.stderr)  # noqa: T201 - before logging is configured
        return EXIT_USAGE
    set_gc_threshold(settings.gc_threshold)
    interactive = sys.stderr.isatty()
    # LOG_FORMAT decides, but a command run by hand (collect, reconcile --once) logs plain lines to a terminal.
    by_hand = args.command not in (None, "run") and interactive
    configure_logging(settings.logging.level, json=settings.logging.json and not by_hand)
    # Before the pool opens, so its connections trace their statements; flushed on the way out.
    stop_tracing = tracing.start(os.environ, service_name=f"cluster-worker-{settings.mode}")
    try:
        if args.command in (None, "run"):
            return eventloop.run(serve(settings), event_loop=settings.event_loop)
        if args.command == "collect":
            return eventloop.run(
                collect(settings, args.cluster, sys.stdout, sys.stderr if interactive else None),
                event_loop=settings.event_loop,
            )
        return eventloop.run(_reconcile_command(settings), event_loop=settings.event_loop)
    except (DatabaseUnavailable, SchemaTooOld) as e:
        logger.error("cannot start: %s", e)
        return EXIT_FAILED
    except KubeError as e:
        logger.error("cannot reach the garden: %s", e)
        return EXIT_FAILED
    finally:
        if stop_tracing is not None:
            stop_tracing()


async def _reconcile_command(settings: Settings) -> int:
    async with open_worker(settings) as worker:
        return await reconcile_once(worker, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
