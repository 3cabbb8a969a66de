"""Roles and migrations: the only code that changes the database's shape.

The database holds two parts. The platform model (Fundament's tenant tables) belongs to Fundament,
whose own migrations create it in production; the demo and the tests stand in for it with
`db/fundament/tenant_model.sql`, applied once by `apply_platform_model()`. Fleet inventory's own
objects are the numbered files `db/migrations/NNNN_name.sql` (a baseline, then forward-only), which a
platform team applies onto the platform's database with `migrate()`.

Roles are cluster-wide, so they are created by `apply_roles()` in a step of their own (idempotent,
`db/roles.sql`). Migrations are applied in order, each once, each in its own transaction, under a
session advisory lock (two migrators at once take turns; the second finds nothing to do), recorded in
`fleet_meta.schema_migrations` with a checksum of their statements: a file whose statements changed
after it was applied is refused, while its comments may be reworded. Objects are created as
`fun_owner`, so that role owns everything. After each file the version is also written into the
comment of schema `fleet_meta`, where every role can read it without any table grant
(`common.database.schema_version`).
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

logger = logging.getLogger(__name__)

DB_DIR = Path(__file__).resolve().parent
MIGRATIONS_DIR = DB_DIR / "migrations"
PLATFORM_MODEL_FILE = DB_DIR / "fundament" / "tenant_model.sql"
ROLES_FILE = DB_DIR / "roles.sql"
DATABASE_GRANTS_FILE = DB_DIR / "database_grants.sql"

# pg_advisory_lock key: the bytes of "fleetmig" read as a signed 64-bit integer.
ADVISORY_LOCK_KEY = int.from_bytes(b"fleetmig", "big", signed=True)
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class MigrationError(RuntimeError):
    """The migrations on disk or in the database are not in a state this code can continue from."""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    path: Path

    @property
    def checksum(self) -> str:
        """SHA-256 of the statements: every line but blank ones and whole-line `--` comments."""
        return statements_checksum(self.path.read_text())


def statements_checksum(text: str) -> str:
    lines = (line.rstrip() for line in text.splitlines())
    statements = "\n".join(line for line in lines if line and not line.lstrip().startswith("--"))
    return hashlib.sha256(statements.encode()).hexdigest()


def available() -> list[Migration]:
    """Every migration file, in version order; gaps and duplicates are an error."""
    found: list[Migration] = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        match = _FILE.match(path.name)
        if not match:
            raise MigrationError(f"{path.name}: migration files are named NNNN_name.sql")
        found.append(Migration(int(match.group(1)), match.group(2), path))
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise MigrationError(f"{migration.path.name}: expected version {expected}")
    return found


def schema_digest() -> str:
    """A digest of everything that shapes a fresh database: the platform model's stand-in and every
    migration (caches of built databases are keyed by it)."""
    parts = [PLATFORM_MODEL_FILE.read_bytes(), *(m.path.read_bytes() for m in available())]
    return hashlib.sha256(b"".join(parts)).hexdigest()


def latest_version() -> int:
    migrations = available()
    return migrations[-1].version if migrations else 0


def apply_roles(conn: psycopg.Connection[Any]) -> None:
    """Create the cluster-wide roles if missing (safe to run any number of times)."""
    conn.execute(ROLES_FILE.read_text())


def apply_database_grants(conn: psycopg.Connection[Any]) -> None:
    """The database-level privileges (`db/database_grants.sql`) of the database `conn` is connected to.

    Run by every `migrate()`, and by whoever creates a database from a migrated template (the
    database's own ACL does not travel with a template's contents). Needs the owner or a superuser.
    """
    conn.execute(DATABASE_GRANTS_FILE.read_text())


def fresh_database(superuser_dsn: str, name: str) -> str:
    """The roles present and database `name` created anew (dropped first if it exists, sessions and
    all), with the platform model's stand-in and every migration; returns its superuser DSN."""
    with psycopg.connect(superuser_dsn, autocommit=True) as conn:
        apply_roles(conn)
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = psycopg.conninfo.make_conninfo(superuser_dsn, dbname=name)
    apply_platform_model(dsn)
    migrate(dsn)
    return dsn


