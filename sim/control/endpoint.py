"""The control endpoint over HTTP, for the demo, the soak and people: `/_sim/...` on the API port.

Authenticated with the control token (written to the state dir, never the garden's). Requests to
it are not part of the request log, so tests only see what API clients asked.

- `GET /_sim/state`: address, shoots, active faults, minted credentials
- `GET /_sim/requests[?target=...]`, `DELETE /_sim/requests`: the request log
- `POST /_sim/actions/<name>` with a JSON object of arguments: any method named in
  `sim.control.HTTP_ACTIONS` (`fault`, `scale_pool`, `delete_shoot`, ...); answers `{"result": ...}`
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import orjson
from aiohttp import web

from sim.api.credentials.tokens import TokenKind
from sim.api.simulator import Simulator
from sim.control.actions import HTTP_ACTIONS, SimControl


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        status=status, body=orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS), content_type="application/json"
    )


def _error(status: int, message: str) -> web.Response:
    return _json({"error": message}, status)


def _plain(value: Any) -> Any:
    """Make a result JSON-friendly (dataclasses with enums and nested dataclasses)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


async def handle_control(sim: Simulator, control: SimControl, request: web.Request) -> web.StreamResponse:
    principal = sim.tokens.resolve(request.headers.get("Authorization"), sim.clock.time())
    if principal.kind is not TokenKind.CONTROL:
        return _error(401, "the control endpoint needs the control token")
    tail = request.match_info.get("tail", "")
    if tail == "state" and request.method == "GET":
        return _state(sim, control)
    if tail == "requests" and request.method in {"GET", "DELETE"}:
        if request.method == "DELETE":
            control.clear_requests()
            return _json({"result": None})
        return _json([_plain(e) for e in control.requests(request.query.get("target"))])
    if tail.startswith("actions/") and request.method == "POST":
        return await _action(control, tail.removeprefix("actions/"), request)
    return _error(404, f"no control endpoint {request.method} /_sim/{tail}")


def _state(sim: Simulator, control: SimControl) -> web.Response:
    return _json(
        {
            "url": sim.base_url,
            "shoots": len(sim.world.shoots),
            "faults": control.faults(),
            "minted_credentials": sim.tokens.minted_count,
            "clock": sim.clock.now().isoformat(),
        }
    )


async def _action(control: SimControl, action: str, request: web.Request) -> web.Response:
    """Call one control method by name with the JSON body as keyword arguments."""
    if action not in HTTP_ACTIONS:
        return _error(404, f"no action {action!r}; actions: {', '.join(HTTP_ACTIONS)}")
    try:
        arguments = orjson.loads(await request.read() or b"{}")
    except orjson.JSONDecodeError as error:
        arguments = error
    if not isinstance(arguments, dict):
        return _error(400, f"the body must be a JSON object of arguments ({arguments})")
    method = getattr(control, action)
    try:
        inspect.signature(method).bind(**arguments)
    except TypeError as error:
        return _error(400, f"{action}: {error}")
    try:
        result = method(**arguments)
    except LookupError as error:  # WorldError, ContentsError: an unknown shoot, pool, namespace
        return _error(404, str(error).strip("'\""))
    except ValueError as error:
        return _error(400, str(error))
    return _json({"result": _plain(result)})
