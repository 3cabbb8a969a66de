"""The demo's secrets (JWT secret, staff token) are written readable by their owner only."""

from __future__ import annotations

import stat
from pathlib import Path

from fleetctl.demo.system import write_private


def test_a_new_secret_file_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "staff-token"
    write_private(path, "secret\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == "secret\n"


def test_an_existing_readable_file_is_narrowed_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "jwt-secret"
    path.write_text("an older, longer secret\n")
    path.chmod(0o644)
    write_private(path, "new\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == "new\n"
