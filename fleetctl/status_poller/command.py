"""`fleet status-poller`: write cluster shoot statuses from a garden until SIGINT/SIGTERM.

    fleet status-poller [--dsn DSN] [--garden-kubeconfig PATH] [--interval SECONDS]

`fleet demo` starts it as one of its processes, against the demo's database and its fleet-sim; by
hand it pairs with a `fleet-sim` and a database seeded with the same fleet and seed. Each option
defaults to an environment variable (STATUS_POLLER_*), then to the local database of `fleet db up`
and the garden kubeconfig of a `fleet-sim` started by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import yaml

from common.settings import SettingsError, env_float, env_str
from common.signals import stop_event
from fleetctl.local import LOCAL_ADMIN_DSN, PROJECT_DIR
from fleetctl.status_poller.poller import StatusPoller

DEFAULT_KUBECONFIG = PROJECT_DIR / ".fleet" / "sim" / "garden-kubeconfig.yaml"
DEFAULT_INTERVAL_SECONDS = 10.0
MIN_INTERVAL_SECONDS = 0.5


def _settings(args: argparse.Namespace) -> tuple[str, Path, float]:
    env = args.environ
    dsn = args.dsn or env.get("STATUS_POLLER_DSN") or LOCAL_ADMIN_DSN
    kubeconfig = args.garden_kubeconfig or Path(env_str(env, "STATUS_POLLER_KUBECONFIG", str(DEFAULT_KUBECONFIG)))
    if args.interval is not None:
        if args.interval < MIN_INTERVAL_SECONDS:
            raise SettingsError(f"--interval {args.interval}: must be at least {MIN_INTERVAL_SECONDS}")
        interval = float(args.interval)
    else:
        interval = env_float(
            env, "STATUS_POLLER_INTERVAL_SECONDS", DEFAULT_INTERVAL_SECONDS, minimum=MIN_INTERVAL_SECONDS
        )
    return dsn, kubeconfig, interval


async def _run(poller: StatusPoller) -> None:
    await poller.run(stop_event())


def _cmd_status_poller(args: argparse.Namespace) -> int:
    # A long-running process with a log file of its own: say when and who, as the other processes do.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s", force=True)
    try:
        dsn, kubeconfig_path, interval = _settings(args)
        kubeconfig: Any = yaml.safe_load(kubeconfig_path.read_text())
    except SettingsError as error:
        print(f"fleet status-poller: {error}", file=sys.stderr)  # noqa: T201
        return 2
    except OSError as error:
        print(f"fleet status-poller: cannot read the garden kubeconfig: {error}", file=sys.stderr)  # noqa: T201
        return 2
    asyncio.run(_run(StatusPoller(dsn, kubeconfig, interval_seconds=interval)))
    return 0


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subcommands.add_parser(
        "status-poller", help="play the provisioning side's status poller against a garden (the demo starts it)"
    )
    parser.add_argument(
        "--dsn", help="a superuser DSN (default: env STATUS_POLLER_DSN, else the local database of `fleet db up`)"
    )
    parser.add_argument(
        "--garden-kubeconfig",
        type=Path,
        help="the garden to list (default: env STATUS_POLLER_KUBECONFIG, else .fleet/sim/garden-kubeconfig.yaml)",
    )
    parser.add_argument(
        "--interval",
        type=float,
        help="seconds between two polls (default: env STATUS_POLLER_INTERVAL_SECONDS, else 10)",
    )
    parser.set_defaults(handler=_cmd_status_poller)
