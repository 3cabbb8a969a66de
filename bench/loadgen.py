"""A small closed-loop load generator for unary RPCs, run as a process of its own on loopback.

    python -m bench.loadgen --kind connect-get --port 8080 --path /pkg.Svc/Method --seconds 3

`connect-get` and `connect-post` speak HTTP/1.1 over raw asyncio streams with keep-alive (one
request in flight per connection, `--concurrency` connections), so the generator costs far less per
request than the servers it measures; `grpc` runs `--concurrency` loops over one grpc.aio channel and
sends the request as raw bytes (no protobuf work on this side). It stops by itself after `--seconds`
and prints one JSON line: `{"ok": n, "errors": n, "seconds": s}`. Any status but 200 / OK is an error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass
from urllib.parse import quote

import grpc

HOST = "127.0.0.1"


@dataclass
class Tally:
    ok: int = 0
    errors: int = 0


def http_request(kind: str, path: str, body: bytes, headers: tuple[tuple[str, str], ...] = ()) -> bytes:
    """The bytes of one keep-alive request: GET with the message in the query, or POST with a body."""
    extra = "".join(f"{name}: {value}\r\n" for name, value in headers)
    if kind == "connect-get":
        query = f"connect=v1&encoding=json&message={quote(body.decode() or '{}')}"
        return f"GET {path}?{query} HTTP/1.1\r\nHost: {HOST}\r\n{extra}\r\n".encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/proto\r\n"
        f"Connect-Protocol-Version: 1\r\n{extra}Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def read_response(reader: asyncio.StreamReader) -> bool:
    """Read one HTTP/1.1 response (Content-Length or chunked); whether it was a 200."""
    status = await reader.readline()
    length = None
    chunked = False
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if chunked:
        while size := int((await reader.readline()).split(b";")[0], 16):
            await reader.readexactly(size + 2)
        await reader.readline()
    elif length:
        await reader.readexactly(length)
    return status.startswith(b"HTTP/1.1 200")


async def http_loop(port: int, request: bytes, deadline: float, tally: Tally) -> None:
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        while loop.time() < deadline:
            writer.write(request)
            if await read_response(reader):
                tally.ok += 1
            else:
                tally.errors += 1
    finally:
        writer.close()


async def grpc_loop(
    call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes],
    deadline: float,
    tally: Tally,
    metadata: tuple[tuple[str, str], ...] = (),
) -> None:
    loop = asyncio.get_running_loop()
    while loop.time() < deadline:
        try:
            await call(b"", timeout=30, metadata=metadata or None)
            tally.ok += 1
        except grpc.aio.AioRpcError:
            tally.errors += 1


async def generate(
    kind: str, port: int, path: str, seconds: float, concurrency: int, headers: tuple[tuple[str, str], ...] = ()
) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    tally = Tally()
    started = time.perf_counter()
    deadline = loop.time() + seconds
    if kind == "grpc":
        async with grpc.aio.insecure_channel(f"{HOST}:{port}") as channel:
            call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(path)
            await asyncio.gather(*(grpc_loop(call, deadline, tally, headers) for _ in range(concurrency)))
    else:
        request = http_request(kind, path, b"", headers)
        await asyncio.gather(*(http_loop(port, request, deadline, tally) for _ in range(concurrency)))
    return {"ok": tally.ok, "errors": tally.errors, "seconds": time.perf_counter() - started}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.loadgen", description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("connect-get", "connect-post", "grpc"), required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", required=True, help="/package.Service/Method")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--header", action="append", default=[], help="NAME:VALUE sent with every call (repeatable)")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 600 or not 0 < args.concurrency <= 1000:
        parser.error("--seconds must be in (0, 600] and --concurrency in (0, 1000]")
    headers = tuple((name.strip().lower(), value.strip()) for name, _, value in (h.partition(":") for h in args.header))
    result = asyncio.run(generate(args.kind, args.port, args.path, args.seconds, args.concurrency, headers))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
