"""The third-party distributions each image target of deploy/Dockerfile installs, pinned as pyproject.toml
pins them (one list of versions for the project and its images).

    python image_requirements.py public-api > public-api.txt

The public API's list holds nothing that reads more than its one SQL function needs: no Kubernetes client,
no JWT library, no embedded PostgreSQL. tests/deploy/test_images.py starts each target from exactly its files and
these distributions.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

SERVING = (
    "grpcio",
    "grpcio-reflection",
    "grpcio-health-checking",
    "protobuf",
    "connectrpc",
    "uvicorn",
    "starlette",
    "psycopg",
    "psycopg-pool",
    "orjson",
    "prometheus-client",
    "typing-extensions",
)
# Tracing (common/tracing.py), off unless OTEL_* asks for it: every process image carries it, so turning it
# on is a variable, not another build.
TRACING = ("opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http")
TARGETS: dict[str, tuple[str, ...]] = {
    "public-api": (*SERVING, *TRACING),
    "admin-api": (*SERVING, *TRACING, "pyjwt", "cryptography"),
    "worker": (
        *TRACING,
        "kubernetes",
        "aiohttp",
        "uvloop",
        "pyyaml",
        "psycopg",
        "psycopg-pool",
        "orjson",
        "prometheus-client",
        "uvicorn",
        "starlette",
        "typing-extensions",
    ),
}


def distribution_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return match.group(0).lower().replace("_", "-")


def requirements(target: str, pyproject: Path) -> list[str]:
    """The pinned requirements of `target`, in pyproject's order."""
    declared: list[str] = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    wanted = set(TARGETS[target])
    chosen = [r for r in declared if distribution_name(r) in wanted]
    missing = wanted - {distribution_name(r) for r in chosen}
    if missing:
        raise SystemExit(f"image_requirements: {sorted(missing)} are not dependencies in {pyproject}")
    return chosen


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in TARGETS:
        raise SystemExit(f"usage: image_requirements.py {{{'|'.join(TARGETS)}}}")
    sys.stdout.write("".join(f"{line}\n" for line in requirements(sys.argv[1], Path("pyproject.toml"))))