def has_platform_model(conn: psycopg.Connection[Any]) -> bool:
    """Whether the platform's tenant tables exist (Fundament's, or the stand-in's)."""
    row = conn.execute("SELECT to_regclass('tenant.organizations') IS NOT NULL").fetchone()
    return bool(row and row[0])


def apply_platform_model(dsn: str) -> bool:
    """Build the stand-in for Fundament's tenant tables unless they exist; whether it was built now.

    For the demo and the tests only: in production Fundament's own migrations own these tables.
    """
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", [ADVISORY_LOCK_KEY])
        try:
            if has_platform_model(conn):
                return False
            with conn.transaction():
                dbname = conn.info.dbname
                conn.execute(sql.SQL("GRANT CREATE ON DATABASE {} TO fun_owner").format(sql.Identifier(dbname)))
                conn.execute("SET LOCAL ROLE fun_owner")
                conn.execute(PLATFORM_MODEL_FILE.read_text())
            logger.info("built the platform model's stand-in (%s)", PLATFORM_MODEL_FILE.name)
            return True
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", [ADVISORY_LOCK_KEY])


def applied_versions(conn: psycopg.Connection[Any]) -> dict[int, str]:
    """Applied versions with their checksums; empty before the first migration."""
    exists = conn.execute("SELECT to_regclass('fleet_meta.schema_migrations') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return {}
    rows = conn.execute("SELECT version, checksum FROM fleet_meta.schema_migrations").fetchall()
    return {int(version): str(checksum) for version, checksum in rows}


def migrate(dsn: str, *, target: int | None = None) -> list[int]:
    """Apply fleet inventory's pending migrations up to `target` (default: all) onto a database that
    holds the platform model; return the versions applied now."""
    applied_now: list[int] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", [ADVISORY_LOCK_KEY])
        try:
            with conn.transaction():
                conn.execute("CREATE SCHEMA IF NOT EXISTS fleet_meta AUTHORIZATION fun_owner")
                conn.execute(
                    """
                    CREATE TABLE IF NOT EXISTS fleet_meta.schema_migrations (
                        version integer PRIMARY KEY,
                        name text NOT NULL,
                        checksum text NOT NULL,
                        applied timestamptz NOT NULL DEFAULT now()
                    )
                    """
                )
                conn.execute("ALTER TABLE fleet_meta.schema_migrations OWNER TO fun_owner")
                dbname = conn.info.dbname
                conn.execute(sql.SQL("GRANT CREATE ON DATABASE {} TO fun_owner").format(sql.Identifier(dbname)))
                apply_database_grants(conn)
            done = applied_versions(conn)
            for migration in available():
                if target is not None and migration.version > target:
                    break
                if migration.version in done:
                    if done[migration.version] != migration.checksum:
                        raise MigrationError(
                            f"{migration.path.name} changed after it was applied; add a new migration instead"
                        )
                    continue
                with conn.transaction():
                    conn.execute("SET LOCAL lock_timeout = '10s'")
                    conn.execute("SET LOCAL ROLE fun_owner")
                    try:
                        conn.execute(migration.path.read_text())
                    except psycopg.errors.UndefinedObject as refused:
                        # The baseline's check of the platform model it applies onto: name what is missing.
                        raise MigrationError(
                            f"{migration.path.name}: {refused.diag.message_primary}. fleet inventory's migrations "
                            "apply onto Fundament's database; for a local one, `fleet db migrate --platform-model` "
                            "builds a stand-in first"
                        ) from None
                    conn.execute(
                        "INSERT INTO fleet_meta.schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                        [migration.version, migration.name, migration.checksum],
                    )
                    conn.execute(
                        sql.SQL("COMMENT ON SCHEMA fleet_meta IS {}").format(
                            sql.Literal(f"fleet inventory, schema version {migration.version}")
                        )
                    )
                logger.info("applied migration %s", migration.path.name)
                applied_now.append(migration.version)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", [ADVISORY_LOCK_KEY])
    return applied_now
