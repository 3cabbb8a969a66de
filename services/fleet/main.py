"""Entry point of `platform-admin-api`: the staff fleet view (fleet.v1) on Connect and gRPC.

The only module of the service that reads the environment (through `api_main`, which also sets up
logging and stops gracefully on SIGTERM or SIGINT, in-flight calls getting SHUTDOWN_GRACE_SECONDS).
Exit codes: 0 after a clean stop, 1 when the database schema is older than this release needs, 2 for
a bad configuration.
"""

from __future__ import annotations

import sys

from services.common.serving.process import api_main
from services.fleet.app import running_fleet_api
from services.fleet.settings import FleetSettings

ENVIRONMENT = """\
environment:
  DATABASE_URL      PostgreSQL DSN as role fun_platform_admin_api (default: the local demo database)
  JWT_SECRET        the platform's HS256 secret, at least 32 bytes (or JWT_SECRET_FILE; required)
  HTTP_PORT         Connect, /livez, /readyz, /metrics (default 8081)
  GRPC_PORT         gRPC with reflection and grpc.health.v1 (default 9091)
  BIND_HOST         address both ports bind to (default 127.0.0.1)
  DCIM_ORIGINS      comma-separated DCIM origins CORS allows, with credentials (default: none)
  LOG_LEVEL         debug, info, warning, error (default info)
  LOG_FORMAT        json or text (default json; --log-text forces text)
  SHUTDOWN_GRACE_SECONDS  seconds in-flight calls get after SIGTERM (default 5)
  JWT_LEEWAY_SECONDS, SUMMARY_CACHE_SECONDS, SUMMARY_READ_TIMEOUT_SECONDS,
  DATABASE_POOL_MIN, DATABASE_POOL_MAX, DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_CONNECT_TIMEOUT_SECONDS
docs/configuration.md describes each, and the old names still accepted for one release.
"""


def main(argv: list[str] | None = None) -> int:
    return api_main(
        argv,
        prog="platform-admin-api",
        description="The staff fleet view (fleet.v1) over Connect and gRPC; configured by environment variables.",
        epilog=ENVIRONMENT,
        settings_from_env=FleetSettings.from_env,
        running=running_fleet_api,
    )


if __name__ == "__main__":
    sys.exit(main())
