"""`fleet demo`: the whole system on embedded defaults, on loopback, until Ctrl-C.

    embedded PostgreSQL ──┬── platform-public-api  :8080 (Connect)  :9090 (gRPC) ── console page :8000
      (database `fleet`,  ├── platform-admin-api   :8081 (Connect)  :9091 (gRPC) ── DCIM page    :8001
       demo fleet seeded) ├── cluster-worker inventory (health :8097) ──┐
                          ├── cluster-worker reconcile (health :8098) ──┴── fleet-sim :8443 (garden + shoots, TLS)
                          └── fleet status-poller (the provisioning side's stand-in): lists fleet-sim's shoots

The database is recreated and seeded with the demo fleet on every start, so every run begins the
same way. While it runs, a small script of world changes plays against the simulator (pods come and
go, a shoot disappears and comes back, a version drifts and is put back), so the pages show
freshness, statuses changing and drift findings opening and resolving. Ctrl-C (or SIGTERM) stops
everything it started, newest first.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import secrets
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from common.clock import utc_now
from common.settings import LOCAL_DATABASE_NAME
from db.embedded import EmbeddedPostgres, runtime_root
from db.migrate import fresh_database
from db.seed.generate import generate
from db.seed.model import Fleet
from fleetctl.db import seed as seed_database
from fleetctl.demo_banner import banner
from fleetctl.demo_layout import HOST, JWT_SECRET_FILE, SIM_DIR, STAFF_SUBJECT, STAFF_TOKEN_FILE, DemoPorts
from fleetctl.demo_world import play_world
from fleetctl.processes import Supervisor, port_is_free, wait_for_port
from fleetctl.webapp import bind_socket, console_app, dcim_app, serve_pages
from services.common.auth import DcimTokenRules, mint_token
from sim.control.statedir import GARDEN_KUBECONFIG

logger = logging.getLogger("fleet.demo")

PROJECT = Path(__file__).resolve().parents[1]


def write_private(path: Path, text: str) -> None:
    """Write a secret readable by its owner only, from the first byte (no moment at the umask's mode)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        os.fchmod(file.fileno(), 0o600)  # an existing file keeps its mode through O_CREAT
        file.write(text)


@dataclass(frozen=True)
class DemoTimings:
    """Short intervals so the pages move within a minute."""

    inventory_interval_seconds: int = 20
    reconcile_interval_seconds: int = 15
    status_poll_seconds: int = 5
    world_step_seconds: int = 15


@dataclass
class Demo:
    """What `fleet demo` starts, in order, and how to reach it."""

    state_dir: Path
    ports: DemoPorts = field(default_factory=DemoPorts)
    timings: DemoTimings = field(default_factory=DemoTimings)
    seed: int = 0
    supervisor: Supervisor = field(init=False)
    database: EmbeddedPostgres | None = field(init=False, default=None)
    fleet: Fleet | None = field(init=False, default=None)
    token: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.supervisor = Supervisor(self.state_dir / "logs")

    # -- the database -----------------------------------------------------------------------------

    def role_dsn(self, role: str) -> str:
        return f"postgresql://{role}@{HOST}:{self.ports.database}/{LOCAL_DATABASE_NAME}"

    @property
    def superuser_dsn(self) -> str:
        return self.role_dsn("postgres")

    def start_database(self) -> None:
        server = EmbeddedPostgres(runtime_root(PROJECT) / "pg", port=self.ports.database)
        server.start()
        self.database = server
        fresh_database(server.dsn, LOCAL_DATABASE_NAME)
        seed_database(self.superuser_dsn, "demo", self.seed)
        # The same description again, in memory, for the world script and the example commands.
        self.fleet = generate("demo", self.seed)

    # -- the processes ----------------------------------------------------------------------------

    def start_processes(self) -> None:
        p = self.ports
        jwt_secret = self.state_dir / JWT_SECRET_FILE
        write_private(jwt_secret, secrets.token_hex(32) + "\n")
        self.token = mint_token(
            DcimTokenRules(jwt_secret.read_text().strip().encode()),
            subject=STAFF_SUBJECT,
            ttl=timedelta(hours=12),
            now=utc_now(),
            name="demo staff",
        )
        write_private(self.state_dir / STAFF_TOKEN_FILE, self.token + "\n")
        sim_dir = self.state_dir / SIM_DIR
        shutil.rmtree(sim_dir, ignore_errors=True)
        common = {"LOG_LEVEL": "info", "BIND_HOST": HOST}

        sim = self.supervisor.start(
            "fleet-sim",
            [
                _script("fleet-sim"),
                "--fleet",
                "demo",
                "--seed",
                str(self.seed),
                "--host",
                HOST,
                "--port",
                str(p.sim),
                "--state-dir",
                str(sim_dir),
            ],
            common,
        )
        wait_for_port(HOST, p.sim, timeout_seconds=60, process=sim.process)
        kubeconfig = sim_dir / GARDEN_KUBECONFIG
        # The provisioning side's stand-in: statuses follow the simulated world (a lost shoot, ...).
        self.supervisor.start(
            "status-poller",
            [
                _script("fleet"),
                "status-poller",
                "--dsn",
                self.superuser_dsn,
                "--garden-kubeconfig",
                str(kubeconfig),
                "--interval",
                str(self.timings.status_poll_seconds),
            ],
            common,
        )

        public = self.supervisor.start(
            "platform-public-api",
            [_script("platform-public-api")],
            {
                **common,
                "DATABASE_URL": self.role_dsn("fun_platform_public_api"),
                "HTTP_PORT": str(p.public_http),
                "GRPC_PORT": str(p.public_grpc),
                "CONSOLE_ORIGINS": f"http://{HOST}:{p.console},http://localhost:{p.console}",
            },
        )
        admin = self.supervisor.start(
            "platform-admin-api",
            [_script("platform-admin-api")],
            {
                **common,
                "DATABASE_URL": self.role_dsn("fun_platform_admin_api"),
                "HTTP_PORT": str(p.admin_http),
                "GRPC_PORT": str(p.admin_grpc),
                "JWT_SECRET_FILE": str(jwt_secret),
                "DCIM_ORIGINS": f"http://{HOST}:{p.dcim},http://localhost:{p.dcim}",
            },
        )
        worker = {
            **common,
            "DATABASE_URL": self.role_dsn("fun_cluster_worker"),
            "GARDENER_MODE": "real",
            "GARDENER_KUBECONFIG": str(kubeconfig),
        }
        self.supervisor.start(
            "cluster-worker-inventory",
            [_script("cluster-worker")],
            {
                **worker,
                "WORKER_MODE": "inventory",
                "INVENTORY_INTERVAL_SECONDS": str(self.timings.inventory_interval_seconds),
                "HEALTH_PORT": str(p.inventory_health),
            },
        )
        self.supervisor.start(
            "cluster-worker-reconcile",
            [_script("cluster-worker")],
            {
                **worker,
                "WORKER_MODE": "reconcile",
                "RECONCILE_INTERVAL_SECONDS": str(self.timings.reconcile_interval_seconds),
                "HEALTH_PORT": str(p.reconcile_health),
            },
        )
        for child, port in ((public, p.public_http), (admin, p.admin_http)):
            wait_for_port(HOST, port, timeout_seconds=60, process=child.process)

    def stop(self) -> None:
        self.supervisor.stop_all()
        if self.database is not None:
            self.database.stop()


def _script(name: str) -> str:
    """A console script of this installation (next to the running interpreter)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


async def watch_children(demo: Demo, stop: asyncio.Event) -> None:
    """End the demo when a child ends on its own: the demo would silently be half a system otherwise."""
    while not stop.is_set():
        ended = demo.supervisor.exited()
        if ended:
            for child in ended:
                logger.error("%s exited with code %s; see %s", child.name, child.process.returncode, child.log_path)
            stop.set()
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=1)


@contextlib.asynccontextmanager
async def page_servers(demo: Demo) -> AsyncIterator[None]:
    p = demo.ports
    console = console_app(f"http://{HOST}:{p.public_http}")
    dcim = dcim_app(f"http://{HOST}:{p.admin_http}")
    async with (
        serve_pages(console, sock=bind_socket(HOST, p.console)),
        serve_pages(dcim, sock=bind_socket(HOST, p.dcim)),
    ):
        yield


async def run_demo(demo: Demo, *, on_ready: Callable[[str], None]) -> int:
    busy = [f"{name} ({port})" for name, port in demo.ports.all().items() if not port_is_free(HOST, port)]
    if busy:
        logger.error("these ports are taken, so the demo cannot start: %s", ", ".join(busy))
        return 1
    # The demo's own log says what it starts and what changes in the world, nothing per request.
    for noisy in ("httpx", "uvicorn.error", "fleetctl.webapp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        logger.info("starting PostgreSQL and seeding the demo fleet")
        await asyncio.to_thread(demo.start_database)
        logger.info("starting fleet-sim, the status poller, both APIs and both workers")
        await asyncio.to_thread(demo.start_processes)
        async with page_servers(demo):
            on_ready(banner(demo.ports, demo.state_dir, demo.token, demo.fleet, demo.supervisor.log_dir))
            await asyncio.gather(
                play_world(demo.fleet, demo.state_dir / SIM_DIR, demo.timings.world_step_seconds, stop),
                watch_children(demo, stop),
                stop.wait(),
            )
        return 0 if not demo.supervisor.exited() else 1
    finally:
        logger.info("stopping everything the demo started")
        await asyncio.to_thread(demo.stop)


def link_state_dir(state_dir: Path, project: Path = PROJECT) -> Path:
    """Make `.fleet/demo` in the checkout name the demo's files, wherever they are.

    As root, in a checkout PostgreSQL's user cannot enter, the files live in a temp folder
    (`runtime_root`); a link at `.fleet/demo` keeps every path the docs print true. A real folder
    already there is left alone.
    """
    link = project / ".fleet" / "demo"
    if link.resolve() != state_dir.resolve() and (link.is_symlink() or not link.exists()):
        link.parent.mkdir(parents=True, exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(state_dir, target_is_directory=True)
    return link


def _cmd_demo(args: argparse.Namespace) -> int:
    state_dir = runtime_root(PROJECT) / "demo"
    state_dir.mkdir(parents=True, exist_ok=True)
    link_state_dir(state_dir)
    demo = Demo(state_dir, seed=args.seed)
    return asyncio.run(run_demo(demo, on_ready=lambda text: print(text, flush=True)))  # noqa: T201


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subcommands.add_parser("demo", help="run the whole system on embedded defaults until Ctrl-C")
    parser.add_argument("--seed", type=int, default=0, help="seed of the demo fleet (default 0)")
    parser.set_defaults(handler=_cmd_demo)
