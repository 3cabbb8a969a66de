"""The console's public /platform page in headless Chromium, against platform-public-api on loopback.

What a visitor sees: exactly the listed organizations with their counts and the totals, no cluster or
namespace names, when the answer was read; and "The platform overview is unavailable." when the
console has no platformApiUrl, when the API answers UNAVAILABLE (its database is down), and when the
page sits on an origin the API's CORS does not allow. Each test saves a screenshot of its page.
"""

from __future__ import annotations

import re

import pytest

from fleetctl.webapp import bind_socket, console_app, serve_pages, socket_url
from tests.fixtures.browser import Page
from tests.fixtures.overview import ROLE
from tests.fixtures.overview import serving as serving_overview
from tests.fixtures.pages import MARKUP_ORGANIZATION, WebWorld, closed_port_socket, expected_overview

pytestmark = pytest.mark.browser

READY = "document.body.dataset.state === 'ready'"
UNAVAILABLE = "document.body.dataset.state === 'unavailable'"
HEADLINE = "The platform overview is unavailable."


def whole_numbers(text: str) -> int:
    return int(text.replace(",", ""))


async def test_lists_exactly_the_listed_organizations_with_counts_and_totals(page: Page, web_world: WebWorld) -> None:
    expected = expected_overview(web_world.fleet)
    assert len(expected) >= 5, "the demo fleet should list several organizations"

    await page.goto(f"{web_world.console}/platform")
    await page.wait_for(READY)
    await page.screenshot("console-platform")

    rows = await page.evaluate(
        """Array.from(document.querySelectorAll('#organizations tbody tr'), (row) => ({
            alias: row.querySelector('.alias').innerText,
            name: row.querySelector('.name').innerText,
            counts: Array.from(row.querySelectorAll('td'), (cell) => cell.innerText),
        }))"""
    )
    shown = [(r["name"], r["alias"], *(whole_numbers(c) for c in r["counts"])) for r in rows]
    assert shown == [(o.name, o.alias, o.clusters, o.projects, o.namespaces) for o in expected]

    totals_row = await page.texts("#totals-row td")
    assert [whole_numbers(t) for t in totals_row] == [
        sum(o.clusters for o in expected),
        sum(o.projects for o in expected),
        sum(o.namespaces for o in expected),
    ]
    cards = await page.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#totals [data-total]'),"
        " (card) => [card.dataset.total, card.querySelector('.value').innerText]))"
    )
    assert {key: whole_numbers(value) for key, value in cards.items()} == {
        "organizations": len(expected),
        "clusters": sum(o.clusters for o in expected),
        "projects": sum(o.projects for o in expected),
        "namespaces": sum(o.namespaces for o in expected),
    }
    assert "Counted" in await page.text("#read")
    assert await page.evaluate("document.querySelector('#read time').getAttribute('datetime')")
    assert page.errors() == []


async def test_shows_no_unlisted_organization_and_no_cluster_or_namespace_name(page: Page, web_world: WebWorld) -> None:
    await page.goto(f"{web_world.console}/platform")
    await page.wait_for(READY)
    await page.screenshot("console-platform-names")
    words = set(re.findall(r"[\w.-]+", await page.text("body")))
    fleet = web_world.fleet
    listed = {o.name for o in expected_overview(fleet)}
    hidden = {o.name for o in fleet.organizations} - listed
    assert hidden, "the fleet should have unlisted organizations"
    assert not hidden & words, "an unlisted or deleted organization is named on the page"
    names = {c.name for c in fleet.clusters} | {n.name for n in fleet.namespaces} | {p.name for p in fleet.projects}
    assert not names & words, "a cluster, project or namespace name is on the page"


async def test_the_overview_is_read_with_a_cacheable_get_from_the_pages_own_origin(
    page: Page, web_world: WebWorld
) -> None:
    await page.goto(f"{web_world.console}/platform")
    await page.wait_for(READY)
    await page.screenshot("console-platform-get")
    calls = page.requests_to(web_world.overview_api)
    assert [(c.method, c.status) for c in calls] == [("GET", 200)]
    assert "encoding=json" in calls[0].url


async def test_empty_platform_api_url_says_unavailable_and_calls_nothing(page: Page, web_world: WebWorld) -> None:
    async with serve_pages(console_app("")) as url:
        await page.goto(f"{url}/platform")
        await page.wait_for(UNAVAILABLE)
        await page.screenshot("console-platform-not-configured")
        assert await page.text("#unavailable .title") == HEADLINE
        assert "does not run the platform overview" in await page.text("#unavailable .reason")
        assert await page.evaluate("document.querySelector('#organizations') === null")
        assert page.requests_to(web_world.overview_api) == []
        assert [r.url for r in page.requests.values() if not r.url.startswith(url)] == []


async def test_api_answering_unavailable_with_its_database_down_says_unavailable(page: Page) -> None:
    page_socket = bind_socket()
    down = closed_port_socket()  # nothing listens here: the API's database is down
    try:
        dsn = f"postgresql://{ROLE}@127.0.0.1:{down.getsockname()[1]}/fleet"
        origin = socket_url(page_socket)
        async with serving_overview(
            dsn, CONSOLE_ORIGINS=origin, READ_TIMEOUT_SECONDS="1", DATABASE_CONNECT_TIMEOUT_SECONDS="0.5"
        ) as (
            _,
            endpoints,
        ):
            api = f"http://127.0.0.1:{endpoints.http_port}"
            async with serve_pages(console_app(api), sock=page_socket) as url:
                await page.goto(f"{url}/platform")
                await page.wait_for(UNAVAILABLE)
                await page.screenshot("console-platform-database-down")
                assert await page.text("#unavailable .title") == HEADLINE
                assert "cannot read its data" in await page.text("#unavailable .reason")
                # The API answered (503 with Connect's error JSON), readable thanks to CORS.
                assert [(c.method, c.status) for c in page.requests_to(api)] == [("GET", 503)]
                assert await page.evaluate("document.querySelector('#unavailable button') !== null")
    finally:
        down.close()


async def test_an_organization_name_with_markup_is_shown_as_text(page: Page, web_world: WebWorld) -> None:
    await page.goto(f"{web_world.console}/platform")
    await page.wait_for(READY)
    await page.screenshot("console-platform-markup")
    row = f"#organizations tr[data-organization='{MARKUP_ORGANIZATION.name}']"
    assert await page.text(f"{row} .alias") == MARKUP_ORGANIZATION.alias
    assert await page.evaluate("document.querySelectorAll('#organizations img, #organizations b').length") == 0
    assert await page.evaluate("window.__injected === undefined")


async def test_a_page_on_an_origin_the_api_does_not_allow_says_unavailable(page: Page, web_world: WebWorld) -> None:
    await page.goto(f"{web_world.console_elsewhere}/platform")
    await page.wait_for(UNAVAILABLE)
    await page.screenshot("console-platform-foreign-origin")
    assert await page.text("#unavailable .title") == HEADLINE
    assert "cannot be reached" in await page.text("#unavailable .reason")
    [call] = page.requests_to(web_world.overview_api)
    assert call.cors_error is not None, f"expected the browser to refuse the answer by CORS, got {call}"
