"""Entry point of `platform-admin-api`: the staff fleet view (fleet.v1). (Filled in by its issue.)"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="platform-admin-api", description="the staff fleet view (fleet.v1)")
    parser.parse_args(argv)
    parser.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
