"""Running the simulator: bind the TLS port, write the state dir, serve on a loop or a background thread.

`SimServer.start()` runs on the caller's event loop (the `fleet-sim` command); `start_in_thread()`
gives the server its own loop in a daemon thread (the pytest fixture, benchmarks), returning once
the port accepts connections. Either way the control API is bound to the serving loop.

The state dir gets the garden kubeconfig, the CA, the control token and `sim.json` (see
`sim/control/statedir.py`), so the demo, benchmarks and people find the simulator.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import socket
import threading
from pathlib import Path

from aiohttp import web

from common.eventloop import DEFAULT_EVENT_LOOP, loop_factory
from fleet_description.model import Fleet
from sim.api.credentials.kubeconfig import to_yaml
from sim.api.server import SimApp
from sim.api.simulator import SimSettings, Simulator
from sim.control.actions import SimControl
from sim.control.endpoint import handle_control
from sim.control.statedir import CA_FILE, CONTROL_TOKEN_FILE, GARDEN_KUBECONFIG, SimState
from sim.world.generate import DEFAULT_PROFILE, ContentProfile

logger = logging.getLogger(__name__)

SHUTDOWN_SECONDS = 2.0


def _bound_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port) but not yet listening."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class SimServer:
    """One simulator process (or thread): the state, the control API and the listening socket."""

    def __init__(
        self,
        fleet: Fleet,
        settings: SimSettings | None = None,
        *,
        profile: ContentProfile = DEFAULT_PROFILE,
        state_dir: Path | None = None,
    ) -> None:
        self.sim = Simulator(fleet, settings, profile=profile)
        self.control = SimControl(self.sim)
        self.state_dir = state_dir
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    @property
    def url(self) -> str:
        return self.sim.base_url

    @property
    def garden_kubeconfig_path(self) -> Path | None:
        return None if self.state_dir is None else self.state_dir / GARDEN_KUBECONFIG

    async def start(self) -> None:
        """Bind and serve on the running loop (returns once listening).

        The socket is bound before it listens, so the port is known and the kubeconfig, CA and
        control token are on disk before the first connection can be accepted; `sim.json` follows
        once the server listens.
        """
        settings = self.sim.settings
        self.control.bind_loop(asyncio.get_running_loop(), threading.get_ident())
        sock = _bound_socket(settings.host, settings.port)
        host = settings.host if ":" not in settings.host else f"[{settings.host}]"
        self.sim.base_url = f"https://{host}:{sock.getsockname()[1]}"
        if self.state_dir is not None:
            self._write_credentials()
        app = SimApp(self.sim, functools.partial(handle_control, self.sim, self.control)).build()
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=SHUTDOWN_SECONDS)
        await runner.setup()
        site = web.SockSite(runner, sock, ssl_context=self.sim.tls.server_context(), backlog=512)
        await site.start()
        self._runner = runner
        if self.state_dir is not None:
            self._write_state_file()
        logger.info("fleet-sim listening", extra={"url": self.sim.base_url, "shoots": len(self.sim.world.shoots)})

    async def stop(self) -> None:
        self.sim.faults.clear()  # release hanging requests so shutdown does not wait for them
        runner, self._runner = self._runner, None
        if runner is None:
            return
        # Idle keep-alive TLS connections would wait for the client's close_notify (30 s) and leak
        # their sockets when the loop closes; a simulator can simply drop them.
        if runner.server is not None:
            for connection in list(runner.server.connections):
                if connection.transport is not None:
                    connection.transport.abort()
        await runner.cleanup()
        await asyncio.sleep(0)  # let the aborted transports run their connection_lost

    def _write_credentials(self) -> None:
        if self.state_dir is None:
            return
        self.state_dir.mkdir(parents=True, exist_ok=True)
        for name, content in (
            (GARDEN_KUBECONFIG, to_yaml(self.sim.garden_kubeconfig())),
            (CONTROL_TOKEN_FILE, (self.sim.tokens.control_token + "\n").encode()),
        ):
            path = self.state_dir / name
            path.touch(mode=0o600, exist_ok=True)
            path.chmod(0o600)
            path.write_bytes(content)
        (self.state_dir / CA_FILE).write_bytes(self.sim.tls.ca_pem)

    def _write_state_file(self) -> None:
        if self.state_dir is None:
            return
        # Written last: whoever waits for sim.json finds everything else ready.
        state = SimState.of(self.state_dir, url=self.sim.base_url, pid=os.getpid(), shoots=len(self.sim.world.shoots))
        state.write(self.state_dir)

    # --- in a background thread -----------------------------------------------------------------

    def start_in_thread(self, timeout_seconds: float = 30.0, *, event_loop: str = DEFAULT_EVENT_LOOP) -> None:
        """Serve on a fresh event loop (EVENT_LOOP's choices) in a daemon thread; returns once the port is listening."""
        factory = loop_factory(event_loop)  # an unknown loop is refused here, in the caller's thread
        started = threading.Event()
        failure: list[BaseException] = []

        async def until_stopped(stop: asyncio.Event) -> None:
            await stop.wait()
            await self.stop()

        def serve() -> None:
            # The runner cancels what is still running when it closes: a request handler still
            # sleeping out its latency is cancelled rather than destroyed pending with the loop.
            try:
                with asyncio.Runner(loop_factory=factory) as runner:
                    self._loop = runner.get_loop()
                    asyncio.set_event_loop(self._loop)
                    self._stop = stop = asyncio.Event()
                    runner.run(self.start())
                    started.set()
                    runner.run(until_stopped(stop))
            except BaseException as error:
                if started.is_set():
                    raise
                failure.append(error)  # reported to the starting thread
                self._loop = self._stop = None
                started.set()

        self._thread = threading.Thread(target=serve, name="fleet-sim", daemon=True)
        self._thread.start()
        if not started.wait(timeout_seconds):
            raise TimeoutError(f"fleet-sim did not start within {timeout_seconds} s")
        if failure:
            raise RuntimeError("fleet-sim failed to start") from failure[0]

    def stop_thread(self, timeout_seconds: float = 30.0) -> None:
        loop, stop, thread = self._loop, self._stop, self._thread
        if loop is None or stop is None or thread is None:
            return
        if thread.is_alive():
            loop.call_soon_threadsafe(stop.set)
            thread.join(timeout_seconds)
            if thread.is_alive():
                raise TimeoutError(f"fleet-sim did not stop within {timeout_seconds} s")
        self._thread = None
