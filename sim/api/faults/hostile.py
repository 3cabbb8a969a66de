"""The hostile faults: answers a tenant's API server (or a broken garden) could send to harm a collector.

Each one is an answer no real API server sends, but nothing stops a hostile one (a tenant
controls its cluster's API server and everything in it) from sending it:

| kind | effect |
|---|---|
| endless_item | a 200 list whose first item never ends (one string grows until the client leaves) |
| endless_list | a 200 list whose items never end (copies of the list's first item under new names) |
| flood | a 200 list of `count` items (copies of the first item under new names), then its end |
| gzip_bomb | a 200 with `Content-Encoding: gzip` (whatever was asked) whose inflated body never ends |
| endless_answer | a 200 JSON object (e.g. a kubeconfig request's answer) whose string never ends |
| http_server | a minted kubeconfig whose server is `http://` (the token would travel in cleartext) |
| string_boolean | a minted kubeconfig saying `insecure-skip-tls-verify: "false"`, a string |
| redirect | a 307 to the same path on another origin (`localhost` for `127.0.0.1` and back) |
| value_bomb | a 200 JSON object of `count` MiB (default 15), almost all `[],[],…` (3 bytes a value) |
| endless_pages | a 200 page of `count` (default 500) copies of the first item, its `continue` never ending |
| huge_value | a Prometheus answer whose every sample value is `1e306` (finite, overflows once scaled) |
| any_credentials | a Prometheus that takes any basic-auth pair (one that collects them, or answers for another shoot) |

A value bomb is under the byte bounds; read as a list it has no items, as a Prometheus answer its
series are the `[]`s.

Endless answers stop when the client goes away, or after the fault's `seconds` (default 60), so a
test that forgot to clear one cannot keep the simulator busy for ever.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
import zlib
from collections.abc import Iterator
from typing import Any

import orjson
import yaml
from aiohttp import web

from sim.api.faults.injected import DEFAULT_HANG_SECONDS, Fault, FaultKind
from sim.api.machinery.replies import Reply

logger = logging.getLogger(__name__)

STREAM_FAULTS = frozenset(
    {
        FaultKind.ENDLESS_ITEM,
        FaultKind.ENDLESS_LIST,
        FaultKind.FLOOD,
        FaultKind.GZIP_BOMB,
        FaultKind.ENDLESS_ANSWER,
        FaultKind.VALUE_BOMB,
    }
)
KUBECONFIG_FAULTS = frozenset({FaultKind.HTTP_SERVER, FaultKind.STRING_BOOLEAN})

# What fleet-sim's hostile mode plays, one case per shoot: (fault, the resource it hits, the items of a
# flood). The kubeconfig cases hit the garden's answer minting that shoot's credential.
HOSTILE_CASES: tuple[tuple[FaultKind, str, int], ...] = (
    (FaultKind.ENDLESS_ITEM, "nodes", 0),
    (FaultKind.GZIP_BOMB, "pods", 0),
    (FaultKind.ENDLESS_LIST, "certificates", 0),
    (FaultKind.ENDLESS_ANSWER, "adminkubeconfig", 0),
    (FaultKind.FLOOD, "ingresses", 30_000),
    (FaultKind.FLOOD, "certificates", 30_000),
    (FaultKind.HTTP_SERVER, "adminkubeconfig", 0),
    (FaultKind.STRING_BOOLEAN, "adminkubeconfig", 0),
    (FaultKind.REDIRECT, "nodes", 0),
)

# What a shoot's Prometheus plays in hostile mode (resource `prometheus`), one case per shoot: the
# monitoring stack down, an answer that never ends, one of 30,000 series, a gzip bomb, one that hangs.
MONITORING_HOSTILE_CASES: tuple[tuple[FaultKind, int], ...] = (
    (FaultKind.UNAVAILABLE, 0),
    (FaultKind.ENDLESS_ANSWER, 0),
    (FaultKind.FLOOD, 30_000),
    (FaultKind.GZIP_BOMB, 0),
    (FaultKind.HANG, 0),
)

_CHUNK = 256 << 10
DEFAULT_BOMB_MIB = 15
DEFAULT_PAGE_ITEMS = 500
# The head of a value bomb: whatever parses it, a Kubernetes list (no items), an object (no fields it
# reads) or a Prometheus answer (the `[]`s are its series).
_BOMB_HEAD = (
    b'{"kind":"List","apiVersion":"v1","metadata":{},"status":"success","data":{"resultType":"vector","result":['
)
_BOMB_CHUNK = b"[]," * (_CHUNK // 3)
_FILLER = b"a" * _CHUNK
_BASE64_FILLER = b"A" * _CHUNK


def _gzip_parts() -> tuple[bytes, bytes]:
    """A gzip stream's first part and a part that can be repeated for ever (each inflates to 16 MiB of spaces).

    After a full flush the compressor starts from a clean state at a byte boundary, so compressing
    the same input again gives the same bytes: repeating them is a valid, never-ending stream.
    """
    spaces = b" " * (16 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = compressor.compress(b'{"kind":"List","items":[') + compressor.flush(zlib.Z_FULL_FLUSH)
    head += compressor.compress(spaces) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(spaces) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head, again


_GZIP_HEAD, _GZIP_AGAIN = _gzip_parts()


def _first_item(reply: Reply) -> tuple[bytes, dict[str, Any]]:
    """The list's head (up to its items) and its first item, or a made-up one for an empty list."""
    body = b"".join(reply.chunks)
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        document = {}
    items = document.get("items") if isinstance(document, dict) else None
    first = items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else {}
    first.setdefault("metadata", {})
    kind = document.get("kind", "List") if isinstance(document, dict) else "List"
    head = b'{"kind":' + orjson.dumps(kind) + b',"apiVersion":"v1","metadata":{},"items":['
    return head, first


