"""Benchmark: the staff API's memory under HTTP/2 rapid reset on its gRPC port.

    .venv/bin/python -m bench.rapid_reset [--dsn SUPERUSER_DSN] [--streams 400000] [--json FILE]

The real `platform-admin-api` process runs on loopback against a freshly migrated database (the
streams never reach it). A client opens HTTP/2 streams on the gRPC port, each a `GetFleetSummary`
call's HEADERS followed at once by RST_STREAM (CANCEL): the rapid-reset pattern, which costs the
server a stream's setup while never counting against its concurrent-stream limit for long. The
client reconnects whenever the server sends GOAWAY, so the pattern goes on whatever the server's
own defence does. The server's RSS (VmRSS) is read after 50,000 streams and after all of them.

Target: RSS after 400,000 streams within 10 % of RSS after 50,000 (ratio <= 1.10).

The frames are written by hand (hyperframe's header parser and hpack's encoder, both parts of the
`h2` library, do the HTTP/2 and HPACK work), because `h2.connection.H2Connection` costs the client
more per stream than the server spends, and the client would measure itself.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import hpack
import httpx
import orjson
import psycopg
from hyperframe.frame import Frame

from bench.common import PROJECT, postgres
from bench.runs import Benchmark, Options, Reading, Result, Run, largest
from bench.table import Row, Target
from db.migrate import fresh_database

TARGET_RATIO = 1.10
CHECKPOINT = 50_000
DATABASE = "fleet_bench_rapid_reset"
METHOD = "/fundament.fleet.v1.FleetService/GetFleetSummary"
BATCH = 200
MAX_CONNECTIONS = 10_000
SETTLE_SECONDS = 3.0
START_TIMEOUT_SECONDS = 120
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
SETTINGS_ACK = b"\x00\x00\x00\x04\x01\x00\x00\x00\x00"
FRAME_HEADERS, FRAME_SETTINGS, FRAME_PING, FRAME_GOAWAY = 0x1, 0x4, 0x6, 0x7
FLAG_END_HEADERS = 0x4
CANCEL = 0x8


def _say(text: str) -> None:
    print(text, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def header_block(port: int) -> bytes:
    """The request head of one call, encoded once: never-indexed literals leave HPACK's table as it was,
    so the same bytes are a valid head for every stream of every connection."""
    headers = [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", METHOD),
        (":authority", f"127.0.0.1:{port}"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ]
    return bytes(hpack.Encoder().encode([hpack.NeverIndexedHeaderTuple(k, v) for k, v in headers]))


def streams_frames(block: bytes, first_id: int, count: int) -> bytes:
    """HEADERS then RST_STREAM(CANCEL) for `count` client streams from `first_id` (odd ids)."""
    length = struct.pack(">I", len(block))[1:]
    parts = []
    for stream_id in range(first_id, first_id + 2 * count, 2):
        sid = struct.pack(">I", stream_id)
        parts.append(length + bytes((FRAME_HEADERS, FLAG_END_HEADERS)) + sid + block)
        parts.append(b"\x00\x00\x04\x03\x00" + sid + struct.pack(">I", CANCEL))
    return b"".join(parts)


class Connection:
    """One HTTP/2 connection that answers the server's SETTINGS and PINGs and notices its GOAWAY."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.going_away = asyncio.Event()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                head = await self.reader.readexactly(9)
                frame, length = Frame.parse_frame_header(memoryview(head))
                payload = await self.reader.readexactly(length)
                if frame.type == FRAME_SETTINGS and "ACK" not in frame.flags:
                    self.writer.write(SETTINGS_ACK)
                elif frame.type == FRAME_PING and "ACK" not in frame.flags:
                    self.writer.write(b"\x00\x00\x08\x06\x01\x00\x00\x00\x00" + payload)
                elif frame.type == FRAME_GOAWAY:
                    self.going_away.set()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.going_away.set()

    async def close(self) -> None:
        self.task.cancel()
        self.writer.close()


async def connect(port: int) -> Connection:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(PREFACE + EMPTY_SETTINGS)
    return Connection(reader, writer)


