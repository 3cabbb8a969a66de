"""Entry point of `cluster-worker`: the inventory collector and reconcile loop. (Filled in by its issue.)"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cluster-worker", description="the inventory collector and reconcile loop")
    parser.parse_args(argv)
    parser.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
