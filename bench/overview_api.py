"""Benchmark: the cached public overview against bare handlers, side by side in one run.

    python -m bench.overview_api [--seconds 3] [--rounds 3] [--organizations 50] [--json FILE]

What is compared, each in a server process of its own on loopback, under the same load generator
(`bench.loadgen`, a separate process, closed loop, 8 in flight):

- subject: `platform-public-api` exactly as deployed (the console script, JSON logs, metrics, CORS,
  the request stack), reading a throwaway PostgreSQL seeded with `--organizations` listed
  organizations; after the first call every answer comes from the cache;
- reference: a bare server in the same shape (uvicorn and grpc.aio in one event loop, same uvicorn
  settings and the same Connect codecs) whose handlers return the same message as a constant,
  without routing, CORS, request stack or cache.

Rounds alternate subject and reference so drift on the machine hits both alike; the figure is the
sum of requests over the sum of seconds. Targets: Connect GET ≥ 0.8x and gRPC ≥ 0.8x the
reference. Connect POST (binary) is printed too, without a target. Every process started here is
stopped by its pid; the run is bounded by the rounds and seconds given.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import psycopg

from bench.runs import Benchmark, Options, Reading, Result, Run, largest
from bench.table import Row, Target
from db.embedded import EmbeddedPostgres, free_port, runtime_root
from db.migrate import fresh_database

ROOT = Path(__file__).resolve().parents[1]
PATH = "/fundament.overview.v1.OverviewService/GetPlatformOverview"
ROWS = (("connect-get", 0.8), ("grpc", 0.8), ("connect-post", None))


@dataclass(frozen=True)
class Figure:
    """One row of the table: the subject's rate, the reference's, their ratio and the target (if any)."""

    name: str
    requests_per_second: float
    reference_requests_per_second: float
    ratio: float
    target: float | None
    errors: int
    cpu_microseconds_per_call: float
    reference_cpu_microseconds_per_call: float
    cpu_ratio: float

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.ratio >= self.target


@contextmanager
def seeded_database(organizations: int) -> Iterator[str]:
    """A throwaway migrated PostgreSQL with `organizations` listed organizations; yields the public role's DSN."""
    with seeded_server(organizations) as server:
        yield server.dsn_for("fleet", "fun_platform_public_api")


@contextmanager
def seeded_server(organizations: int) -> Iterator[EmbeddedPostgres]:
    """The throwaway server of `seeded_database`, for DSNs of any role of database `fleet`."""
    server = EmbeddedPostgres(runtime_root(ROOT) / f"bench-overview-{os.getpid()}", fast=True)
    server.start()
    try:
        with psycopg.connect(fresh_database(server.dsn, "fleet"), autocommit=True) as conn:
            conn.execute(
                "INSERT INTO tenant.organizations (name, alias, listed_publicly)"
                " SELECT 'org-' || i, 'Organization ' || i, true FROM generate_series(1, %s) AS i",
                (organizations,),
            )
            conn.execute(
                "INSERT INTO tenant.clusters (organization_id, name, region, kubernetes_version)"
                " SELECT o.id, 'c' || n, 'eu-west-1', '1.31.2' FROM tenant.organizations o,"
                " generate_series(1, 3) AS n WHERE o.listed_publicly"
            )
            conn.execute(
                "INSERT INTO tenant.projects (cluster_id, name, alias)"
                " SELECT c.id, 'p' || n, 'Project ' || n FROM tenant.clusters c, generate_series(1, 4) AS n"
            )
            conn.execute(
                "INSERT INTO tenant.namespaces (project_id, name)"
                " SELECT p.id, 'ns' || n FROM tenant.projects p, generate_series(1, 5) AS n"
            )
        yield server
    finally:
        server.destroy()


