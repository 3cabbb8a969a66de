"""What DCIM's staff pages say, in headless Chromium: drift details as sentences with links, the version
mismatch on a cluster's page, one naming of namespaces on the cluster page and in the ledger, ledger
totals, trend charts, and a layout that fits 1280 px and a 390 px phone.

Expected values come from the database rows (read as a superuser), the project's naming contract
(`common.naming`) and the history the inventory loop's own code recorded for the world. Each test
saves a screenshot.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any
from uuid import UUID, uuid4

import psycopg
import pytest
from fundament.fleet.v1 import fleet_pb2
from psycopg.types.json import Jsonb

from collector.reconcile.drift import find_drift
from collector.reconcile.observed import Observed
from common import naming
from common.drift_kinds import DRIFT_KINDS
from tests.collector import test_drift_rules as rules
from tests.fixtures.browser import Page
from tests.fixtures.pages import (
    GARDENER_DASHBOARD,
    HISTORY_ROUNDS,
    PAGING_DONE,
    PAGING_MORE,
    WebWorld,
    dcim_ready,
    grpc_call,
    open_dcim,
)

pytestmark = pytest.mark.browser


@contextlib.contextmanager
def finding_details(world: WebWorld, finding_id: str, details: dict[str, Any]) -> Iterator[None]:
    """Give one finding `details` (as reconcile writes them) for the block, then put the old ones back."""
    with psycopg.connect(world.database.dsn(), autocommit=True) as conn:
        row = conn.execute("SELECT details FROM tenant.drift_findings WHERE id = %s", (finding_id,)).fetchone()
        assert row is not None
        conn.execute("UPDATE tenant.drift_findings SET details = %s WHERE id = %s", (Jsonb(details), finding_id))
        try:
            yield
        finally:
            conn.execute("UPDATE tenant.drift_findings SET details = %s WHERE id = %s", (Jsonb(row[0]), finding_id))


async def show_all(page: Page, list_id: str) -> None:
    """Every page of the list, with every finding's folded details unfolded (what a reader opens)."""
    if await page.evaluate(PAGING_MORE):
        await page.click(f"#{list_id}-all")
    await page.wait_for(PAGING_DONE)
    await page.evaluate("document.querySelectorAll('details.folded-details').forEach((d) => { d.open = true; })")


# --- drift details ---------------------------------------------------------------------------------


async def test_drift_details_read_as_sentences_with_links_to_the_cluster_and_the_shoot(
    page: Page, web_world: WebWorld
) -> None:
    with web_world.database.admin() as conn:
        row = conn.execute(
            "SELECT f.id, c.id, c.name, c.kubernetes_version, s.namespace, s.name, s.uid"
            " FROM tenant.drift_findings f JOIN tenant.clusters c ON c.id = f.cluster_id"
            " JOIN tenant.gardener_shoots s ON s.uid = f.shoot_uid"
            " WHERE f.kind = 'version_mismatch' AND f.resolved IS NULL"
            " AND c.organization_id <> tenant.system_organization_id() ORDER BY f.id LIMIT 1"
        ).fetchone()
    assert row is not None, "the world has an open version mismatch with a shoot"
    finding_id, cluster_id, cluster_name, version, shoot_namespace, shoot_name, shoot_uid = (str(v) for v in row)
    minor = ".".join(version.split(".")[:2])
    details = {
        "expected": {"kubernetes_version": version, "minor": minor},
        "observed": [
            {
                "uid": shoot_uid,
                "namespace": shoot_namespace,
                "name": shoot_name,
                "kubernetes_version": "1.31.2",
                "minor": "1.31",
            }
        ],
        "reason": "the shoot runs another minor Kubernetes version than the database holds",
        "unparseable": ["shoot x/y version 'latest' does not parse as major.minor"],
    }
    with finding_details(web_world, finding_id, details):
        await open_dcim(page, web_world, f"/drift?kind=DRIFT_KIND_VERSION_MISMATCH&cluster={cluster_id}")
        await page.wait_for(dcim_ready("drift"))
        await show_all(page, "findings")
        await page.screenshot("dcim-drift-details")
        cell = f"#findings tr[data-finding-id='{finding_id}'] .finding-details"
        text = await page.text(cell)
    assert [line for line in text.splitlines() if line] == [
        "The shoot runs another minor Kubernetes version than the database holds.",
        f"The database holds Kubernetes {version} (minor {minor}) for cluster {cluster_name}.",
        f"Shoot {shoot_namespace}/{shoot_name} runs Kubernetes 1.31.2 (minor 1.31).",
        "Unparseable: shoot x/y version 'latest' does not parse as major.minor",
    ]
    links = await page.evaluate(
        f"Array.from(document.querySelectorAll(\"{cell} a\"), (a) => [a.className, a.getAttribute('href')])"
    )
    assert links == [
        ["cluster-link", f"#/clusters/{cluster_id}"],
        ["shoot-link", f"{GARDENER_DASHBOARD}/namespace/{shoot_namespace}/shoots/{shoot_name}"],
    ]
    # The Cluster column links to the same cluster.
    cluster_cell = f"#findings tr[data-finding-id='{finding_id}'] td[data-label='Cluster'] a"
    assert await page.evaluate(f"document.querySelector(\"{cluster_cell}\").getAttribute('href')") == links[0][1]


