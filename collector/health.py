"""The worker's health port: /livez, /readyz and /metrics on HEALTH_PORT (default 8097).

The worker serves no API, so this is the operations routes of services/common/serving.py on a small
uvicorn server of their own. `main.py` owns SIGTERM, so uvicorn installs no signal handlers here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket

import uvicorn
from starlette.applications import Starlette

from collector.settings import HealthSettings
from services.common.serving import QuietServer, Readiness, operations_routes

logger = logging.getLogger(__name__)


class HealthServer:
    """/livez (the process runs), /readyz (`readiness`), /metrics (Prometheus)."""

    def __init__(self, settings: HealthSettings, readiness: Readiness) -> None:
        self._settings = settings
        self._app = Starlette(routes=operations_routes(readiness))
        self._server: QuietServer | None = None
        self._task: asyncio.Task[None] | None = None
        self.port = 0

    async def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._settings.host, self._settings.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self._app, lifespan="off", log_config=None, access_log=False)
        self._server = QuietServer(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                await self._task
                raise RuntimeError("the health server stopped during start-up")
            await asyncio.sleep(0.01)
        logger.info("health port listening", extra={"address": f"{self._settings.host}:{self.port}"})

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
