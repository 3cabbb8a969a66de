"""Entry point of `fleet`: the operator's command for the database, tokens, the demo and its parts.

Each area is one module with a `register(subcommands)` function that adds its subcommand and sets
`handler` on it; COMMANDS below is the whole registry, kept explicit rather than filled by imports.
Only the chosen command's module is imported (`fleet org ...` never loads the demo or the
simulator's client); the others show in `fleet --help` from their name and summary here alone.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str
    module: str
    """The module whose `register(subcommands)` adds the command."""
    summary: str
    """Its line in `fleet --help`: the same words the module's own parser says."""


COMMANDS: tuple[Command, ...] = (
    Command("db", "fleetctl.db", "the local database, roles, migrations, seed and status"),
    Command("org", "fleetctl.org", "list an organization in the public overview, or unlist it"),
    Command("token", "fleetctl.token", "mint a DCIM-style token for platform-admin-api (local use)"),
    Command(
        "usage",
        "fleetctl.usage.command",
        "the ledger added up per organization, cluster or type; a table or FOCUS-style CSV",
    ),
    Command("demo", "fleetctl.demo.command", "run the whole system on embedded defaults until Ctrl-C"),
    Command(
        "status-poller",
        "fleetctl.status_poller.command",
        "play the provisioning side's status poller against a garden (the demo starts it)",
    ),
)


def register(command: Command, subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Import the command's module and let it add its subcommand."""
    add: Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]
    try:
        add = importlib.import_module(command.module).register
    except ModuleNotFoundError as e:
        # The operator's tools image leaves out the demo and the simulator (docs/operations.md).
        if e.name is None or not (command.module.startswith(e.name) or e.name.partition(".")[0] == "sim"):
            raise
        raise SystemExit(f"fleet {command.name} is not part of this installation (no {e.name})") from None
    add(subcommands)


def chosen(argv: Sequence[str]) -> str | None:
    """The command named on the line: `fleet` has no options of its own but -h, so the first word."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command's module loaded, or, with `only`, that command's alone."""
    parser = argparse.ArgumentParser(prog="fleet", description="Operate fleet inventory: database, tokens, demo.")
    # Subcommands read their environment from here (`args.environ`): only main.py touches os.environ.
    parser.set_defaults(environ=os.environ)
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        if only is None or command.name == only:
            register(command, subcommands)
        else:
            subcommands.add_parser(command.name, help=command.summary)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(only=chosen(words) or "")
    args = parser.parse_args(words)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
