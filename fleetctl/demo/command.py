"""`fleet demo`: run the demo until Ctrl-C, on its default ports and in `.fleet/demo` unless told otherwise.

    fleet demo [--seed 0] [--port NAME=PORT ...] [--state-dir DIR]

`--port` moves one of the demo's ports (names as `DemoPorts` has them: database, public-http,
public-grpc, admin-http, admin-grpc, console, dcim, sim, inventory-health, reconcile-health);
`--state-dir` puts its files, logs and database in DIR instead of `.fleet/demo` and `.fleet/pg`.
With both, a second demo runs beside the first (the tests start theirs so); the banner prints the
ports and paths actually used.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from db.embedded import runtime_root
from fleetctl.demo.banner import banner
from fleetctl.demo.layout import HOST, SIM_DIR, DemoPorts
from fleetctl.demo.processes import port_is_free
from fleetctl.demo.system import PROJECT, Demo
from fleetctl.demo.world import play_world
from fleetctl.webapp import bind_socket, console_app, dcim_app, serve_pages

logger = logging.getLogger("fleet.demo")

PORT_NAMES = tuple(name.replace("_", "-") for name in DemoPorts.__dataclass_fields__)


async def watch_children(demo: Demo, stop: asyncio.Event) -> None:
    """End the demo when a child ends on its own: the demo would silently be half a system otherwise."""
    while not stop.is_set():
        ended = demo.supervisor.exited()
        if ended:
            for child in ended:
                logger.error("%s exited with code %s; see %s", child.name, child.process.returncode, child.log_path)
            stop.set()
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=1)


@contextlib.asynccontextmanager
async def page_servers(demo: Demo) -> AsyncIterator[None]:
    p = demo.ports
    console = console_app(f"http://{HOST}:{p.public_http}")
    dcim = dcim_app(f"http://{HOST}:{p.admin_http}")
    async with (
        serve_pages(console, sock=bind_socket(HOST, p.console)),
        serve_pages(dcim, sock=bind_socket(HOST, p.dcim)),
    ):
        yield


async def run_demo(demo: Demo, *, on_ready: Callable[[str], None]) -> int:
    busy = [f"{name} ({port})" for name, port in demo.ports.all().items() if not port_is_free(HOST, port)]
    if busy:
        logger.error("these ports are taken, so the demo cannot start: %s (--port moves one)", ", ".join(busy))
        return 1
    # The demo's own log says what it starts and what changes in the world, nothing per request.
    for noisy in ("httpx", "uvicorn.error", "fleetctl.webapp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        logger.info("starting PostgreSQL and seeding the demo fleet")
        await asyncio.to_thread(demo.start_database)
        logger.info("starting fleet-sim, the status poller, both APIs and both workers")
        await asyncio.to_thread(demo.start_processes)
        async with page_servers(demo):
            on_ready(banner(demo.ports, demo.state_dir, demo.token, demo.fleet, demo.supervisor.log_dir))
            await asyncio.gather(
                play_world(demo.fleet, demo.state_dir / SIM_DIR, demo.timings.world_step_seconds, stop),
                watch_children(demo, stop),
                stop.wait(),
            )
        return 0 if not demo.supervisor.exited() else 1
    finally:
        logger.info("stopping everything the demo started")
        await asyncio.to_thread(demo.stop)


def link_state_dir(state_dir: Path, project: Path = PROJECT) -> Path:
    """Make `.fleet/demo` in the checkout name the demo's files, wherever they are.

    As root, in a checkout PostgreSQL's user cannot enter, the files live in a temp folder
    (`runtime_root`); a link at `.fleet/demo` keeps every path the docs print true. A real folder
    already there is left alone.
    """
    link = project / ".fleet" / "demo"
    if link.resolve() != state_dir.resolve() and (link.is_symlink() or not link.exists()):
        link.parent.mkdir(parents=True, exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(state_dir, target_is_directory=True)
    return link


def port_option(text: str) -> tuple[str, int]:
    """`NAME=PORT` of `--port`, as the DemoPorts field and the port."""
    name, _, port = text.partition("=")
    name = name.strip().replace("_", "-")
    if name not in PORT_NAMES:
        raise argparse.ArgumentTypeError(f"{text!r}: the name is one of {', '.join(PORT_NAMES)}")
    if not port.strip().isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r}: the port is a number from 1 to 65535")
    return name.replace("-", "_"), int(port)


def demo_of(args: argparse.Namespace, ports: DemoPorts) -> Demo:
    """The demo the options ask for: its files in `.fleet/demo` (linked when elsewhere), or in `--state-dir`."""
    if args.state_dir is None:
        state_dir = runtime_root(PROJECT) / "demo"
        state_dir.mkdir(parents=True, exist_ok=True)
        link_state_dir(state_dir)
        return Demo(state_dir, ports, seed=args.seed)
    state_dir = args.state_dir.resolve()
    state_dir.mkdir(parents=True, exist_ok=True)
    return Demo(state_dir, ports, seed=args.seed, database_dir=state_dir / "pg")


def _cmd_demo(args: argparse.Namespace) -> int:
    ports = dataclasses.replace(DemoPorts(), **dict(args.port))
    if len(set(ports.all().values())) != len(ports.all()):
        print(f"two of the demo's ports are the same: {ports}", file=sys.stderr)  # noqa: T201
        return 2
    demo = demo_of(args, ports)
    return asyncio.run(run_demo(demo, on_ready=lambda text: print(text, flush=True)))  # noqa: T201


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subcommands.add_parser("demo", help="run the whole system on embedded defaults until Ctrl-C")
    parser.add_argument("--seed", type=int, default=0, help="seed of the demo fleet (default 0)")
    parser.add_argument(
        "--port",
        type=port_option,
        action="append",
        default=[],
        metavar="NAME=PORT",
        help=f"move one port (repeatable); NAME: {', '.join(PORT_NAMES)}",
    )
    parser.add_argument(
        "--state-dir",
        type=Path,
        metavar="DIR",
        help="files, logs and database of this demo (default: .fleet/demo, database in .fleet/pg)",
    )
    parser.set_defaults(handler=_cmd_demo)
