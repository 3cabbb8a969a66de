"""What makes DCIM's pages read at a glance, in headless Chromium: trends from the first hour, the
finding history one row per finding with a per-cluster timeline, the important cell first on a
phone, the small things (a cluster chip named, a change of today with its time), a walk by snapshot
time that shows each cluster once while the inventory runs, and the keyboard.

Expected values come from the database rows (read as a superuser) and the history the inventory
loop's own code recorded; each test saves a screenshot under build/screenshots/.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from tests.fixtures.axe import DESKTOP, PHONE, use_size
from tests.fixtures.browser import Page
from tests.fixtures.fleet_api import NOW
from tests.fixtures.pages import PAGING_DONE, PAGING_MORE, WebWorld, dcim_ready, open_dcim

pytestmark = pytest.mark.browser

KEY_CODES = {"Tab": 9, "Enter": 13, "Escape": 27}


async def press(page: Page, key: str) -> None:
    """A real key press (down and up), as a keyboard sends it."""
    for kind in ("keyDown", "keyUp"):
        params: dict[str, Any] = {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": KEY_CODES[key]}
        if key == "Enter" and kind == "keyDown":
            params["text"] = "\r"  # what makes Enter submit a form
        await page.send("Input.dispatchKeyEvent", params)


async def show_all(page: Page, list_id: str) -> None:
    if await page.evaluate(PAGING_MORE):
        await page.click(f"#{list_id}-all")
    await page.wait_for(PAGING_DONE)


# --- trends from the first hour --------------------------------------------------------------------


@contextlib.contextmanager
def more_rounds(world: WebWorld, minutes_ago: tuple[int, ...]) -> Iterator[None]:
    """Per-round history rows at these times (copies of the latest round), for the block."""
    times = [NOW - timedelta(minutes=m) for m in minutes_ago]
    with psycopg.connect(world.database.dsn(), autocommit=True) as conn:
        for at in times:
            conn.execute(
                "INSERT INTO tenant.fleet_history"
                " SELECT (jsonb_populate_record(h, jsonb_build_object('at', %s::timestamptz))).*"
                " FROM tenant.fleet_history AS h WHERE h.resolution = 'round' ORDER BY h.at DESC LIMIT 1",
                (at,),
            )
        try:
            yield
        finally:
            conn.execute("DELETE FROM tenant.fleet_history WHERE resolution = 'round' AND at = ANY(%s)", (times,))


async def trend_points(page: Page) -> int:
    return int(await page.evaluate("Number(document.querySelector('#trends').dataset.points)"))


async def test_the_last_hour_shows_every_inventory_round_and_a_short_history_says_so(
    page: Page, web_world: WebWorld
) -> None:
    with more_rounds(web_world, (50, 35, 20)):
        await open_dcim(page, web_world, "/summary?range=1h")
        await page.wait_for(dcim_ready("summary", "range=1h"))
        await page.screenshot("dcim-trends-1h")
        # The rounds of the last hour: the three above and the world's latest, five minutes ago.
        assert await trend_points(page) == 4
        assert await page.evaluate("document.querySelector('#trends').dataset.range") == "1h"
        assert await page.evaluate("document.querySelector('#short-history')") is None
        assert "every inventory round" in await page.text("#trends .trend-span")
        ranges = await page.evaluate(
            "Array.from(document.querySelectorAll('#trend-ranges [data-range]'), (e) => e.dataset.range)"
        )
        assert ranges == ["1h", "6h", "24h", "7d", "30d"]
        # Seven days of which about two hours are recorded: said in words above the charts.
        await page.click("#trend-ranges a[data-range='7d']")
        await page.wait_for(dcim_ready("summary", "range=7d"))
        short = await page.text("#short-history")
        assert short.startswith("History is still short:"), short
        assert "of the 7 days shown" in short


@pytest.mark.parametrize("asked", ["2w", "24", "banana"])
async def test_a_range_the_page_does_not_know_is_refused_in_plain_sight(
    page: Page, web_world: WebWorld, asked: str
) -> None:
    await open_dcim(page, web_world, f"/summary?range={asked}")
    await page.wait_for(dcim_ready("summary", f"range={asked}"))
    await page.screenshot(f"dcim-trends-refused-{asked}")
    refused = await page.text("#trends-refused")
    assert refused.startswith(f"“{asked}” is not a range this page knows."), refused
    assert await page.evaluate("document.querySelectorAll('#trends figure.chart').length") == 0
    assert await page.evaluate("document.querySelector('#trends').dataset.range") == ""
    # The old name of the 24 hours range still opens it.
    await page.evaluate("window.location.hash = '#/summary?range=1d'")
    await page.wait_for(dcim_ready("summary", "range=1d"))
    assert await page.evaluate("document.querySelector('#trends').dataset.range") == "24h"


# --- the finding history, one row per finding ------------------------------------------------------


def finding_groups(world: WebWorld, cluster_id: str | None = None) -> list[tuple[str, str, int, bool]]:
    """(kind, subject, occurrences, open now) per finding the staff API shows, most recently opened first."""
    with world.database.admin() as conn:
        found: list[tuple[Any, ...]] = conn.execute(
            "SELECT f.kind, f.subject, count(*), bool_or(f.resolved IS NULL), max(f.first_detected)"
            " FROM tenant.drift_findings f LEFT JOIN tenant.clusters c ON c.id = f.cluster_id"
            " WHERE coalesce(c.organization_id, f.organization_id) IS DISTINCT FROM tenant.system_organization_id()"
            " AND (%s::uuid IS NULL OR f.cluster_id = %s::uuid)"
            " GROUP BY f.kind, f.subject ORDER BY max(f.first_detected) DESC, f.kind DESC, f.subject DESC",
            (cluster_id, cluster_id),
        ).fetchall()
    return [(f"DRIFT_KIND_{str(r[0]).upper()}", str(r[1]), int(r[2]), bool(r[3])) for r in found]


async def shown_groups(page: Page, list_id: str) -> list[tuple[str, str, int, bool]]:
    found = await page.evaluate(
        f"""Array.from(document.querySelectorAll('#{list_id} tbody tr'),
            (r) => [r.dataset.kind, r.dataset.subject, Number(r.dataset.opened), r.dataset.resolved === 'no'])"""
    )
    return [(str(k), str(s), int(n), bool(o)) for k, s, n, o in found]


async def test_the_drift_history_is_one_row_per_finding_newest_first_with_details_folded(
    page: Page, web_world: WebWorld
) -> None:
    expected = finding_groups(web_world)
    assert any(n > 1 for _, _, n, _ in expected), "the world has findings that came back"
    await open_dcim(page, web_world, "/drift?resolved=1")
    await page.wait_for(dcim_ready("drift"))
    await show_all(page, "findings")
    await page.screenshot("dcim-drift-history-grouped")
    assert await shown_groups(page, "findings") == expected
    headers = await page.texts("#findings thead th")
    assert headers[:2] == ["Finding", "State"]
    assert {"Detected", "Opened", "Open in all", "Details"} <= set(headers)
    detected = await page.texts("#findings tbody tr:first-child td[data-label='Detected'] dt")
    assert detected == ["first", "last"]
    # Details are folded: one line (reconcile's reason) until opened.
    assert await page.evaluate("document.querySelectorAll('#findings details.folded-details[open]').length") == 0
    first = "#findings tbody tr:first-child details.folded-details"
    await page.click(f"{first} > summary")
    assert await page.evaluate(f"document.querySelector('{first}').open") is True
    # Every state says itself in words.
    states = await page.texts("#findings tbody tr [data-state]")
    assert set(states) <= {"open", "resolved"} and len(states) == len(expected)
    # Open findings only: the ones open now.
    await page.evaluate("window.location.hash = '#/drift'")
    await page.wait_for(dcim_ready("drift", "#/drift"))
    await show_all(page, "findings")
    assert await shown_groups(page, "findings") == [g for g in expected if g[3]]


async def test_a_clusters_page_has_a_finding_timeline_and_no_columns_that_repeat_the_page(
    page: Page, web_world: WebWorld
) -> None:
    with web_world.database.admin() as conn:
        row = conn.execute(
            "SELECT f.cluster_id::text FROM tenant.drift_findings f JOIN tenant.clusters c ON c.id = f.cluster_id"
            " WHERE c.organization_id <> tenant.system_organization_id() AND f.resolved IS NULL"
            " GROUP BY f.cluster_id ORDER BY count(DISTINCT (f.kind, f.subject)) DESC, count(*) DESC, 1 LIMIT 1"
        ).fetchone()
    assert row is not None
    cluster_id = str(row[0])
    expected = finding_groups(web_world, cluster_id)
    await open_dcim(page, web_world, f"/clusters/{cluster_id}")
    await page.wait_for(dcim_ready("cluster"))
    await page.screenshot("dcim-cluster-timeline")
    lanes = await page.evaluate(
        "Array.from(document.querySelectorAll('#finding-timeline li'),"
        " (l) => [l.dataset.kind, l.dataset.subject, Number(l.dataset.bars)])"
    )
    assert sorted((str(k), str(s), int(n)) for k, s, n in lanes) == sorted((k, s, n) for k, s, n, _ in expected)
    labels = await page.evaluate(
        "Array.from(document.querySelectorAll('#finding-timeline svg'), (s) => s.getAttribute('aria-label'))"
    )
    assert all(re.match(r"^.+: open \d+ times?, (open now|resolved)$", str(label)) for label in labels), labels
    assert await shown_groups(page, "cluster-history") == expected
    for table in ("#cluster-findings", "#cluster-history"):
        headers = await page.texts(f"{table} thead th")
        assert headers and "Cluster" not in headers and "Organization" not in headers, headers


# --- the small things ------------------------------------------------------------------------------


async def test_the_ledger_chip_names_a_cluster_opened_by_its_id(page: Page, web_world: WebWorld) -> None:
    with web_world.database.admin() as conn:
        row = conn.execute(
            "SELECT c.id::text, c.name FROM tenant.infrastructure_resources r"
            " JOIN tenant.clusters c ON c.id = r.cluster_id ORDER BY c.id LIMIT 1"
        ).fetchone()
    assert row is not None
    cluster_id, name = str(row[0]), str(row[1])
    await open_dcim(page, web_world, "/summary")
    await page.wait_for(dcim_ready("summary"))
    for view in ("ledger", "drift"):
        # As a shared address opens it: the cluster's id alone.
        await page.evaluate(f"window.location.hash = '#/{view}?cluster={cluster_id}'")
        await page.wait_for(dcim_ready(view, f"cluster={cluster_id}"))
        chip = await page.text(".chip")
        assert chip.startswith(f"Cluster: {name}"), chip
        assert cluster_id not in chip
    await page.screenshot("dcim-ledger-chip")


async def test_a_status_change_says_when_to_the_minute(page: Page, web_world: WebWorld) -> None:
    with web_world.database.admin() as conn:
        row = conn.execute(
            "SELECT c.id::text, s.shoot_status_changed FROM tenant.clusters c"
            " JOIN tenant.fleet_sync_state s ON s.cluster_id = c.id"
            " WHERE c.deleted IS NULL AND c.organization_id <> tenant.system_organization_id()"
            " AND s.shoot_status_changed IS NOT NULL ORDER BY s.shoot_status_changed DESC, c.id LIMIT 1"
        ).fetchone()
    assert row is not None, "the world has a cluster whose status changed"
    cluster_id, changed = str(row[0]), row[1]
    assert isinstance(changed, datetime)
    changed = changed.astimezone(UTC)
    await open_dcim(page, web_world, "/clusters?order=since&desc=1")
    await page.wait_for(dcim_ready("clusters"))
    since = await page.text(f"#clusters tr[data-cluster-id='{cluster_id}'] .since")
    assert since == f"since {changed:%b} {changed.day}, {changed:%Y, %H:%M} UTC", since


async def test_status_chips_say_their_status_in_words(page: Page, web_world: WebWorld) -> None:
    await open_dcim(page, web_world, "/clusters")
    await page.wait_for(dcim_ready("clusters"))
    chips = await page.texts(".badge")
    assert chips and all(chip.strip() for chip in chips)


# --- phones: the important cell first ---------------------------------------------------------------


async def test_on_a_phone_each_row_starts_with_its_important_cells(page: Page, web_world: WebWorld) -> None:
    await use_size(page, PHONE)
    await open_dcim(page, web_world, "/summary")
    await page.wait_for(dcim_ready("summary"))
    await page.screenshot("dcim-summary-phone-loops")
    # The loops' state: on screen, right under the loop's name, before the times.
    placed = await page.evaluate(
        """Array.from(document.querySelectorAll('#freshness tbody tr'), (r) => {
            const state = r.querySelector('td[data-label="State"]').getBoundingClientRect();
            const pass = r.querySelector('td[data-label="Last completed pass"]').getBoundingClientRect();
            return [state.left >= 0 && state.right <= window.innerWidth, state.top < pass.top];
        })"""
    )
    assert placed and all(p == [True, True] for p in placed), placed
    # The cluster list: each card starts with the cluster and its status, inside the window.
    await page.evaluate("window.location.hash = '#/clusters'")
    await page.wait_for(dcim_ready("clusters", "#/clusters"))
    await page.screenshot("dcim-clusters-phone")
    first = await page.evaluate(
        """(() => {
            const r = document.querySelector('#clusters tbody tr');
            const box = (c) => c.getBoundingClientRect();
            const cells = Array.from(r.cells).sort((a, b) => box(a).top - box(b).top || box(a).left - box(b).left);
            return [cells.slice(0, 2).map((c) => c.dataset.label), box(r).right <= window.innerWidth];
        })()"""
    )
    assert first == [["Cluster", "Status"], True]
    # The list comes before the filters: folded to one line until opened (none is set).
    assert await page.evaluate("document.querySelector('#cluster-filters details.more-filters').open") is False
    table_top = await page.evaluate("document.querySelector('#clusters tbody tr').getBoundingClientRect().top")
    assert table_top < PHONE.height, "the first cluster is above the fold"
    # The content starts above the fold: the header is short.
    header = await page.evaluate("document.querySelector('.site-header').getBoundingClientRect().height")
    assert header <= 120


# --- a walk by snapshot time ------------------------------------------------------------------------


async def test_a_walk_by_snapshot_time_shows_each_cluster_once_while_snapshots_are_refreshed(
    page: Page, web_world: WebWorld
) -> None:
    await use_size(page, DESKTOP)
    await open_dcim(page, web_world, "/clusters?order=observed&desc=1")
    await page.wait_for(dcim_ready("clusters"))
    assert await page.evaluate(PAGING_MORE)
    shown = set(
        await page.evaluate("Array.from(document.querySelectorAll('#clusters tbody tr'), (r) => r.dataset.clusterId)")
    )
    with web_world.database.admin() as conn:
        listed = {str(r[0]) for r in conn.execute("SELECT id FROM tenant.cluster_listing WHERE live").fetchall()}
        ahead = sorted(listed - shown)[:3]
        behind = sorted(shown)[:2]
        saved = conn.execute(
            "SELECT cluster_id, observed FROM tenant.cluster_snapshots WHERE cluster_id = ANY(%s::uuid[])",
            (ahead + behind,),
        ).fetchall()
        # An inventory round refreshes clusters on both sides of the walk.
        conn.execute(
            "UPDATE tenant.cluster_snapshots SET observed = %s WHERE cluster_id = ANY(%s::uuid[])",
            (NOW + timedelta(seconds=1), ahead + behind),
        )
    try:
        await show_all(page, "clusters")
        await page.screenshot("dcim-clusters-snapshot-walk")
        ids = await page.evaluate(
            "Array.from(document.querySelectorAll('#clusters tbody tr'), (r) => r.dataset.clusterId)"
        )
    finally:
        with web_world.database.admin() as conn:
            for cluster_id, observed in saved:
                conn.execute(
                    "UPDATE tenant.cluster_snapshots SET observed = %s WHERE cluster_id = %s", (observed, cluster_id)
                )
    assert len(ids) == len(set(ids)), "a cluster was shown twice"
    assert set(ids) == listed, f"skipped: {sorted(listed - set(ids))[:5]}"


# --- the keyboard -----------------------------------------------------------------------------------


async def test_the_keyboard_reaches_everything_in_order_with_visible_focus(page: Page, web_world: WebWorld) -> None:
    await use_size(page, DESKTOP)
    await open_dcim(page, web_world, "/summary")
    await page.wait_for(dcim_ready("summary"))
    order = []
    for _ in range(9):
        await press(page, "Tab")
        order.append(
            await page.evaluate(
                """(() => {
                    const e = document.activeElement;
                    const style = getComputedStyle(e);
                    const visible = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
                    return [e.id || e.dataset.tab || e.textContent.trim(), visible];
                })()"""
            )
        )
    names = [name for name, _ in order]
    header = ["summary", "organizations", "clusters", "drift", "ledger", "search", "sign-out", "refresh"]
    assert names[:8] == header, names
    assert all(visible for _, visible in order), order
    # The search: typing opens its results, Escape closes them, Enter opens the cluster list for the query.
    await page.type_into("#search", "a")
    await page.wait_for("!document.querySelector('#search-results').hidden")
    await press(page, "Escape")
    await page.wait_for("document.querySelector('#search-results').hidden")
    # (Escape also empties a search field in Chromium, as it does for any input of type search.)
    await page.type_into("#search", "a")
    await press(page, "Enter")
    await page.wait_for(dcim_ready("clusters", "q=a"))
    assert json.loads(json.dumps(await page.evaluate("document.activeElement.id"))) in ("search", "")
