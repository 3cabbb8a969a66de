"""`fleet demo`: the whole system on embedded defaults (filled in by the demo issue)."""

from __future__ import annotations

import argparse


def register(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    subcommands.add_parser("demo", help="the whole system on embedded defaults (filled in by the demo issue)")