def details_reconcile_writes(kind: str) -> dict[str, Any]:
    """The details reconcile's own rules record for one finding of `kind` (a small world per kind)."""
    worlds = {
        "orphan_shoot": Observed([rules.shoot(cluster_label=str(uuid4()))], {}),
        "shoot_of_deleted_cluster": Observed(
            [rules.shoot()], {rules.CLUSTER: rules.cluster(deleted=rules.T0, shoot_status="deleted")}
        ),
        "missing_shoot": Observed([], {rules.CLUSTER: rules.cluster()}),
        "version_mismatch": Observed([rules.shoot(kubernetes_version="1.33.1")], {rules.CLUSTER: rules.cluster()}),
        "organization_mismatch": Observed(
            [rules.shoot(organization_label=str(rules.OTHER_ORG))], {rules.CLUSTER: rules.cluster()}
        ),
        "unlabeled_shoot": Observed(
            [rules.shoot()],
            {rules.CLUSTER: rules.cluster()},
            unlabeled=[rules.unlabeled()],
            organizations=[rules.ACME],
            projects=[rules.ACME_PROJECT],
        ),
    }
    [finding] = [f for f in find_drift(worlds[kind]) if f.kind == kind]
    return dict(finding.details)


@pytest.mark.parametrize("kind", list(DRIFT_KINDS))
async def test_every_kinds_details_as_reconcile_records_them_read_as_sentences(
    page: Page, web_world: WebWorld, kind: str
) -> None:
    details = details_reconcile_writes(kind)
    with web_world.database.admin() as conn:
        row = conn.execute(
            # One the staff API lists: findings about the system organization are left out (ids are
            # random, so the first by id is sometimes one of those).
            "SELECT f.id FROM tenant.drift_findings AS f LEFT JOIN tenant.clusters AS c ON c.id = f.cluster_id"
            " WHERE f.kind = %s AND f.resolved IS NULL"
            " AND coalesce(c.organization_id, f.organization_id) IS DISTINCT FROM tenant.system_organization_id()"
            " ORDER BY f.id LIMIT 1",
            (kind,),
        ).fetchone()
    assert row is not None, f"the world has an open {kind} finding"
    finding_id = str(row[0])
    with finding_details(web_world, finding_id, details):
        await open_dcim(page, web_world, f"/drift?kind=DRIFT_KIND_{kind.upper()}")
        await page.wait_for(dcim_ready("drift"))
        await show_all(page, "findings")
        cell = f"#findings tr[data-finding-id='{finding_id}'] .finding-details"
        await page.evaluate(f'document.querySelector("{cell}").scrollIntoView()')
        await page.screenshot(f"dcim-drift-details-{kind}")
        lines = [line for line in (await page.text(cell)).splitlines() if line]
        shoot_links = await page.evaluate(
            f"Array.from(document.querySelectorAll(\"{cell} a.shoot-link\"), (a) => a.getAttribute('href'))"
        )
    reason = str(details["reason"])
    assert lines[0] == reason[0].upper() + reason[1:] + "."
    assert len(lines) > 1, "a sentence of its own says what disagrees"
    assert not [line for line in lines if "{" in line or '"' in line], lines
    shoot = details.get("shoot") or (details["observed"][0] if kind == "version_mismatch" else None)
    if isinstance(shoot, dict):
        assert f"{GARDENER_DASHBOARD}/namespace/{shoot['namespace']}/shoots/{shoot['name']}" in shoot_links


async def test_no_drift_detail_is_shown_as_raw_json(page: Page, web_world: WebWorld) -> None:
    await open_dcim(page, web_world, "/drift?resolved=1")
    await page.wait_for(dcim_ready("drift"))
    await show_all(page, "findings")
    details = await page.texts("#findings .finding-details")
    assert details and not [d for d in details if "{" in d or '"' in d]
    unlabeled = await page.text("#findings tr[data-kind=DRIFT_KIND_UNLABELED_SHOOT] .finding-details")
    assert unlabeled.startswith("Shoot garden-") and "has no cluster-id label" in unlabeled


