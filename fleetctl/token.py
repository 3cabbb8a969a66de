"""`fleet token`: DCIM-style tokens for local use (filled in by the staff API issue)."""

from __future__ import annotations

import argparse


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    subcommands.add_parser("token", help="DCIM-style tokens for local use (filled in by the staff API issue)")
