"""Build every image (or those named) into an OCI layout each: `python -m deploy.images [--out DIR] [NAME...]`.

Inputs are the repository's files, deploy/images.lock, deploy/images/debian.lock and SOURCE_DATE_EPOCH
(default: the last commit's time), and nothing else: no clock, no cache content (downloads are checked
against the locks before use), no build directory, so two builds of one commit give the same digests.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from installer.scripts import Script

from deploy.images import debian, wheels
from deploy.images.layers import Blob, Layer
from deploy.images.oci import Written, write_layout
from deploy.images.spec import APP, BY_NAME, IMAGES, PYTHON, USER, Image

ROOT = Path(__file__).resolve().parents[2]
VERSION = "0.1.0"
ENV = [
    "PATH=/usr/local/bin:/usr/bin",
    f"PYTHONPATH={APP}:{APP}/gen",
    # The root file system is read-only in the chart: no byte code is written at run time, none is shipped.
    "PYTHONDONTWRITEBYTECODE=1",
    "PYTHONUNBUFFERED=1",
    "LANG=C.UTF-8",
    f"SSL_CERT_FILE=/{debian.CA_BUNDLE}",
]


@dataclass(frozen=True)
class Built:
    image: Image
    written: Written
    distributions: list[str]
    base: Blob
    """The Debian layer, the same in every image."""


def source_date_epoch() -> int:
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    done = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit("build-images: set SOURCE_DATE_EPOCH (no git history to take the last commit's time from)")
    return int(done.stdout.strip())


def app_layer(image: Image) -> Layer:
    layer = Layer()
    for path in image.paths:
        source = ROOT / path
        if source.is_dir():
            layer.tree(source, f"{APP}/{path}")
        else:
            layer.file(f"{APP}/{path}", source.read_bytes())
    return layer


def build_one(
    image: Image, *, base: Blob, debs: dict[str, Path], found: dict[str, Path], out: Path, epoch: int
) -> Built:
    system = Layer()
    if image.with_shell:
        debian.shell(debs, system)
    names = wheels.python_layer(image, found, system)
    if image.name == "operator":
        # The project is not installed as a distribution: its one command is a launcher of its own.
        launcher = Script("fleet", "fleetctl.main", "main", "console").generate(PYTHON, "posix")[1]
        system.file("usr/local/bin/fleet", launcher, executable=True)
    layers = [
        ("fleet-inventory: Debian's python3.11 and its libraries (deploy/images/debian.lock)", base),
        (f"fleet-inventory: {len(names)} locked distributions (deploy/images.lock)", system.blob(epoch)),
        (f"fleet-inventory: {', '.join(image.paths)}", app_layer(image).blob(epoch)),
    ]
    written = write_layout(
        out / image.name,
        layers,
        epoch=epoch,
        entrypoint=list(image.entrypoint),
        env=ENV,
        user=USER,
        workdir=APP,
        ports=list(image.ports),
        labels={
            "org.opencontainers.image.title": f"fleet-inventory-{image.name}",
            "org.opencontainers.image.version": VERSION,
        },
        tag=VERSION,
    )
    return Built(image, written, names, base)


def build(names: list[str], out: Path, cache: Path, epoch: int) -> list[Built]:
    debs = debian.fetch(cache / "debian")
    found = wheels.fetch(cache / "wheels")
    base = debian.base_layer(debs).blob(epoch)
    out.mkdir(parents=True, exist_ok=True)
    built = [build_one(BY_NAME[name], base=base, debs=debs, found=found, out=out, epoch=epoch) for name in names]
    lines = [f"{b.image.name} {b.written.digest} {b.written.compressed} {b.written.unpacked}" for b in built]
    (out / "digests.txt").write_text("".join(f"{line}\n" for line in lines))
    return built


SIZES_START = "<!-- image sizes: written by `make images` (scripts/build-images --sizes) -->"
SIZES_END = "<!-- end of image sizes -->"


def sizes_table(built: list[Built]) -> str:
    lines = [
        "| image | compressed (pulled) | unpacked (on disk) | locked distributions |",
        "|---|---:|---:|---:|",
    ]
    lines += [
        f"| `fleet-inventory-{b.image.name}` | {b.written.compressed / 1e6:.1f} MB | {b.written.unpacked / 1e6:.1f} MB "
        f"| {len(b.distributions)} |"
        for b in built
    ]
    base = built[0].base
    lines.append(f"| the Debian layer, shared by all | {base.size / 1e6:.1f} MB | {base.unpacked / 1e6:.1f} MB | |")
    return "\n".join(lines)


def write_sizes(doc: Path, built: list[Built]) -> None:
    """Replace the table between the markers of `doc` with the sizes of this build."""
    text = doc.read_text()
    start, end = text.index(SIZES_START) + len(SIZES_START), text.index(SIZES_END)
    doc.write_text(text[:start] + "\n" + sizes_table(built) + "\n" + text[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="build-images", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", choices=[[], *BY_NAME], help="images to build (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "images", help="where the layouts go")
    parser.add_argument("--cache", type=Path, default=ROOT / "build" / "cache", help="downloaded .debs and wheels")
    parser.add_argument("--lock", action="store_true", help="write deploy/images/debian.lock from apt's index")
    parser.add_argument("--sizes", type=Path, help="write the images' sizes into this document's table")
    args = parser.parse_args(argv)
    if args.lock:
        debian.write_lock()
        return 0
    started = time.monotonic()
    try:
        built = build(args.names or [i.name for i in IMAGES], args.out, args.cache, source_date_epoch())
    except (debian.DebianError, wheels.WheelError) as e:
        sys.stderr.write(f"build-images: {e}\n")
        return 1
    for b in built:
        sys.stdout.write(
            f"{b.image.name:<11} {b.written.digest}  {b.written.compressed / 1e6:6.1f} MB compressed, "
            f"{b.written.unpacked / 1e6:6.1f} MB unpacked -> {args.out / b.image.name}\n"
        )
    sys.stderr.write(f"built {len(built)} images in {time.monotonic() - started:.0f} s\n")
    if args.sizes is not None:
        write_sizes(args.sizes, built)
    return 0
