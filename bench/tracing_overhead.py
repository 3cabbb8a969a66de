"""Benchmark: what tracing costs, the same API server with tracing off and on beside one without the SDK.

    python -m bench.tracing_overhead [--seconds 1.5] [--rounds 4] [--organizations 50] [--json FILE]

Two calls, each against three processes of the same console script on loopback, under the same load
generator (`bench.loadgen`, a separate process, closed loop, 8 in flight):

- the cached public overview (`platform-public-api`, Connect GET) and the staff API's ListClusters
  (`platform-admin-api`, gRPC with a DCIM token; every call reads the database);
- reference: the server where OpenTelemetry cannot even be imported (a directory first on PYTHONPATH
  holds an `opentelemetry` package that refuses to load);
- off: the server as deployed, no OTEL_* variable set;
- on: OTEL_EXPORTER_OTLP_ENDPOINT set to a receiver in this process and every call sampled
  (`OTEL_TRACES_SAMPLER=always_on`): a SERVER span per call, a span per statement, exported in batches.

Rounds rotate the three so drift on the machine hits all alike; a figure is the sum of requests over
the sum of seconds. Target: on ≥ 0.85x the reference; off is printed beside it (its cost is nothing by
construction: tests/common/test_tracing.py proves OpenTelemetry is never imported). Every process
started here is stopped by its pid; the run is bounded by the rounds and seconds given.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from bench.overview_api import ROOT, Server, Totals, load, process, seeded_server, wait_until_answering
from bench.runs import Benchmark, Options, Reading, Result, Run, largest
from bench.table import Row, Target
from db.embedded import free_port
from services.common.auth import DcimTokenRules, mint_token

OVERVIEW = "/fundament.overview.v1.OverviewService/GetPlatformOverview"
LIST_CLUSTERS = "/fundament.fleet.v1.FleetService/ListClusters"
TARGET_ON = 0.85
SIDES = ("reference", "off", "on")


@dataclass(frozen=True)
class Figure:
    """One call with tracing off or on against the reference."""

    name: str
    requests_per_second: float
    reference_requests_per_second: float
    ratio: float
    target: float | None
    errors: int
    cpu_microseconds_per_call: float
    reference_cpu_microseconds_per_call: float

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.ratio >= self.target


@contextmanager
def receiver() -> Iterator[tuple[str, list[int]]]:
    """An OTLP/HTTP receiver on loopback that takes every batch and answers OK; yields its endpoint and
    a list of the batch sizes (bytes) it received."""
    batches: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            self.rfile.read(min(length, 64 << 20))
            batches.append(length)
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", batches
    finally:
        server.shutdown()
        server.server_close()


def no_sdk_path(scratch: Path) -> str:
    """A directory that, first on PYTHONPATH, makes `import opentelemetry` fail."""
    blocker = scratch / "no-opentelemetry" / "opentelemetry"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text('raise ImportError("opentelemetry is blocked in this benchmark")\n')
    return str(blocker.parent)


def sides_env(base: dict[str, str], scratch: Path, endpoint: str) -> dict[str, dict[str, str]]:
    return {
        "reference": {**base, "PYTHONPATH": f"{no_sdk_path(scratch)}:{ROOT}"},
        "off": base,
        "on": {**base, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER": "always_on"},
    }


def staff_token(secret: str) -> str:
    return mint_token(
        DcimTokenRules(secret.encode()), subject=uuid.uuid4(), ttl=timedelta(hours=1), now=datetime.now(UTC)
    )


def compare(
    name: str, kind: str, path: str, servers: dict[str, Server], headers: Sequence[str], seconds: float, rounds: int
) -> list[Figure]:
    for server in servers.values():
        load(kind, server.port(kind), min(1.0, seconds), path=path, headers=headers)  # warm-up
    totals = {side: Totals() for side in SIDES}
    for round_number in range(rounds):
        shift = round_number % len(SIDES)
        for side in SIDES[shift:] + SIDES[:shift]:
            totals[side].add_load(servers[side], kind, seconds, path=path, headers=headers)
    reference = totals["reference"]
    figures = []
    for side in ("off", "on"):
        mine = totals[side]
        rate, reference_rate = mine.ok / mine.seconds, reference.ok / reference.seconds
        figures.append(
            Figure(
                f"{name}, tracing {side}",
                rate,
                reference_rate,
                rate / reference_rate,
                TARGET_ON if side == "on" else None,
                int(mine.errors + reference.errors),
                mine.cpu_seconds / mine.ok * 1e6,
                reference.cpu_seconds / reference.ok * 1e6,
            )
        )
    return figures


def measure(seconds: float, rounds: int, organizations: int) -> tuple[list[Figure], int]:
    secret = "bench-" + uuid.uuid4().hex + uuid.uuid4().hex
    inherited = {**os.environ, "PYTHONPATH": str(ROOT), "LOG_LEVEL": "warning"}
    figures: list[Figure] = []
    with seeded_server(organizations) as db, receiver() as (endpoint, batches), ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        apis = {
            "overview": ("platform-public-api", db.dsn_for("fleet", "fun_platform_public_api"), {}),
            "staff": ("platform-admin-api", db.dsn_for("fleet", "fun_platform_admin_api"), {"JWT_SECRET": secret}),
        }
        servers: dict[str, dict[str, Server]] = {}
        for api, (script, dsn, extra) in apis.items():
            servers[api] = {}
            base = {**inherited, "DATABASE_URL": dsn, "CACHE_TTL_SECONDS": "60", **extra}
            for side, side_env in sides_env(base, scratch / api, endpoint).items():
                http_port, grpc_port = free_port(), free_port()
                env = {**side_env, "HTTP_PORT": str(http_port), "GRPC_PORT": str(grpc_port)}
                child = stack.enter_context(process([str(Path(sys.executable).with_name(script))], env))
                if api == "overview":
                    wait_until_answering(child, http_port)
                else:
                    wait_ready(child, http_port)
                servers[api][side] = Server(child.pid, http_port, grpc_port)
        token = [f"authorization:Bearer {staff_token(secret)}"]
        figures += compare("GetPlatformOverview connect-get (cached)", "connect-get", OVERVIEW, servers["overview"], (),
                           seconds, rounds)  # fmt: skip
        figures += compare("ListClusters grpc", "grpc", LIST_CLUSTERS, servers["staff"], token, seconds, rounds)
        received = len(batches)
    return figures, received


def wait_ready(child: Any, http_port: int) -> None:
    """Until the staff API says it is ready (at most 60 s)."""
    for _ in range(600):
        if child.poll() is not None:
            raise RuntimeError(f"{child.args!r} exited with {child.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{http_port}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        threading.Event().wait(0.1)
    raise RuntimeError(f"{child.args!r} not ready on port {http_port} within 60 s")


def table(figures: list[Figure], batches: int) -> str:
    head = f"{'figure':<52} {'req/s':>7} {'no SDK':>7} {'ratio':>6} {'target':>7} {'met':>4}"
    lines = [f"{head}   {'cpu us/call':>11} {'no SDK':>7}  errors"]
    for f in figures:
        target = "-" if f.target is None else f">={f.target:.2f}"
        met = "-" if f.met is None else ("yes" if f.met else "NO")
        lines.append(
            f"{f.name:<52} {f.requests_per_second:>7.0f} {f.reference_requests_per_second:>7.0f}"
            f" {f.ratio:>5.2f}x {target:>7} {met:>4}   {f.cpu_microseconds_per_call:>11.0f}"
            f" {f.reference_cpu_microseconds_per_call:>7.0f}  {f.errors}"
        )
    lines.append(f"span batches the receiver got from the servers with tracing on: {batches}")
    return "\n".join(lines)


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    args = ("--rounds", "3", "--seconds", "1") if options.quick else ()
    return [Run("tracing_overhead", "bench.tracing_overhead", args, timeout_seconds=900)]


def read(results: Sequence[Result]) -> Reading:
    _, f = largest(results)
    rows = []
    for figure in f["figures"]:
        target = None if figure["target"] is None else Target(">=", figure["target"])
        errors = f"{figure['errors']} errors" if figure["errors"] else ""
        rows.append(
            Row(
                "tracing_overhead",
                figure["name"],
                figure["requests_per_second"],
                "req/s",
                "same server, OpenTelemetry not importable",
                figure["reference_requests_per_second"],
                target,
                errors,
            )
        )
    return rows, []


BENCHMARK = Benchmark("tracing_overhead", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tracing_overhead", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="seconds per measured round (default 1.5)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per server and call (default 6)")
    parser.add_argument("--organizations", type=int, default=50, help="listed organizations (default 50)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 60 or not 0 < args.rounds <= 40 or not 0 <= args.organizations <= 10_000:
        parser.error("--seconds in (0, 60], --rounds in 1..40, --organizations in 0..10000")
    figures, batches = measure(args.seconds, args.rounds, args.organizations)
    print(table(figures, batches))
    if args.json:
        payload = {"figures": [{**asdict(f), "met": f.met} for f in figures], "span_batches": batches}
        args.json.write_text(json.dumps(payload, indent=2))
    ok = all(f.met is not False for f in figures) and not any(f.errors for f in figures) and batches > 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
