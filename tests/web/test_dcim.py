"""DCIM's staff /platform section in headless Chromium: signing in, the summary, and failures.

Without a token, or with one the API refuses, a person sees a sign-in message; with one, the summary
with the freshness of both loops (a loop older than three intervals flagged late); on an origin the
API does not allow, or with the API's database down, a visible failure. The lists and a cluster's
detail are in tests/web/test_dcim_lists.py. Each test saves a screenshot.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from datetime import timedelta

import pytest
from fundament.fleet.v1 import fleet_pb2

from common import clusterstatus
from common.organizations import SYSTEM_ORGANIZATION_ID
from fleetctl.webapp import bind_socket, dcim_app, serve_pages, socket_url
from tests.fixtures.browser import Page
from tests.fixtures.fleet_api import ROLE as ADMIN_ROLE
from tests.fixtures.fleet_api import serving_fleet
from tests.fixtures.pages import (
    DCIM_SIGNED_OUT,
    WebWorld,
    closed_port_socket,
    dcim_ready,
    grpc_call,
    heartbeat_moved_back,
    listed_clusters,
    open_dcim,
    stale_cluster_ids,
    status_of,
)

pytestmark = pytest.mark.browser


def jwt_expiry_ms(token: str) -> int:
    """The token's `exp` in milliseconds, read from its payload as any JWT reader would."""
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return int(claims["exp"]) * 1000


async def loop_states(page: Page) -> dict[str, str]:
    """Each loop's freshness state as the summary shows it: ok, late or never."""
    states = await page.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#freshness [data-loop-state]'),"
        " (badge) => [badge.closest('tr').dataset.loop, badge.dataset.loopState]))"
    )
    return {str(k): str(v) for k, v in states.items()}


# --- signing in ------------------------------------------------------------------------------------


async def test_without_a_token_the_page_asks_to_sign_in_and_a_pasted_token_works(
    page: Page, web_world: WebWorld
) -> None:
    await page.goto(f"{web_world.dcim}/platform")
    await page.wait_for(DCIM_SIGNED_OUT)
    await page.screenshot("dcim-platform-signed-out")
    assert await page.text("#sign-in .title") == "Sign in to see the platform"
    # In a person's words; without a token the page makes no call that could only be refused.
    assert await page.text("#sign-in-reason") == "This browser holds no DCIM token yet."
    assert "Bearer" not in await page.text("#sign-in")
    assert page.requests_to(web_world.admin_api) == []
    assert page.errors() == []

    await page.type_into("#token-input", web_world.token())
    await page.click("#sign-in-form button[type=submit]")
    await page.wait_for(dcim_ready("summary"))
    assert await page.text("h1") == "Platform"


async def test_a_token_in_the_fragment_is_kept_until_it_expires_and_taken_out_of_the_address(
    page: Page, web_world: WebWorld
) -> None:
    token = web_world.token()
    await page.goto(f"{web_world.dcim}/platform#token={token}")
    await page.wait_for(dcim_ready("summary"))
    assert await page.evaluate("window.location.hash") == "#/summary"
    assert token not in await page.evaluate("window.location.href")
    stored = json.loads(await page.evaluate("localStorage.getItem('fleet.dcim.token')"))
    assert stored == {"token": token, "expires": jwt_expiry_ms(token)}
    # Moving to another view keeps using it.
    await page.evaluate("window.location.hash = '#/organizations'")
    await page.wait_for(dcim_ready("organizations", "#/organizations"))
    await page.screenshot("dcim-platform-after-token-handover")


async def test_a_refused_token_is_dropped_and_the_page_asks_to_sign_in(page: Page, web_world: WebWorld) -> None:
    await page.goto(f"{web_world.dcim}/platform#token=not-a-token-at-all")
    await page.wait_for(DCIM_SIGNED_OUT)
    await page.screenshot("dcim-platform-token-refused")
    reason = await page.text("#sign-in-reason")
    assert reason.startswith("The token this browser held was not accepted")
    # The API's own words are there for a developer, folded away.
    assert "not a JWT" not in await page.text("#sign-in")
    assert "not a JWT" in await page.evaluate("document.querySelector('#sign-in details.technical').textContent")
    assert await page.evaluate("localStorage.getItem('fleet.dcim.token')") is None


async def test_a_dcim_auth_cookie_for_the_api_host_is_enough(page: Page, web_world: WebWorld) -> None:
    # DCIM's own session cookie: sent because the page calls with credentials, allowed by the API's CORS.
    await page.send("Network.setCookie", {"name": "dcim_auth", "value": web_world.token(), "url": web_world.admin_api})
    await page.goto(f"{web_world.dcim}/platform")
    # Without a token the page asks first (no call that could only be refused), then uses the session.
    await page.wait_for(DCIM_SIGNED_OUT)
    assert page.requests_to(web_world.admin_api) == []
    await page.click("#use-session")
    await page.wait_for(dcim_ready("summary"))
    await page.screenshot("dcim-platform-cookie")
    assert await page.evaluate("localStorage.getItem('fleet.dcim.token')") is None
    assert await page.text("#account") == ""
    # The choice is kept: the next visit goes straight to the summary.
    await page.reload()
    await page.wait_for(dcim_ready("summary"))


