"""Times from other writers, loaded within what Python and a protobuf Timestamp can hold.

PostgreSQL's timestamptz takes 'infinity', '-infinity' and years from 4713 BC to 294276; Python's
datetime and a protobuf Timestamp hold the years 1 to 9999. Fundament's tables carry no constraint
against the rest, and fleet inventory adds none to them (nothing of ours may refuse a write of
Fundament's), so one hand-edited time would make psycopg refuse every later read of its row. Every
process's connections therefore load such a time as the nearest end of the range (`configure`, the
pool's per-connection hook) and count it in `fleet_times_clamped_total`.
"""

from __future__ import annotations

import struct
from datetime import UTC, datetime
from typing import Any

import psycopg
from prometheus_client import Counter
from psycopg.types.datetime import TimestamptzBinaryLoader, TimestamptzLoader

EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
# The same bounds as microseconds since 2000-01-01 UTC (PostgreSQL's epoch, a timestamptz's binary form).
EARLIEST_POSTGRES_MICROS = -63_082_281_600_000_000
LATEST_POSTGRES_MICROS = 252_455_615_999_999_999

CLAMPED = Counter(
    "fleet_times_clamped_total",
    "Times read from the database outside the years 1 to 9999 (or infinite), loaded as the nearest end",
)


def clamp_postgres_micros(micros: int) -> int:
    """A timestamptz's microseconds since 2000-01-01 UTC, within the years 1 to 9999."""
    if micros < EARLIEST_POSTGRES_MICROS:
        CLAMPED.inc()
        return EARLIEST_POSTGRES_MICROS
    if micros > LATEST_POSTGRES_MICROS:
        CLAMPED.inc()
        return LATEST_POSTGRES_MICROS
    return micros


class ClampedTimestamptzLoader(TimestamptzLoader):
    """Text form: psycopg's own, and the nearest end of the range for what it refuses."""

    def load(self, data: Any) -> datetime:
        try:
            return super().load(data)
        except psycopg.DataError:
            CLAMPED.inc()
            text = bytes(data).decode(errors="replace")
            return EARLIEST if text.startswith("-") or text.endswith(" BC") else LATEST


class ClampedTimestamptzBinaryLoader(TimestamptzBinaryLoader):
    """Binary form: psycopg's own, and the nearest end of the range for what it refuses."""

    def load(self, data: Any) -> datetime:
        try:
            return super().load(data)
        except psycopg.DataError:
            CLAMPED.inc()
            (micros,) = struct.unpack("!q", bytes(data))
            return EARLIEST if micros < 0 else LATEST


def register(adapters: psycopg.adapt.AdaptersMap) -> None:
    """Load every timestamptz of `adapters`' connections within the range."""
    adapters.register_loader("timestamptz", ClampedTimestamptzLoader)
    adapters.register_loader("timestamptz", ClampedTimestamptzBinaryLoader)


async def configure(conn: psycopg.AsyncConnection[Any]) -> None:
    """The pool's per-connection hook: this connection loads times within the range."""
    register(conn.adapters)
