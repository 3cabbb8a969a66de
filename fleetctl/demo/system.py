"""What `fleet demo` starts: the whole system on embedded defaults, on loopback, and how to reach it.

    embedded PostgreSQL ──┬── platform-public-api  :8080 (Connect)  :9090 (gRPC) ── console page :8000
      (database `fleet`,  ├── platform-admin-api   :8081 (Connect)  :9091 (gRPC) ── DCIM page    :8001
       demo fleet seeded) ├── cluster-worker inventory (health :8097) ──┐
                          ├── cluster-worker reconcile (health :8098) ──┴── fleet-sim :8443 (garden + shoots, TLS)
                          └── fleet status-poller (the provisioning side's stand-in): lists fleet-sim's shoots

The database is recreated and seeded with the demo fleet on every start, so every run begins the
same way. While it runs, a small script of world changes plays against the simulator (pods come and
go, a shoot disappears and comes back, a version drifts and is put back), so the pages show
freshness, statuses changing and drift findings opening and resolving (`world.py`). The ports above
are the defaults; `--port` and `--state-dir` move them and the files (`command.py`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from common.clock import utc_now
from common.settings import LOCAL_DATABASE_NAME
from db.embedded import EmbeddedPostgres, runtime_root
from db.migrate import fresh_database
from fleet_description.generate import generate
from fleet_description.model import Fleet
from fleetctl.db import seed as seed_database
from fleetctl.demo.layout import HOST, JWT_SECRET_FILE, SIM_DIR, STAFF_SUBJECT, STAFF_TOKEN_FILE, DemoPorts
from fleetctl.demo.processes import Supervisor, wait_for_port
from services.common.auth import DcimTokenRules, mint_token
from sim.control.statedir import GARDEN_KUBECONFIG

PROJECT = Path(__file__).resolve().parents[2]


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
    # The local database's data directory by default (the one `fleet db up` runs); a demo with a
    # state folder of its own keeps its database there too, so it can run beside another.
    database_dir: Path = field(default_factory=lambda: runtime_root(PROJECT) / "pg")
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
        server = EmbeddedPostgres(self.database_dir, port=self.ports.database)
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
