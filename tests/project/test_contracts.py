"""The contract checks CI runs are real: a breaking proto change and a hand-edited gen/ both fail."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUF = ROOT / ".venv" / "bin" / "buf"
FLEET_PROTO = Path("proto/fundament/fleet/v1/fleet.proto")


def copy_contract_tree(target: Path) -> Path:
    """The files the proto checks read, copied so a test can break them without touching the repo."""
    for name in ("proto", "gen", "tools", "scripts"):
        shutil.copytree(ROOT / name, target / name)
    for name in ("buf.yaml", "buf.gen.yaml"):
        shutil.copy(ROOT / name, target / name)
    return target


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{ROOT / '.venv' / 'bin'}:/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120, check=False, env=env)


def test_buf_lint_is_clean() -> None:
    result = run(ROOT, str(BUF), "lint")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_contract_is_not_broken_against_the_baseline() -> None:
    result = run(ROOT, str(BUF), "breaking", "--against", "proto/baseline.binpb")
    assert result.returncode == 0, result.stdout + result.stderr


def test_changing_a_field_number_fails_the_breaking_check(tmp_path: Path) -> None:
    tree = copy_contract_tree(tmp_path)
    proto = tree / FLEET_PROTO
    text = proto.read_text()
    changed = re.sub(r"string organization_name = 40;", "string organization_name = 45;", text, count=1)
    assert changed != text
    proto.write_text(changed)
    result = run(tree, str(BUF), "breaking", "--against", "proto/baseline.binpb")
    assert result.returncode != 0
    assert "organization_name" in result.stdout + result.stderr


def test_generated_code_is_current() -> None:
    result = run(ROOT, "bash", "scripts/check-gen")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("victim", ["fleet/v1/fleet_pb2.py", "overview/v1/overview_connect.py"])
def test_hand_editing_gen_fails_the_generated_code_check(tmp_path: Path, victim: str) -> None:
    tree = copy_contract_tree(tmp_path)
    path = tree / "gen" / "fundament" / victim
    path.write_text(path.read_text() + "\n# a hand edit\n")
    result = run(tree, "bash", "scripts/check-gen")
    assert result.returncode != 0
    assert "not what the protos produce" in result.stderr
