"""What both APIs do about the database before and while they serve: the schema check and readiness.

An API refuses to start against a database whose schema is older than it needs (`SchemaTooOld`,
which `main.py` turns into exit code 1), but an unreachable database only delays readiness: the
process serves and answers UNAVAILABLE until the database answers, as an orchestrator expects.
"""

from __future__ import annotations

import logging

from psycopg_pool import AsyncConnectionPool

from common.database import SCHEMA_VERSION, require_schema
from common.errors import SchemaTooOld
from common.health import Readiness
from common.text import truncate

logger = logging.getLogger(__name__)


async def check_schema_at_start(pool: AsyncConnectionPool, needed: int = SCHEMA_VERSION) -> None:
    """Raise `SchemaTooOld` if the database answers with an old schema; an unreachable one only delays readiness."""
    try:
        version = await require_schema(pool, needed)
    except SchemaTooOld:
        raise
    except Exception as e:  # unreachable or refusing: serve anyway, /readyz says "not ready" until it answers
        logger.warning(
            "database not reachable at start", extra={"cause": type(e).__name__, "error": truncate(str(e), 300)}
        )
        return
    logger.info("database schema checked", extra={"schema_version": version})


def schema_readiness(pool: AsyncConnectionPool, needed: int = SCHEMA_VERSION) -> Readiness:
    """Ready once the database answered once with a schema new enough (then it stays ready)."""

    async def database_answered() -> bool:
        try:
            await require_schema(pool, needed)
        except SchemaTooOld as e:
            logger.error("database schema too old", extra={"error": str(e)})
            return False
        return True

    return Readiness(database_answered)
