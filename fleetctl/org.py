"""`fleet org list NAME` / `fleet org unlist NAME`: an operator lists an organization publicly or not.

The requirements leave `organizations.listed_publicly` to a platform operator, set when an organization asks.
This command is that operator's way to set it: it takes a required `--reason` and names who (the OS
user, or `--by`) and why to the trigger that records every change of the flag, whoever makes it, in the
append-only `tenant.organization_listing_changes`, in the same transaction as the flag; the staff API
shows the record (`GetOrganization`). The
system organization is refused before anything is written; so is a name with no live organization.
Asking for the state the organization is already in changes and records nothing.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import tuple_row

from common.clock import rfc3339
from common.database import load_queries
from fleetctl.audit_text import refusal
from fleetctl.local import LOCAL_ADMIN_DSN

_QUERIES = load_queries(Path(__file__).with_name("org.sql"))
REASON_MAX = 1000
BY_MAX = 255


class OrgCommandError(RuntimeError):
    """The change cannot be made; the message says why. Nothing was written."""


@dataclass(frozen=True, slots=True)
class ListingResult:
    """What one `fleet org list|unlist` did."""

    organization_id: UUID
    listed: bool
    changed: bool
    change_id: UUID | None = None
    when: datetime | None = None


def _checked_text(what: str, value: str, limit: int, *, multiline: bool) -> str:
    """The text stripped, or OrgCommandError: empty, too long, or a character fleetctl/audit_text.py refuses."""
    text = value.strip()
    if not text:
        raise OrgCommandError(f"{what} must not be empty")
    if len(text) > limit:
        raise OrgCommandError(f"{what} is {len(text)} characters long; at most {limit} are kept")
    why = refusal(text, multiline=multiline)
    if why:
        raise OrgCommandError(f"{what} {why}")
    return text


def set_listing(dsn: str, name: str, *, listed: bool, reason: str, by: str) -> ListingResult:
    """List (or unlist) the live organization `name`, recording `by` and `reason`. Raises OrgCommandError."""
    reason = _checked_text("--reason", reason, REASON_MAX, multiline=True)
    by = _checked_text("--by", by, BY_MAX, multiline=False)
    with psycopg.connect(dsn) as conn, conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
        cur.execute(_QUERIES["lock_live_organization"].sql, {"name": name})
        row: Any = cur.fetchone()
        if row is None:
            raise OrgCommandError(f"no live organization is named {name!r}")
        organization_id, was_listed, is_system = row
        if is_system:
            raise OrgCommandError(
                f"{name!r} is the system organization: it owns the platform's own clusters and is never listed"
            )
        if was_listed == listed:
            return ListingResult(organization_id, listed, changed=False)
        params = {"organization_id": organization_id, "listed": listed, "changed_by": by, "reason": reason}
        cur.execute(_QUERIES["name_the_change"].sql, params)
        cur.execute(_QUERIES["set_listed_publicly"].sql, params)
        cur.execute(_QUERIES["recorded_change"].sql, params)
        change: Any = cur.fetchone()
        if change is None:
            raise OrgCommandError("the change was not recorded (is fleet inventory's migration applied?)")
    return ListingResult(organization_id, listed, changed=True, change_id=change[0], when=change[1])


def _operator() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name for this uid (a bare container): --by is then required
        return ""


def _cmd_listing(args: argparse.Namespace) -> int:
    listed = args.org_command == "list"
    by = args.by if args.by is not None else _operator()
    try:
        if not by.strip():
            raise OrgCommandError("the operator's user name is unknown here: say who you are with --by")
        result = set_listing(args.dsn, args.name, listed=listed, reason=args.reason, by=by)
    except (OrgCommandError, psycopg.Error) as e:
        sys.stderr.write(f"fleet org {args.org_command}: {str(e).strip()}\n")
        return 1
    state = "listed publicly" if listed else "not listed publicly"
    if not result.changed:
        sys.stdout.write(f"{args.name} is already {state}; nothing changed, nothing recorded\n")
        return 0
    assert result.when is not None
    sys.stdout.write(
        f"{args.name} is now {state} (change {result.change_id}, by {by.strip()}, at {rfc3339(result.when)})\n"
    )
    return 0


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subcommands.add_parser("org", help="list an organization in the public overview, or unlist it")
    org_commands = parser.add_subparsers(dest="org_command", metavar="ORG_COMMAND", required=True)
    for name, help_text in (
        ("list", "show the organization in the public overview (it asked to be listed)"),
        ("unlist", "leave the organization out of the public overview"),
    ):
        sub = org_commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("name", help="the organization's name (its DNS label)")
        sub.add_argument("--reason", required=True, help="why, as it will be kept in the audit record")
        sub.add_argument("--by", default=None, help="who asks for the change (default: the OS user)")
        sub.add_argument(
            "--dsn", default=LOCAL_ADMIN_DSN, help="superuser DSN (default: the local database of `fleet db up`)"
        )
        sub.set_defaults(handler=_cmd_listing)
