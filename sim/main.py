"""Entry point of `fleet-sim`: a simulated Gardener landscape. (Filled in by its issue.)"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fleet-sim", description="a simulated Gardener landscape")
    parser.parse_args(argv)
    parser.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
