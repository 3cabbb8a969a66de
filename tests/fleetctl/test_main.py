"""`fleet` itself: the registry of commands, and that a command loads its own module and nothing more."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from fleetctl.main import COMMANDS, build_parser

PROJECT = Path(__file__).resolve().parents[2]
# Prints the project's modules loaded after running `fleet ARGS`, or after importing module ARGS[1]
# alone when ARGS[0] is "--import".
PROBE = """
import importlib, sys
if sys.argv[1] == "--import":
    importlib.import_module(sys.argv[2])
else:
    from fleetctl.main import main
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
project = ("fleetctl", "common", "services", "collector", "sim", "db", "fundament")
print("loaded:", *sorted(m for m in sys.modules if m.split(".")[0] in project))
"""


def loaded(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=PROJECT, capture_output=True, text=True, timeout=60, check=True
    )
    [line] = [line for line in done.stdout.splitlines() if line.startswith("loaded:")]
    return set(line.split()[1:])


def test_each_command_s_parser_says_what_the_registry_says() -> None:
    parser = build_parser()
    [subcommands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    said = {choice.dest: choice.help for choice in subcommands._choices_actions}
    assert said == {command.name: command.summary for command in COMMANDS}


def test_help_lists_every_command_and_loads_none() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fleetctl.main", "--help"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    listed = {line.split()[0] for line in done.stdout.splitlines() if line.startswith("    ")}
    assert {command.name for command in COMMANDS} <= listed
    assert loaded("--help") == {"fleetctl", "fleetctl.main"}


@pytest.mark.parametrize("name", ["org", "token"])
def test_a_command_loads_its_own_module_and_nothing_more(name: str) -> None:
    [command] = [c for c in COMMANDS if c.name == name]
    assert loaded(name, "--help") == loaded("--import", command.module) | {"fleetctl.main"}