# --- one cluster: versions, namespaces, ledger -----------------------------------------------------


def cluster_with_minor_mismatch(world: WebWorld) -> tuple[str, str, str]:
    """(id, database version, shoot version) of a live cluster whose live shoot runs another minor version."""
    with world.database.admin() as conn:
        row = conn.execute(
            "SELECT c.id, c.kubernetes_version, s.kubernetes_version FROM tenant.clusters c"
            " JOIN tenant.gardener_shoots s ON s.cluster_id = c.id AND s.deleted IS NULL"
            " WHERE c.deleted IS NULL"
            " AND split_part(c.kubernetes_version, '.', 2) <> split_part(s.kubernetes_version, '.', 2)"
            " ORDER BY c.id LIMIT 1"
        ).fetchone()
    assert row is not None, "the world's garden has a shoot on another minor version than its cluster"
    return str(row[0]), str(row[1]), str(row[2])


async def test_a_clusters_page_says_when_its_shoot_runs_another_minor_version(page: Page, web_world: WebWorld) -> None:
    cluster_id, database, shoot = cluster_with_minor_mismatch(web_world)
    await open_dcim(page, web_world, f"/clusters/{cluster_id}")
    await page.wait_for(dcim_ready("cluster"))
    await page.screenshot("dcim-cluster-version-mismatch")
    notice = await page.text("#version-mismatch")
    assert notice.startswith(f"Version mismatch: the database holds Kubernetes {database}, the shoot runs {shoot}.")
    assert await page.evaluate("document.querySelector('#version-mismatch').dataset.minor") == "yes"
    assert await page.text("#shoot-version") == f"{shoot} (differs)"

    # A cluster whose shoot agrees shows no such notice.
    with web_world.database.admin() as conn:
        agreeing = conn.execute(
            "SELECT c.id FROM tenant.clusters c JOIN tenant.gardener_shoots s ON s.cluster_id = c.id"
            " WHERE c.deleted IS NULL AND s.deleted IS NULL AND s.kubernetes_version = c.kubernetes_version"
            " ORDER BY c.id LIMIT 1"
        ).fetchone()
    assert agreeing is not None
    await page.evaluate(f"window.location.hash = '#/clusters/{agreeing[0]}'")
    await page.wait_for(dcim_ready("cluster", str(agreeing[0])))
    assert await page.evaluate("document.querySelector('#version-mismatch') === null")


def planted_volume(world: WebWorld) -> dict[str, str]:
    """A cluster's ledger row in a tenant namespace: the cluster, and the namespace's two names."""
    with world.database.admin() as conn:
        row = conn.execute(
            "SELECT r.cluster_id, r.namespace FROM tenant.infrastructure_resources r"
            " WHERE r.resource_type = 'kubernetes.persistentvolume' ORDER BY r.cluster_id LIMIT 1"
        ).fetchone()
        assert row is not None
        namespaces = conn.execute(
            "SELECT p.name, p.id, n.name FROM tenant.namespaces n JOIN tenant.projects p ON p.id = n.project_id"
            " WHERE p.cluster_id = %s AND n.deleted IS NULL AND p.deleted IS NULL",
            (row[0],),
        ).fetchall()
    names = {naming.namespace_name(str(p), UUID(str(pid)), str(n)): str(n) for p, pid, n in namespaces}
    kubernetes = str(row[1])
    assert kubernetes in names
    return {"cluster": str(row[0]), "kubernetes": kubernetes, "database": names[kubernetes]}


async def test_a_namespace_is_named_the_same_way_on_the_cluster_page_and_in_the_ledger(
    page: Page, web_world: WebWorld
) -> None:
    volume = planted_volume(web_world)
    await open_dcim(page, web_world, f"/clusters/{volume['cluster']}")
    await page.wait_for(dcim_ready("cluster"))
    selector = f"[data-kubernetes-name='{volume['kubernetes']}']"
    on_cluster = await page.evaluate(
        f'(() => {{ const e = document.querySelector("#namespaces {selector}");'
        " return [e.dataset.namespace, e.innerText]; })()"
    )
    assert on_cluster == [volume["database"], f"{volume['database']}\n{volume['kubernetes']}"]

    await page.click("#ledger-link")
    await page.wait_for(dcim_ready("ledger"))
    await page.wait_for(PAGING_DONE)
    await page.screenshot("dcim-ledger-namespace-names")
    in_ledger = await page.evaluate(
        f"(() => {{ const e = document.querySelector(\"#resources tr[data-resource-type='kubernetes.persistentvolume']"
        f' {selector}"); return [e.dataset.namespace, e.innerText]; }})()'
    )
    assert in_ledger == on_cluster
    # A namespace the database does not know (not a tenant's) shows its Kubernetes name only.
    others = await page.evaluate(
        'Array.from(document.querySelectorAll(\'#resources tr[data-resource-type="kubernetes.ingress"] .namespace,'
        ' #resources tr[data-resource-type="kubernetes.loadbalancer"] .namespace\'), (e) => e.innerText)'
    )
    assert others and all(o.startswith("web-") for o in others)


