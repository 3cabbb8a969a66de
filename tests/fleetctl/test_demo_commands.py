"""Every command the demo's banner prints, and every `sh demo` block of the docs, works while the demo runs.

This starts the real `fleet demo` (the one `make demo` runs), waits for the banner, then runs what a
person would paste: each command the banner lists under its "try" heading, and each line of every
block fenced as `sh demo` in README.md and docs/*.md. Every line runs from the project folder with a
fresh home and a PATH without the project's tools (until a line puts them there), in a bash of its
own with a bounded time; see tests/fixtures/shell.py for what counts as working.

The demo runs on free ports and in a state folder of its own (`--port`, `--state-dir`), so a demo
already running in this checkout (`make demo`) is left alone. The banner prints the ports and paths
in use; the docs print the defaults, so each doc line is run with the demo's default addresses
(`127.0.0.1:PORT`) and `.fleet/demo` replaced by this demo's, and a line naming a loopback port that
is not one of the demo's fails.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from db.embedded import free_port, runtime_root
from fleetctl.demo.layout import HOST, TRY_HEADING, DemoPorts
from tests.fixtures.shell import COMMAND_TIMEOUT_SECONDS, ShellLine, ShellSession, newcomer_path, sh_demo_blocks

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [block for document in DOCUMENTS for block in sh_demo_blocks(document, root=ROOT) if block]

BANNER_TIMEOUT_SECONDS = 90.0
STOP_TIMEOUT_SECONDS = 40.0

# A loopback address as the docs print it, and the demo's files as the docs name them (from the project folder).
LOOPBACK = re.compile(r"\b(?P<host>127\.0\.0\.1|localhost):(?P<port>\d+)\b")
DEFAULT_FILES = re.compile(r"(?<![\w./-])\.fleet/demo(?![\w.-])")


@dataclass(frozen=True)
class RunningDemo:
    banner: str
    state_dir: Path
    ports: DemoPorts


def free_ports() -> DemoPorts:
    """Every port of the demo, picked free on loopback and distinct."""
    ports: set[int] = set()
    while len(ports) < len(DemoPorts.__dataclass_fields__):
        ports.add(free_port())
    return DemoPorts(**dict(zip(DemoPorts.__dataclass_fields__, sorted(ports), strict=True)))


def beside_the_default(line: ShellLine, demo: RunningDemo) -> ShellLine:
    """A doc line as it reads for this demo: its default ports and `.fleet/demo` made this demo's."""
    moved = {DemoPorts().all()[name]: port for name, port in demo.ports.all().items()}

    def address(found: re.Match[str]) -> str:
        port = int(found["port"])
        if port not in moved:
            pytest.fail(f"{line.where}: {found[0]} is none of the demo's ports {DemoPorts()}\n  $ {line.text}")
        return f"{found['host']}:{moved[port]}"

    text = LOOPBACK.sub(address, line.text)
    return ShellLine(line.where, DEFAULT_FILES.sub(str(demo.state_dir), text))


def _fleet_command() -> list[str]:
    script = Path(sys.executable).parent / "fleet"
    return [str(script)] if script.exists() else [sys.executable, "-m", "fleetctl.main"]


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _read_lines(stream: Iterator[str], into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))
    into.put(None)


def _wait_for_banner(process: subprocess.Popen[str], lines: queue.Queue[str | None], log: Path) -> str:
    """The demo's stdout up to the empty line that ends its list of commands."""
    seen: list[str] = []
    in_commands = False
    deadline = time.monotonic() + BANNER_TIMEOUT_SECONDS
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            pytest.fail(f"the demo printed no banner within {BANNER_TIMEOUT_SECONDS:.0f} s; its log:\n{_tail(log)}")
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            continue
        if line is None:
            process.wait(timeout=STOP_TIMEOUT_SECONDS)
            pytest.fail(f"the demo exited with {process.returncode} before its banner; its log:\n{_tail(log)}")
        seen.append(line)
        if line.startswith(f"{TRY_HEADING} ("):
            in_commands = True
        elif in_commands and not line.strip():
            return "\n".join(seen)


