"""The suite's scheduling names real scopes: a long file renamed away would quietly lose its head start."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.parallel import APART, LONGEST_FIRST, ONE_WORKER

ROOT = Path(__file__).resolve().parents[2]


def test_every_scope_handed_out_first_exists() -> None:
    for scope in (*LONGEST_FIRST, *ONE_WORKER, *APART):
        path = ROOT / scope
        assert path.is_dir() if scope.endswith("/") else path.is_file(), f"{scope} names no room or test file"