async def test_ledger_totals_by_type_and_billing_on_the_cluster_page_and_the_ledger(
    page: Page, web_world: WebWorld
) -> None:
    with web_world.database.admin() as conn:
        rows = conn.execute(
            "SELECT r.resource_type, count(*) FILTER (WHERE r.destroyed IS NULL),"
            " count(*) FILTER (WHERE r.destroyed IS NULL AND r.billable) FROM tenant.infrastructure_resources r"
            " JOIN tenant.clusters c ON c.id = r.cluster_id WHERE c.organization_id <> tenant.system_organization_id()"
            " GROUP BY 1 ORDER BY 1"
        ).fetchall()
        one = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE billable) FROM tenant.infrastructure_resources"
            " WHERE cluster_id = %s AND destroyed IS NULL",
            (planted_volume(web_world)["cluster"],),
        ).fetchone()
    expected = {str(t): [int(str(a)), int(str(b)), int(str(a)) - int(str(b))] for t, a, b in rows}
    assert one is not None
    active, billable = int(str(one[0])), int(str(one[1]))

    await open_dcim(page, web_world, f"/clusters/{planted_volume(web_world)['cluster']}")
    await page.wait_for(dcim_ready("cluster"))
    total = await page.evaluate("Array.from(document.querySelector('#ledger-total').cells, (c) => c.innerText)")
    assert total == ["Total", str(active), str(billable), str(active - billable)]

    await page.evaluate("window.location.hash = '#/ledger'")
    await page.wait_for(dcim_ready("ledger", "#/ledger"))
    await page.wait_for(PAGING_MORE)
    assert await page.evaluate("document.querySelector('#ledger-totals').dataset.complete") == "no"
    assert "rows shown" in await page.text("#ledger-totals caption")
    await page.click("#resources-all")
    await page.wait_for(PAGING_DONE)
    await page.wait_for("document.querySelector('#ledger-totals').dataset.complete === 'yes'")
    await page.screenshot("dcim-ledger-totals")
    shown = {
        row[0]: [int(n.replace(",", "")) for n in row[1:]]
        for row in await page.evaluate(
            "Array.from(document.querySelectorAll('#ledger-totals tbody tr'),"
            " (r) => Array.from(r.cells, (c) => c.innerText))"
        )
    }
    assert shown == expected
    foot = await page.evaluate("Array.from(document.querySelector('#ledger-totals-all').cells, (c) => c.innerText)")
    assert [int(n.replace(",", "")) for n in foot[1:]] == [sum(v[i] for v in expected.values()) for i in range(3)]


# --- trends ----------------------------------------------------------------------------------------


async def chart_values(page: Page) -> dict[str, tuple[int, int]]:
    """Per series: (points drawn, value at the latest point)."""
    found = await page.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#trends figure.chart'),"
        " (f) => [f.dataset.series, [Number(f.dataset.points), Number(f.dataset.last)]]))"
    )
    return {str(k): (int(v[0]), int(v[1])) for k, v in found.items()}


async def test_the_summary_charts_the_fleets_recorded_trends_and_the_range_is_in_the_address(
    page: Page, web_world: WebWorld
) -> None:
    summary = await grpc_call(web_world, "GetFleetSummary", fleet_pb2.GetFleetSummaryRequest())
    findings = sum(k.findings for k in summary.open_findings_by_kind)
    await open_dcim(page, web_world)
    await page.wait_for(dcim_ready("summary"))
    await page.screenshot("dcim-summary-trends")
    rounds = len(HISTORY_ROUNDS)
    assert await page.evaluate("document.querySelector('#trends').dataset.range") == "7d"
    assert await chart_values(page) == {
        "clusters": (rounds, summary.clusters),
        "attention": (rounds, summary.clusters_needing_attention),
        "nodes": (rounds, summary.nodes),
        "pods": (rounds, summary.pods),
        "findings": (rounds, findings),
    }
    assert await page.evaluate("document.querySelectorAll('#trends svg polyline').length") == 5

    await page.click("#trend-ranges a[data-range='24h']")
    await page.wait_for(dcim_ready("summary", "range=24h"))
    assert await page.evaluate("document.querySelector('#trends').dataset.range") == "24h"
    assert {k: v[0] for k, v in (await chart_values(page)).items()} == dict.fromkeys(
        ("clusters", "attention", "nodes", "pods", "findings"), rounds
    )
    await page.click("#trend-ranges a[data-range='30d']")
    await page.wait_for(dcim_ready("summary", "range=30d"))
    await page.evaluate("history.back()")
    await page.wait_for(dcim_ready("summary", "range=24h"))
    assert page.errors() == []


