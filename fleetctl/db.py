"""`fleet db`: the local database server, roles, migrations, the fleet seed and the schema status.

`up`/`down` run the embedded PostgreSQL of the demo (data in `.fleet/pg`, port
`LOCAL_DATABASE_PORT`, database `fleet`); every other subcommand works on any server through
`--dsn`, a superuser DSN that defaults to `MIGRATION_DATABASE_URL` when it is set (so a deployment's
migration job keeps the password out of its command line) and to that local database otherwise.
The functions below the argument parsing are plain and reusable (`fleet demo` calls them), and
print nothing themselves.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from common.settings import LOCAL_DATABASE_NAME, LOCAL_DATABASE_PORT, env_str
from db.embedded import EmbeddedPostgres, EmbeddedPostgresError, runtime_root
from db.migrate import MigrationError, applied_versions, apply_platform_model, apply_roles, available, migrate
from db.seed.write import SeedError, WrittenCounts, analyze, write_parts
from fleet_description.generate import SIZES, iter_parts
from fleetctl.local import LOCAL_ADMIN_DSN, PROJECT_DIR

logger = logging.getLogger(__name__)

ROLES = ("fun_owner", "fun_platform_public_api", "fun_platform_admin_api", "fun_cluster_worker", "fun_fundament_api")


class DbCommandError(RuntimeError):
    """A `fleet db` step cannot be done; the message says what to do instead."""


def local_server(data_dir: Path | None = None, port: int = LOCAL_DATABASE_PORT) -> EmbeddedPostgres:
    """The demo's embedded server (not started)."""
    return EmbeddedPostgres(data_dir or runtime_root(PROJECT_DIR) / "pg", port=port)


def up(server: EmbeddedPostgres, database: str = LOCAL_DATABASE_NAME) -> str:
    """Start `server` if needed and create `database` if missing; return the database's superuser DSN."""
    try:
        server.start()
    except EmbeddedPostgresError as e:
        raise DbCommandError(f"the local database server did not start: {e}") from None
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_catalog.pg_database WHERE datname = %s", [database]).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    return server.dsn_for(database)


def down(server: EmbeddedPostgres, *, remove: bool = False) -> None:
    """Stop `server`; with `remove`, delete its data as well."""
    if remove:
        server.destroy()
    else:
        server.stop()


def connect(dsn: str, *, autocommit: bool = True) -> psycopg.Connection[Any]:
    """A connection to `dsn`, or DbCommandError naming the DSN and the usual fix."""
    try:
        return psycopg.connect(dsn, autocommit=autocommit, connect_timeout=5)
    except psycopg.OperationalError as e:
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DbCommandError(f"cannot connect to {dsn}: {first_line} (is `fleet db up` running?)") from None


def missing_roles(dsn: str) -> list[str]:
    with connect(dsn) as conn:
        rows = conn.execute("SELECT rolname FROM pg_catalog.pg_roles WHERE rolname = ANY(%s)", [list(ROLES)]).fetchall()
    return sorted(set(ROLES) - {str(row[0]) for row in rows})


@dataclass(frozen=True, slots=True)
class SchemaStatus:
    applied: list[int]
    pending: list[str]  # file names

    @property
    def version(self) -> int:
        return max(self.applied, default=0)


def status(dsn: str) -> SchemaStatus:
    """Which migrations the database at `dsn` has, and which files are still to apply."""
    with connect(dsn) as conn:
        done = applied_versions(conn)
    return SchemaStatus(sorted(done), [m.path.name for m in available() if m.version not in done])


def seed(dsn: str, size: str, seed_value: int) -> WrittenCounts:
    """Write the fleet of `size` from `seed_value` (streamed), then refresh the planner's statistics."""
    with connect(dsn, autocommit=False) as conn:
        counts = write_parts(conn, iter_parts(size, seed_value))
    with connect(dsn) as conn:
        analyze(conn)
    return counts


# --- the command line ----------------------------------------------------------------------------------


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def _cmd_up(args: argparse.Namespace) -> int:
    server = local_server(args.data_dir, args.port)
    dsn = up(server)
    _say(f"database running, data in {server.data_dir}")
    _say(dsn)
    return 0


def _cmd_down(args: argparse.Namespace) -> int:
    server = local_server(args.data_dir, args.port)
    down(server, remove=args.remove)
    _say("database removed" if args.remove else "database stopped")
    return 0