def _copies(first: dict[str, Any], count: int | None) -> Iterator[bytes]:
    """`first` again and again under new names, in chunks of about _CHUNK bytes."""
    name = str(first["metadata"].get("name") or "item")
    n = 0
    while count is None or n < count:
        batch = bytearray()
        while len(batch) < _CHUNK and (count is None or n < count):
            first["metadata"]["name"] = f"{name}-{n}"
            first["metadata"]["uid"] = f"hostile-{n}"
            if isinstance(first.get("spec"), dict) and "secretName" in first["spec"]:
                first["spec"]["secretName"] = f"{name}-{n}-tls"
            batch += (b"," if n else b"") + orjson.dumps(first)
            n += 1
        yield bytes(batch)


def _value_bomb(mib: int) -> Iterator[bytes]:
    yield _BOMB_HEAD
    for _ in range(((mib or DEFAULT_BOMB_MIB) << 20) // len(_BOMB_CHUNK)):
        yield _BOMB_CHUNK
    yield b"[]]}}"


def _body(fault: Fault, reply: Reply) -> tuple[Iterator[bytes], dict[str, str]]:
    if fault.kind is FaultKind.VALUE_BOMB:
        return _value_bomb(fault.count), {}
    if fault.kind is FaultKind.GZIP_BOMB:

        def bomb() -> Iterator[bytes]:
            yield _GZIP_HEAD
            while True:
                yield _GZIP_AGAIN

        return bomb(), {"Content-Encoding": "gzip"}
    if fault.kind is FaultKind.ENDLESS_ANSWER:

        def answer() -> Iterator[bytes]:
            yield b'{"kind":"AdminKubeconfigRequest","status":{"kubeconfig":"'
            while True:
                yield _BASE64_FILLER

        return answer(), {}
    head, first = _first_item(reply)
    if fault.kind is FaultKind.ENDLESS_ITEM:

        def item() -> Iterator[bytes]:
            yield head + b'{"metadata":{"name":"endless","annotations":{"hostile":"'
            while True:
                yield _FILLER

        return item(), {}

    def items() -> Iterator[bytes]:
        yield head
        yield from _copies(first, fault.count if fault.kind is FaultKind.FLOOD else None)
        yield b"]}"

    return items(), {}


async def send_stream_fault(
    request: web.Request, reply: Reply, fault: Fault, headers: dict[str, str]
) -> web.StreamResponse:
    """Send one of the stream faults (STREAM_FAULTS) as a 200 of chunked JSON."""
    chunks, extra = _body(fault, reply)
    response = web.StreamResponse(status=200, headers={**headers, "Content-Type": "application/json", **extra})
    deadline = time.monotonic() + (fault.seconds or DEFAULT_HANG_SECONDS)
    try:
        await response.prepare(request)
        for chunk in chunks:
            if time.monotonic() > deadline:
                break
            await response.write(chunk)
            await asyncio.sleep(0)  # other requests (the healthy shoots) get their turn
        else:
            await response.write_eof()
            return response
    except (ConnectionResetError, ConnectionError):
        logger.debug("the client left a hostile answer", extra={"path": request.path, "fault": fault.kind.value})
        return response
    if request.transport is not None:
        request.transport.close()  # the bound passed: end the endless answer mid-way
    return response


def redirect(request: web.Request) -> web.Response:
    """A 307 to the same path on another origin of this very server (a follower would be answered)."""
    host = request.url.host or "127.0.0.1"
    other = "localhost" if host != "localhost" else "127.0.0.1"
    location = str(request.url.with_host(other))
    return web.Response(status=307, headers={"Location": location})


def rewrite_kubeconfig(reply: Reply, fault: Fault) -> Reply:
    """The minted kubeconfig in a kubeconfig request's answer, made hostile as the fault says."""
    body = b"".join(reply.chunks)
    try:
        answer = orjson.loads(body)
        config = yaml.safe_load(base64.b64decode(answer["status"]["kubeconfig"]))
        cluster = config["clusters"][0]["cluster"]
    except (orjson.JSONDecodeError, KeyError, TypeError, IndexError, ValueError):
        return Reply(reply.status, reply.content_type, [body], reply.headers)  # an error answer: left as it is
    if fault.kind is FaultKind.HTTP_SERVER:
        cluster["server"] = "http://" + str(cluster["server"]).removeprefix("https://")
    else:
        cluster["insecure-skip-tls-verify"] = "false"
        cluster.pop("certificate-authority-data", None)
    answer["status"]["kubeconfig"] = base64.b64encode(yaml.safe_dump(config).encode()).decode()
    return Reply(reply.status, reply.content_type, [orjson.dumps(answer)], reply.headers)


def endless_page(reply: Reply, fault: Fault, page: int) -> Reply:
    """A page of copies of the list's first item (kept from the first answer) that says more pages follow."""
    if fault.sample is None:
        _, first = _first_item(reply)
        fault.sample = orjson.dumps(first)
    first = orjson.loads(fault.sample)
    name = str(first["metadata"].get("name") or "item")
    items = []
    for n in range(fault.count or DEFAULT_PAGE_ITEMS):
        first["metadata"]["name"] = f"{name}-{page}-{n}"
        first["metadata"]["uid"] = f"hostile-{page}-{n}"
        items.append(orjson.dumps(first))
    body = (
        b'{"kind":"List","apiVersion":"v1","metadata":{"continue":"hostile-page-'
        + str(page + 1).encode()
        + b'"},"items":['
        + b",".join(items)
        + b"]}"
    )
    return Reply(200, "application/json", [body], reply.headers)


def huge_values(reply: Reply) -> Reply:
    """The Prometheus answer with every sample's value `1e306`."""
    try:
        answer = orjson.loads(b"".join(reply.chunks))
        for series in answer["data"]["result"]:
            series["value"][1] = "1e306"
    except (orjson.JSONDecodeError, KeyError, TypeError, IndexError):
        return reply
    return Reply(reply.status, reply.content_type, [orjson.dumps(answer)], reply.headers)
