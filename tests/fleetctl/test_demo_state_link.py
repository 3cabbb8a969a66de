"""`.fleet/demo` in the checkout names the demo's files even when they live in a temp folder."""

from __future__ import annotations

from pathlib import Path

from fleetctl.demo.command import link_state_dir


def test_a_state_dir_elsewhere_gets_a_link_in_the_checkout(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "runtime" / "demo"
    project.mkdir()
    elsewhere.mkdir(parents=True)
    (elsewhere / "staff-token").write_text("t")
    link = link_state_dir(elsewhere, project)
    assert link == project / ".fleet" / "demo" and link.is_symlink()
    assert (link / "staff-token").read_text() == "t"
    # A later start with the files somewhere else again moves the link.
    other = tmp_path / "other" / "demo"
    other.mkdir(parents=True)
    assert link_state_dir(other, project).resolve() == other.resolve()


def test_a_state_dir_in_the_checkout_or_a_real_folder_is_left_alone(tmp_path: Path) -> None:
    project = tmp_path / "project"
    inside = project / ".fleet" / "demo"
    inside.mkdir(parents=True)
    assert link_state_dir(inside, project) == inside and not inside.is_symlink()
    elsewhere = tmp_path / "runtime" / "demo"
    elsewhere.mkdir(parents=True)
    link_state_dir(elsewhere, project)
    assert inside.is_dir() and not inside.is_symlink()
