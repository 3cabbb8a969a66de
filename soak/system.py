"""The system under the soak: the demo's processes on ports of their own, plus what faults need.

`SoakSystem` is `fleetctl.demo.system.Demo` with every port picked free (so a soak runs beside a demo),
its own data directory (`.fleet/soak/pg`, recreated each run) and short intervals, plus a second
replica of the public API (so "one query a minute per replica" is measured over replicas) and a
streaming hot standby of the database (`pg_basebackup -R`): every process reaches the database through
a multi-host DSN naming both servers with `target_session_attrs=read-write`, as in a landscape with a
failover. It adds what the fault schedule needs: restarting the database in place, failing it over to
the standby (and making the old primary the new standby), killing and restarting a child, reading a
process's Prometheus metrics and calling both APIs once as a probe.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import httpx
import psycopg
from fundament.fleet.v1 import fleet_pb2
from fundament.fleet.v1.fleet_pb2_grpc import FleetServiceStub
from prometheus_client.parser import text_string_to_metric_families

from common.settings import LOCAL_DATABASE_NAME
from db.embedded import EmbeddedPostgres, free_port
from db.migrate import fresh_database
from fleet_description.generate import generate
from fleetctl.db import seed as seed_database
from fleetctl.demo.layout import HOST, DemoPorts
from fleetctl.demo.processes import Child, wait_for_port
from fleetctl.demo.system import Demo, DemoTimings
from soak.checks import QUERIES

SECOND_PUBLIC = "platform-public-api-2"
INVENTORY = "cluster-worker-inventory"
RECONCILE = "cluster-worker-reconcile"

# Short enough that a ten-minute soak sees dozens of rounds and passes; long enough for 2 cores.
SOAK_TIMINGS = DemoTimings(
    inventory_interval_seconds=15, reconcile_interval_seconds=10, status_poll_seconds=5, world_step_seconds=25
)


def free_ports() -> DemoPorts:
    """Every port the demo uses, picked free on loopback."""
    return DemoPorts(**{name: free_port() for name in DemoPorts.__dataclass_fields__})


@dataclass
class SoakSystem(Demo):
    """The demo, soak-shaped: free ports, its own database, two public replicas."""

    ports: DemoPorts = field(default_factory=free_ports)
    timings: DemoTimings = SOAK_TIMINGS
    second_public_ports: tuple[int, int] = field(default_factory=lambda: (free_port(), free_port()))
    standby_port: int = field(default_factory=free_port)
    standby: EmbeddedPostgres | None = None
    failovers: int = 0

    def role_dsn(self, role: str) -> str:
        # Both servers; libpq keeps the one that accepts writes, whichever that is since the last failover.
        hosts = f"{HOST}:{self.ports.database},{HOST}:{self.standby_port}"
        return f"postgresql://{role}@{hosts}/{LOCAL_DATABASE_NAME}?target_session_attrs=read-write"

    def start_database(self) -> None:
        data_dir = self.state_dir / "pg"
        for old in (data_dir, self.state_dir / "pg-standby"):
            shutil.rmtree(old, ignore_errors=True)  # every soak starts from the same seeded state
        shutil.rmtree(self.supervisor.log_dir, ignore_errors=True)  # and with logs of this run only
        server = EmbeddedPostgres(data_dir, port=self.ports.database, fast=True)
        server.start()
        self.database = server
        fresh_database(server.dsn, LOCAL_DATABASE_NAME)
        seed_database(self.superuser_dsn, "demo", self.seed)
        with psycopg.connect(self.superuser_dsn, autocommit=True) as conn:
            conn.execute(QUERIES["count_statements"].sql)
        self.standby = self._new_standby(self.state_dir / "pg-standby", self.standby_port, of=server)
        self.fleet = generate("demo", self.seed)

    def _new_standby(self, data_dir: Path, port: int, *, of: EmbeddedPostgres) -> EmbeddedPostgres:
        shutil.rmtree(data_dir, ignore_errors=True)
        standby = EmbeddedPostgres(data_dir, port=port, fast=True)
        standby.base_backup_of(of)
        standby.start()
        return standby

    def fail_over(self) -> None:
        """A switchover: stop the primary (fast: every committed record reaches the standby first),
        promote the standby, then rebuild the old primary as the new primary's standby."""
        if self.database is None or self.standby is None:
            raise RuntimeError("the database and its standby were never started")
        old, new = self.database, self.standby
        old.stop(mode="fast")
        new.promote()
        self.database = new
        self.standby = self._new_standby(old.data_dir, old.port, of=new)
        self.failovers += 1

    def start_processes(self) -> None:
        super().start_processes()
        http_port, grpc_port = self.second_public_ports
        first = self.child("platform-public-api")
        env = {**first.env, "HTTP_PORT": str(http_port), "GRPC_PORT": str(grpc_port)}
        second = self.supervisor.start(SECOND_PUBLIC, first.argv, env)
        wait_for_port(HOST, http_port, timeout_seconds=60, process=second.process)

    # -- children -------------------------------------------------------------------------------

    def child(self, name: str) -> Child:
        for child in self.supervisor.children:
            if child.name == name:
                return child
        raise LookupError(f"no child named {name!r}")

    def kill_and_restart(self, name: str) -> Child:
        """SIGKILL a child (no chance to clean up), then start it again with the same command and environment."""
        child = self.child(name)
        child.process.kill()
        child.process.wait()
        child.log_file.close()
        self.supervisor.children.remove(child)
        return self.supervisor.start(child.name, child.argv, child.env)

    def stop(self) -> None:
        super().stop()
        if self.standby is not None:
            self.standby.stop()

    def restart_database(self, down_seconds: float) -> None:
        """Stop PostgreSQL (fast: clients are cut off), stay down `down_seconds`, start it again in place."""
        if self.database is None:
            raise RuntimeError("the database was never started")
        self.database.stop(mode="fast")
        time.sleep(down_seconds)
        self.database.start()

    # -- where things are -----------------------------------------------------------------------

    def public_http_ports(self) -> dict[str, int]:
        return {"platform-public-api": self.ports.public_http, SECOND_PUBLIC: self.second_public_ports[0]}

    def public_grpc_ports(self) -> dict[str, int]:
        return {"platform-public-api": self.ports.public_grpc, SECOND_PUBLIC: self.second_public_ports[1]}

    def metrics_port(self, name: str) -> int:
        ports = {
            **self.public_http_ports(),
            "platform-admin-api": self.ports.admin_http,
            INVENTORY: self.ports.inventory_health,
            RECONCILE: self.ports.reconcile_health,
        }
        return ports[name]