def _stop(process: subprocess.Popen[str]) -> None:
    """Ctrl-C, as a person stops it; then SIGTERM and SIGKILL should it not end in time."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            return
        process.send_signal(sig)
        try:
            process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def running_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDemo]:
    # Where PostgreSQL's unprivileged user can reach it (the demo keeps its database in it), like the tests' servers.
    state_dir = runtime_root(ROOT) / f"test-demo-{os.getpid()}"
    ports = free_ports()
    moved = [f"--port={name}={port}" for name, port in ports.all().items()]
    log = tmp_path_factory.mktemp("demo") / "demo.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [*_fleet_command(), "demo", "--state-dir", str(state_dir), *moved],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,  # only the SIGINT sent below reaches it
        )
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    # Read stdout to the end, so the demo never blocks on a full pipe.
    reader = threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True)
    reader.start()
    try:
        banner = _wait_for_banner(process, lines, log)
        yield RunningDemo(banner, state_dir, ports)
    finally:
        _stop(process)
        reader.join(timeout=STOP_TIMEOUT_SECONDS)
        process.stdout.close()
        shutil.rmtree(state_dir, ignore_errors=True)


def banner_commands(banner: str) -> list[ShellLine]:
    lines = banner.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{TRY_HEADING} (")) + 1
    commands: list[ShellLine] = []
    for line in lines[start:]:
        if not line.strip():
            break
        commands.append(ShellLine("banner", line.strip()))
    return commands


def run_all(lines: list[ShellLine], state_dir: Path, *, timeout_seconds: float = COMMAND_TIMEOUT_SECONDS) -> list[str]:
    """Run the lines in one session; the report of every line that does not work as printed."""
    home = state_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "PATH": newcomer_path(ROOT, os.environ.get("PATH", "/usr/bin:/bin")), "LANG": "C.UTF-8"}
    session = ShellSession(ROOT, env, state_dir / "shell", timeout_seconds=timeout_seconds)
    return [outcome.report() for outcome in map(session.run, lines) if outcome.problem is not None]


@pytest.mark.slow
def test_the_banner_says_where_the_files_are(running_demo: RunningDemo) -> None:
    for path in (
        running_demo.state_dir / "staff-token",
        running_demo.state_dir / "jwt-secret",
        running_demo.state_dir / "sim" / "garden-kubeconfig.yaml",
    ):
        assert path.exists()
        assert str(path) in running_demo.banner, f"the banner does not say where {path.name} is"


@pytest.mark.slow
def test_the_banner_prints_the_ports_in_use(running_demo: RunningDemo) -> None:
    for name, port in running_demo.ports.all().items():
        assert f"{HOST}:{port}" in running_demo.banner, f"the banner does not print {name} ({port})"
    defaults = [f"{HOST}:{port}" for port in DemoPorts().all().values()]
    stale = [address for address in defaults if re.search(rf"{re.escape(address)}\b", running_demo.banner)]
    assert not stale, f"the banner prints default ports the demo does not use: {stale}"


@pytest.mark.slow
def test_every_command_of_the_banner_works_as_printed(running_demo: RunningDemo, tmp_path: Path) -> None:
    commands = banner_commands(running_demo.banner)
    assert len(commands) >= 5, f"too few commands under the banner's {TRY_HEADING!r} heading:\n{running_demo.banner}"
    failures = run_all(commands, tmp_path)
    assert not failures, "\n\n".join(failures)


@pytest.mark.slow
@pytest.mark.parametrize("block", BLOCKS, ids=[block[0].where for block in BLOCKS])
def test_every_sh_demo_block_works_as_printed(
    running_demo: RunningDemo, block: list[ShellLine], tmp_path: Path
) -> None:
    failures = run_all([beside_the_default(line, running_demo) for line in block], tmp_path)
    assert not failures, "\n\n".join(failures)


# -- the checker itself, without the demo ---------------------------------------------------------


def test_a_line_that_fails_is_reported(tmp_path: Path) -> None:
    lines = [
        ShellLine("t:1", "export GREETING=hello"),
        ShellLine("t:2", "echo $GREETING"),
        ShellLine("t:3", "false"),
        ShellLine("t:4", "true"),
        ShellLine("t:5", "TOKEN=$(cat /nonexistent/token)"),
        ShellLine("t:6", "sleep 60"),
        ShellLine("t:7", """echo '{"code": "unauthenticated", "message": "no"}'"""),
        ShellLine("t:8", """echo '{"error": "unknown shoot"}'"""),
    ]
    failures = run_all(lines, tmp_path, timeout_seconds=3)
    assert [f.split(":", 2)[1] for f in failures] == ["3", "4", "5", "6", "7", "8"]
    assert "exited with 1" in failures[0]
    assert "printed nothing and set no variable" in failures[1]
    assert "No such file" in failures[2]
    assert "did not finish" in failures[3]
    assert "answered with an error" in failures[4]
    assert "answered with an error" in failures[5]


def test_a_doc_line_is_run_on_the_demo_ports_and_files(tmp_path: Path) -> None:
    demo = RunningDemo("", tmp_path / "demo", free_ports())
    line = ShellLine(
        "doc.md:1",
        "cat .fleet/demo/staff-token; curl http://127.0.0.1:8081/x; grpcurl localhost:9090 s/M; ls ./.fleet/demo2",
    )
    moved = beside_the_default(line, demo)
    p = demo.ports
    assert moved.text == (
        f"cat {tmp_path}/demo/staff-token; curl http://127.0.0.1:{p.admin_http}/x; "
        f"grpcurl localhost:{p.public_grpc} s/M; ls ./.fleet/demo2"
    )
    with pytest.raises(pytest.fail.Exception, match=r"127\.0\.0\.1:5000 is none of the demo's ports"):
        beside_the_default(ShellLine("doc.md:2", "curl http://127.0.0.1:5000/"), demo)


def test_sh_demo_blocks_are_read_with_continuations_and_without_comments(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "text\n```sh\nnot this\n```\n"
        "```sh demo\n# a comment\nS=x; A=(-y)\n\ncurl \\\n  -s $S\n```\n"
        "```sh demo\nls\n```\n"
    )
    blocks = list(sh_demo_blocks(doc, root=tmp_path))
    assert [[(line.where, line.text) for line in block] for block in blocks] == [
        [("doc.md:7", "S=x; A=(-y)"), ("doc.md:9", "curl    -s $S")],
        [("doc.md:13", "ls")],
    ]
