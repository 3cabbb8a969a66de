"""The reference of `bench.overview_api`: bare handlers returning a constant overview, nothing else.

    python -m bench.bare_overview --http-port P --grpc-port Q --message overview.binpb

One process and one event loop with two ports, as `platform-public-api` has: the generated Connect
ASGI app on uvicorn (same uvicorn settings and Connect codecs as the service, but no Starlette
router, CORS, request stack or cache), and a plain grpc.aio servicer. Both return the message read
from `--message` (binary protobuf), parsed once. It serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import uvicorn
from connectrpc.request import RequestContext
from fundament.overview.v1 import overview_pb2, overview_pb2_grpc
from fundament.overview.v1.overview_connect import OverviewService, OverviewServiceASGIApplication
from typing_extensions import override

from services.common.codecs import connect_codecs

Request = overview_pb2.GetPlatformOverviewRequest
Response = overview_pb2.GetPlatformOverviewResponse


class QuietServer(uvicorn.Server):
    """uvicorn without its own signal handling, as `ApiServer` runs it: this process owns SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class ConstantConnect(OverviewService):
    def __init__(self, answer: Response) -> None:
        self._answer = answer

    @override
    async def get_platform_overview(self, request: Request, ctx: RequestContext[Request, Response]) -> Response:
        return self._answer


class ConstantGrpc(overview_pb2_grpc.OverviewServiceServicer):
    def __init__(self, answer: Response) -> None:
        self._answer = answer

    async def GetPlatformOverview(
        self, request: Request, context: grpc.aio.ServicerContext[Request, Response]
    ) -> Response:
        return self._answer


async def serve(http_port: int, grpc_port: int, answer: Response) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    server = grpc.aio.server()
    overview_pb2_grpc.add_OverviewServiceServicer_to_server(ConstantGrpc(answer), server)
    server.add_insecure_port(f"127.0.0.1:{grpc_port}")
    await server.start()
    app = OverviewServiceASGIApplication(ConstantConnect(answer), codecs=connect_codecs())
    config = uvicorn.Config(app, host="127.0.0.1", port=http_port, lifespan="off", log_config=None, access_log=False)
    web = QuietServer(config)
    web_task = asyncio.create_task(web.serve())
    try:
        await stop.wait()
    finally:
        web.should_exit = True
        await web_task
        await server.stop(grace=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bare_overview", description=__doc__.splitlines()[0])
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, required=True)
    parser.add_argument("--message", type=Path, required=True, help="the constant answer, binary protobuf")
    args = parser.parse_args(argv)
    answer = Response.FromString(args.message.read_bytes())
    asyncio.run(serve(args.http_port, args.grpc_port, answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
