"""The HTTP side of the simulator: one aiohttp application on one TLS port.

Paths (one port, so one certificate and one kubeconfig CA serve the garden and every shoot; see
docs/architecture.md, 'fleet-sim is a pure Kubernetes fake on one port'):

- `/_sim/...` the control endpoint (control token), handed in by whoever assembles the app
  (`sim/runner.py` mounts `sim/control/endpoint.py`), so the API knows nothing of control;
- `/shoots/<project>--<name>/...` one shoot's API server, see `sim/api/apiservers/shoot.py`;
- `/prometheus/<project>--<name>/...` one shoot's Prometheus, see `sim/api/prometheus/http_api.py`;
- `/kube-state-metrics/<project>--<name>/metrics` its kube-state-metrics exposition, see
  `sim/api/prometheus/exposition.py` (what a real Prometheus scrapes in the tests);
- everything else: the garden's API server, see `sim/api/apiservers/garden.py`.

Each API request goes through one pipeline, in this order: log it; the configured latency;
network-level faults (latency, hang, reset); the API module (authentication, then the answer);
status faults (401, 403, 404, 500, 410) replace the answer of an authenticated request; body
faults (truncated, malformed) mangle what is sent. Long lists are streamed in chunks, so a list of
150,000 pods never sits in memory as one body; a list that fits in one chunk goes out as one body.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import socket
import struct
from collections.abc import Awaitable, Callable

from aiohttp import web

from sim.api.apiservers.garden import handle_garden
from sim.api.apiservers.shoot import handle_shoot
from sim.api.credentials.tokens import TokenKind
from sim.api.faults.hostile import (
    KUBECONFIG_FAULTS,
    STREAM_FAULTS,
    endless_page,
    huge_values,
    redirect,
    rewrite_kubeconfig,
    send_stream_fault,
)
from sim.api.faults.injected import ANY_SHOOT, STATUS_FAULTS, Fault, FaultKind
from sim.api.machinery.kinds import KUBECONFIG_REQUEST_KINDS
from sim.api.machinery.paths import ApiPath, parse_api_path
from sim.api.machinery.replies import Reply, error_reply
from sim.api.machinery.request import ApiRequest
from sim.api.machinery.status import (
    ApiError,
    expired,
    forbidden,
    internal_error,
    no_such_resource,
    service_unavailable,
    unauthorized,
)
from sim.api.prometheus.exposition import handle_metrics
from sim.api.prometheus.http_api import error_reply as prometheus_error
from sim.api.prometheus.http_api import flood_reply, handle_prometheus, unauthorized_reply, unavailable_reply
from sim.api.prometheus.monitoring import USERNAME
from sim.api.requestlog import GARDEN, LoggedRequest
from sim.api.simulator import Simulator

logger = logging.getLogger(__name__)

KUBECONFIG_SUBRESOURCES = frozenset(KUBECONFIG_REQUEST_KINDS)
# The fault resource of one shoot's monitoring secret in the garden (`<shoot>.monitoring`), and the
# continue tokens of `endless_pages`.
MONITORING_SECRET = "monitoring-secret"  # noqa: S105  # a fault resource, not a secret
MONITORING_SUFFIX = ".monitoring"
_PAGE_TOKEN = "hostile-page-"  # noqa: S105  # a continue token, not a secret
# The fault resource (and request-log tag) of a shoot's Prometheus.
PROMETHEUS = "prometheus"

MAX_BODY_BYTES = 1024 * 1024

ControlHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _prometheus_fault_reply(fault: Fault, reply: Reply, now: float, api_path: str) -> Reply:
    """A 200 of a shoot's Prometheus as the fault changes it (the status faults, a flood, huge values)."""
    if fault.kind is FaultKind.UNAUTHORIZED:
        reply = unauthorized_reply()
    elif fault.kind is FaultKind.UNAVAILABLE:
        reply = unavailable_reply()
    elif fault.kind in STATUS_FAULTS:
        reply = prometheus_error(500, "internal", "injected by fleet-sim")
    elif fault.kind is FaultKind.FLOOD:
        reply = flood_reply(fault.count, now)
    elif fault.kind is FaultKind.HUGE_VALUE and api_path == "/api/v1/query":
        reply = huge_values(reply)
    return reply


