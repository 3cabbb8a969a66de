"""A layer as a sorted set of entries, written as a tar that depends on nothing but its content.

Every trap of a reproducible layer is closed here, not left to the tools that produced the files: entries
are written in path order, owned by 0:0 without user or group names (or 65532 where asked), with one
modification time (SOURCE_DATE_EPOCH), modes reduced to the permission bits that matter, and the gzip
stream carries neither a file name nor a time.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

GZIP_LEVEL = 6


@dataclass(frozen=True)
class Entry:
    kind: bytes
    """tarfile's type: REGTYPE, DIRTYPE, SYMTYPE or LNKTYPE."""
    mode: int
    data: bytes = b""
    link: str = ""
    owner: int = 0


@dataclass(frozen=True)
class Blob:
    """A written layer: the compressed blob's digest and size, and the uncompressed tar's digest."""

    data: bytes
    digest: str
    diff_id: str
    unpacked: int
    """The tar's size: what the layer takes on disk."""

    @property
    def size(self) -> int:
        return len(self.data)


def normal_mode(mode: int, kind: bytes) -> int:
    """0755 for directories and executables, 0644 for other files; sticky /tmp-style bits are kept."""
    if kind == tarfile.DIRTYPE:
        return 0o1777 if mode & stat.S_ISVTX else 0o755
    if kind == tarfile.SYMTYPE:
        return 0o777
    return 0o755 if mode & 0o111 else 0o644


class Layer:
    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}

    def add(self, path: str, entry: Entry) -> None:
        clean = str(PurePosixPath("/", path)).lstrip("/")
        if not clean:
            return
        self.entries[clean] = entry
        for parent in PurePosixPath(clean).parents:
            if str(parent) != "." and str(parent) not in self.entries:
                self.entries[str(parent)] = Entry(tarfile.DIRTYPE, 0o755)

    def file(self, path: str, data: bytes, *, executable: bool = False) -> None:
        self.add(path, Entry(tarfile.REGTYPE, 0o755 if executable else 0o644, data=data))

    def directory(self, path: str, *, mode: int = 0o755, owner: int = 0) -> None:
        self.add(path, Entry(tarfile.DIRTYPE, mode, owner=owner))

    def symlink(self, path: str, target: str) -> None:
        self.add(path, Entry(tarfile.SYMTYPE, 0o777, link=target))

    def tree(self, source: Path, destination: str) -> None:
        """A folder from disk, its byte code and caches left out."""
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(source)
            if "__pycache__" in relative.parts or path.suffix == ".pyc":
                continue
            target = f"{destination}/{relative.as_posix()}"
            if path.is_symlink():
                self.symlink(target, str(path.readlink()))
            elif path.is_dir():
                self.directory(target)
            elif path.is_file():
                self.file(target, path.read_bytes(), executable=bool(path.stat().st_mode & 0o111))

    def blob(self, epoch: int) -> Blob:
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted(self.entries):
                entry = self.entries[path]
                info = tarfile.TarInfo(path)
                info.type = entry.kind
                info.mode = normal_mode(entry.mode, entry.kind)
                info.mtime = epoch
                info.uid = info.gid = entry.owner
                info.uname = info.gname = ""
                if entry.kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                    info.linkname = entry.link
                    tar.addfile(info)
                elif entry.kind == tarfile.REGTYPE:
                    info.size = len(entry.data)
                    tar.addfile(info, io.BytesIO(entry.data))
                else:
                    tar.addfile(info)
        plain = raw.getvalue()
        packed = io.BytesIO()
        # No name and mtime 0 in the gzip header: the compressed bytes depend on the tar alone.
        with gzip.GzipFile(filename="", mode="wb", fileobj=packed, compresslevel=GZIP_LEVEL, mtime=0) as stream:
            stream.write(plain)
        data = packed.getvalue()
        return Blob(
            data=data,
            digest="sha256:" + hashlib.sha256(data).hexdigest(),
            diff_id="sha256:" + hashlib.sha256(plain).hexdigest(),
            unpacked=len(plain),
        )
