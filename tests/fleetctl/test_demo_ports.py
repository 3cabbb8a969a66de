"""The demo's fixed ports, and fleet-sim's default one, stay out of the kernel's ephemeral range; `--port` moves them.

A port in that range can be held at any moment by an outgoing connection or by a server that asked
for port 0 (the test suite's own PostgreSQL servers do), so a demo there fails at random, and once
did in CI with the database's old port 55432.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetctl.demo.layout import DemoPorts
from fleetctl.main import main
from sim.main import DEFAULT_PORT as SIM_DEFAULT_PORT

PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Linux's default, for kernels that do not show theirs.
DEFAULT_EPHEMERAL = (32768, 60999)


def _ephemeral_range() -> tuple[int, int]:
    if not PORT_RANGE.exists():
        return DEFAULT_EPHEMERAL
    low, high = PORT_RANGE.read_text().split()
    return int(low), int(high)


@pytest.mark.parametrize("ephemeral", [DEFAULT_EPHEMERAL, _ephemeral_range()], ids=["default", "this kernel"])
def test_no_fixed_port_is_ephemeral(ephemeral: tuple[int, int]) -> None:
    low, high = ephemeral
    fixed = {**DemoPorts().all(), "fleet-sim default": SIM_DEFAULT_PORT}
    inside = {name: port for name, port in fixed.items() if low <= port <= high}
    assert not inside, f"demo ports inside the ephemeral range {low}-{high}: {inside}"


def test_the_demo_ports_are_distinct() -> None:
    ports = list(DemoPorts().all().values())
    assert len(ports) == len(set(ports))


@pytest.mark.parametrize(
    "option", ["nope=18080", "console=", "console=http", "console=70000"], ids=["name", "empty", "word", "range"]
)
def test_a_port_option_that_names_no_port_is_refused(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["demo", "--port", option])
    assert stopped.value.code == 2
    assert "--port" in capsys.readouterr().err


def test_a_port_moved_onto_another_of_the_demo_is_refused_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--port", f"console={DemoPorts().public_http}", "--state-dir", "/nonexistent/demo"]) == 2
    assert "two of the demo's ports are the same" in capsys.readouterr().err
    assert not Path("/nonexistent/demo").exists()