def _cmd_roles(args: argparse.Namespace) -> int:
    with connect(args.dsn) as conn:
        apply_roles(conn)
    _say(f"roles present: {', '.join(ROLES)}")
    return 0


def _cmd_migrate(args: argparse.Namespace) -> int:
    missing = missing_roles(args.dsn)
    if missing:
        raise DbCommandError(f"roles missing: {', '.join(missing)}; run `fleet db roles` first")
    if args.platform_model:
        built = apply_platform_model(args.dsn)
        _say("platform model (the stand-in for Fundament's tenant tables): " + ("built" if built else "present"))
    applied = migrate(args.dsn, target=args.target)
    now = status(args.dsn)
    _say(
        f"fleet inventory's migrations: applied {', '.join(map(str, applied)) or 'nothing'}; "
        f"schema version {now.version}"
    )
    return 0


def _cmd_seed(args: argparse.Namespace) -> int:
    now = status(args.dsn)
    if now.pending:
        raise DbCommandError(f"migrations pending ({', '.join(now.pending)}); run `fleet db migrate` first")
    started = time.monotonic()
    counts = seed(args.dsn, args.size, args.seed)
    _say(
        f"seeded the {args.size} fleet (seed {args.seed}) in {time.monotonic() - started:.1f} s: "
        f"{counts.organizations} organizations, {counts.clusters} clusters, {counts.node_pools} node pools, "
        f"{counts.projects} projects, {counts.namespaces} namespaces"
    )
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    now = status(args.dsn)
    _say(f"schema version {now.version} (applied: {', '.join(map(str, now.applied)) or 'none'})")
    _say(f"pending: {', '.join(now.pending) or 'none'}")
    return 1 if now.pending else 0


Handler = Callable[[argparse.Namespace], int]


def _guarded(handler: Handler) -> Handler:
    """Turn the expected failures into one clear line on stderr and exit code 1."""

    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except (DbCommandError, MigrationError, SeedError, EmbeddedPostgresError) as e:
            sys.stderr.write(f"fleet db {args.db_command}: {e}\n")
            return 1

    return run


def _seed_size(text: str) -> str:
    if text not in SIZES:
        raise argparse.ArgumentTypeError(f"{text!r}: expected one of {', '.join(SIZES)}")
    return text


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subcommands.add_parser("db", help="the local database, roles, migrations, seed and status")
    db_commands = parser.add_subparsers(dest="db_command", metavar="DB_COMMAND", required=True)

    def add(name: str, help_text: str, handler: Handler, *, dsn: bool = True) -> argparse.ArgumentParser:
        sub = db_commands.add_parser(name, help=help_text, description=help_text)
        if dsn:
            sub.add_argument(
                "--dsn",
                default=env_str(os.environ, "MIGRATION_DATABASE_URL", LOCAL_ADMIN_DSN),
                help="superuser DSN (default: $MIGRATION_DATABASE_URL, else the local database of `fleet db up`)",
            )
        sub.set_defaults(handler=_guarded(handler))
        return sub

    for name, help_text, handler in (
        ("up", "start the local database server and create database `fleet`; prints its DSN", _cmd_up),
        ("down", "stop the local database server", _cmd_down),
    ):
        sub = add(name, help_text, handler, dsn=False)
        sub.add_argument("--data-dir", type=Path, default=None, help="data directory (default: .fleet/pg)")
        sub.add_argument("--port", type=int, default=LOCAL_DATABASE_PORT, help=f"port (default {LOCAL_DATABASE_PORT})")
        if name == "down":
            sub.add_argument("--remove", action="store_true", help="also delete the data directory")
    add("roles", "create the cluster-wide roles (idempotent)", _cmd_roles)
    migrate_parser = add(
        "migrate",
        "apply fleet inventory's pending migrations onto the platform's database (roles must exist)",
        _cmd_migrate,
    )
    migrate_parser.add_argument("--target", type=int, default=None, help="stop after this version")
    migrate_parser.add_argument(
        "--platform-model",
        action="store_true",
        help="first build the stand-in for Fundament's tenant tables where they are missing (local databases only)",
    )
    seed_parser = add("seed", "write a generated fleet into an empty, migrated database", _cmd_seed)
    seed_parser.add_argument("--size", type=_seed_size, default="demo", help=f"one of {', '.join(SIZES)}")
    seed_parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    add("status", "show the applied schema version and pending migrations (exit 1 if any)", _cmd_status)
