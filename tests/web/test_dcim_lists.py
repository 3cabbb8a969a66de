"""DCIM's staff /platform lists in headless Chromium: clusters and their filters, drift, one cluster, ledger.

Expected values come from the fleet description and the database rows, judged with the one
`clusterstatus` rule, or (for what only the API computes, like finding order) from the API itself
over gRPC. Lists longer than a page are walked with "Show more" and "Show all". Each test saves a
screenshot.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from fundament.fleet.v1 import fleet_pb2

from common import clusterstatus
from common.organizations import SYSTEM_ORGANIZATION_ID
from db.seed.write import SEED_AUTHOR
from tests.fixtures.browser import Page
from tests.fixtures.pages import (
    MARKUP_ORGANIZATION,
    PAGING_DONE,
    PAGING_MORE,
    WebWorld,
    cluster_ids_shown,
    dcim_ready,
    grpc_call,
    listed_clusters,
    open_dcim,
    stale_cluster_ids,
    status_of,
)

pytestmark = pytest.mark.browser


# --- clusters --------------------------------------------------------------------------------------


async def test_cluster_list_pages_through_every_cluster(page: Page, web_world: WebWorld) -> None:
    expected = {str(c.id) for c in listed_clusters(web_world.fleet)}
    assert 100 < len(expected) <= 200, "the world should need exactly two pages"
    await open_dcim(page, web_world, "/clusters")
    await page.wait_for(dcim_ready("clusters"))
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
    await open_dcim(page, web_world, "/clusters")
    await page.wait_for(dcim_ready("clusters"))
    await page.click("input[name=status][value=CLUSTER_STATUS_ERROR]")
    await page.wait_for(dcim_ready("clusters", "status=CLUSTER_STATUS_ERROR"))
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
    await open_dcim(page, web_world, "/clusters?attention=1")
    await page.wait_for(dcim_ready("clusters"))
    await page.wait_for(PAGING_DONE)
    assert set(await cluster_ids_shown(page)) == attention

    await page.evaluate("window.location.hash = '#/clusters?stale=1'")
    await page.wait_for(dcim_ready("clusters", "stale=1"))
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

    await open_dcim(page, web_world, "/clusters")
    await page.wait_for(dcim_ready("clusters"))
    # The organization link in the first row filters by that organization.
    await page.click(f"#clusters tr[data-cluster-id='{first.id}'] td:nth-child(2) a")
    await page.wait_for(dcim_ready("clusters", f"org={organization.id}"))
    await page.wait_for(PAGING_DONE)
    assert set(await cluster_ids_shown(page)) == of_organization
    assert await page.text(".chip") == f"Organization: {organization.name} ✕"

    await page.type_into("#region-filter", first.region)
    await page.evaluate("document.querySelector('#cluster-filters').requestSubmit()")
    await page.wait_for(dcim_ready("clusters", f"region={first.region}"))
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


async def list_every_group(world: WebWorld, **filters: Any) -> list[Any]:
    """Every entry of the grouped finding history (ListFindingHistory) the filters select, in its order."""
    groups: list[Any] = []
    token = ""
    while True:
        request = fleet_pb2.ListFindingHistoryRequest(page_size=500, page_token=token, **filters)
        answer = await grpc_call(world, "ListFindingHistory", request)
        groups += answer.findings
        token = answer.next_page_token
        if not token:
            return groups


async def test_drift_findings_by_kind(page: Page, web_world: WebWorld) -> None:
    kind = fleet_pb2.DRIFT_KIND_VERSION_MISMATCH
    expected = {g.latest.id for g in await list_every_group(web_world, kind=kind, open_only=True)}
    # One row per finding: the open occurrences of the kind, each its finding's latest.
    assert expected == {f.id for f in await list_every_finding(web_world, kind)}
    assert expected
    await open_dcim(page, web_world, "/drift")
    await page.wait_for(dcim_ready("drift"))
    await page.evaluate(
        "const s = document.querySelector('#kind-filter'); s.value = 'DRIFT_KIND_VERSION_MISMATCH';"
        " s.dispatchEvent(new Event('change'))"
    )
    await page.wait_for(dcim_ready("drift", "kind=DRIFT_KIND_VERSION_MISMATCH"))
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
    expected = [g.latest.id for g in await list_every_group(web_world, open_only=True)]
    assert len(expected) > 100, "the world should need more than one page of findings"
    await open_dcim(page, web_world, "/drift")
    await page.wait_for(dcim_ready("drift"))
    await page.wait_for(PAGING_MORE)
    await page.click("#findings-all")
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-drift-all")
    shown = await page.evaluate(
        "Array.from(document.querySelectorAll('#findings tbody tr'), (r) => r.dataset.findingId)"
    )
    assert shown == expected, "every open finding once, in the API's order"
    assert sorted(shown) == sorted(f.id for f in await list_every_finding(web_world))


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
        source = conn.execute(
            "SELECT source FROM tenant.cluster_snapshots WHERE cluster_id = %s", (cluster_id,)
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
        "read_from": {"apiserver": "the shoot's API server", "prometheus": "the shoot's Prometheus"}.get(
            str(source[0]) if source else "", "not recorded"
        ),
    }


async def test_a_clusters_detail_shows_pools_namespaces_findings_and_ledger(page: Page, web_world: WebWorld) -> None:
    expected = detail_expectations(web_world)
    await open_dcim(page, web_world, "/clusters")
    await page.wait_for(dcim_ready("clusters"))
    await page.wait_for(PAGING_MORE)
    link = f"#clusters tr[data-cluster-id='{expected['id']}'] a.cluster-link"
    await page.click(link)
    await page.wait_for(dcim_ready("cluster"))
    await page.screenshot("dcim-platform-cluster-detail")

    assert (await page.text("#cluster-name")).startswith(expected["name"])
    assert [row[0] for row in await page.table("#node-pools")] == expected["pools"]
    namespaces = {
        (str(p), str(n)): str(pods)
        for p, n, pods in await page.evaluate(
            "Array.from(document.querySelectorAll('#namespaces tbody tr'), (r) =>"
            " [r.cells[0].innerText, r.querySelector('[data-namespace]').dataset.namespace, r.cells[2].innerText])"
        )
    }
    assert namespaces == {key: "—" if pods is None else str(pods) for key, pods in expected["namespaces"].items()}
    assert len(await page.table("#cluster-findings")) == expected["findings"]
    snapshot = " ".join((await page.text("#cluster-snapshot")).split())
    assert "Read from" in snapshot and expected["read_from"] in snapshot, snapshot
    ledger = {row[0]: (int(row[1]), int(row[2])) for row in await page.table("#ledger-counts")}
    assert ledger == expected["ledger"]
    assert page.errors() == []

    await page.click("#ledger-link")
    await page.wait_for(dcim_ready("ledger"))
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-ledger-of-cluster")
    types = Counter(
        await page.evaluate(
            "Array.from(document.querySelectorAll('#resources tbody tr'), (r) => r.dataset.resourceType)"
        )
    )
    assert {t: n for t, n in types.items()} == {t: counts[0] for t, counts in expected["ledger"].items()}


async def test_an_unknown_cluster_shows_the_apis_not_found(page: Page, web_world: WebWorld) -> None:
    await open_dcim(page, web_world, "/clusters/00000000-0000-4000-8000-00000000dead")
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

    await open_dcim(page, web_world, "/ledger?type=kubernetes.node&billable=yes")
    await page.wait_for(dcim_ready("ledger"))
    if await page.evaluate(PAGING_MORE):
        await page.click("#resources-all")
    await page.wait_for(PAGING_DONE)
    types = await page.evaluate(
        "Array.from(document.querySelectorAll('#resources tbody tr'), (r) => r.dataset.resourceType)"
    )
    assert len(types) == active and set(types) == {"kubernetes.node"}

    await page.click("#destroyed-filter")
    await page.wait_for(dcim_ready("ledger", "destroyed=1"))
    if await page.evaluate(PAGING_MORE):
        await page.click("#resources-all")
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-ledger-nodes-with-destroyed")
    assert await page.evaluate("document.querySelectorAll('#resources tbody tr').length") == with_destroyed
    destroyed_rows = await page.evaluate("document.querySelectorAll('#resources tbody tr.destroyed').length")
    assert destroyed_rows == with_destroyed - active
    reasons = await page.evaluate(
        "[...document.querySelectorAll('#resources tbody tr.destroyed .destroyed-reason')].map(e => e.textContent)"
    )
    assert len(reasons) == destroyed_rows and all(r.strip() == "not found" for r in reasons)

    await page.evaluate(
        "const s = document.querySelector('#billable-filter'); s.value = 'no'; s.dispatchEvent(new Event('change'))"
    )
    await page.wait_for(dcim_ready("ledger", "billable=no"))
    assert await page.text("#resources .empty") == "No ledger row matches these filters."


# --- organizations and markup ----------------------------------------------------------------------


async def test_organizations_list_every_organization_and_show_markup_as_text(page: Page, web_world: WebWorld) -> None:
    expected = {o.name for o in web_world.fleet.organizations if o.id != SYSTEM_ORGANIZATION_ID}
    await open_dcim(page, web_world, "/organizations")
    await page.wait_for(dcim_ready("organizations"))
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


# --- finding history, unlabeled shoots, an organization's listing changes ---------------------------


async def test_the_drift_history_lists_open_and_resolved_findings(page: Page, web_world: WebWorld) -> None:
    expected = await list_every_group(web_world)
    resolved = {g.latest.id for g in expected if not g.open}
    assert resolved, "the world should have resolved findings"
    await open_dcim(page, web_world, "/drift")
    await page.wait_for(dcim_ready("drift"))
    await page.evaluate(
        "const c = document.querySelector('#resolved-filter'); c.checked = true; c.dispatchEvent(new Event('change'))"
    )
    await page.wait_for(dcim_ready("drift", "resolved=1"))
    if await page.evaluate(PAGING_MORE):
        await page.click("#findings-all")
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-drift-history")
    rows = await page.evaluate(
        "Array.from(document.querySelectorAll('#findings tbody tr'), (r) => [r.dataset.findingId, r.dataset.resolved])"
    )
    assert [r[0] for r in rows] == [g.latest.id for g in expected]
    assert {r[0] for r in rows if r[1] == "yes"} == resolved
    assert page.errors() == []


async def test_an_unlabeled_shoot_is_listed_under_its_own_kind(page: Page, web_world: WebWorld) -> None:
    planted = web_world.fleet.notes["drift.unlabeled_shoot"]
    await open_dcim(page, web_world, "/drift?kind=DRIFT_KIND_UNLABELED_SHOOT")
    await page.wait_for(dcim_ready("drift", "kind=DRIFT_KIND_UNLABELED_SHOOT"))
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-drift-unlabeled")
    assert (
        await page.evaluate(
            "Array.from(document.querySelectorAll('#findings tbody tr'), (r) => r.dataset.findingId).length"
        )
        == 1
    )
    assert await page.texts("#findings tbody .kind") == ["Unlabeled shoot"]
    row = (await page.table("#findings"))[0]
    assert row[2] == "no cluster"
    assert row[3] == web_world.fleet.organizations[0].name
    shoot = await page.evaluate(
        "document.querySelector('#findings tbody .folded-details :is(.shoot-name, .shoot-link)').textContent"
    )
    assert str(shoot).endswith("/handmade")
    assert await page.evaluate("document.querySelector('#findings tbody [data-subject]').dataset.subject") == planted


async def test_a_clusters_page_shows_its_finding_history(page: Page, web_world: WebWorld) -> None:
    cluster = web_world.fleet.clusters[0]
    expected = [g.latest.id for g in await list_every_group(web_world, cluster_id=str(cluster.id))]
    assert any(not g.open for g in await list_every_group(web_world, cluster_id=str(cluster.id))), (
        "the first cluster of the world has a finding history"
    )
    await open_dcim(page, web_world, f"/clusters/{cluster.id}")
    await page.wait_for(dcim_ready("cluster"))
    await page.screenshot("dcim-platform-cluster-history")
    shown = await page.evaluate(
        "Array.from(document.querySelectorAll('#cluster-history tbody tr'), (r) => r.dataset.findingId)"
    )
    assert shown == expected, "one row per finding, most recently opened first"
    await page.click("#history-link")
    await page.wait_for(dcim_ready("drift", "resolved=1"))
    await page.wait_for(PAGING_DONE)
    listed = await page.evaluate(
        "Array.from(document.querySelectorAll('#findings tbody tr'), (r) => r.dataset.findingId)"
    )
    assert listed == expected


async def test_an_organizations_page_shows_who_changed_its_listing_and_why(page: Page, web_world: WebWorld) -> None:
    owner = web_world.fleet.organizations[0]
    await open_dcim(page, web_world, "/organizations")
    await page.wait_for(dcim_ready("organizations"))
    await page.wait_for(PAGING_DONE)
    await page.click(f"#organizations tr[data-organization='{owner.name}'] a.organization-link")
    await page.wait_for(dcim_ready("organization"))
    await page.screenshot("dcim-platform-organization")
    # The seed's own record of the organizations it wrote listed is the seed's; these are the operator's.
    changes = [row for row in await page.table("#listing-changes") if row[2] != SEED_AUTHOR]
    assert [row[1:] for row in changes] == [
        ["listed" if owner.listed_publicly else "unlisted", "operator", "back"],
        ["unlisted" if owner.listed_publicly else "listed", "operator", "asked to"],
    ]
    assert page.errors() == []


async def test_the_ledger_shows_a_worker_pools_machine_type_and_bounds(page: Page, web_world: WebWorld) -> None:
    with web_world.database.admin() as conn:
        row = conn.execute(
            "SELECT c.id FROM tenant.clusters c WHERE c.deleted IS NULL"
            " AND c.organization_id <> tenant.system_organization_id() ORDER BY c.id LIMIT 1"
        ).fetchone()
        assert row is not None
        conn.execute(
            "INSERT INTO tenant.infrastructure_resources (cluster_id, resource_type, resource_id, name, billable,"
            " created, last_seen, details) VALUES (%s, 'gardener.workerpool', 'shoot-uid', 'pool-under-test', false,"
            ' now(), now(), \'{"machine_type": "m5.4xlarge", "minimum": 0, "maximum": 7}\')',
            (row[0],),
        )
    await open_dcim(page, web_world, "/ledger?type=gardener.workerpool")
    await page.wait_for(dcim_ready("ledger"))
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-platform-ledger-worker-pools")
    shown = await page.evaluate(
        "[...document.querySelectorAll('#resources tbody tr')].map(r =>"
        " [r.querySelector('.resource-name').textContent, r.querySelector('.worker-pool')?.textContent])"
    )
    assert ["pool-under-test", "m5.4xlarge, 0 to 7 nodes"] in shown
