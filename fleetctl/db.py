"""`fleet db`: database tasks (filled in by the database issue)."""

from __future__ import annotations

import argparse


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    subcommands.add_parser("db", help="database tasks (filled in by the database issue)")