@contextmanager
def process(args: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A server process, stopped by its pid (SIGTERM, then SIGKILL) when the block ends."""
    child = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield child
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def wait_until_answering(child: subprocess.Popen[bytes], http_port: int) -> bytes:
    """Poll the Connect endpoint until it answers (at most 60 s); returns the answer in binary protobuf."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise RuntimeError(f"{child.args!r} exited with {child.returncode}")
        try:
            response = httpx.post(
                f"http://127.0.0.1:{http_port}{PATH}", content=b"", headers={"content-type": "application/proto"}
            )
            if response.status_code == 200:
                return response.content
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{child.args!r} did not answer on port {http_port} within 60 s")


def load(kind: str, port: int, seconds: float, *, path: str = PATH, headers: Sequence[str] = ()) -> dict[str, float]:
    """Run the load generator process once; its result."""
    args = [sys.executable, "-m", "bench.loadgen", "--kind", kind, "--port", str(port), "--path", path]
    args += [arg for header in headers for arg in ("--header", header)]
    completed = subprocess.run(
        [*args, "--seconds", str(seconds)],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=seconds + 60,
    )
    result: dict[str, float] = json.loads(completed.stdout)
    return result


@dataclass(frozen=True)
class Server:
    """A server process under measurement: its pid (for its CPU time) and its two ports."""

    pid: int
    http_port: int
    grpc_port: int

    def port(self, kind: str) -> int:
        return self.grpc_port if kind == "grpc" else self.http_port


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process and all its threads so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(seconds: float, rounds: int, organizations: int, kinds: tuple[str, ...]) -> list[Figure]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with seeded_database(organizations) as dsn:
        subject_http, subject_grpc = free_port(), free_port()
        subject_env = {
            **env,
            "DATABASE_URL": dsn,
            "HTTP_PORT": str(subject_http),
            "GRPC_PORT": str(subject_grpc),
            "CONSOLE_ORIGINS": "http://127.0.0.1:5173",
            "CACHE_TTL_SECONDS": "60",
        }
        subject_cmd = [str(Path(sys.executable).with_name("platform-public-api"))]
        with process(subject_cmd, subject_env) as subject_process, tempfile.TemporaryDirectory() as scratch:
            message = wait_until_answering(subject_process, subject_http)
            message_file = Path(scratch) / "overview.binpb"
            message_file.write_bytes(message)
            bare_http, bare_grpc = free_port(), free_port()
            bare_cmd = [sys.executable, "-m", "bench.bare_overview", "--message", str(message_file)]
            bare_cmd += ["--http-port", str(bare_http), "--grpc-port", str(bare_grpc)]
            with process(bare_cmd, env) as bare_process:
                if wait_until_answering(bare_process, bare_http) != message:
                    raise RuntimeError("the bare server does not answer the same message")
                subject = Server(subject_process.pid, subject_http, subject_grpc)
                bare = Server(bare_process.pid, bare_http, bare_grpc)
                rows = [(kind, target) for kind, target in ROWS if kind in kinds]
                return [compare(kind, target, subject, bare, seconds, rounds) for kind, target in rows]


@dataclass
class Totals:
    ok: float = 0.0
    seconds: float = 0.0
    errors: float = 0.0
    cpu_seconds: float = 0.0

    def add(self, server: Server, kind: str, seconds: float) -> None:
        self.add_load(server, kind, seconds)

    def add_load(
        self, server: Server, kind: str, seconds: float, *, path: str = PATH, headers: Sequence[str] = ()
    ) -> None:
        cpu_before = cpu_seconds(server.pid)
        result = load(kind, server.port(kind), seconds, path=path, headers=headers)
        self.cpu_seconds += cpu_seconds(server.pid) - cpu_before
        self.ok += result["ok"]
        self.seconds += result["seconds"]
        self.errors += result["errors"]


def compare(kind: str, target: float | None, subject: Server, bare: Server, seconds: float, rounds: int) -> Figure:
    for server in (subject, bare):
        load(kind, server.port(kind), min(1.0, seconds))  # warm-up, not counted
    totals = {"subject": Totals(), "bare": Totals()}
    for round_number in range(rounds):
        order = ("subject", "bare") if round_number % 2 == 0 else ("bare", "subject")
        for side in order:
            totals[side].add(subject if side == "subject" else bare, kind, seconds)
    mine, theirs = totals["subject"], totals["bare"]
    rate, reference_rate = mine.ok / mine.seconds, theirs.ok / theirs.seconds
    # CPU per call, the cross-check that contention on a shared machine cannot skew: reference / subject.
    cpu_ratio = (theirs.cpu_seconds / theirs.ok) / (mine.cpu_seconds / mine.ok)
    return Figure(
        f"GetPlatformOverview {kind}",
        rate,
        reference_rate,
        rate / reference_rate,
        target,
        int(mine.errors + theirs.errors),
        mine.cpu_seconds / mine.ok * 1e6,
        theirs.cpu_seconds / theirs.ok * 1e6,
        cpu_ratio,
    )


def table(figures: list[Figure]) -> str:
    head = f"{'figure':<34} {'req/s':>7} {'bare':>7} {'ratio':>6} {'target':>6} {'met':>4}"
    lines = [f"{head}   {'cpu us/call':>11} {'bare':>6} {'ratio':>6}  errors"]
    for f in figures:
        target = "-" if f.target is None else f">={f.target:.1f}"
        met = "-" if f.met is None else ("yes" if f.met else "NO")
        lines.append(
            f"{f.name:<34} {f.requests_per_second:>7.0f} {f.reference_requests_per_second:>7.0f}"
            f" {f.ratio:>5.2f}x {target:>6} {met:>4}   {f.cpu_microseconds_per_call:>11.0f}"
            f" {f.reference_cpu_microseconds_per_call:>6.0f} {f.cpu_ratio:>5.2f}x  {f.errors}"
        )
    return "\n".join(lines)


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    args = ("--rounds", "3", "--seconds", "1") if options.quick else ()
    return [Run("overview_api", "bench.overview_api", args, timeout_seconds=900)]


def read(results: Sequence[Result]) -> Reading:
    _, f = largest(results)
    rows = []
    for figure in f["figures"]:
        target = None if figure["target"] is None else Target(">=", figure["target"])
        errors = f"{figure['errors']} errors" if figure["errors"] else ""
        rows.append(
            Row(
                "overview_api",
                f"{figure['name']} (cached)",
                figure["requests_per_second"],
                "req/s",
                "bare handler, same server shape",
                figure["reference_requests_per_second"],
                target,
                errors,
            )
        )
        rows.append(
            Row(
                "overview_api",
                f"{figure['name']} server CPU per call",
                figure["cpu_microseconds_per_call"],
                "us",
                "bare handler",
                figure["reference_cpu_microseconds_per_call"],
            )
        )
    return rows, []


BENCHMARK = Benchmark("overview_api", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overview_api", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="seconds per measured round (default 1.5)")
    parser.add_argument("--rounds", type=int, default=8, help="rounds per side and protocol (default 8)")
    parser.add_argument("--organizations", type=int, default=50, help="listed organizations (default 50)")
    parser.add_argument("--only", nargs="+", choices=[kind for kind, _ in ROWS], help="measure only these rows")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 60 or not 0 < args.rounds <= 40 or not 0 <= args.organizations <= 10_000:
        parser.error("--seconds in (0, 60], --rounds in 1..40, --organizations in 0..10000")
    kinds = tuple(args.only or (kind for kind, _ in ROWS))
    figures = measure(args.seconds, args.rounds, args.organizations, kinds)
    print(table(figures))
    if args.json:
        args.json.write_text(json.dumps([{**asdict(f), "met": f.met} for f in figures], indent=2))
    return 0 if all(f.met is not False for f in figures) and not any(f.errors for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