async def rapid_reset(port: int, total: int, checkpoints: dict[int, float], pid: int) -> int:
    """Open and reset `total` streams; returns how many connections it took."""
    block = header_block(port)
    sent, connections = 0, 1
    conn = await connect(port)
    next_id = 1
    pending = sorted(checkpoints)
    while sent < total:
        if conn.going_away.is_set() or next_id > 2**31 - 2 * BATCH:
            await conn.close()
            connections += 1
            if connections > MAX_CONNECTIONS:
                raise RuntimeError(f"the server closed more than {MAX_CONNECTIONS} connections")
            conn, next_id = await connect(port), 1
        count = min(BATCH, total - sent)
        try:
            conn.writer.write(streams_frames(block, next_id, count))
            await conn.writer.drain()
        except ConnectionError:
            conn.going_away.set()
            continue
        next_id += 2 * count
        sent += count
        while pending and sent >= pending[0]:
            await asyncio.sleep(SETTLE_SECONDS)  # let the server finish what it was sent
            checkpoints[pending.pop(0)] = rss_mb(pid)
            _say(f"{sent:>9,} streams: server RSS {checkpoints[sent]:.1f} MB ({connections} connections)")
    await conn.close()
    return connections


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def start_api(dsn: str, http_port: int, grpc_port: int) -> subprocess.Popen[bytes]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DATABASE_URL": dsn,
        "HTTP_PORT": str(http_port),
        "GRPC_PORT": str(grpc_port),
        "JWT_SECRET": secrets.token_hex(32),
        "DCIM_ORIGINS": "http://127.0.0.1",
    }
    script = Path(sys.executable).with_name("platform-admin-api")
    child = subprocess.Popen([str(script)], env=env, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise RuntimeError(f"platform-admin-api exited with {child.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{http_port}/readyz", timeout=2).status_code == 200:
                return child
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    child.kill()
    raise TimeoutError("platform-admin-api did not become ready")


# -- in the table of `python -m bench` --------------------------------------------------------------


def plan(options: Options) -> list[Run]:
    return [Run("rapid_reset", "bench.rapid_reset", ("--dsn", options.dsn), timeout_seconds=600.0)]


def read(results: Sequence[Result]) -> Reading:
    _, f = largest(results)
    livez = "answered" if f["livez_ok"] else "did NOT answer"
    row = Row(
        "rapid_reset",
        f"staff API RSS after {f['streams']:,.0f} rapid-reset HTTP/2 streams",
        f["final_rss_mb"],
        "MB",
        f"RSS after {f['checkpoint_streams']:,.0f}",
        f["checkpoint_rss_mb"],
        Target("<=", TARGET_RATIO),
        f"gRPC port, default limits; {f['streams_per_second']:,.0f} streams/s over {f['connections']:.0f} "
        f"connection(s); /livez {livez} afterwards",
    )
    return [row], []


BENCHMARK = Benchmark("rapid_reset", plan, read)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rapid_reset", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", help="a superuser DSN of a server to use instead of a throwaway embedded one")
    parser.add_argument("--streams", type=int, default=400_000, help="streams to open and reset in all")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.streams <= CHECKPOINT:
        parser.error(f"--streams must be above {CHECKPOINT}")
    with postgres(args.dsn, name="rapid-reset") as (superuser, _):
        admin_dsn = fresh_database(superuser, DATABASE)
        dsn = psycopg.conninfo.make_conninfo(admin_dsn, user="fun_platform_admin_api")
        http_port, grpc_port = free_port(), free_port()
        child = start_api(dsn, http_port, grpc_port)
        try:
            started_mb = rss_mb(child.pid)
            _say(f"platform-admin-api ready: RSS {started_mb:.1f} MB")
            # The two figures, and every 100,000 between them to show the shape of the curve.
            marks = {CHECKPOINT, args.streams, *range(100_000, args.streams, 100_000)}
            checkpoints: dict[int, float] = dict.fromkeys(marks, 0.0)
            began = time.monotonic()
            connections = asyncio.run(rapid_reset(grpc_port, args.streams, checkpoints, child.pid))
            seconds = time.monotonic() - began
            alive = child.poll() is None
            livez = alive and httpx.get(f"http://127.0.0.1:{http_port}/livez", timeout=5).status_code == 200
        finally:
            child.terminate()
            child.wait(timeout=30)
    ratio = checkpoints[args.streams] / checkpoints[CHECKPOINT]
    _say(
        f"RSS after {args.streams:,} streams / after {CHECKPOINT:,}: {ratio:.3f} (target <= {TARGET_RATIO}); "
        f"{args.streams / seconds:,.0f} streams/s over {connections} connections; livez {'ok' if livez else 'FAILED'}"
    )
    figures = {
        "started_rss_mb": started_mb,
        "checkpoint_streams": CHECKPOINT,
        "checkpoint_rss_mb": checkpoints[CHECKPOINT],
        "streams": args.streams,
        "final_rss_mb": checkpoints[args.streams],
        "ratio": ratio,
        "connections": connections,
        "streams_per_second": args.streams / seconds,
        "livez_ok": float(livez),
    }
    if args.json:
        args.json.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
    return 0 if ratio <= TARGET_RATIO and livez else 1


if __name__ == "__main__":
    sys.exit(main())
