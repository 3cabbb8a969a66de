"""Every page at 1440 x 900 and at 390 x 844: axe-core finds nothing serious or critical, nothing scrolls
sideways, the DCIM header is one row on a desktop and short on a phone, and a screenshot of each is
left under build/screenshots/ for a reviewer (printed with -s).

The list of pages is the one place a new page is added (PAGES); a page that is not listed here is
not checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.fixtures.axe import DESKTOP, PHONE, SIZES, Size, header_rows, look_at, use_size
from tests.fixtures.browser import Page
from tests.fixtures.pages import DCIM_SIGNED_OUT, WebWorld, dcim_ready, open_dcim

pytestmark = pytest.mark.browser


@dataclass(frozen=True)
class DcimPage:
    name: str  # the screenshot's name
    view: str  # document.body.dataset.view when it is shown
    route: Callable[[WebWorld], str]


def _first_organization(world: WebWorld) -> str:
    return str(world.fleet.organizations[0].id)


def _cluster_with_history(world: WebWorld) -> str:
    with world.database.admin() as conn:
        row = conn.execute(
            "SELECT f.cluster_id FROM tenant.drift_findings f JOIN tenant.clusters c ON c.id = f.cluster_id"
            " WHERE c.organization_id <> tenant.system_organization_id() AND c.deleted IS NULL"
            " GROUP BY f.cluster_id ORDER BY count(*) DESC, f.cluster_id LIMIT 1"
        ).fetchone()
    assert row is not None
    return str(row[0])


PAGES = (
    DcimPage("summary", "summary", lambda w: "/summary"),
    DcimPage("trends-1h", "summary", lambda w: "/summary?range=1h"),
    DcimPage("organizations", "organizations", lambda w: "/organizations"),
    DcimPage("organization", "organization", lambda w: f"/organizations/{_first_organization(w)}"),
    DcimPage("clusters", "clusters", lambda w: "/clusters"),
    DcimPage("cluster", "cluster", lambda w: f"/clusters/{_cluster_with_history(w)}"),
    DcimPage("drift", "drift", lambda w: "/drift"),
    DcimPage("drift-history", "drift", lambda w: "/drift?resolved=1"),
    DcimPage("ledger", "ledger", lambda w: "/ledger?destroyed=1"),
    DcimPage("usage", "usage", lambda w: f"/organizations/{_first_organization(w)}/usage"),
)


@pytest.mark.parametrize("size", SIZES, ids=[s.name for s in SIZES])
@pytest.mark.parametrize("shown", PAGES, ids=[p.name for p in PAGES])
async def test_dcim_page_is_accessible_and_fits(page: Page, web_world: WebWorld, shown: DcimPage, size: Size) -> None:
    await use_size(page, size)
    route = shown.route(web_world)
    await open_dcim(page, web_world, route)
    await page.wait_for(dcim_ready(shown.view, route.split("?")[0]))
    await look_at(page, f"dcim-{shown.name}", size)
    assert not page.errors(), page.errors()


@pytest.mark.parametrize("size", SIZES, ids=[s.name for s in SIZES])
async def test_dcim_sign_in_is_accessible_and_fits(page: Page, web_world: WebWorld, size: Size) -> None:
    await use_size(page, size)
    await page.goto(f"{web_world.dcim}/platform#/summary")
    await page.wait_for(DCIM_SIGNED_OUT)
    await look_at(page, "dcim-sign-in", size)


@pytest.mark.parametrize("size", SIZES, ids=[s.name for s in SIZES])
async def test_console_page_is_accessible_and_fits(page: Page, web_world: WebWorld, size: Size) -> None:
    await use_size(page, size)
    await page.goto(f"{web_world.console}/platform")
    await page.wait_for("document.body.dataset.state === 'ready'")
    await look_at(page, "console-platform", size)


async def test_the_dcim_header_is_one_row_at_1440_and_short_on_a_phone(page: Page, web_world: WebWorld) -> None:
    await use_size(page, DESKTOP)
    await open_dcim(page, web_world, "/summary")
    await page.wait_for(dcim_ready("summary"))
    assert await header_rows(page) == 1, "the header wraps at 1440 px"
    await use_size(page, PHONE)
    height = await page.evaluate("document.querySelector('.site-header').getBoundingClientRect().height")
    # At most a seventh of the phone's height: the content starts above the fold.
    assert height <= PHONE.height / 7, f"the header takes {height} of {PHONE.height} px on a phone"
