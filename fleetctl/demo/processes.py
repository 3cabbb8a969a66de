"""Child processes of the demo (and the soak): started in order, logged to files, stopped in reverse.

Every child gets its own session, so a Ctrl-C in the terminal reaches only the demo, which then stops
the children in the reverse order it started them (APIs before the database), each with SIGTERM and a
grace period before SIGKILL. Each child also asks the kernel to send it SIGTERM should the demo itself
die without cleaning up, so no process is left behind either way.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

logger = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def wait_for_port(
    host: str, port: int, *, timeout_seconds: float, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Wait until something accepts connections on host:port; fail early when `process` exits."""
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process exited with code {process.returncode} before listening on {host}:{port}")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(0.2)
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on {host}:{port} after {timeout_seconds} s")


@dataclass
class Child:
    name: str
    argv: Sequence[str]
    process: subprocess.Popen[bytes]
    log_path: Path
    log_file: IO[bytes]
    env: Mapping[str, str] = field(default_factory=dict)  # what `start` added, so the soak can restart it


@dataclass
class Supervisor:
    """Starts children with logs under `log_dir` and stops them all, newest first."""

    log_dir: Path
    children: list[Child] = field(default_factory=list)

    def start(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Child:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.log_dir / f"{name}.log"
        log_file = log_path.open("ab")
        process = subprocess.Popen(  # noqa: S603 - our own console scripts with arguments we built
            list(argv),
            env={**os.environ, **env},
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - only a prctl call, safe before exec
        )
        child = Child(name, argv, process, log_path, log_file, dict(env))
        self.children.append(child)
        logger.debug("started %s (pid %d)", name, process.pid)
        return child

    def stop(self, child: Child, *, grace_seconds: float = 10.0) -> None:
        if child.process.poll() is None:
            child.process.send_signal(signal.SIGTERM)
            try:
                child.process.wait(timeout=grace_seconds)
            except subprocess.TimeoutExpired:
                logger.warning("%s did not stop in %.0f s; killing it", child.name, grace_seconds)
                child.process.kill()
                child.process.wait()
        child.log_file.close()

    def stop_all(self) -> None:
        while self.children:
            self.stop(self.children.pop())

    def exited(self) -> list[Child]:
        """Children that ended on their own."""
        return [c for c in self.children if c.process.poll() is not None]
