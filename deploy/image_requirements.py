"""The requirements each image target installs: its dependency group of pyproject.toml (names only), or for
the operator's tools image the project's dependencies without extras. Versions and hashes come from
deploy/images.lock alone: the build downloads exactly the locked wheels, checked against their hashes,
and installs these names from them with no index.

    python image_requirements.py public-api > public-api.txt

Self-contained (deploy/Dockerfile's build stage runs it with nothing but pyproject.toml beside it);
deploy/images (the registry-free build) reads the same lists through `requirements()`.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

TARGETS = ("public-api", "admin-api", "worker", "operator")


def distribution_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def group(target: str) -> str | None:
    """The dependency group naming the target's distributions; None for the operator's whole dependencies."""
    return None if target == "operator" else f"image-{target}"


def requirements(target: str, pyproject: Path) -> list[str]:
    """The target's requirements, in pyproject's order."""
    project: dict[str, Any] = tomllib.loads(pyproject.read_text())
    name = group(target)
    if name is None:
        return list(project["project"]["dependencies"])
    groups: dict[str, list[Any]] = project["dependency-groups"]

    def expand(current: str) -> list[str]:
        found: list[str] = []
        for item in groups[current]:
            found += expand(item["include-group"]) if isinstance(item, dict) else [item]
        return found

    return expand(name)


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in TARGETS:
        raise SystemExit(f"usage: image_requirements.py {{{'|'.join(TARGETS)}}}")
    sys.stdout.write("".join(f"{line}\n" for line in requirements(sys.argv[1], Path("pyproject.toml"))))
