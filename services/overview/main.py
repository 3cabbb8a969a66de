"""Entry point of `platform-public-api`: the anonymous platform overview (overview.v1).

The only module of the service that reads the environment (through `api_main`, which also sets up
logging and stops gracefully on SIGTERM or SIGINT, in-flight calls getting SHUTDOWN_GRACE_SECONDS).
Exit codes: 0 after a signal, 1 when the database's schema is older than this release needs, 2 for
unusable configuration.
"""

from __future__ import annotations

import sys

from services.common.serving.process import api_main
from services.overview.app import running_overview
from services.overview.settings import OverviewSettings

ENVIRONMENT = """\
environment:
  DATABASE_URL      PostgreSQL DSN as role fun_platform_public_api (default: the local demo database)
  HTTP_PORT         Connect, /livez, /readyz, /metrics (default 8080)
  GRPC_PORT         gRPC with reflection and grpc.health.v1 (default 9090)
  BIND_HOST         address both ports bind to (default 127.0.0.1)
  CONSOLE_ORIGINS   comma-separated browser origins CORS allows (default: none)
  CACHE_TTL_SECONDS     seconds one answer is shared, 1 to 60 (default 60)
  READ_TIMEOUT_SECONDS  seconds the shared database read may take (default 3)
  LOG_LEVEL         debug, info, warning, error (default info)
  LOG_FORMAT        json or text (default json; --log-text forces text)
  SHUTDOWN_GRACE_SECONDS  seconds in-flight calls get after SIGTERM (default 5)
  DATABASE_POOL_MIN, DATABASE_POOL_MAX, DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_CONNECT_TIMEOUT_SECONDS
docs/configuration.md describes each, and the old names still accepted for one release.
"""


def main(argv: list[str] | None = None) -> int:
    return api_main(
        argv,
        prog="platform-public-api",
        description="The anonymous platform overview (overview.v1) over Connect and gRPC.",
        epilog=ENVIRONMENT,
        settings_from_env=OverviewSettings.from_env,
        running=running_overview,
    )


if __name__ == "__main__":
    sys.exit(main())