# --- summary ---------------------------------------------------------------------------------------


async def test_summary_shows_totals_statuses_findings_and_fresh_loops(page: Page, web_world: WebWorld) -> None:
    fleet = web_world.fleet
    clusters = listed_clusters(fleet)
    statuses = Counter(status_of(c) for c in clusters)
    summary = await grpc_call(web_world, "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest())

    await open_dcim(page, web_world)
    await page.wait_for(dcim_ready("summary"))
    await page.screenshot("dcim-platform-summary")

    cards = await page.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('[data-summary]'),"
        " (card) => [card.dataset.summary, card.querySelector('.value').innerText]))"
    )
    live_organizations = [o for o in fleet.organizations if o.deleted is None and o.id != SYSTEM_ORGANIZATION_ID]
    assert int(cards["organizations"].replace(",", "")) == len(live_organizations)
    assert int(cards["clusters"].replace(",", "")) == len(clusters)
    assert int(cards["attention"].replace(",", "")) == sum(
        n for s, n in statuses.items() if clusterstatus.needs_attention(s)
    )
    assert int(cards["stale"].replace(",", "")) == len(stale_cluster_ids(web_world.database))
    assert int(cards["pods"].replace(",", "")) == summary.pods

    by_status = {row[0]: int(row[1]) for row in await page.table("#clusters-by-status")}
    assert by_status == {status.name.title(): count for status, count in statuses.items()}
    by_kind = await page.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#findings-by-kind tbody tr'),"
        " (row) => [row.querySelector('[data-kind]').dataset.kind, Number(row.cells[1].innerText)]))"
    )
    assert by_kind == {fleet_pb2.DriftKind.Name(e.kind): e.findings for e in summary.open_findings_by_kind}
    assert len(by_kind) == len(fleet_pb2.DriftKind.keys()) - 1, "the world should have open findings of every kind"
    assert await loop_states(page) == {"inventory": "ok", "reconcile": "ok"}
    assert await page.texts(".loop-warning") == []
    assert page.errors() == []


async def test_a_loop_older_than_three_intervals_is_flagged_late_on_refresh(page: Page, web_world: WebWorld) -> None:
    await open_dcim(page, web_world)
    await page.wait_for(dcim_ready("summary"))
    assert await loop_states(page) == {"inventory": "ok", "reconcile": "ok"}
    with heartbeat_moved_back(web_world.database, "reconcile", timedelta(hours=1)):
        await page.click("#refresh")
        await page.wait_for("document.querySelector('.loop-warning') !== null")
        await page.wait_for(dcim_ready("summary"))
        await page.screenshot("dcim-platform-summary-late-loop")
        assert await loop_states(page) == {"inventory": "ok", "reconcile": "late"}
        [warning] = await page.texts(".loop-warning")
        assert warning.startswith("Reconcile (drift) is late: its last pass was 62 min ago")


# --- CORS --------------------------------------------------------------------------------------------


async def test_a_page_on_an_origin_the_api_does_not_allow_fails_visibly(page: Page, web_world: WebWorld) -> None:
    await page.goto(f"{web_world.dcim_elsewhere}/platform#token={web_world.token()}")
    await page.wait_for("document.body.dataset.state === 'error'")
    await page.screenshot("dcim-platform-foreign-origin")
    assert await page.text("#error .title") == "The fleet API cannot be reached from this page."
    refused = [c for c in page.requests_to(web_world.admin_api) if c.cors_error]
    assert refused, f"expected a CORS refusal, saw {list(page.requests.values())}"


async def test_the_api_unable_to_read_its_database_is_shown_as_such(page: Page, web_world: WebWorld) -> None:
    page_socket = bind_socket()
    down = closed_port_socket()  # nothing listens here: the API's database is down
    try:
        dsn = f"postgresql://{ADMIN_ROLE}@127.0.0.1:{down.getsockname()[1]}/fleet"
        async with serving_fleet(dsn, DCIM_ORIGINS=socket_url(page_socket), DATABASE_CONNECT_TIMEOUT_SECONDS="0.5") as (
            running,
            _,
        ):
            api = f"http://127.0.0.1:{running.server.http_port}"
            async with serve_pages(dcim_app(api), sock=page_socket) as url:
                await page.goto(f"{url}/platform#token={web_world.token()}")
                await page.wait_for("document.body.dataset.state === 'error'")
                await page.screenshot("dcim-platform-database-down")
                assert await page.text("#error .title") == "The fleet API cannot read its database right now."
                assert [c.status for c in page.requests_to(api) if c.method == "POST"] == [503]
    finally:
        down.close()
