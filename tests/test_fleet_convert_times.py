"""ListOrganizations sets its timestamps in integers; they must equal protobuf's own FromDatetime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from services.fleet.convert import _set_time


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 12, 1, 13, 14, 15, 123456, tzinfo=UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(1901, 5, 6, 7, 8, 9, 1, tzinfo=timezone(timedelta(hours=2))),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone(timedelta(hours=11))),
    ],
    ids=["now", "epoch", "just-before-epoch", "long-ago-east", "far-future-east"],
)
def test_set_time_is_from_datetime(value: datetime) -> None:
    expected, got = Timestamp(), Timestamp()
    expected.FromDatetime(value)
    _set_time(got, value)
    assert got == expected
    assert got.ToDatetime(tzinfo=UTC) == value
