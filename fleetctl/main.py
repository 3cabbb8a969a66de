"""Entry point of `fleet`: the operator's command for the database, tokens, the demo and its parts.

Each area is one module with a `register(subcommands)` function that adds its subcommand and sets
`handler` on it; the list below is the whole registry, kept explicit rather than filled by imports.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable

from fleetctl import db, org, token
from fleetctl.demo import command as demo
from fleetctl.status_poller import command as status_poller

Register = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

COMMANDS: tuple[Register, ...] = (
    db.register,
    org.register,
    token.register,
    demo.register,
    status_poller.register,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fleet", description="Operate fleet inventory: database, tokens, demo.")
    # Subcommands read their environment from here (`args.environ`): only main.py touches os.environ.
    parser.set_defaults(environ=os.environ)
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in COMMANDS:
        register(subcommands)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
