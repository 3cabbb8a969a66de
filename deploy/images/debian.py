"""The Debian part of every image: the packages of the locked list, fetched with apt and unpacked by us.

No package is installed: no maintainer script runs and no dpkg database is written, so the images carry no
package manager. Each .deb is checked against the SHA-256 in debian.lock, then its files are read straight
from its data archive (`dpkg-deb --fsys-tarfile`) into the layer, the /bin, /sbin and /lib paths moved
under /usr as on a merged-/usr Debian. What maintainer scripts would have made is made here, the same way
every time: the CA bundle from the Mozilla certificates in sorted order, the `python` and `sh` links.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from deploy.images.layers import Entry, Layer

LOCK = Path(__file__).with_name("debian.lock")

# The interpreter and the libraries its standard library loads (libpython3.11-stdlib's dependencies
# without the package-management ones: dpkg, debconf, perl), and what every image reads from /etc.
PYTHON_PACKAGES = (
    "python3.11-minimal",
    "libpython3.11-minimal",
    "libpython3.11-stdlib",
    "libc6",
    "libgcc-s1",
    "libstdc++6",
    "libexpat1",
    "zlib1g",
    "libssl3",
    "libbz2-1.0",
    "libcrypt1",
    "libdb5.3",
    "libffi8",
    "liblzma5",
    "libncursesw6",
    "libtinfo6",
    "libnsl2",
    "libreadline8",
    "libsqlite3-0",
    "libtirpc3",
    "libtirpc-common",
    "libgssapi-krb5-2",
    "libkrb5-3",
    "libk5crypto3",
    "libkrb5support0",
    "libcom-err2",
    "libkeyutils1",
    "libuuid1",
    "media-types",
    "netbase",
    "ca-certificates",
)
SHELL_PACKAGES = ("dash",)
ALL_PACKAGES = (*PYTHON_PACKAGES, *SHELL_PACKAGES)

MERGED = ("bin", "sbin", "lib", "lib64", "lib32", "libx32")
LEFT_OUT = ("usr/share/man/", "usr/share/info/", "usr/share/lintian/", "usr/share/bug/", "usr/share/doc-base/")
CA_DIR = "usr/share/ca-certificates/mozilla/"
CA_BUNDLE = "etc/ssl/certs/ca-certificates.crt"
PASSWD = b"root:x:0:0:root:/root:/usr/sbin/nologin\nfleet:x:65532:65532:fleet:/nonexistent:/usr/sbin/nologin\n"


class DebianError(RuntimeError):
    """A locked package cannot be fetched or does not match the lock."""


@dataclass(frozen=True)
class Locked:
    name: str
    version: str
    architecture: str
    sha256: str

    @property
    def file_name(self) -> str:
        # apt-get download's name for it: the epoch's colon is written %3a.
        return f"{self.name}_{self.version.replace(':', '%3a')}_{self.architecture}.deb"


def read_lock(path: Path = LOCK) -> dict[str, Locked]:
    found: dict[str, Locked] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version, architecture, digest = line.split()
            found[name] = Locked(name, version, architecture, digest)
    return found


def candidate(name: str) -> Locked:
    """The version apt would install now and its SHA-256, from the host's package index."""
    policy = subprocess.run(["apt-cache", "policy", name], capture_output=True, text=True, check=True).stdout
    version = next((ln.split(":", 1)[1].strip() for ln in policy.splitlines() if "Candidate:" in ln), "")
    if not version or version == "(none)":
        raise DebianError(f"apt knows no {name}: run `apt-get update` (scripts/install-image-tools)")
    shown = subprocess.run(["apt-cache", "show", f"{name}={version}"], capture_output=True, text=True, check=True)
    fields = dict(ln.split(": ", 1) for ln in shown.stdout.splitlines() if ": " in ln and not ln.startswith(" "))
    return Locked(name, version, fields["Architecture"], fields["SHA256"])


def write_lock(path: Path = LOCK) -> None:
    lines = ["# The Debian packages of the images: name, version, architecture, SHA-256 (`make lock` writes it)."]
    locked = sorted(map(candidate, ALL_PACKAGES), key=lambda p: p.name)
    lines += [f"{p.name} {p.version} {p.architecture} {p.sha256}" for p in locked]
    path.write_text("\n".join(lines) + "\n")


