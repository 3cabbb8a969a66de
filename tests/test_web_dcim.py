"""DCIM's staff /platform section in headless Chromium, against platform-admin-api on loopback.

A person with a DCIM token sees the summary with the freshness of both loops, the cluster list and
its filters, the drift findings, a cluster's detail and the ledger; without a token, or with one the
API refuses, a sign-in message; on an origin the API does not allow, a visible failure. Expected
values come from the fleet description and the database rows, judged with the one `clusterstatus`
rule, or (for what only the API computes) from the API itself over gRPC. Each test saves a screenshot.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import grpc
import pytest
from fundament.fleet.v1 import fleet_pb2
from fundament.fleet.v1.fleet_pb2_grpc import FleetServiceStub

from db.seed.model import SYSTEM_ORGANIZATION_ID
from fleetctl.webapp import bind_socket, dcim_app, serve_pages, socket_url
from services.common import clusterstatus
from tests.fixtures.browser import Page
from tests.fixtures.fleet_api import ROLE as ADMIN_ROLE
from tests.fixtures.fleet_api import auth_headers, serving_fleet
from tests.fixtures.pages import (
    MARKUP_ORGANIZATION,
    WebWorld,
    closed_port_socket,
    heartbeat_moved_back,
    listed_clusters,
    stale_cluster_ids,
    status_of,
)

pytestmark = pytest.mark.browser


def ready(view: str, route: str = "") -> str:
    """The page shows `view` for a fragment containing `route`, fully loaded."""
    body = "document.body.dataset"
    return f"{body}.view === '{view}' && {body}.state === 'ready' && {body}.route.includes('{route}')"


SIGNED_OUT = "document.body.dataset.state === 'signed-out'"
PAGING_DONE = "document.querySelector('.paged')?.dataset.paging === 'done'"
PAGING_MORE = "document.querySelector('.paged')?.dataset.paging === 'more'"


async def open_signed_in(page: Page, world: WebWorld, route: str = "/summary") -> None:
    """Open the section the way DCIM links to it: the token in the fragment, then the route."""
    await page.goto(f"{world.dcim}/platform#token={world.token()}&next={route}")


async def cluster_ids_shown(page: Page) -> list[str]:
    return [
        str(i)
        for i in await page.evaluate(
            "Array.from(document.querySelectorAll('#clusters tbody tr'), (r) => r.dataset.clusterId)"
        )
    ]


async def grpc_call(world: WebWorld, method: str, request: Any) -> Any:
    target = world.admin_grpc
    async with grpc.aio.insecure_channel(target) as channel:
        return await getattr(FleetServiceStub(channel), method)(request, metadata=auth_headers(), timeout=30)


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
    await page.wait_for(SIGNED_OUT)
    await page.screenshot("dcim-platform-signed-out")
    assert await page.text("#sign-in .title") == "Sign in to see the platform."
    assert "no credential" in await page.text("#sign-in")
    assert [(c.method, c.status) for c in page.requests_to(web_world.admin_api) if c.method == "POST"] == [
        ("POST", 401)
    ]

    await page.type_into("#token-input", web_world.token())
    await page.click("#sign-in-form button[type=submit]")
    await page.wait_for(ready("summary"))
    assert await page.text("h1") == "Platform"


async def test_a_token_in_the_fragment_is_kept_for_the_tab_and_taken_out_of_the_address(
    page: Page, web_world: WebWorld
) -> None:
    token = web_world.token()
    await page.goto(f"{web_world.dcim}/platform#token={token}")
    await page.wait_for(ready("summary"))
    assert await page.evaluate("window.location.hash") == "#/summary"
    assert token not in await page.evaluate("window.location.href")
    assert await page.evaluate("sessionStorage.getItem('fleet.dcim.token')") == token
    # Moving to another view keeps using it.
    await page.evaluate("window.location.hash = '#/organizations'")
    await page.wait_for(ready("organizations", "#/organizations"))
    await page.screenshot("dcim-platform-after-token-handover")


async def test_a_refused_token_is_dropped_and_the_page_asks_to_sign_in(page: Page, web_world: WebWorld) -> None:
    await page.goto(f"{web_world.dcim}/platform#token=not-a-token-at-all")
    await page.wait_for(SIGNED_OUT)
    await page.screenshot("dcim-platform-token-refused")
    assert "not a JWT" in await page.text("#sign-in")
    assert await page.evaluate("sessionStorage.getItem('fleet.dcim.token')") is None


# --- summary ---------------------------------------------------------------------------------------


async def test_summary_shows_totals_statuses_findings_and_fresh_loops(page: Page, web_world: WebWorld) -> None:
    fleet = web_world.fleet
    clusters = listed_clusters(fleet)
    statuses = Counter(status_of(c) for c in clusters)
    summary = await grpc_call(web_world, "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest())

    await open_signed_in(page, web_world)
    await page.wait_for(ready("summary"))
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
    assert len(by_kind) == 5, "the world should have open findings of every kind"
    assert await loop_states(page) == {"inventory": "ok", "reconcile": "ok"}
    assert await page.texts(".loop-warning") == []
    assert page.errors() == []


async def test_a_loop_older_than_three_intervals_is_flagged_late_on_refresh(page: Page, web_world: WebWorld) -> None:
    await open_signed_in(page, web_world)
    await page.wait_for(ready("summary"))
    assert await loop_states(page) == {"inventory": "ok", "reconcile": "ok"}
    with heartbeat_moved_back(web_world.database, "reconcile", timedelta(hours=1)):
        await page.click("#refresh")
        await page.wait_for("document.querySelector('.loop-warning') !== null")
        await page.wait_for(ready("summary"))
        await page.screenshot("dcim-platform-summary-late-loop")
        assert await loop_states(page) == {"inventory": "ok", "reconcile": "late"}
        [warning] = await page.texts(".loop-warning")
        assert warning.startswith("Reconcile (drift) is late: its last pass was 62 min ago")


# --- clusters --------------------------------------------------------------------------------------


async def test_cluster_list_pages_through_every_cluster(page: Page, web_world: WebWorld) -> None:
    expected = {str(c.id) for c in listed_clusters(web_world.fleet)}
    assert 100 < len(expected) <= 200, "the world should need exactly two pages"
    await open_signed_in(page, web_world, "/clusters")
    await page.wait_for(ready("clusters"))
    await page.wait_for(PAGING_MORE)
    assert len(await cluster_ids_shown(page)) == 100
    assert "More follow." in await page.text("#clusters-paging")
    await page.click("#clusters-more")
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-clusters-all")
    assert await page.evaluate("document.querySelector('#clusters-more') === null")
    shown = await cluster_ids_shown(page)
    assert len(shown) == len(expected) and set(shown) == expected
    assert f"Showing {len(expected)} clusters." in await page.text("#clusters-paging")


async def test_status_filter_shows_exactly_the_clusters_in_that_status(page: Page, web_world: WebWorld) -> None:
    clusters = listed_clusters(web_world.fleet)
    errors = {str(c.id) for c in clusters if status_of(c) is clusterstatus.ClusterStatus.ERROR}
    assert errors, "the world should have clusters in error"
    await open_signed_in(page, web_world, "/clusters")
    await page.wait_for(ready("clusters"))
    await page.click("input[name=status][value=CLUSTER_STATUS_ERROR]")
    await page.wait_for(ready("clusters", "status=CLUSTER_STATUS_ERROR"))
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-clusters-error")
    assert set(await cluster_ids_shown(page)) == errors
    assert set(await page.texts("#clusters tbody [data-status]")) == {"Error"}
    assert await page.evaluate("document.querySelector('input[value=CLUSTER_STATUS_ERROR]').checked")


async def test_needs_attention_and_stale_filters(page: Page, web_world: WebWorld) -> None:
    clusters = listed_clusters(web_world.fleet)
    attention = {str(c.id) for c in clusters if clusterstatus.needs_attention(status_of(c))}
    stale = stale_cluster_ids(web_world.database) & {str(c.id) for c in clusters}
    assert attention and stale
    await open_signed_in(page, web_world, "/clusters?attention=1")
    await page.wait_for(ready("clusters"))
    await page.wait_for(PAGING_DONE)
    assert set(await cluster_ids_shown(page)) == attention

    await page.evaluate("window.location.hash = '#/clusters?stale=1'")
    await page.wait_for(ready("clusters", "stale=1"))
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-clusters-stale")
    assert set(await cluster_ids_shown(page)) == stale
    assert await page.evaluate(
        "Array.from(document.querySelectorAll('#clusters tbody tr')).every((r) => r.querySelector('[data-flag=stale]'))"
    )


async def test_organization_and_region_filters_combine(page: Page, web_world: WebWorld) -> None:
    clusters = listed_clusters(web_world.fleet)
    first = sorted(clusters, key=lambda c: (c.name, str(c.id)))[0]
    organization = next(o for o in web_world.fleet.organizations if o.id == first.organization_id)
    of_organization = {str(c.id) for c in clusters if c.organization_id == organization.id}
    in_region = {str(c.id) for c in clusters if c.organization_id == organization.id and c.region == first.region}
    assert len(of_organization) > len(in_region) > 0, "the organization should span regions"

    await open_signed_in(page, web_world, "/clusters")
    await page.wait_for(ready("clusters"))
    # The organization link in the first row filters by that organization.
    await page.click(f"#clusters tr[data-cluster-id='{first.id}'] td:nth-child(2) a")
    await page.wait_for(ready("clusters", f"org={organization.id}"))
    await page.wait_for(PAGING_DONE)
    assert set(await cluster_ids_shown(page)) == of_organization
    assert await page.text(".chip") == f"Organization: {organization.name} ✕"

    await page.type_into("#region-filter", first.region)
    await page.evaluate("document.querySelector('#cluster-filters').requestSubmit()")
    await page.wait_for(ready("clusters", f"region={first.region}"))
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-clusters-organization-region")
    assert set(await cluster_ids_shown(page)) == in_region
    assert set(await page.texts("#clusters tbody td:nth-child(3)")) == {first.region}


# --- drift -----------------------------------------------------------------------------------------


async def list_every_finding(
    world: WebWorld, kind: fleet_pb2.DriftKind = fleet_pb2.DRIFT_KIND_UNSPECIFIED
) -> list[Any]:
    findings: list[Any] = []
    token = ""
    while True:
        answer = await grpc_call(
            world, "ListDriftFindings", fleet_pb2.ListDriftFindingsRequest(page_size=500, page_token=token, kind=kind)
        )
        findings += answer.findings
        token = answer.next_page_token
        if not token:
            return findings


async def test_drift_findings_by_kind(page: Page, web_world: WebWorld) -> None:
    kind = fleet_pb2.DRIFT_KIND_VERSION_MISMATCH
    expected = {f.id for f in await list_every_finding(web_world, kind)}
    assert expected
    await open_signed_in(page, web_world, "/drift")
    await page.wait_for(ready("drift"))
    await page.evaluate(
        "const s = document.querySelector('#kind-filter'); s.value = 'DRIFT_KIND_VERSION_MISMATCH';"
        " s.dispatchEvent(new Event('change'))"
    )
    await page.wait_for(ready("drift", "kind=DRIFT_KIND_VERSION_MISMATCH"))
    if await page.evaluate(PAGING_MORE):
        await page.click("#findings-all")
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-drift-version-mismatch")
    shown = await page.evaluate(
        "Array.from(document.querySelectorAll('#findings tbody tr'), (r) => r.dataset.findingId)"
    )
    assert set(shown) == expected and len(shown) == len(expected)
    assert set(await page.texts("#findings tbody .kind")) == {"Version mismatch"}


async def test_every_open_finding_is_listed_across_pages(page: Page, web_world: WebWorld) -> None:
    expected = [f.id for f in await list_every_finding(web_world)]
    assert len(expected) > 100, "the world should need more than one page of findings"
    await open_signed_in(page, web_world, "/drift")
    await page.wait_for(ready("drift"))
    await page.wait_for(PAGING_MORE)
    await page.click("#findings-all")
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-drift-all")
    shown = await page.evaluate(
        "Array.from(document.querySelectorAll('#findings tbody tr'), (r) => r.dataset.findingId)"
    )
    assert shown == expected, "every open finding once, in the API's order"


# --- one cluster -----------------------------------------------------------------------------------


def detail_expectations(world: WebWorld) -> dict[str, Any]:
    """A live, collected cluster with open findings and ledger rows, and what its page must list."""
    with world.database.admin() as conn:
        row = conn.execute(
            "SELECT c.id, c.name FROM tenant.clusters c"
            " JOIN tenant.organizations o ON o.id = c.organization_id AND o.deleted IS NULL"
            " WHERE c.deleted IS NULL AND o.id <> tenant.system_organization_id()"
            " AND EXISTS (SELECT 1 FROM tenant.namespace_snapshots s WHERE s.cluster_id = c.id)"
            " AND EXISTS (SELECT 1 FROM tenant.drift_findings f WHERE f.cluster_id = c.id AND f.resolved IS NULL)"
            " ORDER BY c.name, c.id LIMIT 1"
        ).fetchone()
        assert row is not None
        cluster_id = row[0]
        pools = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM tenant.node_pools WHERE cluster_id = %s AND deleted IS NULL ORDER BY name",
                (cluster_id,),
            )
        ]
        namespaces = {
            (str(r[0]), str(r[1])): r[2]
            for r in conn.execute(
                "SELECT p.name, n.name, s.pods FROM tenant.namespaces n"
                " JOIN tenant.projects p ON p.id = n.project_id AND p.deleted IS NULL"
                " LEFT JOIN tenant.namespace_snapshots s ON s.namespace_id = n.id"
                " WHERE p.cluster_id = %s AND n.deleted IS NULL",
                (cluster_id,),
            )
        }
        findings = conn.execute(
            "SELECT count(*) FROM tenant.drift_findings WHERE cluster_id = %s AND resolved IS NULL", (cluster_id,)
        ).fetchone()
        ledger = {
            str(r[0]): (r[1], r[2])
            for r in conn.execute(
                "SELECT resource_type, count(*), count(*) FILTER (WHERE billable) FROM tenant.infrastructure_resources"
                " WHERE cluster_id = %s AND destroyed IS NULL GROUP BY resource_type",
                (cluster_id,),
            )
        }
    assert findings is not None
    return {
        "id": str(cluster_id),
        "name": str(row[1]),
        "pools": pools,
        "namespaces": namespaces,
        "findings": findings[0],
        "ledger": ledger,
    }


async def test_a_clusters_detail_shows_pools_namespaces_findings_and_ledger(page: Page, web_world: WebWorld) -> None:
    expected = detail_expectations(web_world)
    await open_signed_in(page, web_world, "/clusters")
    await page.wait_for(ready("clusters"))
    await page.wait_for(PAGING_MORE)
    link = f"#clusters tr[data-cluster-id='{expected['id']}'] a.cluster-link"
    await page.click(link)
    await page.wait_for(ready("cluster"))
    await page.screenshot("dcim-platform-cluster-detail")

    assert (await page.text("#cluster-name")).startswith(expected["name"])
    assert [row[0] for row in await page.table("#node-pools")] == expected["pools"]
    namespaces = {(row[0], row[1]): row[2] for row in await page.table("#namespaces")}
    assert namespaces == {key: "—" if pods is None else str(pods) for key, pods in expected["namespaces"].items()}
    assert len(await page.table("#cluster-findings")) == expected["findings"]
    ledger = {row[0]: (int(row[1]), int(row[2])) for row in await page.table("#ledger-counts")}
    assert ledger == expected["ledger"]
    assert page.errors() == []

    await page.click("#ledger-link")
    await page.wait_for(ready("ledger"))
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-ledger-of-cluster")
    types = Counter(
        await page.evaluate(
            "Array.from(document.querySelectorAll('#resources tbody tr'), (r) => r.dataset.resourceType)"
        )
    )
    assert {t: n for t, n in types.items()} == {t: counts[0] for t, counts in expected["ledger"].items()}


async def test_an_unknown_cluster_shows_the_apis_not_found(page: Page, web_world: WebWorld) -> None:
    await open_signed_in(page, web_world, "/clusters/00000000-0000-4000-8000-00000000dead")
    await page.wait_for("document.body.dataset.state === 'error'")
    await page.screenshot("dcim-platform-unknown-cluster")
    assert "not_found" in await page.text("#error")


async def test_ledger_filters_by_type_billing_and_destroyed_rows(page: Page, web_world: WebWorld) -> None:
    with web_world.database.admin() as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE r.destroyed IS NULL), count(*) FROM tenant.infrastructure_resources r"
            " JOIN tenant.clusters c ON c.id = r.cluster_id"
            " WHERE r.resource_type = 'kubernetes.node' AND c.organization_id <> tenant.system_organization_id()"
        ).fetchone()
    assert row is not None
    active, with_destroyed = int(str(row[0])), int(str(row[1]))
    assert with_destroyed > active > 0

    await open_signed_in(page, web_world, "/ledger?type=kubernetes.node&billable=yes")
    await page.wait_for(ready("ledger"))
    if await page.evaluate(PAGING_MORE):
        await page.click("#resources-all")
    await page.wait_for(PAGING_DONE)
    types = await page.evaluate(
        "Array.from(document.querySelectorAll('#resources tbody tr'), (r) => r.dataset.resourceType)"
    )
    assert len(types) == active and set(types) == {"kubernetes.node"}

    await page.click("#destroyed-filter")
    await page.wait_for(ready("ledger", "destroyed=1"))
    if await page.evaluate(PAGING_MORE):
        await page.click("#resources-all")
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-ledger-nodes-with-destroyed")
    assert await page.evaluate("document.querySelectorAll('#resources tbody tr').length") == with_destroyed
    destroyed_rows = await page.evaluate("document.querySelectorAll('#resources tbody tr.destroyed').length")
    assert destroyed_rows == with_destroyed - active

    await page.evaluate(
        "const s = document.querySelector('#billable-filter'); s.value = 'no'; s.dispatchEvent(new Event('change'))"
    )
    await page.wait_for(ready("ledger", "billable=no"))
    assert await page.text("#resources .empty") == "No ledger row matches these filters."


# --- organizations and markup ----------------------------------------------------------------------


async def test_organizations_list_every_organization_and_show_markup_as_text(page: Page, web_world: WebWorld) -> None:
    expected = {o.name for o in web_world.fleet.organizations if o.id != SYSTEM_ORGANIZATION_ID}
    await open_signed_in(page, web_world, "/organizations")
    await page.wait_for(ready("organizations"))
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-organizations")
    shown = await page.evaluate(
        "Array.from(document.querySelectorAll('#organizations tbody tr'), (r) => r.dataset.organization)"
    )
    assert sorted(shown) == sorted(expected)
    markup = f"#organizations tr[data-organization='{MARKUP_ORGANIZATION.name}'] .primary"
    assert await page.text(markup) == MARKUP_ORGANIZATION.alias
    assert await page.evaluate("document.querySelectorAll('#organizations img, #organizations b').length") == 0
    assert await page.evaluate("window.__injected === undefined")


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
        async with serving_fleet(dsn, DCIM_ORIGINS=socket_url(page_socket), DATABASE_CONNECT_TIMEOUT="0.5") as (
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
