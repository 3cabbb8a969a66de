"""The soak's clients, each run as a process of its own so the load does not share a GIL.

    python -m soak.load public --protocol connect-get --port 8080 --rate 15 --seconds 540 --out F
    python -m soak.load staff --http-port 8081 --grpc-port 9091 --token-file T --seconds 540 --out F

`public` calls GetPlatformOverview at a steady rate (open loop: a slow answer does not slow the
schedule, up to `--in-flight` calls at once) over Connect GET, Connect POST or gRPC. `staff` pages
through every paged list of the staff API again and again, over gRPC and Connect in turn, with a
summary and a cluster's detail in between; a page that fails is asked again with the same token, so
the tokens are exercised across outages too. Both run on loopback only, stop by themselves after
`--seconds`, and write one JSON object to `--out`: answers counted by call and status code, a few
messages of each failure, and ids a walk returned twice (keyset paging must never do that).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import httpx
from fundament.fleet.v1 import fleet_pb2
from fundament.fleet.v1.fleet_pb2_grpc import FleetServiceStub
from fundament.overview.v1 import overview_pb2
from fundament.overview.v1.overview_pb2_grpc import OverviewServiceStub
from google.protobuf import json_format
from google.protobuf.message import Message

HOST = "127.0.0.1"
OVERVIEW_PATH = "/fundament.overview.v1.OverviewService/GetPlatformOverview"
FLEET_SERVICE = "fundament.fleet.v1.FleetService"
CALL_TIMEOUT_SECONDS = 30.0  # far above any read deadline of the services: they must answer first
EXAMPLES_PER_CODE = 5


@dataclass
class Tally:
    """Answers by call and code, with a few messages of each kind of failure."""

    answers: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    duplicates: list[str] = field(default_factory=list)
    unavailable_first: float | None = None
    unavailable_last: float | None = None

    def record(self, call: str, code: str, message: str = "") -> None:
        self.answers[f"{call} {code}"] += 1
        if code == "ok":
            return
        if code == "unavailable":
            now = time.time()
            self.unavailable_first = self.unavailable_first or now
            self.unavailable_last = now
        examples = self.examples.setdefault(code, [])
        if len(examples) < EXAMPLES_PER_CODE:
            examples.append(f"{call}: {message[:200]}")

    def as_json(self) -> dict[str, Any]:
        return {
            "answers": dict(self.answers),
            "examples": self.examples,
            "duplicates": self.duplicates[:20],
            "unavailable_first": self.unavailable_first,
            "unavailable_last": self.unavailable_last,
        }


class CallFailed(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def connect_code(response: httpx.Response) -> tuple[str, str]:
    """The Connect code and message of an HTTP answer: `ok`, or the error body's code."""
    if response.status_code == 200:
        return "ok", ""
    try:
        body = response.json()
        return str(body.get("code", f"http_{response.status_code}")), str(body.get("message", ""))
    except ValueError:
        return f"http_{response.status_code}", response.text[:200]


async def guarded(tally: Tally, call: str, action: Callable[[], Awaitable[Any]]) -> Any:
    """Run one call and record its outcome; returns its result, or None when it failed."""
    try:
        result = await action()
    except CallFailed as failure:
        tally.record(call, failure.code, failure.message)
        return None
    except grpc.aio.AioRpcError as error:
        tally.record(call, error.code().name.lower(), error.details() or "")
        return None
    except httpx.HTTPError as error:
        tally.record(call, f"transport_{type(error).__name__}", str(error))
        return None
    tally.record(call, "ok")
    return result


# -- the public API -------------------------------------------------------------------------------


def public_call(protocol: str, port: int) -> tuple[Callable[[], Awaitable[None]], Callable[[], Awaitable[None]]]:
    """One GetPlatformOverview over `protocol`, and how to close its client."""
    if protocol == "grpc":
        channel = grpc.aio.insecure_channel(f"{HOST}:{port}")
        stub = OverviewServiceStub(channel)  # type: ignore[no-untyped-call]  # generated without annotations

        async def grpc_call() -> None:
            await stub.GetPlatformOverview(overview_pb2.GetPlatformOverviewRequest(), timeout=CALL_TIMEOUT_SECONDS)

        return grpc_call, channel.close
    client = httpx.AsyncClient(base_url=f"http://{HOST}:{port}", timeout=CALL_TIMEOUT_SECONDS)

    async def http_call() -> None:
        if protocol == "connect-get":
            params = {"connect": "v1", "encoding": "json", "message": "{}"}
            response = await client.get(OVERVIEW_PATH, params=params)
        else:
            headers = {"content-type": "application/json", "connect-protocol-version": "1"}
            response = await client.post(OVERVIEW_PATH, content=b"{}", headers=headers)
        code, message = connect_code(response)
        if code != "ok":
            raise CallFailed(code, message)

    return http_call, client.aclose


async def run_public(protocol: str, port: int, rate: float, seconds: float, in_flight: int) -> Tally:
    tally = Tally()
    call, close = public_call(protocol, port)
    slots = asyncio.Semaphore(in_flight)
    tasks: set[asyncio.Task[Any]] = set()
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        for i in range(int(rate * seconds)):
            await asyncio.sleep(max(0.0, started + i / rate - loop.time()))
            await slots.acquire()
            task = asyncio.create_task(guarded(tally, f"{protocol} GetPlatformOverview", call))
            task.add_done_callback(lambda _t: slots.release())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*tasks)
    finally:
        await close()
    return tally


# -- the staff API --------------------------------------------------------------------------------