def fetch(cache: Path, lock: dict[str, Locked] | None = None) -> dict[str, Path]:
    """Every locked .deb in `cache`, downloaded if missing and checked against its SHA-256."""
    lock = lock if lock is not None else read_lock()
    missing = sorted(set(ALL_PACKAGES) - set(lock))
    if missing:
        raise DebianError(f"{missing} are not in {LOCK.name}: run `make lock`")
    cache.mkdir(parents=True, exist_ok=True)
    wanted = [lock[name] for name in ALL_PACKAGES]
    absent = [p for p in wanted if not (cache / p.file_name).exists()]
    if absent:
        done = subprocess.run(
            ["apt-get", "download", "-q", *(f"{p.name}={p.version}" for p in absent)],
            cwd=cache,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise DebianError(
                f"apt-get download failed ({done.stderr.strip()[-500:]}); run scripts/install-image-tools "
                "(apt-get update), or `make lock` when Debian has replaced a locked version"
            )
    found = {}
    for package in wanted:
        path = cache / package.file_name
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != package.sha256:
            path.unlink()
            raise DebianError(f"{path.name}: SHA-256 {digest} is not the locked {package.sha256}")
        found[package.name] = path
    return found


def usr_merged(path: str) -> str:
    first, _, rest = path.partition("/")
    return f"usr/{first}/{rest}" if first in MERGED and rest else path


def kept(path: str) -> bool:
    if path.startswith("usr/share/doc/"):
        return path.endswith("/copyright")
    return not path.startswith(LEFT_OUT)


def unpack(deb: Path, layer: Layer, *, only: str | None = None) -> dict[str, bytes]:
    """The package's files into `layer` (under `only` alone, when given); returns what it put there."""
    stream = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, check=True).stdout
    placed: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(stream), mode="r:") as tar:
        for member in tar:
            path = usr_merged(str(PurePosixPath(member.name)).removeprefix("./").lstrip("/"))
            if not path or path == "." or not kept(path) or (only is not None and not path.startswith(only)):
                continue
            if member.isdir():
                layer.directory(path)
            elif member.issym():
                layer.symlink(path, member.linkname)
            elif member.islnk():
                layer.add(path, Entry(tarfile.LNKTYPE, 0o644, link=usr_merged(member.linkname.removeprefix("./"))))
            elif member.isfile():
                extracted = tar.extractfile(member)
                assert extracted is not None
                data = extracted.read()
                layer.file(path, data, executable=bool(member.mode & 0o111))
                placed[path] = data
    return placed


def base_layer(debs: dict[str, Path]) -> Layer:
    """The interpreter, its libraries, the CA bundle, /etc/passwd and /tmp: the layer all images share."""
    layer = Layer()
    for name in PYTHON_PACKAGES:
        if name == "ca-certificates":
            certificates = unpack(debs[name], layer, only=CA_DIR)
            # update-ca-certificates' result, made without it: every certificate, in the order of its name.
            pem = [data if data.endswith(b"\n") else data + b"\n" for _, data in sorted(certificates.items())]
            layer.file(CA_BUNDLE, b"".join(pem))
        else:
            unpack(debs[name], layer)
    for top in MERGED:
        if any(path.startswith(f"usr/{top}/") for path in layer.entries):
            layer.symlink(top, f"usr/{top}")
    layer.symlink("usr/bin/python3", "python3.11")
    layer.symlink("usr/bin/python", "python3.11")
    layer.file(
        "etc/passwd",
        b"root:x:0:0:root:/root:/usr/sbin/nologin\nfleet:x:65532:65532:fleet:/nonexistent:/usr/sbin/nologin\n",
    )
    layer.file("etc/group", b"root:x:0:\nfleet:x:65532:\n")
    layer.directory("tmp", mode=0o1777)
    layer.directory("app")
    return layer


def shell(debs: dict[str, Path], layer: Layer) -> None:
    """dash as /bin/sh, for the one image whose deployment runs `sh -c`."""
    unpack(debs["dash"], layer, only="usr/bin/dash")
    layer.symlink("usr/bin/sh", "dash")
