"""One spelling of a time everywhere: `common.clock.rfc3339` and the staff API's rewrite of details."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from google.protobuf import timestamp_pb2
from google.protobuf.json_format import MessageToDict

from common.clock import rfc3339
from common.naming import garden_namespace, project_name
from services.fleet.convert.details import details_struct, normalized_time


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 1, 1, tzinfo=UTC),
        datetime(2026, 1, 1, 12, 30, 5, 123000, tzinfo=UTC),
        datetime(2026, 1, 1, 12, 30, 5, 123456, tzinfo=UTC),
        datetime(2026, 1, 1, 14, 30, 5, 1000, tzinfo=timezone(timedelta(hours=2))),
    ],
)
def test_rfc3339_is_what_protobuf_json_gives_a_timestamp(moment: datetime) -> None:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(moment)
    assert rfc3339(moment) == stamp.ToJsonString()


def test_rfc3339_refuses_a_naive_time() -> None:
    with pytest.raises(ValueError, match="no time zone"):
        rfc3339(datetime(2026, 1, 1))  # noqa: DTZ001 - the point of the test


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00Z"),
        ("2026-01-01T02:00:00.5+02:00", "2026-01-01T00:00:00.500Z"),
        ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
        ("1.31.4", "1.31.4"),  # versions, names and labels are left alone
        ("garden-acme/prod", "garden-acme/prod"),
        ("2026-01-01", "2026-01-01"),  # a date alone is no date-time
        ("2026-13-01T00:00:00Z", "2026-13-01T00:00:00Z"),  # shaped like one, not one: unchanged
    ],
)
def test_normalized_time(text: str, expected: str) -> None:
    assert normalized_time(text) == expected


def test_details_are_rewritten_at_every_depth_and_nothing_else_changes() -> None:
    details = {
        "expected": {"cluster_deleted": "2026-01-01T00:00:00+00:00", "n": 3},
        "observed": [{"at": "2026-01-01T01:00:00+01:00"}, None, True],
        "reason": "words",
    }
    struct = MessageToDict(details_struct(details))
    assert struct["expected"]["cluster_deleted"] == "2026-01-01T00:00:00Z"
    assert struct["observed"][0]["at"] == "2026-01-01T00:00:00Z"
    assert struct["reason"] == "words"
    assert details["expected"]["cluster_deleted"] == "2026-01-01T00:00:00+00:00"  # type: ignore[index]


@pytest.mark.parametrize(
    ("organization", "project"),
    [("Acme Corp", "acmeco563e"), ("abc", "abcba7bf8f"), ("My-Org!@#$", "myorgda341")],
)
def test_project_names_follow_fundaments_rule(organization: str, project: str) -> None:
    assert project_name(organization) == project
    assert garden_namespace(organization) == f"garden-{project}"


def test_a_project_name_starting_with_a_digit_gets_an_x_and_one_with_no_letter_is_all_hash() -> None:
    assert project_name("7up").startswith("x7up")
    assert len(project_name("7up")) == len(project_name("!!!")) == 10
    assert project_name("!!!").isalnum()
