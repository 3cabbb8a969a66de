"""Entry point of `platform-admin-api`: the staff fleet view (fleet.v1) on Connect and gRPC.

The only module of the service that reads the environment: it builds `FleetSettings` from
`os.environ`, configures logging and runs `running_fleet_api()` (services/fleet/app.py) until SIGTERM
or SIGINT, then shuts down gracefully. Exit codes: 0 after a clean stop, 1 when the database schema
is older than this release needs, 2 for a bad configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys

from services.common.logs import configure_logging
from services.common.settings import SettingsError
from services.common.startup import SchemaTooOld
from services.fleet.app import running_fleet_api
from services.fleet.settings import FleetSettings

logger = logging.getLogger(__name__)


async def serve(settings: FleetSettings) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with running_fleet_api(settings):
        await stop.wait()
        logger.info("stopping")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="platform-admin-api",
        description="The staff fleet view (fleet.v1) over Connect and gRPC; configured by environment variables.",
    )
    parser.add_argument("--log-text", action="store_true", help="plain text logs instead of JSON (for a terminal)")
    args = parser.parse_args(argv)
    try:
        settings = FleetSettings.from_env(os.environ)
    except SettingsError as e:
        sys.stderr.write(f"platform-admin-api: {e}\n")
        return 2
    configure_logging(settings.log_level, json=not args.log_text)
    try:
        asyncio.run(serve(settings))
    except SchemaTooOld as e:
        logger.error("refusing to start: %s", e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
