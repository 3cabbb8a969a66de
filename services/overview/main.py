"""Entry point of `platform-public-api`: the anonymous platform overview (overview.v1). (Filled in by its issue.)"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="platform-public-api", description="the anonymous platform overview (overview.v1)"
    )
    parser.parse_args(argv)
    parser.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
