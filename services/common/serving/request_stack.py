"""The layers every RPC passes on either protocol: request id, log and metrics, error mapping, auth."""

from __future__ import annotations

import functools
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import Headers, RequestContext
from prometheus_client import Counter, Histogram

from common import tracing
from common.logs import request_id_var
from services.common.errors import map_errors
from services.common.metrics import RPC_DURATION, RPC_REQUESTS

if TYPE_CHECKING:
    from opentelemetry.trace import Span

logger = logging.getLogger(__name__)

RES = TypeVar("RES")

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def new_request_id() -> str:
    """32 random hex digits, like a UUID's. A request id must be unique, not unpredictable, so the
    process's Mersenne Twister serves, cheaper per call than `uuid4()` and its system call."""
    return f"{random.getrandbits(128):032x}"


# The metric children of each method, protocol and code, looked up once instead of on every call
# (`labels()` validates and locks each time). The keys are bounded: methods x protocols x codes.
@functools.cache
def _requests_counter(service: str, method: str, protocol: str, code: str) -> Counter:
    return RPC_REQUESTS.labels(service, method, protocol, code)


@functools.cache
def _duration_histogram(service: str, method: str, protocol: str) -> Histogram:
    return RPC_DURATION.labels(service, method, protocol)


class Authenticator(Protocol):
    """Checks a call's credential; returns the caller's subject or raises `Unauthenticated`."""

    def __call__(self, headers: Headers) -> str: ...


@dataclass(frozen=True)
class RequestStack:
    """The layers every RPC passes on either protocol, outermost first.

    1. request id: taken from `x-request-id` when well-formed, else made; echoed in the response,
       with the service's `response_headers`;
    2. logging and metrics: one log line and one counter increment per call, with code and duration;
    3. error mapping: `map_errors()`, so every failure leaves as a proper status;
    4. authentication: `authenticate` (when set) runs before the service, so a bad credential
       never reaches the database;
    5. the service method.
    """

    authenticate: Authenticator | None = None
    success_log_level: int = logging.INFO
    """Level of the one log line of a call that ended OK (failures are always logged at INFO). An API
    that answers many identical cached calls may lower it to DEBUG: its metrics still count every call."""
    response_headers: tuple[tuple[str, str], ...] = ()
    """Headers every answer of the service carries, errors and refused credentials included, set once
    where the service is mounted (the staff API's `Cache-Control: private, no-store`). A method may
    still set its own value of one (the public API's max-age is set per answer)."""

    async def run(self, ctx: RequestContext[Any, Any], protocol: str, call: Callable[[], Awaitable[RES]]) -> RES:
        tracer = tracing.tracer()
        if tracer is None:
            return await self._run(ctx, protocol, call, None)
        # A SERVER span per call, continuing the caller's trace (W3C traceparent, or OTEL_PROPAGATORS'),
        # current while the call runs so that its statements and log lines belong to it. Attached by
        # hand: contextlib's two generators around it cost more than the span's own bookkeeping.
        from opentelemetry import context, trace  # noqa: PLC0415 - loaded once tracing is on
        from opentelemetry.propagate import extract  # noqa: PLC0415

        method = ctx.method
        headers = ctx.request_headers
        carrier = {name: value for name in _PROPAGATED if (value := headers.get(name)) is not None}
        span = tracer.start_span(
            f"{method.service_name}/{method.name}",
            context=extract(carrier),
            kind=trace.SpanKind.SERVER,
            attributes={
                "rpc.system": "grpc" if protocol == "grpc" else "connect_rpc",
                "rpc.service": method.service_name,
                "rpc.method": method.name,
            },
        )
        token = context.attach(trace.set_span_in_context(span))
        try:
            return await self._run(ctx, protocol, call, span)
        finally:
            context.detach(token)
            span.end()

    async def _run(
        self,
        ctx: RequestContext[Any, Any],
        protocol: str,
        call: Callable[[], Awaitable[RES]],
        span: Span | None,
    ) -> RES:
        method = ctx.method
        incoming = ctx.request_headers.get("x-request-id", "")
        request_id = incoming if _REQUEST_ID.match(incoming) else new_request_id()
        token = request_id_var.set(request_id)
        ctx.response_headers["x-request-id"] = request_id
        for name, value in self.response_headers:
            ctx.response_headers[name] = value
        started = time.perf_counter()
        subject: str | None = None
        # What a call that never reaches a status counts as: cancelled by its client's deadline or a
        # disconnect (CancelledError passes map_errors untouched, being no Exception).
        code_name = Code.CANCELED.value
        try:
            with map_errors(f"{method.service_name}/{method.name}"):
                if self.authenticate is not None:
                    subject = self.authenticate(ctx.request_headers)
                response = await call()
            code_name = "ok"
            return response
        except ConnectError as e:
            code_name = e.code.value
            raise
        finally:
            elapsed = time.perf_counter() - started
            _requests_counter(method.service_name, method.name, protocol, code_name).inc()
            _duration_histogram(method.service_name, method.name, protocol).observe(elapsed)
            if span is not None:
                _end_span(span, protocol, code_name, subject)
            level = self.success_log_level if code_name == "ok" else logging.INFO
            if logger.isEnabledFor(level):
                self._log(level, ctx, protocol=protocol, code_name=code_name, elapsed=elapsed, subject=subject)
            request_id_var.reset(token)

    @staticmethod
    def _log(
        level: int,
        ctx: RequestContext[Any, Any],
        *,
        protocol: str,
        code_name: str,
        elapsed: float,
        subject: str | None,
    ) -> None:
        method = ctx.method
        logger.log(
            level,
            "rpc %s/%s %s",
            method.service_name,
            method.name,
            code_name,
            extra={
                "procedure": f"/{method.service_name}/{method.name}",
                "protocol": protocol,
                "code": code_name,
                "duration_ms": round(elapsed * 1000, 2),
                "subject": subject,
                "peer": ctx.client_address,
                "http_method": ctx.http_method,
            },
        )


