"""The embedded server run as root: the data directory goes to `nobody`, a shared parent stays as it was."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from db.embedded import NOBODY_UID, EmbeddedPostgres, runtime_root
from tests.fixtures.postgres import PROJECT

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the server changes owners only when run as root")


@pytest.fixture
def parent() -> Iterator[Path]:
    path = runtime_root(PROJECT) / f"embedded-parent-{os.getpid()}"
    path.mkdir(parents=True)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_shared_parent_such_as_tmp_keeps_its_owner(parent: Path) -> None:
    parent.chmod(0o1777)
    EmbeddedPostgres(parent / "pg", fast=True).init()
    assert (parent / "pg" / "PG_VERSION").exists()
    assert parent.stat().st_uid == 0, "a directory others share must not be handed to nobody"
    assert (parent / "pg").stat().st_uid == NOBODY_UID


def test_a_parent_nobody_cannot_enter_is_handed_over(parent: Path) -> None:
    parent.chmod(0o700)
    EmbeddedPostgres(parent / "pg", fast=True).init()
    assert (parent / "pg" / "PG_VERSION").exists()
    assert parent.stat().st_uid == NOBODY_UID
