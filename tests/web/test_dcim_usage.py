"""DCIM's usage page of one organization, in headless Chromium: a chart per resource type with the
month's figures, the CSV download (parsed back with the csv module), the months in the address, the
way there from the organization's page, and a layout that fits a desktop window and a 390 px phone.

The expected figures are what platform-admin-api's ListUsage answers for the same month (the RPC is
held to a brute-force sum over the ledger by tests/fleet/test_usage.py). Each test saves a screenshot.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from urllib.parse import unquote

import pytest
from fundament.fleet.v1 import fleet_pb2

from tests.fixtures.browser import Page
from tests.fixtures.fleet_api import NOW
from tests.fixtures.pages import WebWorld, dcim_ready, grpc_call, open_dcim

pytestmark = pytest.mark.browser

COLUMNS = [
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "SubAccountId",
    "SubAccountName",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "ConsumedQuantity",
    "ConsumedUnit",
    "x_ConsumedQuantityLowerBound",
    "x_ConsumedQuantityUpperBound",
    "x_PeakCount",
]


def month_of(at: datetime) -> tuple[datetime, datetime]:
    start = at.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    end = start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)
    return start, end


def previous_month(at: datetime) -> datetime:
    start, _ = month_of(at)
    return start.replace(year=start.year - 1, month=12) if start.month == 1 else start.replace(month=start.month - 1)


async def api_usage(
    world: WebWorld, organization_id: str, start: datetime, end: datetime
) -> list[fleet_pb2.UsageGroup]:
    request = fleet_pb2.ListUsageRequest(
        step_seconds=86400, aggregate=fleet_pb2.USAGE_AGGREGATE_ORGANIZATION, organization_id=organization_id
    )
    request.start.FromDatetime(start)
    request.end.FromDatetime(end)
    response = await grpc_call(world, "ListUsage", request)
    assert not response.next_page_token
    return list(response.groups)


def organization_with_usage(world: WebWorld) -> str:
    with world.database.admin() as conn:
        row = conn.execute(
            "SELECT c.organization_id FROM tenant.infrastructure_resources r"
            " JOIN tenant.clusters c ON c.id = r.cluster_id JOIN tenant.organizations o ON o.id = c.organization_id"
            " WHERE r.billable AND o.deleted IS NULL AND o.id <> tenant.system_organization_id()"
            " GROUP BY c.organization_id ORDER BY count(DISTINCT r.resource_type) DESC, c.organization_id LIMIT 1"
        ).fetchone()
    assert row is not None, "the world's ledger has billable rows"
    return str(row[0])


async def charts_shown(page: Page) -> dict[str, tuple[int, float, float, int]]:
    found = await page.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#usage-charts figure'), (f) => [f.dataset.type,"
        " [Number(f.dataset.steps), Number(f.dataset.lower), Number(f.dataset.upper), Number(f.dataset.peak)]]))"
    )
    return {str(k): (int(v[0]), float(v[1]), float(v[2]), int(v[3])) for k, v in found.items()}


def expected_charts(groups: list[fleet_pb2.UsageGroup]) -> dict[str, tuple[int, float, float, int]]:
    return {
        g.resource_type: (
            len(g.steps),
            sum(s.lower_resource_seconds for s in g.steps),
            sum(s.upper_resource_seconds for s in g.steps),
            max(s.peak for s in g.steps),
        )
        for g in groups
    }


def assert_charts(
    shown: dict[str, tuple[int, float, float, int]], want: dict[str, tuple[int, float, float, int]]
) -> None:
    assert set(shown) == set(want)
    for kind, (steps, lower, upper, peak) in want.items():
        assert shown[kind][0] == steps and shown[kind][3] == peak, kind
        assert shown[kind][1] == pytest.approx(lower) and shown[kind][2] == pytest.approx(upper), kind


async def test_a_chart_per_type_with_the_months_figures_and_a_csv_of_them(page: Page, web_world: WebWorld) -> None:
    organization_id = organization_with_usage(web_world)
    start, end = month_of(NOW)
    groups = await api_usage(web_world, organization_id, start, end)
    assert len(groups) >= 2, "the organization runs billable resources of several types this month"
    await open_dcim(page, web_world, f"/organizations/{organization_id}/usage")
    await page.wait_for(dcim_ready("usage"))
    await page.screenshot("dcim-usage")
    assert_charts(await charts_shown(page), expected_charts(groups))
    assert await page.evaluate("document.querySelectorAll('#usage-charts svg rect.upper').length") == sum(
        len(g.steps) for g in groups
    )
    assert [line[0] for line in await page.table("#usage-totals")] == [g.resource_type for g in groups]
    assert await page.evaluate("document.querySelector('#usage-months strong').dataset.month") == start.strftime(
        "%Y-%m"
    )

    link = await page.evaluate(
        "(() => { const a = document.querySelector('#usage-csv'); return [a.getAttribute('href'), a.download]; })()"
    )
    href, file_name = str(link[0]), str(link[1])
    assert file_name.endswith(f"-{start:%Y-%m}.csv")
    prefix = "data:text/csv;charset=utf-8,"
    assert href.startswith(prefix)
    text = unquote(href.removeprefix(prefix))
    assert not text.startswith("\ufeff") and text.endswith("\r\n")
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    assert reader.fieldnames == COLUMNS
    rows = list(reader)
    assert len(rows) == sum(len(g.steps) for g in groups)
    steps = iter((g, s) for g in groups for s in g.steps)
    for row in rows:
        group, step = next(steps)
        assert datetime.fromisoformat(row["ChargePeriodStart"].replace("Z", "+00:00")) == step.start.ToDatetime(
            tzinfo=UTC
        )
        assert datetime.fromisoformat(row["ChargePeriodEnd"].replace("Z", "+00:00")) == step.end.ToDatetime(tzinfo=UTC)
        assert (row["SubAccountId"], row["SubAccountName"]) == (organization_id, group.organization_name)
        assert row["ResourceType"] == group.resource_type and row["ConsumedUnit"] == "Hours"
        assert float(row["ConsumedQuantity"]) == pytest.approx(step.lower_resource_seconds / 3600, abs=1e-6)
        assert float(row["x_ConsumedQuantityUpperBound"]) == pytest.approx(step.upper_resource_seconds / 3600, abs=1e-6)
        assert int(row["x_PeakCount"]) == step.peak
    assert page.errors() == []


async def test_the_month_is_in_the_address_and_the_organization_page_links_here(
    page: Page, web_world: WebWorld
) -> None:
    organization_id = organization_with_usage(web_world)
    await open_dcim(page, web_world, f"/organizations/{organization_id}")
    await page.wait_for(dcim_ready("organization"))
    await page.click("#organization-usage")
    await page.wait_for(dcim_ready("usage", f"/organizations/{organization_id}/usage"))
    earlier = previous_month(NOW)
    await page.click(f"#usage-months a[data-month='{earlier:%Y-%m}']")
    await page.wait_for(dcim_ready("usage", f"month={earlier:%Y-%m}"))
    groups = await api_usage(web_world, organization_id, *month_of(earlier))
    if groups:
        assert_charts(await charts_shown(page), expected_charts(groups))
    else:
        assert await page.text("#no-usage")
    await page.evaluate("history.back()")
    await page.wait_for(f"{dcim_ready('usage')} && !document.body.dataset.route.includes('month=')")
    assert page.errors() == []


@pytest.mark.parametrize(("width", "mobile"), [(1280, False), (390, True)], ids=["1280", "390"])
async def test_the_usage_page_never_scrolls_sideways(page: Page, web_world: WebWorld, width: int, mobile: bool) -> None:
    organization_id = organization_with_usage(web_world)
    await page.set_viewport(width, 844 if mobile else 900, mobile=mobile)
    await open_dcim(page, web_world, f"/organizations/{organization_id}/usage")
    await page.wait_for(dcim_ready("usage"))
    await page.screenshot(f"dcim-layout-{width}-usage")
    assert await page.overflow() == {"over": 0, "width": width}
    # The download stays on screen and reachable on a phone.
    box = await page.evaluate(
        "(() => { const r = document.querySelector('#usage-csv').getBoundingClientRect();"
        " return [r.left >= 0, r.right <= window.innerWidth, r.height > 0]; })()"
    )
    assert box == [True, True, True]
    # The totals fit without scrolling inside their box either.
    assert (
        await page.evaluate(
            "(() => { const w = document.querySelector('#usage-totals').closest('.table-wrap');"
            " return w.scrollWidth - w.clientWidth; })()"
        )
        == 0
    )
