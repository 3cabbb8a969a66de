"""Injected faults: what goes wrong, where, and for how many requests.

A fault targets the garden, one shoot (by key) or every shoot (`*`), optionally only one resource
(`pods`, `nodes`, ..., or `adminkubeconfig`/`viewerkubeconfig` on the garden). Resource
`prometheus` on a shoot's key (or `*`) hits that shoot's Prometheus, and only a fault set exactly
so does: the API server's faults leave the monitoring stack alone and the other way round. A fault on a shoot's
key with resource `adminkubeconfig` (or `viewerkubeconfig`) hits the garden's answer minting that
one shoot's credential. The most specific
fault wins: (target, resource), then (target, any), then (`*`, resource), then (`*`, any). A fault
holds until cleared, or for a number of requests (`times`).

What each kind does to the answer (the server applies it; see `sim/api/server.py`):

| kind | effect |
|---|---|
| latency | waits `seconds`, then answers normally |
| unauthorized, forbidden, not_found, server_error, gone, unavailable | the Status of a 401, 403, 404, 500, 410, 503 |
| hang | answers nothing until cleared or `seconds` pass (default 60), then normally |
| truncated | sends headers with the full Content-Length, then half the body, then closes |
| malformed | a 200 whose body is not valid JSON |
| reset | closes the TCP connection with RST before answering |
| endless_item, endless_list, flood, gzip_bomb, endless_answer, value_bomb, ... | hostile: `sim/api/faults/hostile.py` |

All state lives on the server's event loop (the control API marshals callers there).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from enum import StrEnum

ANY_SHOOT = "*"
DEFAULT_HANG_SECONDS = 60.0


class FaultKind(StrEnum):
    LATENCY = "latency"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    SERVER_ERROR = "server_error"
    GONE = "gone"
    UNAVAILABLE = "unavailable"
    HANG = "hang"
    TRUNCATED = "truncated"
    MALFORMED = "malformed"
    RESET = "reset"
    # The hostile answers (sim/api/faults/hostile.py).
    ENDLESS_ITEM = "endless_item"
    ENDLESS_LIST = "endless_list"
    FLOOD = "flood"
    GZIP_BOMB = "gzip_bomb"
    ENDLESS_ANSWER = "endless_answer"
    HTTP_SERVER = "http_server"
    STRING_BOOLEAN = "string_boolean"
    REDIRECT = "redirect"
    VALUE_BOMB = "value_bomb"
    ENDLESS_PAGES = "endless_pages"
    HUGE_VALUE = "huge_value"
    ANY_CREDENTIALS = "any_credentials"

    @classmethod
    def parse(cls, text: str) -> FaultKind:
        """A kind by name, or by the HTTP code it produces (`401`, `500`, ...)."""
        aliases = {
            "401": "unauthorized",
            "403": "forbidden",
            "404": "not_found",
            "500": "server_error",
            "410": "gone",
            "503": "unavailable",
        }
        try:
            return cls(aliases.get(text, text))
        except ValueError:
            choices = ", ".join([k.value for k in cls] + list(aliases))
            raise ValueError(f"unknown fault {text!r}; choose one of {choices}") from None


# Faults that replace the answer to an authenticated request with an error Status.
STATUS_FAULTS = frozenset(
    {
        FaultKind.UNAUTHORIZED,
        FaultKind.FORBIDDEN,
        FaultKind.NOT_FOUND,
        FaultKind.SERVER_ERROR,
        FaultKind.GONE,
        FaultKind.UNAVAILABLE,
    }
)


@dataclass(slots=True)
class Fault:
    kind: FaultKind
    target: str
    resource: str | None = None
    seconds: float = 0.0
    times: int | None = None  # requests left to hit; None = until cleared
    count: int = 0  # items a `flood` (or a page of `endless_pages`) sends, MiB a `value_bomb` sends
    sample: bytes | None = None  # `endless_pages`: the list's first item, kept from the first answer
    released: asyncio.Event | None = field(default=None, repr=False)

    def hang_bound(self) -> float:
        return self.seconds if self.seconds > 0 else DEFAULT_HANG_SECONDS


class FaultTable:
    def __init__(self) -> None:
        self._faults: dict[tuple[str, str | None], Fault] = {}
        self._spent_hangs: list[Fault] = []

    def add(self, fault: Fault) -> None:
        if fault.times is not None and fault.times <= 0:
            raise ValueError(f"times must be positive, not {fault.times}")
        if fault.seconds < 0:
            raise ValueError(f"seconds must not be negative, not {fault.seconds}")
        if fault.kind is FaultKind.LATENCY and fault.seconds == 0:
            raise ValueError("a latency fault needs seconds > 0")
        if fault.kind is FaultKind.FLOOD and fault.count <= 0:
            raise ValueError("a flood fault needs count > 0 (the items it sends)")
        if fault.kind is FaultKind.HANG:
            fault.released = asyncio.Event()
        self._release(self._faults.get((fault.target, fault.resource)))
        self._faults[(fault.target, fault.resource)] = fault

    def take(self, target: str, resource: str | None) -> Fault | None:
        """The fault that applies to one request, counted against its `times`."""
        candidates: list[tuple[str, str | None]] = [(target, resource)] if resource is not None else []
        candidates.append((target, None))
        if target != "garden":
            if resource is not None:
                candidates.append((ANY_SHOOT, resource))
            candidates.append((ANY_SHOOT, None))
        for key in candidates:
            fault = self._faults.get(key)
            if fault is None:
                continue
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    del self._faults[key]
                    if fault.released is not None:
                        self._spent_hangs.append(fault)  # still holding a request: clear() must release it
            return fault
        return None

    def take_exact(self, target: str, resource: str) -> Fault | None:
        """The fault set on exactly (target, resource), counted against its `times`.

        The garden looks up a kubeconfig request's fault this way under the shoot's key first, so
        a hostile credential can be played for one shoot while the others mint normally.
        """
        fault = self._faults.get((target, resource))
        if fault is None:
            return None
        if fault.times is not None:
            fault.times -= 1
            if fault.times <= 0:
                del self._faults[(target, resource)]
        return fault

    def clear(self, target: str | None = None) -> None:
        """Drop the faults of one target (or all), releasing any request they hold."""
        for key in list(self._faults):
            if target is None or key[0] == target:
                self._release(self._faults.pop(key))
        for fault in self._spent_hangs:
            if target is None or fault.target == target:
                self._release(fault)
        self._spent_hangs = [f for f in self._spent_hangs if not (f.released and f.released.is_set())]

    def active(self) -> list[Fault]:
        return list(self._faults.values())

    @staticmethod
    def _release(fault: Fault | None) -> None:
        if fault is not None and fault.released is not None:
            fault.released.set()
