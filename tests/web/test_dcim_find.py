"""Finding things on DCIM's staff pages in headless Chromium: search as you type, sorting, the address as
the page's state, and staying signed in across tabs.

What the lists must show is what the API answers for the same query, order and page (asked over
gRPC here); how the API matches and orders is tested against the API itself. What is checked here is
that the pages ask for it, show exactly that, drop stale answers, and keep it all in the address.
Each test saves a screenshot.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fundament.fleet.v1 import fleet_pb2

from tests.fixtures.browser import Browser, Page
from tests.fixtures.pages import (
    DCIM_SIGNED_OUT,
    PAGING_MORE,
    WebWorld,
    cluster_ids_shown,
    dcim_ready,
    grpc_call,
    open_dcim,
)

pytestmark = pytest.mark.browser

PANEL = "document.querySelector('#search-results')"
CLUSTER_SLOT = "document.querySelector('#cluster-search-slot')"


def settled(slot: str, query: str) -> str:
    """A list (or the header's panel) shows the answer for `query` and reads nothing else."""
    return f"{slot}?.dataset.query === {json.dumps(query)} && {slot}.dataset.pending === undefined"


async def clusters(world: WebWorld, **fields: Any) -> list[str]:
    answer = await grpc_call(world, "ListClusters", fleet_pb2.ListClustersRequest(**fields))
    return [c.id for c in answer.clusters]


async def organization_names(world: WebWorld, **fields: Any) -> list[str]:
    answer = await grpc_call(world, "ListOrganizations", fleet_pb2.ListOrganizationsRequest(**fields))
    return [o.name for o in answer.organizations]


async def organizations_shown(page: Page) -> list[str]:
    found = await page.evaluate(
        "Array.from(document.querySelectorAll('#organizations tbody tr'), (r) => r.dataset.organization)"
    )
    return [str(name) for name in found]


# --- the header's search ---------------------------------------------------------------------------


async def test_the_header_search_shows_clusters_organizations_and_namespaces_as_you_type(
    page: Page, web_world: WebWorld
) -> None:
    await open_dcim(page, web_world)
    await page.wait_for(dcim_ready("summary"))
    await page.type_into("#search", "acm")
    await page.wait_for(settled(PANEL, "acm"))
    await page.screenshot("dcim-search-acm")
    shown = await page.evaluate(
        "Array.from(document.querySelectorAll('#search-clusters [data-cluster-id]'), (e) => e.dataset.clusterId)"
    )
    assert shown == await clusters(web_world, query="acm", page_size=5) and shown
    organizations = await page.evaluate(
        "Array.from(document.querySelectorAll('#search-organizations [data-organization]'),"
        " (e) => e.dataset.organization)"
    )
    assert organizations == await organization_names(web_world, query="acm", page_size=5)
    assert "acme" in organizations
    assert await page.text("#search-namespaces p") == "None."

    await page.evaluate(
        "const s = document.querySelector('#search'); s.value = ''; s.dispatchEvent(new Event('input'))"
    )
    await page.wait_for(f"{PANEL}.hidden")
    await page.type_into("#search", "frontend")
    await page.wait_for(settled(PANEL, "frontend"))
    expected = await grpc_call(
        web_world, "SearchNamespaces", fleet_pb2.SearchNamespacesRequest(query="frontend", page_size=5)
    )
    namespaces = await page.evaluate(
        "Array.from(document.querySelectorAll('#search-namespaces [data-namespace-id]'), (e) => e.dataset.namespaceId)"
    )
    assert namespaces == [n.id for n in expected.namespaces] and len(namespaces) == 5
    assert "More match" in await page.text("#search-namespaces")

    # A result leads to its cluster, and the panel closes.
    first = expected.namespaces[0]
    await page.click("#search-namespaces li a")
    await page.wait_for(dcim_ready("cluster", first.cluster_id))
    assert await page.evaluate(f"{PANEL}.hidden")
    assert page.errors() == []


# A browser without AbortSignal.any and AbortSignal.timeout (before 2023) gets connect.js's own signals.
WITHOUT_NEWER_SIGNALS = "delete AbortSignal.any; delete AbortSignal.timeout;"
SIGNALS = pytest.mark.parametrize("signals", ["native", "without AbortSignal.any and AbortSignal.timeout"])


async def open_dcim_with(page: Page, world: WebWorld, signals: str) -> None:
    """Open DCIM's summary in a browser with its own signals, or as one without the newer two."""
    if signals != "native":
        await page.send("Page.addScriptToEvaluateOnNewDocument", {"source": WITHOUT_NEWER_SIGNALS})
    await open_dcim(page, world)
    assert await page.evaluate("typeof AbortSignal.any") == ("function" if signals == "native" else "undefined")
    await page.wait_for(dcim_ready("summary"))


@SIGNALS
async def test_a_newer_search_cancels_the_older_ones_requests_and_only_its_answer_is_shown(
    page: Page, web_world: WebWorld, signals: str
) -> None:
    await open_dcim_with(page, web_world, signals)
    # Every query the panel ever shows results for, in order.
    await page.evaluate(
        f"""window.__shown = [];
        new MutationObserver(() => {{
            const q = {PANEL}.dataset.query;
            if (q !== undefined && window.__shown[window.__shown.length - 1] !== q) window.__shown.push(q);
        }}).observe({PANEL}, {{attributes: true}});"""
    )
    await page.slow_network(1500)  # the first search is still on its way when the person types on
    await page.type_into("#search", "ac")
    await page.wait_for(f"{PANEL}.dataset.pending === 'ac'")
    await page.type_into("#search", "me")
    await page.wait_for(settled(PANEL, "acme"))
    await page.slow_network(0)
    await page.screenshot("dcim-search-cancelled" if signals == "native" else "dcim-search-cancelled-own-signals")
    assert await page.evaluate("window.__shown") == ["acme"]
    aborted = [
        r
        for r in page.requests_to(web_world.admin_api)
        if r.method == "POST" and r.failure is not None and "ABORTED" in r.failure
    ]
    assert len(aborted) == 3, "the three requests of the search for 'ac' are cancelled"
    assert await page.evaluate(
        "Array.from(document.querySelectorAll('#search-clusters [data-cluster-id]')).length"
    ) == len(await clusters(web_world, query="acme", page_size=5))


# One call of connect.js with a 300 ms deadline while every request takes 1.5 s, and one cancelled by
# its caller at once: what each rejects with, as {code, message}.
TIMEOUT_AND_CANCEL = """(async () => {
    const { callUnary } = await import("/common/connect.js");
    const outcome = (call) => call.then(() => ({ code: "ok" }), (e) => ({ code: e.code, message: e.message }));
    const procedure = "fundament.fleet.v1.FleetService/GetFleetSummary";
    const late = outcome(callUnary(%(base)s, procedure, {}, { timeoutMs: 300 }));
    const controller = new AbortController();
    const cancelled = outcome(callUnary(%(base)s, procedure, {}, { signal: controller.signal }));
    controller.abort();
    return { late: await late, cancelled: await cancelled };
})()"""


@SIGNALS
async def test_a_call_past_its_deadline_and_a_cancelled_one_are_told_apart(
    page: Page, web_world: WebWorld, signals: str
) -> None:
    await open_dcim_with(page, web_world, signals)
    await page.slow_network(1500)
    outcomes = await page.evaluate(TIMEOUT_AND_CANCEL % {"base": json.dumps(web_world.admin_api)})
    await page.slow_network(0)
    assert outcomes == {
        "late": {"code": "unavailable", "message": "the API did not answer in time"},
        "cancelled": {"code": "canceled", "message": "the call was cancelled"},
    }


# --- the cluster list: search, sort, address ---------------------------------------------------------


async def test_the_cluster_list_follows_the_search_as_you_type_and_back_leaves_the_search(
    page: Page, web_world: WebWorld
) -> None:
    await open_dcim(page, web_world, "/clusters")
    await page.wait_for(dcim_ready("clusters"))
    await page.wait_for(PAGING_MORE)
    await page.type_into("#cluster-search-query", "acme")
    await page.wait_for(settled(CLUSTER_SLOT, "acme"))
    broader = await clusters(web_world, query="acme")
    assert await cluster_ids_shown(page) == broader
    await page.type_into("#cluster-search-query", "/prod-0")
    await page.wait_for(settled(CLUSTER_SLOT, "acme/prod-0"))
    await page.screenshot("dcim-clusters-search")
    expected = await clusters(web_world, query="acme/prod-0")
    assert await cluster_ids_shown(page) == expected and 0 < len(expected) < len(broader)
    assert await page.evaluate("window.location.hash") == "#/clusters?q=acme%2Fprod-0"
    assert "matching “acme/prod-0”" in await page.text("#clusters caption")

    # One step back leaves the whole burst of typing.
    await page.evaluate("history.back()")
    await page.wait_for(
        "window.location.hash === '#/clusters' && document.body.dataset.state === 'ready'"
        " && document.querySelector('#cluster-search-query')?.value === ''"
    )
    await page.wait_for(PAGING_MORE)
    assert await cluster_ids_shown(page) == await clusters(web_world)
    assert page.errors() == []


async def test_sorting_by_a_column_asks_the_api_for_that_order_and_back_returns_to_the_previous(
    page: Page, web_world: WebWorld
) -> None:
    await open_dcim(page, web_world, "/clusters")
    await page.wait_for(dcim_ready("clusters"))
    await page.click("#clusters th a.sort[data-sort=pods]")
    await page.wait_for(dcim_ready("clusters", "order=pods&desc=1"))
    await page.screenshot("dcim-clusters-by-pods")
    by_pods_desc = await clusters(web_world, order=fleet_pb2.CLUSTER_ORDER_PODS, descending=True)
    assert await cluster_ids_shown(page) == by_pods_desc
    assert await page.text("#clusters th[aria-sort=descending]") == "Pods ▼"

    await page.click("#clusters th a.sort[data-sort=pods]")
    await page.wait_for(
        "document.body.dataset.route === '#/clusters?order=pods' && document.body.dataset.state === 'ready'"
    )
    assert await cluster_ids_shown(page) == await clusters(web_world, order=fleet_pb2.CLUSTER_ORDER_PODS)
    assert await page.text("#clusters th[aria-sort=ascending]") == "Pods ▲"

    await page.evaluate("history.back()")
    await page.wait_for("document.body.dataset.route.endsWith('desc=1') && document.body.dataset.state === 'ready'")
    assert await cluster_ids_shown(page) == by_pods_desc

    for key, order in (
        ("organization", fleet_pb2.CLUSTER_ORDER_ORGANIZATION),
        ("since", fleet_pb2.CLUSTER_ORDER_STATUS_SINCE),
    ):
        await page.click(f"#clusters th a.sort[data-sort={key}]")
        await page.wait_for(dcim_ready("clusters", f"order={key}"))
        descending = await page.evaluate("window.location.hash.includes('desc=1')")
        assert await cluster_ids_shown(page) == await clusters(web_world, order=order, descending=descending)


async def test_an_address_with_search_filters_order_and_page_opens_the_same_list_in_another_tab(
    page: Page, browser: Browser, web_world: WebWorld
) -> None:
    await open_dcim(page, web_world, "/clusters")
    await page.wait_for(dcim_ready("clusters"))
    await page.click("#clusters th a.sort[data-sort=nodes]")
    await page.wait_for(dcim_ready("clusters", "order=nodes"))
    await page.wait_for(PAGING_MORE)
    await page.click("#clusters-next")
    await page.wait_for(dcim_ready("clusters", "page="))
    await page.screenshot("dcim-clusters-second-page")
    first = await grpc_call(
        web_world,
        "ListClusters",
        fleet_pb2.ListClustersRequest(order=fleet_pb2.CLUSTER_ORDER_NODES, descending=True),
    )
    second = await clusters(
        web_world, order=fleet_pb2.CLUSTER_ORDER_NODES, descending=True, page_token=first.next_page_token
    )
    assert await cluster_ids_shown(page) == second
    address = await page.evaluate("window.location.href")

    async with browser.another_tab(page) as tab:
        await tab.goto(address)
        await tab.wait_for(dcim_ready("clusters", "page="))
        assert await cluster_ids_shown(tab) == second
        assert await tab.evaluate("document.querySelector('#clusters th[aria-sort]').innerText") == "Nodes ▼"

    shared = "/clusters?q=prod&order=observed&desc=1&status=CLUSTER_STATUS_RUNNING"
    await page.evaluate(f"window.location.hash = {json.dumps('#' + shared)}")
    await page.wait_for(dcim_ready("clusters", "q=prod"))
    expected = await clusters(
        web_world,
        query="prod",
        order=fleet_pb2.CLUSTER_ORDER_OBSERVED,
        descending=True,
        statuses=[fleet_pb2.CLUSTER_STATUS_RUNNING],
    )
    assert await cluster_ids_shown(page) == expected and expected
    assert await page.evaluate("document.querySelector('#cluster-search-query').value") == "prod"
    assert await page.evaluate("document.querySelector('input[value=CLUSTER_STATUS_RUNNING]').checked")

    await page.evaluate("history.go(-2)")  # before the shared address and the second page
    await page.wait_for("document.body.dataset.route === '#/clusters?order=nodes&desc=1'")
    await page.wait_for(PAGING_MORE)
    assert await cluster_ids_shown(page) == [c.id for c in first.clusters]


async def test_organizations_are_searched_and_sorted_with_the_order_kept_while_searching(
    page: Page, web_world: WebWorld
) -> None:
    await open_dcim(page, web_world, "/organizations?order=created&desc=1")
    await page.wait_for(dcim_ready("organizations", "order=created"))
    newest_first = {"order": fleet_pb2.ORGANIZATION_ORDER_CREATED, "descending": True}
    assert await organizations_shown(page) == await organization_names(web_world, **newest_first)
    await page.type_into("#organization-search-query", "in")
    await page.wait_for(settled("document.querySelector('#organization-search-slot')", "in"))
    await page.screenshot("dcim-organizations-search")
    expected = await organization_names(web_world, query="in", **newest_first)
    assert await organizations_shown(page) == expected and expected
    assert await page.evaluate("window.location.hash") == "#/organizations?order=created&desc=1&q=in"

    await page.click("#organizations th a.sort[data-sort=alias]")
    await page.wait_for(dcim_ready("organizations", "order=alias"))
    by_alias = await organization_names(web_world, query="in", order=fleet_pb2.ORGANIZATION_ORDER_ALIAS)
    assert await organizations_shown(page) == by_alias


# --- signed in across tabs ---------------------------------------------------------------------------


async def test_a_link_opened_in_another_tab_is_signed_in_and_forgetting_the_token_signs_out_both(
    page: Page, browser: Browser, web_world: WebWorld
) -> None:
    await open_dcim(page, web_world, "/summary")
    await page.wait_for(dcim_ready("summary"))
    async with browser.another_tab(page) as tab:
        await tab.goto(f"{web_world.dcim}/platform#/clusters?attention=1")
        await tab.wait_for(dcim_ready("clusters", "attention=1"))
        await tab.screenshot("dcim-second-tab-signed-in")
        assert "Signed in as" in await tab.text("#account")
        await tab.click("#sign-out")
        await tab.wait_for(DCIM_SIGNED_OUT)
    # The first tab hears it (storage event) and asks to sign in without being touched.
    await page.wait_for(DCIM_SIGNED_OUT)
    assert await page.evaluate("localStorage.getItem('fleet.dcim.token')") is None


async def test_a_stored_token_past_its_expiry_is_dropped_and_the_page_asks_to_sign_in(
    page: Page, web_world: WebWorld
) -> None:
    await page.goto(f"{web_world.dcim}/platform#/summary")
    await page.wait_for(DCIM_SIGNED_OUT)
    # A valid token, stored as expired: the page must trust the expiry it stored, not try the token.
    entry = json.dumps({"token": web_world.token(), "expires": 1000})
    await page.evaluate(f"localStorage.setItem('fleet.dcim.token', {json.dumps(entry)})")
    await page.reload()
    await page.wait_for(DCIM_SIGNED_OUT)
    assert await page.evaluate("localStorage.getItem('fleet.dcim.token')") is None
    # An expired token is no token: nothing is sent that could only be refused.
    assert page.requests_to(web_world.admin_api) == []
    assert await page.text("#sign-in-reason") == "This browser holds no DCIM token yet."


async def test_a_token_that_expires_while_the_page_is_open_signs_it_out(page: Page, web_world: WebWorld) -> None:
    await page.goto(f"{web_world.dcim}/platform#/summary")
    await page.wait_for(DCIM_SIGNED_OUT)
    # A valid token the page was told expires in three seconds: it must stop using it then.
    token = json.dumps(web_world.token())
    entry = f"JSON.stringify({{token: {token}, expires: Date.now() + 3000}})"
    await page.evaluate(f"localStorage.setItem('fleet.dcim.token', {entry})")
    await page.reload()
    await page.wait_for(dcim_ready("summary"))
    await page.wait_for(DCIM_SIGNED_OUT)
    assert await page.evaluate("localStorage.getItem('fleet.dcim.token')") is None