class StaffClient:
    """The six RPCs over one protocol, each answering a message or raising CallFailed / AioRpcError."""

    def __init__(self, protocol: str, http_port: int, grpc_port: int, token: str) -> None:
        self.protocol = protocol
        self._auth = f"Bearer {token}"
        self._channel = grpc.aio.insecure_channel(f"{HOST}:{grpc_port}")
        self._stub = FleetServiceStub(self._channel)  # type: ignore[no-untyped-call]  # generated, unannotated
        self._http = httpx.AsyncClient(base_url=f"http://{HOST}:{http_port}", timeout=CALL_TIMEOUT_SECONDS)

    async def call(self, method: str, request: Message, response_type: type[Message]) -> Any:
        if self.protocol == "grpc":
            rpc = getattr(self._stub, method)
            return await rpc(request, metadata=(("authorization", self._auth),), timeout=CALL_TIMEOUT_SECONDS)
        response = await self._http.post(
            f"/{FLEET_SERVICE}/{method}",
            content=json_format.MessageToJson(request),
            headers={"content-type": "application/json", "authorization": self._auth},
        )
        code, message = connect_code(response)
        if code != "ok":
            raise CallFailed(code, message)
        return json_format.Parse(response.content, response_type(), ignore_unknown_fields=True)

    async def close(self) -> None:
        await self._channel.close()
        await self._http.aclose()


PAGED: tuple[tuple[str, type[Message], type[Message], str, int], ...] = (
    ("ListClusters", fleet_pb2.ListClustersRequest, fleet_pb2.ListClustersResponse, "clusters", 25),
    ("ListOrganizations", fleet_pb2.ListOrganizationsRequest, fleet_pb2.ListOrganizationsResponse, "organizations", 20),
    ("ListDriftFindings", fleet_pb2.ListDriftFindingsRequest, fleet_pb2.ListDriftFindingsResponse, "findings", 10),
    (
        "ListInfrastructureResources",
        fleet_pb2.ListInfrastructureResourcesRequest,
        fleet_pb2.ListInfrastructureResourcesResponse,
        "resources",
        200,
    ),
)


async def walk(
    client: StaffClient, tally: Tally, spec: tuple[str, type[Message], type[Message], str, int], deadline: float
) -> list[str]:
    """Every page of one list; a failed page is asked again with the same token. Returns the ids seen."""
    method, request_type, response_type, items, page_size = spec
    token, ids, pause = "", [], 0.02
    while time.monotonic() < deadline:
        request = request_type(page_size=page_size, page_token=token)
        response = await guarded(
            tally, f"{client.protocol} {method}", partial(client.call, method, request, response_type)
        )
        if response is None:
            await asyncio.sleep(0.5)  # the database may be restarting: ask for the same page again
            continue
        ids += [getattr(item, "id", "") for item in getattr(response, items)]
        token = response.next_page_token
        if not token:
            break
        await asyncio.sleep(pause)
    repeated = [i for i, n in Counter(ids).items() if n > 1 and i]
    tally.duplicates += [f"{client.protocol} {method} returned {i} twice in one walk" for i in repeated]
    return ids


async def run_staff(http_port: int, grpc_port: int, token: str, seconds: float) -> Tally:
    tally = Tally()
    deadline = time.monotonic() + seconds
    clients = [StaffClient(protocol, http_port, grpc_port, token) for protocol in ("grpc", "connect")]
    try:
        turn = 0
        while time.monotonic() < deadline:
            client = clients[turn % len(clients)]
            turn += 1
            cluster_ids: list[str] = []
            for spec in PAGED:
                ids = await walk(client, tally, spec, deadline)
                cluster_ids = ids if spec[0] == "ListClusters" else cluster_ids
            summary = fleet_pb2.GetFleetSummaryRequest()
            answer = fleet_pb2.GetFleetSummaryResponse
            call = partial(client.call, "GetFleetSummary", summary, answer)
            await guarded(tally, f"{client.protocol} GetFleetSummary", call)
            if cluster_ids:
                detail = fleet_pb2.GetClusterRequest(id=cluster_ids[turn % len(cluster_ids)])
                call = partial(client.call, "GetCluster", detail, fleet_pb2.GetClusterResponse)
                await guarded(tally, f"{client.protocol} GetCluster", call)
            await asyncio.sleep(0.2)
    finally:
        for client in clients:
            await client.close()
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m soak.load", description=__doc__.splitlines()[0])
    kinds = parser.add_subparsers(dest="kind", required=True)
    public = kinds.add_parser("public", help="GetPlatformOverview at a steady rate")
    public.add_argument("--protocol", choices=("connect-get", "connect-post", "grpc"), required=True)
    public.add_argument("--port", type=int, required=True)
    public.add_argument("--rate", type=float, default=15.0, help="calls per second (default 15)")
    public.add_argument("--in-flight", type=int, default=32, help="most calls waiting at once (default 32)")
    staff = kinds.add_parser("staff", help="page through the staff API")
    staff.add_argument("--http-port", type=int, required=True)
    staff.add_argument("--grpc-port", type=int, required=True)
    staff.add_argument("--token-file", type=Path, required=True)
    for sub in (public, staff):
        sub.add_argument("--seconds", type=float, required=True, help="stop after this long (at most 3600)")
        sub.add_argument("--out", type=Path, required=True, help="where the JSON result goes")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 3600:
        parser.error("--seconds must be in (0, 3600]")
    if args.kind == "public":
        if not 0 < args.rate <= 1000 or not 0 < args.in_flight <= 1000:
            parser.error("--rate must be in (0, 1000] and --in-flight in (0, 1000]")
        tally = asyncio.run(run_public(args.protocol, args.port, args.rate, args.seconds, args.in_flight))
    else:
        token = args.token_file.read_text().strip()
        tally = asyncio.run(run_staff(args.http_port, args.grpc_port, token, args.seconds))
    args.out.write_text(json.dumps(tally.as_json(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