async def test_an_organizations_page_charts_its_own_hourly_trends(page: Page, web_world: WebWorld) -> None:
    owner = web_world.fleet.organizations[1]
    organization = await grpc_call(web_world, "GetOrganization", fleet_pb2.GetOrganizationRequest(id=str(owner.id)))
    await open_dcim(page, web_world, f"/organizations/{owner.id}")
    await page.wait_for(dcim_ready("organization"))
    await page.screenshot("dcim-organization-trends")
    values = await chart_values(page)
    assert values["clusters"] == (len(HISTORY_ROUNDS), organization.organization.clusters)
    assert values["pods"] == (len(HISTORY_ROUNDS), organization.organization.pods)
    assert "(hourly)" in await page.text("#trends .trend-span")


async def test_a_range_without_history_says_so(page: Page, web_world: WebWorld) -> None:
    with psycopg.connect(web_world.database.dsn(), autocommit=True) as conn:
        saved = conn.execute("SELECT * FROM tenant.fleet_history").fetchall()
        conn.execute("DELETE FROM tenant.fleet_history")
        try:
            await open_dcim(page, web_world)
            await page.wait_for(dcim_ready("summary"))
            assert await page.text("#no-trends") == (
                "No history recorded in this range: the inventory loop records totals after each round."
            )
            assert await page.evaluate("document.querySelector('#trends').dataset.points") == "0"
        finally:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO tenant.fleet_history VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [(*r[:4], Jsonb(r[4]), *r[5:10], Jsonb(r[10])) for r in saved],
                )


# --- layout: 1280 px and a 390 px phone ------------------------------------------------------------


def every_view(world: WebWorld, volume: dict[str, str]) -> list[tuple[str, str]]:
    owner = world.fleet.organizations[0]
    return [
        ("summary", "#/summary"),
        ("organizations", "#/organizations"),
        ("organization", f"#/organizations/{owner.id}"),
        ("clusters", "#/clusters"),
        ("cluster", f"#/clusters/{volume['cluster']}"),
        ("drift", "#/drift?resolved=1"),
        ("ledger", "#/ledger?destroyed=1"),
    ]


@pytest.mark.parametrize(("width", "mobile"), [(1280, False), (1440, False), (390, True)], ids=["1280", "1440", "390"])
async def test_no_view_scrolls_sideways_and_the_drift_table_fits_a_desktop_window(
    page: Page, web_world: WebWorld, width: int, mobile: bool
) -> None:
    await page.set_viewport(width, 844 if mobile else 900, mobile=mobile)
    await open_dcim(page, web_world)
    await page.wait_for(dcim_ready("summary"))
    for name, fragment in every_view(web_world, planted_volume(web_world)):
        await page.evaluate(f"window.location.hash = {json.dumps(fragment)}")
        await page.wait_for(dcim_ready(name, fragment.split("?")[0]))
        if name == "drift":
            await show_all(page, "findings")
        await page.screenshot(f"dcim-layout-{width}-{name}")
        overflow = await page.overflow()
        assert overflow == {"over": 0, "width": width}, f"{name} at {width} px scrolls sideways"
        if name in ("drift", "ledger") and not mobile:
            # The widest tables (every kind of finding with the history column; the ledger with
            # destroyed rows) fit without scrolling.
            wrap = await page.evaluate(
                "(() => { const w = document.querySelector('.paged .table-wrap');"
                " return w.scrollWidth - w.clientWidth; })()"
            )
            assert wrap == 0, f"the {name} table is {wrap} px wider than a {width} px window"
    if mobile:
        # On a phone the header's search box and the tabs stay on screen and usable.
        box = await page.evaluate(
            "(() => { const r = document.querySelector('#search').getBoundingClientRect();"
            " return [r.left >= 0, r.right <= window.innerWidth, r.width >= 200]; })()"
        )
        assert box == [True, True, True]
        tabs = await page.evaluate(
            "Array.from(document.querySelectorAll('#tabs a'),"
            " (a) => a.getBoundingClientRect().right <= window.innerWidth)"
        )
        assert all(tabs)