# The headers a caller's trace context may come in (W3C Trace Context and Baggage, B3 if configured).
_PROPAGATED = ("traceparent", "tracestate", "baggage", "b3", "x-b3-traceid", "x-b3-spanid", "x-b3-sampled")
# Codes that say the server failed (OpenTelemetry's RPC conventions): only these mark a SERVER span an error.
_SERVER_FAULTS = frozenset(
    c.value for c in (Code.UNKNOWN, Code.INTERNAL, Code.UNAVAILABLE, Code.DATA_LOSS, Code.UNIMPLEMENTED,
                      Code.DEADLINE_EXCEEDED)
)  # fmt: skip
# gRPC's numeric status of each Connect code name, for rpc.grpc.status_code.
_GRPC_STATUS = {
    "ok": 0, "canceled": 1, "unknown": 2, "invalid_argument": 3, "deadline_exceeded": 4, "not_found": 5,
    "already_exists": 6, "permission_denied": 7, "resource_exhausted": 8, "failed_precondition": 9, "aborted": 10,
    "out_of_range": 11, "unimplemented": 12, "internal": 13, "unavailable": 14, "data_loss": 15,
    "unauthenticated": 16,
}  # fmt: skip


def _end_span(span: Span, protocol: str, code_name: str, subject: str | None) -> None:
    # No request id: the call's log line holds it beside the trace id, and each attribute costs every span.
    attributes: dict[str, str | int] = {}
    if subject is not None:
        attributes["enduser.id"] = subject
    if protocol == "grpc":
        attributes["rpc.grpc.status_code"] = _GRPC_STATUS[code_name]
    elif code_name != "ok":
        attributes["rpc.connect_rpc.error_code"] = code_name
    if attributes:
        span.set_attributes(attributes)
    if code_name in _SERVER_FAULTS:
        tracing.set_error(span, code_name, code_name)


class ConnectStackInterceptor:
    """Puts the request stack in front of every Connect unary call."""

    def __init__(self, stack: RequestStack) -> None:
        self._stack = stack

    async def intercept_unary(
        self,
        call_next: Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]],
        request: Any,
        ctx: RequestContext[Any, Any],
        /,
    ) -> Any:
        content_type = ctx.request_headers.get("content-type", "")
        protocol = "grpc-web" if content_type.startswith("application/grpc-web") else "connect"
        return await self._stack.run(ctx, protocol, lambda: call_next(request, ctx))