async def scrape(port: int) -> dict[str, list[tuple[Mapping[str, str], float]]]:
    """A process's /metrics as sample name -> [(labels, value)]; empty when it does not answer."""
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            response = await client.get(f"http://{HOST}:{port}/metrics")
    except httpx.HTTPError:
        return {}
    samples: dict[str, list[tuple[Mapping[str, str], float]]] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((sample.labels, sample.value))
    return samples


def metric_sum(samples: Mapping[str, list[tuple[Mapping[str, str], float]]], name: str, **labels: str) -> float:
    """The sum of one metric's samples whose labels include `labels`."""
    return sum(value for found, value in samples.get(name, []) if all(found.get(k) == v for k, v in labels.items()))


def codes_of(samples: Mapping[str, list[tuple[Mapping[str, str], float]]]) -> dict[str, float]:
    """Answers by status code from the shared request stack's counter."""
    codes: dict[str, float] = {}
    for labels, value in samples.get("fleet_rpc_requests_total", []):
        codes[labels.get("code", "?")] = codes.get(labels.get("code", "?"), 0) + value
    return codes


async def staff_answers(system: SoakSystem) -> bool:
    """Whether the staff API answers GetFleetSummary over gRPC right now."""
    async with grpc.aio.insecure_channel(f"{HOST}:{system.ports.admin_grpc}") as channel:
        try:
            stub = FleetServiceStub(channel)  # type: ignore[no-untyped-call]  # generated, unannotated
            await stub.GetFleetSummary(
                fleet_pb2.GetFleetSummaryRequest(), metadata=(("authorization", f"Bearer {system.token}"),), timeout=10
            )
        except grpc.aio.AioRpcError:
            return False
    return True


async def public_answers(port: int) -> bool:
    """Whether a public replica answers GetPlatformOverview over Connect GET right now."""
    params = {"connect": "v1", "encoding": "json", "message": "{}"}
    path = "/fundament.overview.v1.OverviewService/GetPlatformOverview"
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            return (await client.get(f"http://{HOST}:{port}{path}", params=params)).status_code == 200
    except httpx.HTTPError:
        return False


async def wait_for(probe: Callable[[], Awaitable[bool]], *, timeout_seconds: float, every_seconds: float = 1.0) -> bool:
    """Poll an async predicate until it holds or the time is up; whether it held."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_seconds
    while True:
        if await probe():
            return True
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(every_seconds)
