"""Entry point of `platform-public-api`: the anonymous platform overview (overview.v1, DESIGN.md §6).

The only module of the service that reads the environment: it builds the settings once, sets up
JSON logging, serves through `app.running_overview()` and stops gracefully on SIGTERM or SIGINT
(in-flight calls get SHUTDOWN_GRACE seconds). Exit codes: 0 after a signal, 1 when the database's
schema is older than this release needs, 2 for unusable configuration.
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
from services.overview.app import running_overview
from services.overview.settings import OverviewSettings

logger = logging.getLogger(__name__)

ENVIRONMENT = """\
environment:
  DATABASE_URL      PostgreSQL DSN as role fun_platform_public_api (default: the local demo database)
  HTTP_PORT         Connect, /livez, /readyz, /metrics (default 8080)
  GRPC_PORT         gRPC with reflection and grpc.health.v1 (default 9090)
  BIND_HOST         address both ports bind to (default 127.0.0.1)
  CONSOLE_ORIGINS   comma-separated browser origins CORS allows (default: none)
  CACHE_TTL         seconds one answer is shared, 1 to 60 (default 60)
  READ_TIMEOUT      seconds the shared database read may take (default 3)
  LOG_LEVEL         debug, info, warning, error (default info)
  LOG_FORMAT        json or text (default json)
  SHUTDOWN_GRACE    seconds in-flight calls get after SIGTERM (default 5)
  DATABASE_POOL_MIN, DATABASE_POOL_MAX, DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_CONNECT_TIMEOUT
"""


async def serve(settings: OverviewSettings) -> int:
    """Serve until SIGTERM or SIGINT; the exit code."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with running_overview(settings):
            await stop.wait()
            logger.info("stopping on signal")
    except SchemaTooOld as e:
        logger.error("refusing to start", extra={"error": str(e)})
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="platform-public-api",
        description="The anonymous platform overview (overview.v1) over Connect and gRPC.",
        epilog=ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.parse_args(argv)
    try:
        settings = OverviewSettings.from_env(os.environ)
    except SettingsError as e:
        sys.stderr.write(f"platform-public-api: {e}\n")
        return 2
    configure_logging(settings.logging.level, json=settings.logging.json)
    # psycopg's pool logs every connection request at INFO; its warnings (lost connections) are enough.
    logging.getLogger("psycopg.pool").setLevel(max(logging.WARNING, logging.getLogger().level))
    return asyncio.run(serve(settings))


if __name__ == "__main__":
    sys.exit(main())
