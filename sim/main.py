"""Entry point of `fleet-sim`: a simulated Gardener landscape on loopback (docs/simulator.md).

    fleet-sim [--fleet test|demo|scale | --huge-shoot] [--seed N] [--host H] [--port P]
              [--latency SECONDS] [--state-dir DIR] [--hostile] [--monitoring-stack gardener|fuller]

Prints where the garden kubeconfig was written, then serves until SIGINT/SIGTERM. Every option
has an environment variable (FLEET_SIM_*) as its default; this is the only module that reads the
environment.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from common import eventloop
from common.eventloop import EVENT_LOOPS, event_loop_from_env
from common.garbage_collection import gc_threshold_from_env, set_gc_threshold
from common.settings import SettingsError, env_float, env_int, env_str
from common.signals import stop_event
from sim.api.prometheus.monitoring import GARDENER, STACKS
from sim.api.simulator import SimSettings
from sim.runner import SimServer
from sim.world.fleets import FLEET_NAMES, fleet_of_organizations, huge_fleet, named_fleet
from sim.world.generate import DEFAULT_PROFILE

logger = logging.getLogger(__name__)

# Below the kernel's ephemeral range, like every fixed port of ours (tests/fleetctl/test_demo_ports.py).
DEFAULT_PORT = 15443
PROJECT_DIR = Path(__file__).resolve().parents[1]


def build_parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fleet-sim", description="A simulated Gardener landscape on loopback.")
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--fleet",
        choices=FLEET_NAMES,
        default=env_str(env, "FLEET_SIM_FLEET", "demo"),
        help="the seed's fleet to play (default: demo; env FLEET_SIM_FLEET)",
    )
    which.add_argument(
        "--organizations",
        type=int,
        metavar="N",
        help="a fleet shaped like `scale` (five clusters each) with N organizations, e.g. 424 for 2,000 shoots",
    )
    which.add_argument(
        "--huge-shoot",
        action="store_true",
        help="serve one shoot at Kubernetes' limits (5,000 nodes, 150,000 pods) for memory benchmarks",
    )
    parser.add_argument("--seed", type=int, default=env_int(env, "FLEET_SIM_SEED", 0), help="fleet seed (default 0)")
    parser.add_argument("--host", default=env_str(env, "FLEET_SIM_HOST", "127.0.0.1"), help="listen address")
    parser.add_argument(
        "--port", type=int, default=env_int(env, "FLEET_SIM_PORT", DEFAULT_PORT, minimum=0), help="0 picks a free port"
    )
    parser.add_argument(
        "--latency",
        type=float,
        default=env_float(env, "FLEET_SIM_LATENCY_SECONDS", 0.0, minimum=0.0),
        help="seconds added to every API answer",
    )
    parser.add_argument(
        "--event-loop",
        choices=EVENT_LOOPS,
        default=event_loop_from_env(env),
        help="uvloop (default) or the standard asyncio loop",
    )
    parser.add_argument(
        "--gc-threshold",
        type=int,
        default=gc_threshold_from_env(env),
        help="net allocations between Python's first-generation collections (default 10000)",
    )
    parser.add_argument(
        "--hostile",
        action="store_true",
        help="hostile mode: the first serving shoots each play one hostile answer (sim/api/faults/hostile.py)",
    )
    parser.add_argument(
        "--monitoring-stack",
        choices=STACKS,
        default=env_str(env, "FLEET_SIM_MONITORING_STACK", GARDENER),
        help="what each shoot's Prometheus holds: `gardener` (a stock Gardener shoot Prometheus: nodes and"
        " kube-system only; the default) or `fuller` (a landscape's own kube-state-metrics: every namespace)",
    )
    parser.add_argument(
        "--state-dir",
        type=Path,
        default=Path(env_str(env, "FLEET_SIM_STATE_DIR", str(PROJECT_DIR / ".fleet" / "sim"))),
        help="where the garden kubeconfig, CA and control token are written (default .fleet/sim)",
    )
    return parser


async def serve(server: SimServer, *, hostile: bool = False) -> None:
    stop = stop_event()
    await server.start()
    print(f"fleet-sim: {server.url} ({len(server.sim.world.shoots)} shoots)", flush=True)  # noqa: T201
    print(f"garden kubeconfig: {server.garden_kubeconfig_path}", flush=True)  # noqa: T201
    if hostile:
        for case in server.control.hostile() + server.control.hostile_monitoring():
            print(f"hostile: {case['shoot']} answers {case['kind']} for {case['resource']}", flush=True)  # noqa: T201
    await stop.wait()
    await server.stop()


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        parser = build_parser(os.environ)
    except SettingsError as error:
        print(f"fleet-sim: {error}", file=sys.stderr)  # noqa: T201
        return 2
    args = parser.parse_args(argv)
    if args.gc_threshold < 1:
        parser.error(f"--gc-threshold {args.gc_threshold}: must be at least 1")
    settings = SimSettings(host=args.host, port=args.port, latency_seconds=args.latency)
    started = time.monotonic()
    if args.huge_shoot:
        fleet, profile = huge_fleet()
    elif args.organizations is not None:
        try:
            fleet, profile = fleet_of_organizations(args.organizations, args.seed), DEFAULT_PROFILE
        except ValueError as error:
            parser.error(str(error))
    else:
        fleet, profile = named_fleet(args.fleet, args.seed), DEFAULT_PROFILE
    server = SimServer(fleet, settings, profile=profile, state_dir=args.state_dir)
    server.sim.monitoring.start_with(args.monitoring_stack)
    if args.huge_shoot:
        # Built before listening, so a benchmark's first list does not pay for 150,000 records.
        for key in server.control.shoot_keys():
            server.control.object_counts(key)
    logger.info("fleet ready in %.1f s", time.monotonic() - started)
    set_gc_threshold(args.gc_threshold)
    try:
        eventloop.run(serve(server, hostile=args.hostile), event_loop=args.event_loop)
    except OSError as error:
        print(f"fleet-sim: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)  # noqa: T201
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
