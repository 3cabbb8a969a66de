"""Tracing with OpenTelemetry: optional, off unless configured, and free while off.

Configured by the standard variables only (docs/configuration.md, 'Tracing'): tracing is on when
`OTEL_TRACES_EXPORTER=otlp`, or when it is unset and an OTLP endpoint is given
(`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); `OTEL_TRACES_EXPORTER=none`
or `OTEL_SDK_DISABLED=true` keeps it off. Spans leave by OTLP over HTTP (protobuf) from a batch
processor; the SDK reads the rest of its variables itself (`OTEL_SERVICE_NAME`,
`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_BSP_*`, ...).

While off, nothing of OpenTelemetry is even imported: every instrumented place asks `tracer()`, one
module global, and takes its untraced path on None, so no span is created and no exporter runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from common.settings import SettingsError, env_bool

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

_tracer: Tracer | None = None

# What the SDK's own exporter choice may name here: OTLP, or nothing.
EXPORTERS = ("otlp", "none")
PROTOCOL = "http/protobuf"


def configured(env: Mapping[str, str]) -> bool:
    """Whether the environment asks for traces; raises SettingsError for what this build cannot send."""
    if env_bool(env, "OTEL_SDK_DISABLED", False):
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter and exporter not in EXPORTERS:
        raise SettingsError(f"OTEL_TRACES_EXPORTER={exporter!r}: expected one of {', '.join(EXPORTERS)}")
    protocols = {
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", ""),
        "OTEL_EXPORTER_OTLP_PROTOCOL": env.get("OTEL_EXPORTER_OTLP_PROTOCOL", ""),
    }
    for name, given in protocols.items():
        protocol = given.strip()
        if protocol and protocol != PROTOCOL:
            raise SettingsError(f"{name}={protocol!r}: only {PROTOCOL} (OTLP over HTTP) is supported")
    if exporter == "none":
        return False
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return exporter == "otlp" or bool(endpoint)


def start(env: Mapping[str, str], *, service_name: str) -> Callable[[], None] | None:
    """Start tracing if `env` asks for it (see `configured`); returns the shutdown that flushes what is
    left, or None while off. `service_name` is the default of OTEL_SERVICE_NAME."""
    global _tracer  # noqa: PLW0603 - the one switch every instrumented place reads
    if not configured(env):
        return None
    # Imported here so that a process with tracing off never loads the SDK.
    from opentelemetry import trace  # noqa: PLC0415
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: PLC0415
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415

    own = {} if env.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service_name}
    provider = TracerProvider(resource=Resource.create(own))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _tracer = provider.get_tracer("fleet-inventory")

    def shutdown() -> None:
        global _tracer  # noqa: PLW0603
        _tracer = None
        provider.shutdown()

    return shutdown


def tracer() -> Tracer | None:
    """The process's tracer, None while tracing is off."""
    return _tracer


@contextmanager
def use_tracer(new: Tracer | None) -> Iterator[None]:
    """Tests and benchmarks: trace with `new` (None: off) inside the block."""
    global _tracer  # noqa: PLW0603
    old, _tracer = _tracer, new
    try:
        yield
    finally:
        _tracer = old


def log_ids() -> tuple[str, str] | None:
    """The current span's trace and span id in hex, for the log line; None while off or outside a span."""
    if _tracer is None:
        return None
    from opentelemetry import trace  # noqa: PLC0415 - loaded already once tracing is on

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def set_error(span: Span, kind: str, message: str) -> None:
    """Mark `span` failed, with the kind of failure as `error.type`."""
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

    span.set_attribute("error.type", kind)
    span.set_status(Status(StatusCode.ERROR, message))
