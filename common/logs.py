"""Structured JSON logs with a request id (and, with tracing on, the trace and span ids), configured once
per process by its `main.py`.

Every module logs through `logging.getLogger(__name__)` with lazy `%` arguments and puts context
in `extra`; this formatter turns each record into one JSON object with those extras and the current
request id (a contextvar set by the request stack).
"""

from __future__ import annotations

import contextvars
import logging
import sys
from datetime import UTC, datetime

import orjson

from common import tracing

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

# Attributes every LogRecord has; anything else on a record came from `extra` and is logged as a field.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's copy of the message with terminal colours
}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id and the record's extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        ids = tracing.log_ids()
        if ids is not None:
            entry["trace_id"], entry["span_id"] = ids
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


def configure_logging(level: str = "info", *, json: bool = True) -> None:
    """Send every log record to stderr, as JSON unless `json` is false (a terminal, a test)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if json else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # The access log of uvicorn repeats what the request stack logs already, with less context.
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
