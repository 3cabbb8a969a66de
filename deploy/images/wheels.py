"""The Python part of each image: the locked wheels, downloaded against deploy/images.lock's hashes, cut
per image by following each wheel's own requirements from the image's dependency group, and installed
by PyPA's `installer` into /usr/local/lib/python3.11/dist-packages without byte code.

An image can hold nothing the lock does not name: a requirement the lock lacks stops the build.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterable
from email.parser import BytesParser
from pathlib import Path
from typing import BinaryIO, Literal

from installer import install
from installer.destinations import WheelDestination
from installer.records import Hash, RecordEntry
from installer.scripts import Script
from installer.sources import WheelFile
from installer.utils import Scheme, construct_record_file, copyfileobj_with_hashing
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

from deploy.image_requirements import requirements
from deploy.images.layers import Layer
from deploy.images.spec import PYTHON, Image

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "deploy" / "images.lock"
SITE = "usr/local/lib/python3.11/dist-packages"
# Debian bookworm's interpreter: the environment the requirements' markers are judged in.
TARGET = {
    "implementation_name": "cpython",
    "implementation_version": "3.11.2",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_python_implementation": "CPython",
    "platform_system": "Linux",
    "python_full_version": "3.11.2",
    "python_version": "3.11",
    "sys_platform": "linux",
}
PLATFORMS = [f"manylinux_2_{minor}_x86_64" for minor in range(36, 16, -1)] + ["manylinux2014_x86_64"]


class WheelError(RuntimeError):
    """A wheel cannot be fetched, or an image needs a distribution the lock does not name."""


def locked_names(lock: Path = LOCK) -> dict[str, str]:
    """Distribution name -> locked version."""
    found = {}
    for line in lock.read_text().splitlines():
        if line and not line[0].isspace() and not line.startswith("#") and "==" in line:
            name, _, rest = line.partition("==")
            found[str(canonicalize_name(name))] = rest.split()[0]
    return found


def fetch(cache: Path, lock: Path = LOCK) -> dict[str, Path]:
    """One wheel per locked distribution, for CPython 3.11 on Linux x86-64, each checked against the lock."""
    cache.mkdir(parents=True, exist_ok=True)
    platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes"]
    command += ["--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311"]
    command += [*platforms, "--dest", str(cache), "--requirement", str(lock)]
    # The machine's own pip settings (a constraints file, extra folders) have no say in what is locked.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {"PIP_CONFIG_FILE": os.devnull}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise WheelError(f"pip download of {lock.name} failed: {done.stderr.strip()[-1500:]}")
    versions = locked_names(lock)
    found: dict[str, Path] = {}
    for path in sorted(cache.glob("*.whl")):
        name, version, _, _ = parse_wheel_filename(path.name)
        if versions.get(str(name)) == str(version):
            found[str(name)] = path
    missing = sorted(set(versions) - set(found))
    if missing:
        raise WheelError(f"no wheel for {missing} in {cache}")
    return found


def requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        message = BytesParser().parsebytes(archive.read(meta))
    return message.get_all("Requires-Dist") or []


def roots(image: Image, pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The requirements the image starts from: its dependency group, or the project's dependencies."""
    return requirements(image.name, pyproject)


def closure(image: Image, wheels: dict[str, Path]) -> list[str]:
    """The distributions the image needs, following each wheel's requirements with the extras asked for."""
    queue = [Requirement(r) for r in roots(image)]
    seen: dict[str, set[str]] = {}
    while queue:
        requirement = queue.pop()
        if requirement.marker and not requirement.marker.evaluate(TARGET | {"extra": ""}):
            continue
        name = str(canonicalize_name(requirement.name))
        if name not in wheels:
            raise WheelError(f"{image.name} needs {requirement}, which deploy/images.lock does not name")
        new = set(requirement.extras) - seen.get(name, set())
        if name in seen and not new:
            continue
        seen.setdefault(name, set()).update(requirement.extras)
        for text in requires(wheels[name]):
            needed = Requirement(text)
            if needed.marker is None:
                queue.append(needed)
                continue
            extras = seen[name] or {""}
            if any(Marker(str(needed.marker)).evaluate(TARGET | {"extra": extra}) for extra in extras):
                needed.marker = None
                queue.append(needed)
    return sorted(seen)


class LayerDestination(WheelDestination):
    """installer's destination writing into a Layer instead of the file system; scripts run PYTHON."""

    def __init__(self, layer: Layer) -> None:
        self.layer = layer
        self.paths: dict[str, str] = {
            "purelib": SITE,
            "platlib": SITE,
            "headers": "usr/local/include/python3.11",
            "scripts": "usr/local/bin",
            "data": "usr/local",
        }

    def write_script(self, name: str, module: str, attr: str, section: Literal["console", "gui"]) -> RecordEntry:
        launcher = Script(name, module, attr, section).generate(PYTHON, "posix")[1]
        return self.write_file(Scheme("scripts"), name, io.BytesIO(launcher), is_executable=True)

    def write_file(
        self, scheme: Scheme, path: str | os.PathLike[str], stream: BinaryIO, is_executable: bool
    ) -> RecordEntry:
        sink = io.BytesIO()
        digest, size = copyfileobj_with_hashing(stream, sink, "sha256")
        relative = Path(path).as_posix()
        self.layer.file(f"{self.paths[scheme]}/{relative}", sink.getvalue(), executable=is_executable)
        return RecordEntry(relative, Hash("sha256", digest), size)

    def finalize_installation(
        self, scheme: Scheme, record_file_path: str, records: Iterable[tuple[Scheme, RecordEntry]]
    ) -> None:
        def prefix(other: Scheme) -> str | None:
            return None if other == scheme else os.path.relpath(self.paths[other], self.paths[scheme]) + "/"

        with construct_record_file(list(records), prefix) as record:
            self.write_file(scheme, record_file_path, record, is_executable=False)


def python_layer(image: Image, wheels: dict[str, Path], layer: Layer) -> list[str]:
    """Install the image's distributions into `layer`; returns their names."""
    names = closure(image, wheels)
    for name in names:
        with WheelFile.open(wheels[name]) as source:
            install(source, LayerDestination(layer), {"INSTALLER": b"fleet-inventory images\n"})
    return names
