"""ListUsage over real sockets against a brute-force sum over the same ledger.

Seeded random ledgers (rows open and closed, inside, across and outside the window and its steps,
on step boundaries and off them by microseconds, billable or not, on live, deleted and system
clusters) are written into a clone of the world; every aggregate, paged in small pages, must equal
what a plain Python sweep over the rows gives by the billing rule. Then the bounds: hostile windows,
steps and pages are INVALID_ARGUMENT with a message that says what to change.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fundament.fleet.v1 import fleet_pb2

from tests.fixtures.fleet_api import NOW, CallFailed, FleetApiUnderTest

TYPES = ("kubernetes.node", "kubernetes.persistentvolume", "gardener.cluster")
AGGREGATES = {
    fleet_pb2.USAGE_AGGREGATE_ORGANIZATION: "organization",
    fleet_pb2.USAGE_AGGREGATE_CLUSTER: "cluster",
    fleet_pb2.USAGE_AGGREGATE_RESOURCE_TYPE: "resource_type",
}
SEEDS = range(12)
MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class Cluster:
    id: uuid.UUID
    name: str
    organization_id: uuid.UUID
    organization_name: str
    system: bool


@dataclass(frozen=True)
class Row:
    cluster: Cluster
    resource_type: str
    billable: bool
    created: datetime
    last_seen: datetime
    destroyed: datetime | None


def clusters_of(api: FleetApiUnderTest) -> list[Cluster]:
    """Six clusters of four organizations (the world has one cluster each: two get a second one, one of
    them deleted, so organizations add up several clusters), and a cluster of the system organization."""
    with api.database.admin() as conn:
        organizations = conn.execute(
            "SELECT o.id FROM tenant.organizations o JOIN tenant.clusters c ON c.organization_id = o.id"
            " WHERE o.id <> tenant.system_organization_id() AND o.deleted IS NULL AND c.deleted IS NULL"
            " ORDER BY o.name LIMIT 4"
        ).fetchall()
        for (organization_id,), deleted in zip(organizations[:2], (None, NOW - timedelta(days=1)), strict=True):
            conn.execute(
                "INSERT INTO tenant.clusters (organization_id, name, region, kubernetes_version, deleted)"
                " VALUES (%s, 'usage-extra', 'eu-west-1', '1.31.1', %s)",
                (organization_id, deleted),
            )
        rows = conn.execute(
            "SELECT c.id, c.name, o.id, o.name, o.id = tenant.system_organization_id()"
            " FROM tenant.clusters c JOIN tenant.organizations o ON o.id = c.organization_id"
            " WHERE o.id = ANY(%s) OR c.id = (SELECT min(c2.id::text)::uuid FROM tenant.clusters c2"
            " WHERE c2.organization_id = tenant.system_organization_id()) ORDER BY c.id",
            ([o[0] for o in organizations],),
        ).fetchall()
    clusters = [Cluster(*r) for r in rows]  # type: ignore[arg-type]  # psycopg rows are untyped tuples
    assert len(clusters) == 7 and sum(c.system for c in clusters) == 1
    return clusters


def random_time(rng: random.Random, around: datetime, anchors: list[datetime]) -> datetime:
    """A time near `around`: often exactly an anchor (a step boundary, the window's edges, now) or a
    microsecond off one, else anywhere within ten days."""
    pick = rng.random()
    if pick < 0.3:
        return rng.choice(anchors) + MICROSECOND * rng.choice((-1, 0, 0, 1))
    return around + timedelta(microseconds=rng.randrange(-10 * 86400 * 10**6, 10 * 86400 * 10**6))


def random_ledger(rng: random.Random, clusters: list[Cluster], anchors: list[datetime]) -> list[Row]:
    rows = []
    for _ in range(rng.randrange(0, 60)):
        cluster = rng.choice(clusters)
        created = random_time(rng, NOW - timedelta(days=5), anchors)
        kind = rng.random()
        destroyed: datetime | None = None
        if kind < 0.6:  # closed: destroyed at or after created, last seen in between
            destroyed = max(created, random_time(rng, created + timedelta(days=2), anchors))
            last_seen = created + (destroyed - created) * rng.choice((0, 1, rng.random()))
        else:  # open: seen until some time up to now (or, from a skewed clock, a little after)
            end = max(created, NOW + timedelta(minutes=rng.choice((0, 0, 5))))
            last_seen = created + (end - created) * rng.choice((0, 1, rng.random()))
        rows.append(
            Row(
                cluster,
                rng.choice(TYPES),
                rng.random() < 0.7,
                created,
                last_seen,
                destroyed,
            )
        )
    return rows


def write_ledger(api: FleetApiUnderTest, rows: list[Row]) -> None:
    with api.database.admin() as conn:
        conn.execute("TRUNCATE tenant.infrastructure_resources")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO tenant.infrastructure_resources (cluster_id, resource_type, name, billable, created,"
                " last_seen, destroyed, destroyed_reason) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        r.cluster.id,
                        r.resource_type,
                        f"r-{i}",
                        r.billable,
                        r.created,
                        r.last_seen,
                        r.destroyed,
                        None if r.destroyed is None else "not_found",
                    )
                    for i, r in enumerate(rows)
                ],
            )


# --- the brute force ------------------------------------------------------------------------------


def micros(delta: timedelta) -> int:
    return delta // MICROSECOND


def step_bounds(start: datetime, end: datetime, step_seconds: int) -> list[tuple[datetime, datetime]]:
    if step_seconds == 0:
        return [(start, end)]
    bounds, at = [], start
    while at < end:
        bounds.append((at, min(at + timedelta(seconds=step_seconds), end)))
        at += timedelta(seconds=step_seconds)
    return bounds


def group_key(row: Row, aggregate: str) -> tuple[str, ...]:
    if aggregate == "organization":
        return (row.cluster.organization_name, str(row.cluster.organization_id), "", "", row.resource_type)
    if aggregate == "cluster":
        c = row.cluster
        return (c.organization_name, str(c.organization_id), str(c.id), c.name, row.resource_type)
    return ("", "", "", "", row.resource_type)


def brute_force(
    rows: list[Row], start: datetime, end: datetime, step_seconds: int, aggregate: str, billable_only: bool
) -> dict[tuple[str, ...], list[tuple[float, float, int]]]:
    """Per group: each step's (lower seconds, upper seconds, peak), by the rule, one row at a time."""
    groups: dict[tuple[str, ...], list[Row]] = {}
    for row in rows:
        upper_end = row.destroyed if row.destroyed is not None else NOW
        if row.cluster.system or (billable_only and not row.billable):
            continue
        if max(row.created, start) < min(upper_end, end):
            groups.setdefault(group_key(row, aggregate), []).append(row)
    answer = {}
    for key, members in groups.items():
        steps = []
        for a, b in step_bounds(start, end, step_seconds):
            lower = upper = 0
            spans = []
            for row in members:
                upper_end = row.destroyed if row.destroyed is not None else NOW
                lower_end = min(max(row.last_seen, row.created), upper_end)
                upper += max(0, micros(min(upper_end, b) - max(row.created, a)))
                lower += max(0, micros(min(lower_end, b) - max(row.created, a)))
                if max(row.created, a) < min(upper_end, b):
                    spans.append((max(row.created, a), min(upper_end, b)))
            instants = [a] + [s for s, _ in spans]
            peak = max((sum(1 for s, e in spans if s <= t < e) for t in instants), default=0)
            steps.append((lower / 1e6, upper / 1e6, peak))
        answer[key] = steps
    return answer


def request(start: datetime, end: datetime | None = None, **fields: Any) -> fleet_pb2.ListUsageRequest:
    message = fleet_pb2.ListUsageRequest(**fields)
    message.start.FromDatetime(start)
    if end is not None:
        message.end.FromDatetime(end)
    return message


async def every_group(
    api: FleetApiUnderTest, message: fleet_pb2.ListUsageRequest, protocol: str = "grpc"
) -> Iterator[Any]:
    groups, token = [], ""
    while True:
        message.page_token = token
        response = await api.call(protocol, "ListUsage", message)
        groups += list(response.groups)
        token = response.next_page_token
        if not token:
            return iter(groups)


def answer_of(groups: Iterator[Any]) -> dict[tuple[str, ...], list[tuple[float, float, int]]]:
    answer: dict[tuple[str, ...], list[tuple[float, float, int]]] = {}
    for g in groups:
        key = (g.organization_name, g.organization_id, g.cluster_id, g.cluster_name, g.resource_type)
        assert key not in answer, f"group {key} listed twice"
        answer[key] = [(s.lower_resource_seconds, s.upper_resource_seconds, s.peak) for s in g.steps]
    return answer


def in_order(keys: list[tuple[str, ...]], aggregate: str) -> list[tuple[str, ...]]:
    """The keys in the aggregate's order: organization name, id, type; organization name, cluster
    name, cluster id, type; type."""
    if aggregate == "cluster":
        return sorted(keys, key=lambda k: (k[0], k[3], k[2], k[4]))
    return sorted(keys, key=lambda k: (k[0], k[1], k[4]))


def assert_same(got: dict[Any, Any], want: dict[Any, Any], aggregate: str, context: str) -> None:
    assert list(got) == in_order(list(want), aggregate), context
    for key, steps in want.items():
        assert len(got[key]) == len(steps), (context, key)
        for index, ((lower, upper, peak), (g_lower, g_upper, g_peak)) in enumerate(zip(steps, got[key], strict=True)):
            assert g_lower == pytest.approx(lower, rel=1e-12, abs=1e-6), (context, key, index)
            assert g_upper == pytest.approx(upper, rel=1e-12, abs=1e-6), (context, key, index)
            assert g_peak == peak, (context, key, index)


@pytest.mark.parametrize("seed", SEEDS)
async def test_usage_equals_a_brute_force_sum_over_the_ledger(fleet_api: FleetApiUnderTest, seed: int) -> None:
    rng = random.Random(seed)
    clusters = clusters_of(fleet_api)
    start = NOW - timedelta(
        days=rng.choice((3, 7, 12)), seconds=rng.randrange(0, 86400), microseconds=rng.randrange(10**6)
    )
    end = start + timedelta(days=rng.choice((1, 4, 9, 15)), microseconds=rng.randrange(10**6))
    step_seconds = rng.choice((0, 3600 * 7, 86400, 100_000))
    steps = step_bounds(start, end, step_seconds)
    anchors = [a for a, _ in steps] + [end, NOW]
    rows = random_ledger(rng, clusters, anchors)
    write_ledger(fleet_api, rows)
    for aggregate, name in AGGREGATES.items():
        for include_non_billable in (False, True):
            message = request(
                start,
                end,
                step_seconds=step_seconds,
                aggregate=aggregate,
                include_non_billable=include_non_billable,
                page_size=rng.choice((1, 2, 5, 100)),
            )
            got = answer_of(await every_group(fleet_api, message))
            want = brute_force(rows, start, end, step_seconds, name, not include_non_billable)
            assert_same(got, want, name, f"seed {seed} {name} include_non_billable={include_non_billable}")


async def test_the_longest_window_is_added_up_to_the_microsecond(fleet_api: FleetApiUnderTest) -> None:
    """The query turns times into microseconds through a double (usage.sql): over the longest window
    (366 days) with every time a few microseconds off a round one, each bound is still exact."""
    rng = random.Random(366)
    clusters = [c for c in clusters_of(fleet_api) if not c.system]
    end = NOW - timedelta(microseconds=rng.randrange(10**6))
    start = end - timedelta(days=366)
    window = micros(end - start)
    rows, want = [], {}
    for cluster in clusters:
        for resource_type in TYPES:
            offsets = sorted(rng.randrange(1, window) for _ in range(3))
            created, last_seen, destroyed = (start + o * MICROSECOND for o in offsets)
            if rng.random() < 0.3:  # created before the window: clipped to its start
                created = start - timedelta(days=rng.randrange(1, 900), microseconds=rng.randrange(10**6))
            rows.append(Row(cluster, resource_type, True, created, last_seen, destroyed))
            key = (
                cluster.organization_name,
                str(cluster.organization_id),
                str(cluster.id),
                cluster.name,
                resource_type,
            )
            first = max(created, start)
            want[key] = (micros(last_seen - first), micros(destroyed - first))
    write_ledger(fleet_api, rows)
    message = request(start, end, aggregate=fleet_pb2.USAGE_AGGREGATE_CLUSTER, page_size=100)
    got = answer_of(await every_group(fleet_api, message))
    assert set(got) == set(want)
    for key, (lower_us, upper_us) in want.items():
        ((lower, upper, peak),) = got[key]
        # A double holds these seconds to about 10^-8 s: rounding to microseconds is exact.
        assert (round(lower * 1e6), round(upper * 1e6), peak) == (lower_us, upper_us, 1), key


async def test_filters_narrow_the_rows_as_the_ledger_listing_does(fleet_api: FleetApiUnderTest) -> None:
    rng = random.Random(99)
    clusters = clusters_of(fleet_api)
    start, end = NOW - timedelta(days=8), NOW + timedelta(days=1)
    cluster = next(c for c in clusters if not c.system)
    rows = random_ledger(rng, clusters, [start, end, NOW]) + random_ledger(rng, clusters, [start, end, NOW])
    rows.append(
        Row(cluster, TYPES[0], True, start - timedelta(days=1), NOW - timedelta(days=1), NOW - timedelta(hours=1))
    )
    write_ledger(fleet_api, rows)
    message = request(
        start,
        end,
        step_seconds=86400,
        aggregate=fleet_pb2.USAGE_AGGREGATE_CLUSTER,
        organization_id=str(cluster.organization_id),
        cluster_id=str(cluster.id),
        resource_type=TYPES[0],
    )
    got = answer_of(await every_group(fleet_api, message, "connect"))
    chosen = [r for r in rows if r.cluster == cluster and r.resource_type == TYPES[0]]
    assert_same(got, brute_force(chosen, start, end, 86400, "cluster", True), "cluster", "filtered")
    assert len(got) == 1


async def test_every_step_is_listed_with_its_times_and_the_answer_says_when_it_read(
    fleet_api: FleetApiUnderTest,
) -> None:
    start = NOW - timedelta(days=2, hours=3)
    response = await fleet_api.call(
        "grpc", "ListUsage", request(start, NOW + timedelta(hours=5), step_seconds=86400, page_size=1)
    )
    assert response.read.ToDatetime(tzinfo=UTC) == NOW
    (group,) = response.groups
    times = [(s.start.ToDatetime(tzinfo=UTC), s.end.ToDatetime(tzinfo=UTC)) for s in group.steps]
    assert times == step_bounds(start, NOW + timedelta(hours=5), 86400)
    # The last step lies in the future but for five hours: nothing runs after `read`.
    assert group.steps[-1].upper_resource_seconds <= 5 * 3600 * group.steps[-1].peak


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "start is required"),
        ({"start": NOW, "end": NOW}, "end must be after start"),
        ({"start": NOW - timedelta(days=367)}, "end must be at most 366 days after start"),
        ({"start": NOW - timedelta(days=1), "step_seconds": -1}, "step_seconds must not be negative"),
        ({"start": NOW - timedelta(days=1), "step_seconds": 59}, "step_seconds must be 0 (one step) or at least 60"),
        ({"start": NOW - timedelta(days=2), "step_seconds": 60}, "the window holds 2880 steps, more than 2000"),
        ({"start": NOW - timedelta(days=30), "step_seconds": 3600}, "page_size 100 x 720 steps is more than 50000"),
        ({"start": NOW - timedelta(days=1), "page_size": -1}, "page_size must not be negative"),
        ({"start": NOW - timedelta(days=1), "aggregate": 42}, "aggregate: 42 is not a UsageAggregate"),
        ({"start": NOW - timedelta(days=1), "organization_id": "x"}, "organization_id must be a UUID"),
        ({"start": NOW - timedelta(days=1), "resource_type": "Node"}, "resource_type must look like"),
    ],
)
async def test_hostile_windows_steps_and_pages_are_refused_with_what_to_change(
    shared_fleet_api: FleetApiUnderTest, fields: dict[str, Any], message: str
) -> None:
    fields = dict(fields)
    wanted = fleet_pb2.ListUsageRequest(**{k: v for k, v in fields.items() if k != "start"})
    if "start" in fields:
        wanted.start.FromDatetime(fields["start"])
        wanted.end.FromDatetime(fields.get("end", NOW))
    with pytest.raises(CallFailed) as failed:
        await shared_fleet_api.call("grpc", "ListUsage", wanted)
    assert failed.value.code == "invalid_argument"
    assert failed.value.message.startswith(message), failed.value.message


async def test_a_page_token_is_bound_to_its_window_step_and_aggregate(fleet_api: FleetApiUnderTest) -> None:
    start = NOW - timedelta(days=10)
    first = await fleet_api.call("grpc", "ListUsage", request(start, NOW, page_size=1))
    assert first.next_page_token
    for other in (
        request(start + timedelta(seconds=1), NOW, page_size=1),
        request(start, NOW, page_size=1, step_seconds=86400),
        request(start, NOW, page_size=1, aggregate=fleet_pb2.USAGE_AGGREGATE_CLUSTER),
        request(start, NOW, page_size=1, include_non_billable=True),
    ):
        other.page_token = first.next_page_token
        with pytest.raises(CallFailed) as failed:
            await fleet_api.call("grpc", "ListUsage", other)
        assert failed.value.code == "invalid_argument"
