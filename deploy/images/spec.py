"""What each image holds: its project files, its locked distributions, its entry point.

The same split as deploy/Dockerfile's targets (tests/images checks that the two agree): the public API
carries the kernel, services/common and services/overview and nothing that could read more; the tools
image carries `fleet` for the database, organizations and tokens, without the embedded PostgreSQL server
or the simulator (the `demo` extra).
"""

from __future__ import annotations

from dataclasses import dataclass

PYTHON = "/usr/bin/python3.11"
USER = "65532:65532"
APP = "/app"


@dataclass(frozen=True)
class Image:
    name: str
    """The target's name, as in deploy/Dockerfile and the chart (`fleet-inventory-<name>`)."""
    paths: tuple[str, ...]
    """Repository paths (folders or files) copied under /app."""
    entrypoint: tuple[str, ...]
    """Its distributions are deploy/image_requirements.py's for `name`."""
    ports: tuple[int, ...] = ()
    with_shell: bool = False
    """Whether the image carries /bin/sh (dash): only where a deployment cannot do without one."""


IMAGES: tuple[Image, ...] = (
    Image(
        name="public-api",
        paths=("common", "services/__init__.py", "services/common", "services/overview", "gen/fundament/overview"),
        entrypoint=("python", "-m", "services.overview.main"),
        ports=(8080, 9090),
    ),
    Image(
        name="admin-api",
        paths=("common", "services/__init__.py", "services/common", "services/fleet", "gen/fundament/fleet"),
        entrypoint=("python", "-m", "services.fleet.main"),
        ports=(8081, 9091),
    ),
    Image(
        name="worker",
        paths=("common", "collector"),
        entrypoint=("python", "-m", "collector.main"),
        ports=(8097,),
        # The chart's sharded StatefulSet derives INVENTORY_SHARD from the pod's name with `sh -c`
        # (deploy/fleet-inventory/templates/cluster-worker.yaml): the one image that needs a shell.
        with_shell=True,
    ),
    Image(
        name="operator",
        paths=(
            "common",
            "services/__init__.py",
            "services/common",
            "db",
            "fleet_description",
            "fleetctl",
            # `fleet usage` exports through the staff API's contract.
            "gen/fundament/fleet",
        ),
        # fleetctl/demo comes along, but `fleet demo` cannot run here: the simulator and the embedded
        # server are not in the image (it says so).
        entrypoint=("fleet",),
    ),
)

BY_NAME = {image.name: image for image in IMAGES}