def basic_authorization(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _status_fault(fault: Fault, request: ApiRequest) -> ApiError:
    path = request.path
    resource = path.resource or ""
    match fault.kind:
        case FaultKind.UNAUTHORIZED:
            return unauthorized()
        case FaultKind.FORBIDDEN:
            verb = "list" if path.name is None else "get"
            if request.method == "POST":
                verb = "create"
                resource = f"{resource}/{path.subresource}"
            return forbidden(request.principal.user, verb, path.group or "", resource, path.namespace)
        case FaultKind.NOT_FOUND:
            return no_such_resource()
        case FaultKind.GONE:
            return expired("too old resource version: 1 (2)")
        case FaultKind.UNAVAILABLE:
            return service_unavailable("the server is currently unable to handle the request (injected by fleet-sim)")
        case _:
            return internal_error("etcdserver: request timed out (injected by fleet-sim)")


def _abort(request: web.Request, *, reset: bool) -> None:
    """Drop the connection now; with `reset`, as an RST (SO_LINGER 0), not an orderly close."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if reset and sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


class SimApp:
    """Builds the aiohttp application over one `Simulator`, with the control endpoint it is given."""

    def __init__(self, sim: Simulator, control: ControlHandler) -> None:
        self.sim = sim
        self.control = control

    def build(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_route("*", "/_sim/{tail:.*}", self.control)
        app.router.add_route("*", "/shoots/{key}", self._shoot)
        app.router.add_route("*", "/shoots/{key}/{tail:.*}", self._shoot)
        app.router.add_route("*", "/prometheus/{key}/{tail:.*}", self._prometheus)
        app.router.add_route("GET", "/kube-state-metrics/{key}/metrics", self._metrics)
        app.router.add_route("*", "/{tail:.*}", self._garden)
        return app

    async def _garden(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, GARDEN, request.path, lambda r: handle_garden(self.sim, r))

    async def _shoot(self, request: web.Request) -> web.StreamResponse:
        key = request.match_info["key"]
        api_path = "/" + request.match_info.get("tail", "")
        return await self._serve(request, key, api_path, lambda r: handle_shoot(self.sim, key, r))

    async def _serve(
        self, request: web.Request, target: str, api_path: str, answer: Callable[[ApiRequest], Reply]
    ) -> web.StreamResponse:
        sim = self.sim
        principal = sim.tokens.resolve(request.headers.get("Authorization"), sim.clock.time())
        accept = request.headers.get("Accept", "")
        entry = LoggedRequest(
            target,
            request.method,
            request.path,
            api_path,
            dict(request.query),
            accept,
            principal.kind,
            sim.clock.time(),
        )
        sim.requests.append(entry)
        if sim.settings.latency_seconds > 0:
            await asyncio.sleep(sim.settings.latency_seconds)
        path: ApiPath = parse_api_path(api_path)
        fault = (
            self._mint_fault(target, path)
            or self._secret_fault(target, path)
            or sim.faults.take(target, path.subresource or path.resource)
        )
        if fault is not None:
            entry.fault = fault.kind.value
            if fault.kind is FaultKind.RESET:
                _abort(request, reset=True)
                return web.Response(status=204)  # never sent: the connection is gone
            if fault.kind is FaultKind.REDIRECT:
                return redirect(request)
            if fault.kind is FaultKind.LATENCY:
                await asyncio.sleep(fault.seconds)
            elif fault.kind is FaultKind.HANG and fault.released is not None:
                with contextlib.suppress(TimeoutError):  # the bound passed: answer after all
                    await asyncio.wait_for(fault.released.wait(), fault.hang_bound())
        body = await request.read() if request.can_read_body else b""
        api_request = ApiRequest(request.method, path, request.query, accept, principal, body)
        try:
            reply = answer(api_request)
            authenticated = principal.kind not in {TokenKind.NONE, TokenKind.UNKNOWN, TokenKind.EXPIRED}
            if fault is not None and fault.kind in STATUS_FAULTS and authenticated:
                raise _status_fault(fault, api_request)
        except ApiError as error:
            reply = error_reply(error)
        except Exception:
            logger.exception("request failed", extra={"target": target, "path": api_path})
            reply = error_reply(internal_error("fleet-sim failed to answer; see its log"))
        entry.status = reply.status
        if fault is not None and fault.kind in KUBECONFIG_FAULTS:
            reply = rewrite_kubeconfig(reply, fault)
        if fault is not None and fault.kind is FaultKind.ENDLESS_PAGES:
            token = request.query.get("continue", "")
            page = int(token.removeprefix(_PAGE_TOKEN)) if token.startswith(_PAGE_TOKEN) else 0
            reply = endless_page(reply, fault, page)
        return await self._send(request, reply, fault)

    async def _metrics(self, request: web.Request) -> web.StreamResponse:
        """One shoot's kube-state-metrics exposition (sim/api/prometheus/exposition.py), for a real Prometheus to
        scrape; not logged (a scrape every second would bury the collector's requests) and never faulted."""
        return await self._send(request, handle_metrics(self.sim, request.match_info["key"]), None)

    async def _prometheus(self, request: web.Request) -> web.StreamResponse:
        """One shoot's Prometheus (sim/api/prometheus/http_api.py): the same pipeline, its own faults and errors."""
        sim = self.sim
        key = request.match_info["key"]
        api_path = "/" + request.match_info.get("tail", "")
        entry = LoggedRequest(
            key,
            request.method,
            request.path,
            api_path,
            dict(request.query),
            request.headers.get("Accept", ""),
            TokenKind.NONE,
            sim.clock.time(),
            extra={"api": PROMETHEUS},
        )
        sim.requests.append(entry)
        if sim.settings.latency_seconds > 0:
            await asyncio.sleep(sim.settings.latency_seconds)
        # Only a fault set on the Prometheus itself applies (never the API server's).
        fault = sim.faults.take_exact(key, PROMETHEUS) or sim.faults.take_exact(ANY_SHOOT, PROMETHEUS)
        if fault is not None:
            entry.fault = fault.kind.value
            if fault.kind is FaultKind.RESET:
                _abort(request, reset=True)
                return web.Response(status=204)
            if fault.kind is FaultKind.REDIRECT:
                return redirect(request)
            if fault.kind is FaultKind.LATENCY:
                await asyncio.sleep(fault.seconds)
            elif fault.kind is FaultKind.HANG and fault.released is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(fault.released.wait(), fault.hang_bound())
        authorization = request.headers.get("Authorization")
        shoot = sim.world.shoot(key)
        if fault is not None and fault.kind is FaultKind.ANY_CREDENTIALS and shoot is not None:
            authorization = basic_authorization(USERNAME, sim.monitoring.password(shoot))
        reply = handle_prometheus(
            sim, key, method=request.method, path=api_path, query=request.query, authorization=authorization
        )
        if fault is not None and reply.status == 200:
            reply = _prometheus_fault_reply(fault, reply, sim.clock.time(), api_path)
        entry.status = reply.status
        return await self._send(request, reply, None if fault is not None and fault.kind is FaultKind.FLOOD else fault)

    def _mint_fault(self, target: str, path: ApiPath) -> Fault | None:
        """A fault set for minting one shoot's credential (on the shoot's key), before the garden's own."""
        if target != GARDEN or path.subresource not in KUBECONFIG_SUBRESOURCES or path.namespace is None:
            return None
        shoot = self.sim.world.shoots.get(path.namespace, path.name or "")
        if shoot is None:
            return None
        return self.sim.faults.take_exact(shoot.key, path.subresource)

    def _secret_fault(self, target: str, path: ApiPath) -> Fault | None:
        """A fault set for reading one shoot's monitoring secret (resource `monitoring-secret` on the shoot's key)."""
        if target != GARDEN or path.resource != "secrets" or path.namespace is None:
            return None
        name = path.name or ""
        if not name.endswith(MONITORING_SUFFIX):
            return None
        shoot = self.sim.world.shoots.get(path.namespace, name.removesuffix(MONITORING_SUFFIX))
        if shoot is None:
            return None
        return self.sim.faults.take_exact(shoot.key, MONITORING_SECRET)

    async def _send(self, request: web.Request, reply: Reply, fault: Fault | None) -> web.StreamResponse:
        headers = {"Content-Type": reply.content_type, "Cache-Control": "no-cache, private", **reply.headers}
        if fault is not None and fault.kind in STREAM_FAULTS:  # whatever the real answer would have been
            return await send_stream_fault(request, reply, fault, headers)
        if fault is not None and fault.kind is FaultKind.TRUNCATED:
            body = b"".join(reply.chunks)
            response = web.StreamResponse(status=reply.status, headers=headers)
            response.content_length = len(body)
            await response.prepare(request)
            await response.write(body[: len(body) // 2])
            await asyncio.sleep(0)  # let the half body reach the socket before the close
            _abort(request, reset=False)
            return response
        if fault is not None and fault.kind is FaultKind.MALFORMED:
            body = b"".join(reply.chunks)
            mangled = body[: max(1, len(body) // 2)] + b'"},<<fleet-sim: malformed>>'
            return web.Response(status=reply.status, body=mangled, headers=headers)
        chunks = iter(reply.chunks)
        first = next(chunks, b"")
        second = next(chunks, None)
        if second is None:
            return web.Response(status=reply.status, body=first, headers=headers)
        third = next(chunks, None)
        if third is None:  # a list's head and all its items: short enough to send as one body
            return web.Response(status=reply.status, body=first + second, headers=headers)
        response = web.StreamResponse(status=reply.status, headers=headers)
        try:
            await response.prepare(request)
            await response.write(first)
            await response.write(second)
            await response.write(third)
            for chunk in chunks:
                await response.write(chunk)
            await response.write_eof()
        except ConnectionResetError:  # the client gave up (its timeout): nothing left to send it
            logger.debug("client went away mid-list", extra={"path": request.path})
        return response
