"""What a listed Shoot says of its parts: worker pools, extensions and add-ons, parsed strictly.

    observed.observe_shoot ──> parse_parts(spec) ──> ShootParts ──> ledger_rows.desired_rows

The garden's answer is foreign input. Each part is read whole or not at all: a part that is not the
shape Gardener gives it (a worker without a name, a minimum that is no integer, two pools of one
name, more entries than `MAX_ENTRIES`, a name over 255 characters or with control characters) is
`None`, "could not read", and its ledger rows are left exactly as they were, never read as "none
exist"; the other parts of the shoot, and every other shoot, are read as usual.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

MAX_ENTRIES = 200
"""At most this many pools, extensions or add-ons in one shoot (real shoots have a handful)."""
INT32_MAX = 2**31 - 1
_NAME = re.compile(r"^[^\x00-\x1f\x7f]{1,255}$")


class Unreadable(ValueError):
    """A part of a shoot's spec is not the shape Gardener gives it."""


@dataclass(frozen=True, slots=True)
class WorkerPool:
    """One entry of `spec.provider.workers`, the fields the ledger keeps."""

    name: str
    machine_type: str
    minimum: int
    maximum: int


@dataclass(frozen=True, slots=True)
class ShootParts:
    """A shoot's parts; a part is None when it could not be read (its rows are then left as they were)."""

    pools: tuple[WorkerPool, ...] | None
    extensions: tuple[str, ...] | None
    """The types of the enabled `spec.extensions` (an entry with `disabled: true` is not running)."""
    addons: tuple[str, ...] | None
    """The names of the `spec.addons` with `enabled: true` (e.g. nginxIngress)."""
    problems: tuple[str, ...] = ()
    """Why the unreadable parts could not be read."""

    @property
    def unreadable(self) -> tuple[str, ...]:
        """The parts that could not be read, by name."""
        parts = (("workers", self.pools), ("extensions", self.extensions), ("addons", self.addons))
        return tuple(name for name, value in parts if value is None)


def _name(value: object, what: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise Unreadable(f"{what}: not a name of 1 to 255 printable characters")
    return value


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= INT32_MAX:
        raise Unreadable(f"{what}: not an integer from 0 to {INT32_MAX}")
    return value


def _entries(value: object, what: str) -> Sequence[Any]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise Unreadable(f"{what}: not a list")
    if len(value) > MAX_ENTRIES:
        raise Unreadable(f"{what}: {len(value)} entries, more than {MAX_ENTRIES}")
    return value


def _unique(names: Sequence[str], what: str) -> tuple[str, ...]:
    if len(set(names)) != len(names):
        raise Unreadable(f"{what}: a name occurs twice")
    return tuple(names)


def parse_pools(provider: object) -> tuple[WorkerPool, ...]:
    """`spec.provider.workers`; a shoot without any (workerless) has none."""
    if provider is None:
        return ()
    if not isinstance(provider, Mapping):
        raise Unreadable("spec.provider: not an object")
    pools: list[WorkerPool] = []
    for worker in _entries(provider.get("workers"), "spec.provider.workers"):
        if not isinstance(worker, Mapping):
            raise Unreadable("spec.provider.workers[]: not an object")
        machine = worker.get("machine")
        if not isinstance(machine, Mapping):
            raise Unreadable("spec.provider.workers[].machine: not an object")
        minimum = _count(worker.get("minimum"), "spec.provider.workers[].minimum")
        maximum = _count(worker.get("maximum"), "spec.provider.workers[].maximum")
        pools.append(
            WorkerPool(
                name=_name(worker.get("name"), "spec.provider.workers[].name"),
                machine_type=_name(machine.get("type"), "spec.provider.workers[].machine.type"),
                minimum=minimum,
                maximum=maximum,
            )
        )
    _unique([p.name for p in pools], "spec.provider.workers")
    return tuple(pools)


def parse_extensions(extensions: object) -> tuple[str, ...]:
    """The enabled `spec.extensions` by type."""
    enabled: list[str] = []
    for extension in _entries(extensions, "spec.extensions"):
        if not isinstance(extension, Mapping):
            raise Unreadable("spec.extensions[]: not an object")
        kind = _name(extension.get("type"), "spec.extensions[].type")
        disabled = extension.get("disabled", False)
        if not isinstance(disabled, bool):
            raise Unreadable("spec.extensions[].disabled: not a boolean")
        if not disabled:
            enabled.append(kind)
    return _unique(enabled, "spec.extensions")


def parse_addons(addons: object) -> tuple[str, ...]:
    """The names of the enabled `spec.addons` (deprecated by Gardener; absent on most shoots)."""
    if addons is None:
        return ()
    if not isinstance(addons, Mapping):
        raise Unreadable("spec.addons: not an object")
    if len(addons) > MAX_ENTRIES:
        raise Unreadable(f"spec.addons: {len(addons)} entries, more than {MAX_ENTRIES}")
    enabled: list[str] = []
    for name, addon in addons.items():
        _name(name, "spec.addons key")
        if not isinstance(addon, Mapping):
            raise Unreadable(f"spec.addons.{name}: not an object")
        on = addon.get("enabled", False)
        if not isinstance(on, bool):
            raise Unreadable(f"spec.addons.{name}.enabled: not a boolean")
        if on:
            enabled.append(name)
    return tuple(sorted(enabled))


def parse_parts(spec: Mapping[str, Any]) -> ShootParts:
    """Every part of one shoot's spec, each read whole or None (with why in `problems`)."""
    problems: list[str] = []

    def read(parse: Callable[[object], T], value: object) -> T | None:
        try:
            return parse(value)
        except Unreadable as e:
            problems.append(str(e))
            return None

    return ShootParts(
        pools=read(parse_pools, spec.get("provider")),
        extensions=read(parse_extensions, spec.get("extensions")),
        addons=read(parse_addons, spec.get("addons")),
        problems=tuple(problems),
    )
