"""What the worker benchmarks share: fleet-sim in a process of its own, a PostgreSQL, a fresh database.

The simulator always runs in its own process so the CPU and memory a benchmark measures are the
worker's alone; the database is the one `--dsn` names or a throwaway embedded server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from db.embedded import EmbeddedPostgres, runtime_root
from db.migrate import fresh_database
from db.seed.write import analyze, write_fleet
from fleet_description.model import Fleet
from sim.control.statedir import STATE_FILE, SimState

PROJECT = Path(__file__).resolve().parents[1]
START_TIMEOUT_SECONDS = 300


@contextmanager
def simulator_process(
    command: Callable[[Path], list[str]], *, name: str, quiet: bool = False
) -> Iterator[tuple[Path, int]]:
    """Run `command(state_dir)` (a fleet-sim) until the block ends; yields the garden kubeconfig and the pid."""
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-sim-") as tmp:
        state_dir = Path(tmp)
        output = subprocess.DEVNULL if quiet else None
        child = subprocess.Popen(command(state_dir), cwd=PROJECT, stdout=output, stderr=output)
        try:
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            while not (state_dir / STATE_FILE).exists():  # the child writes it once listening
                if child.poll() is not None:
                    raise RuntimeError(f"fleet-sim exited with {child.returncode} before listening")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"fleet-sim did not start within {START_TIMEOUT_SECONDS} s")
                time.sleep(0.2)
            yield SimState.read(state_dir).garden_kubeconfig, child.pid
        finally:
            child.terminate()
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def module_command(module: str, *arguments: str, state_flag: str = "--serve-sim") -> Callable[[Path], list[str]]:
    """`python -m <module> <state_flag> STATE_DIR <arguments>`: a simulator writing its state to STATE_DIR."""
    return lambda state_dir: [sys.executable, "-m", module, state_flag, str(state_dir), *arguments]


@contextmanager
def postgres(dsn: str | None, *, name: str) -> Iterator[tuple[str, int | None]]:
    """A superuser DSN and the postmaster's pid (None for a given server): `dsn`, or a throwaway embedded one."""
    if dsn:
        yield dsn, None
        return
    server = EmbeddedPostgres(runtime_root(PROJECT) / f"bench-{name}-pg-{os.getpid()}", fast=True)
    server.start()
    try:
        yield server.dsn, int((server.data_dir / "postmaster.pid").read_text().split()[0])
    finally:
        server.destroy()


def worker_database(superuser_dsn: str, database: str, fleet: Fleet, *, analyzed: bool = True) -> str:
    """A fresh database `database` holding `fleet`; returns its DSN for fun_cluster_worker."""
    admin_dsn = fresh_database(superuser_dsn, database)
    with psycopg.connect(admin_dsn) as conn:
        write_fleet(conn, fleet)
    if analyzed:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            analyze(conn)
    return psycopg.conninfo.make_conninfo(admin_dsn, user="fun_cluster_worker")


@contextmanager
def kept_postgres(dsn: str | None, *, data_dir_name: str) -> Iterator[str]:
    """A superuser DSN: the given one, or an embedded server whose data is kept between runs (a cache).

    A server that was already running is left running; one started here is stopped, not removed.
    """
    if dsn is not None:
        yield dsn
        return
    server = EmbeddedPostgres(runtime_root(PROJECT) / data_dir_name, fast=True)
    was_running = server.initialized() and server.running()
    server.start()
    try:
        yield server.dsn
    finally:
        if not was_running:
            server.stop()
