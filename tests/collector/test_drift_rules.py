"""The drift rules as tables, without I/O: each case is a small world and the findings it must produce."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid4

import pytest

from collector.reconcile.drift import KIND_IDS, KINDS, Finding, find_drift, minor_version
from collector.reconcile.observed import ClusterFacts, Observed, ShootObservation, UnlabeledShoot
from collector.reconcile.projects import (
    GardenProject,
    MalformedProject,
    OrganizationFacts,
    observe_project,
    project_owners,
)
from common.labels import parse_id_label
from common.organizations import SYSTEM_ORGANIZATION_ID

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ORG = UUID("11111111-1111-4111-8111-111111111111")
OTHER_ORG = UUID("22222222-2222-4222-8222-222222222222")
CLUSTER = UUID("33333333-3333-4333-8333-333333333333")
SHOOT = UUID("44444444-4444-4444-8444-444444444444")
SHOOT_2 = UUID("55555555-5555-4555-8555-555555555555")


def cluster(**changes: object) -> ClusterFacts:
    """A running cluster: live, ready, latest sync completed, version 1.31.0."""
    base = ClusterFacts(
        id=CLUSTER,
        organization_id=ORG,
        kubernetes_version="1.31.0",
        deleted=None,
        organization_deleted=None,
        has_sync_state=True,
        sync_status="completed",
        shoot_status="ready",
        shoot_operation="reconcile",
        first_completed=T0,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def shoot(uid: UUID = SHOOT, **changes: object) -> ShootObservation:
    """The shoot of `cluster()`, agreeing with it in every way."""
    fields: dict[str, object] = {
        "uid": uid,
        "name": "acme-a1b",
        "namespace": "garden-acme",
        "cluster_label": str(CLUSTER),
        "organization_label": str(ORG),
        "kubernetes_version": "1.31.4",
        "region": "eu-west-1",
        "created": T0,
    }
    fields.update(changes)
    return ShootObservation(**fields)  # type: ignore[arg-type]


ACME = OrganizationFacts(id=ORG, name="Acme Corp")
"""Fundament names its Gardener project `acmeco563e` (the naming contract)."""
ACME_PROJECT = GardenProject(name="acmeco563e", namespace="garden-acmeco563e", organization_label=str(ORG))
"""ACME's project as Fundament creates it: labelled, in Gardener's default namespace."""
HANDMADE = UUID("66666666-6666-4666-8666-666666666666")


def unlabeled(uid: UUID = HANDMADE, namespace: str = "garden-acmeco563e") -> UnlabeledShoot:
    """A shoot without the cluster-id label, by default in ACME's garden project."""
    return UnlabeledShoot(uid=uid, name="handmade", namespace=namespace, organization_label=None, created=T0)


def test_an_unlabeled_shoot_in_a_live_organizations_project_is_a_finding() -> None:
    world = Observed(
        [shoot()], {CLUSTER: cluster()}, unlabeled=[unlabeled()], organizations=[ACME], projects=[ACME_PROJECT]
    )
    findings = find_drift(world)
    assert [(f.kind, f.subject) for f in findings] == [("unlabeled_shoot", str(HANDMADE))]
    assert world.not_evaluated == ()
    finding = findings[0]
    assert (finding.cluster_id, finding.shoot_uid, finding.organization_id) == (None, None, ORG)
    assert finding.details["shoot"] == {"uid": str(HANDMADE), "namespace": "garden-acmeco563e", "name": "handmade"}
    assert finding.details["organization"] == {"id": str(ORG), "name": "Acme Corp"}
    assert finding.details["project"] == {"name": "acmeco563e", "namespace": "garden-acmeco563e", "matched_by": "label"}
    assert finding.details["shoot_created"] == "2026-01-01T00:00:00Z"


def project(
    name: str = "acmeco563e", namespace: str | None = "garden-acmeco563e", label: str | None = str(ORG)
) -> GardenProject:
    return GardenProject(name=name, namespace=namespace, organization_label=label)


OTHER = OrganizationFacts(id=OTHER_ORG, name="Other Org")


# (case, projects, organizations, the shoot's namespace, the owner found and how; None: no finding)
PROJECT_CASES: list[tuple[str, list[GardenProject], list[OrganizationFacts], str, tuple[UUID, str] | None]] = [
    ("labelled, default namespace", [project()], [ACME], "garden-acmeco563e", (ORG, "label")),
    (
        "labelled, a namespace not named after the project: only the Project tells",
        [project(namespace="garden-adopted")],
        [ACME],
        "garden-adopted",
        (ORG, "label"),
    ),
    (
        "labelled, and the conventional namespace is someone else's",
        [project(namespace="garden-adopted")],
        [ACME],
        "garden-acmeco563e",
        None,
    ),
    (
        "the label is any spelling of the id",
        [project(label=str(ORG).upper())],
        [ACME],
        "garden-acmeco563e",
        (ORG, "label"),
    ),
    (
        "the label decides, whatever the name",
        [project(name="whatever", namespace="garden-x", label=str(ORG))],
        [ACME],
        "garden-x",
        (ORG, "label"),
    ),
    ("no namespace yet: skipped", [project(namespace=None)], [ACME], "garden-acmeco563e", None),
    (
        "no label, named as Fundament names it: matched by name",
        [project(label=None)],
        [ACME],
        "garden-acmeco563e",
        (ORG, "name"),
    ),
    (
        "no label, named as Fundament names it, in another namespace",
        [project(label=None, namespace="garden-elsewhere")],
        [ACME],
        "garden-elsewhere",
        (ORG, "name"),
    ),
    (
        "no label, but a labelled project of the organization exists: Fundament uses that one",
        [project(label=None), project(name="acmenew001", namespace="garden-acmenew001")],
        [ACME],
        "garden-acmeco563e",
        None,
    ),
    (
        "a labelled project without its namespace yet still is the one Fundament uses",
        [project(label=None), project(name="acmenew001", namespace=None)],
        [ACME],
        "garden-acmeco563e",
        None,
    ),
    (
        "no label, another name: another team's project",
        [project(name="someteam1", label=None)],
        [ACME],
        "garden-acmeco563e",
        None,
    ),
    (
        "a label that is no UUID: nobody's, the name is not consulted",
        [project(label="acme")],
        [ACME],
        "garden-acmeco563e",
        None,
    ),
    ("an empty label: nobody's", [project(label="")], [ACME], "garden-acmeco563e", None),
    ("labelled for an organization that is not live", [project()], [OTHER], "garden-acmeco563e", None),
    ("the organization is deleted (or never existed)", [project()], [], "garden-acmeco563e", None),
    ("the old, made-up namespace is not the project's", [project()], [ACME], "garden-acme", None),
    (
        "labelled for another organization, though named after this one",
        [project(label=str(OTHER_ORG))],
        [ACME, OTHER],
        "garden-acmeco563e",
        (OTHER_ORG, "label"),
    ),
    ("no project at all", [], [ACME], "garden-acmeco563e", None),
]


@pytest.mark.parametrize(
    ("projects", "organizations", "namespace", "owner"),
    [c[1:] for c in PROJECT_CASES],
    ids=[c[0] for c in PROJECT_CASES],
)
def test_unlabeled_shoots_are_mapped_to_organizations_through_gardeners_projects(
    projects: list[GardenProject],
    organizations: list[OrganizationFacts],
    namespace: str,
    owner: tuple[UUID, str] | None,
) -> None:
    world = Observed([], {}, unlabeled=[unlabeled(namespace=namespace)], organizations=organizations, projects=projects)
    findings = find_drift(world)
    if owner is None:
        assert findings == []
        return
    (finding,) = findings
    assert finding.organization_id == owner[0]
    organization = finding.details["organization"]
    assert isinstance(organization, dict)
    assert organization["id"] == str(owner[0])
    assert organization["name"] == {ORG: "Acme Corp", OTHER_ORG: "Other Org"}[owner[0]]
    found_by = finding.details["project"]
    assert isinstance(found_by, dict)
    assert (found_by["namespace"], found_by["matched_by"]) == (namespace, owner[1])


def test_the_mapping_does_not_depend_on_the_listing_order() -> None:
    # Two projects claim one namespace (Gardener forbids it; the rule must not flip-flop anyway).
    projects = [project(label=None), project(name="zzz", label=str(ORG)), project(name="aaa", label=str(ORG))]
    owners = [project_owners(order, [ACME]) for order in (projects, list(reversed(projects)))]
    assert owners[0] == owners[1]
    assert (owners[0]["garden-acmeco563e"].project, owners[0]["garden-acmeco563e"].matched_by) == ("aaa", "label")


def test_without_a_project_listing_the_unlabeled_rule_is_not_evaluated() -> None:
    """Could not list the projects is not "there are none": the rule says nothing, and says so."""
    world = Observed([shoot()], {CLUSTER: cluster()}, unlabeled=[unlabeled()], organizations=[ACME], projects=None)
    assert find_drift(world) == []
    assert world.not_evaluated == ("unlabeled_shoot",)
    listed_none = Observed([], {}, unlabeled=[unlabeled()], organizations=[ACME], projects=[])
    assert listed_none.not_evaluated == ()


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {
                "metadata": {"name": "acmeco563e", "labels": {"fundament.io/organization-id": str(ORG)}},
                "spec": {"namespace": "garden-x"},
            },
            GardenProject("acmeco563e", "garden-x", str(ORG)),
        ),
        ({"metadata": {"name": "p"}, "spec": {}}, GardenProject("p", None, None)),
        ({"metadata": {"name": "p"}, "spec": {"namespace": ""}}, GardenProject("p", None, None)),
        ({"metadata": {"name": "p", "labels": None}}, GardenProject("p", None, None)),
    ],
)
def test_a_listed_project_is_read_for_its_name_namespace_and_label(
    obj: dict[str, object], expected: GardenProject
) -> None:
    assert observe_project(obj) == expected


@pytest.mark.parametrize("obj", [{}, {"metadata": {}}, {"metadata": {"name": ""}}, {"metadata": "x"}])
def test_a_project_without_a_name_makes_the_listing_untrusted(obj: dict[str, object]) -> None:
    with pytest.raises(MalformedProject):
        observe_project(obj)


def kinds_of(shoots: list[ShootObservation], clusters: list[ClusterFacts]) -> list[tuple[str, str]]:
    world = Observed(shoots, {c.id: c for c in clusters})
    return sorted((f.kind, f.subject) for f in find_drift(world))


def only(shoots: list[ShootObservation], clusters: list[ClusterFacts]) -> Finding:
    findings = find_drift(Observed(shoots, {c.id: c for c in clusters}))
    assert len(findings) == 1, findings
    return findings[0]


CASES: list[tuple[str, list[ShootObservation], list[ClusterFacts], list[tuple[str, str]]]] = [
    ("agreeing shoot and cluster", [shoot()], [cluster()], []),
    ("patch versions are not compared", [shoot(kubernetes_version="1.31.9")], [cluster(kubernetes_version="1.31")], []),
    ("a leading v is tolerated", [shoot(kubernetes_version="v1.31.2")], [cluster(kubernetes_version="1.31.0")], []),
    ("orphan: no cluster row", [shoot(cluster_label=str(uuid4()))], [], [("orphan_shoot", str(SHOOT))]),
    ("orphan: label not a UUID", [shoot(cluster_label="acme-prod")], [], [("orphan_shoot", str(SHOOT))]),
    ("orphan: empty label", [shoot(cluster_label="")], [], [("orphan_shoot", str(SHOOT))]),
    (
        "orphan beside a live cluster that also misses its shoot",
        [shoot(cluster_label="nope")],
        [cluster()],
        [("missing_shoot", str(CLUSTER)), ("orphan_shoot", str(SHOOT))],
    ),
    (
        "shoot of a deleted cluster whose shoot was confirmed deleted",
        [shoot()],
        [cluster(deleted=T0, shoot_status="deleted", shoot_operation="delete")],
        [("shoot_of_deleted_cluster", str(SHOOT))],
    ),
    (
        "shoot of a deleted cluster whose deletion failed",
        [shoot()],
        [cluster(deleted=T0, sync_status="failed", shoot_status="ready")],
        [("shoot_of_deleted_cluster", str(SHOOT))],
    ),
    (
        "shoot of a deleted cluster that was never synced",
        [shoot()],
        [cluster(deleted=T0, has_sync_state=False, sync_status=None, shoot_status=None, first_completed=None)],
        [("shoot_of_deleted_cluster", str(SHOOT))],
    ),
    (
        "no finding while the shoot is being deleted (status DELETING)",
        [shoot()],
        [cluster(deleted=T0, shoot_status="deleting", shoot_operation="delete")],
        [],
    ),
    (
        "no finding while the deletion is queued (sync pending)",
        [shoot()],
        [cluster(deleted=T0, sync_status="pending", shoot_status="ready")],
        [],
    ),
    ("missing shoot of a synced live cluster", [], [cluster()], [("missing_shoot", str(CLUSTER))]),
    (
        "missing shoot although the status poller already says missing",
        [],
        [cluster(shoot_status="missing")],
        [("missing_shoot", str(CLUSTER))],
    ),
    ("no missing shoot: never synced (no sync state)", [], [cluster(has_sync_state=False, sync_status=None)], []),
    ("no missing shoot: latest sync pending", [], [cluster(sync_status="pending")], []),
    ("no missing shoot: latest sync retrying", [], [cluster(sync_status="retrying")], []),
    ("no missing shoot: latest sync failed", [], [cluster(sync_status="failed")], []),
    ("no missing shoot: deleted cluster", [], [cluster(deleted=T0, shoot_status="deleted")], []),
    (
        "version mismatch on the minor",
        [shoot(kubernetes_version="1.30.8")],
        [cluster()],
        [("version_mismatch", str(CLUSTER))],
    ),
    (
        "version mismatch on the major",
        [shoot(kubernetes_version="2.31.0")],
        [cluster()],
        [("version_mismatch", str(CLUSTER))],
    ),
    (
        "version mismatch of an unhealthy (ready, not updating) cluster",
        [shoot(kubernetes_version="1.30.8")],
        [cluster(shoot_status="unhealthy")],
        [("version_mismatch", str(CLUSTER))],
    ),
    (
        "no version finding: upgrading (sync pending after one completed)",
        [shoot(kubernetes_version="1.32.0")],
        [cluster(sync_status="pending")],
        [],
    ),
    (
        "no version finding: upgrading (shoot progressing)",
        [shoot(kubernetes_version="1.32.0")],
        [cluster(shoot_status="progressing")],
        [],
    ),
    (
        "no version finding: starting (never completed)",
        [shoot(kubernetes_version="1.32.0")],
        [cluster(shoot_status="progressing", shoot_operation="create", sync_status="pending", first_completed=None)],
        [],
    ),
    (
        "no version finding: never synced (no sync state)",
        [shoot(kubernetes_version="1.32.0")],
        [cluster(has_sync_state=False, sync_status=None, shoot_status=None, first_completed=None)],
        [],
    ),
    (
        "no version finding: sync completed but no completion ever recorded",
        [shoot(kubernetes_version="1.32.0")],
        [cluster(first_completed=None)],
        [],
    ),
    (
        "no version finding: not ready (error)",
        [shoot(kubernetes_version="1.32.0")],
        [cluster(shoot_status="error")],
        [],
    ),
    (
        "no version finding: not ready (hibernated)",
        [shoot(kubernetes_version="1.32.0")],
        [cluster(shoot_status="hibernated")],
        [],
    ),
    (
        "no version finding: organization deleted (not ready)",
        [shoot(kubernetes_version="1.32.0")],
        [cluster(organization_deleted=T0)],
        [],
    ),
    (
        "no version finding: system organization (not ready)",
        [shoot(kubernetes_version="1.32.0", organization_label=str(SYSTEM_ORGANIZATION_ID))],
        [cluster(organization_id=SYSTEM_ORGANIZATION_ID)],
        [],
    ),
    (
        "no version finding for a deleted cluster's shoot",
        [shoot(kubernetes_version="1.20.0")],
        [cluster(deleted=T0, shoot_status="deleted")],
        [("shoot_of_deleted_cluster", str(SHOOT))],
    ),
    (
        "unparseable shoot version is a mismatch",
        [shoot(kubernetes_version="latest")],
        [cluster()],
        [("version_mismatch", str(CLUSTER))],
    ),
    (
        "unparseable database version is a mismatch",
        [shoot(kubernetes_version="1.31.0")],
        [cluster(kubernetes_version="1.x")],
        [("version_mismatch", str(CLUSTER))],
    ),
    (
        "the same unparseable text on both sides agrees",
        [shoot(kubernetes_version="edge")],
        [cluster(kubernetes_version="edge")],
        [],
    ),
    (
        "organization label names another organization",
        [shoot(organization_label=str(OTHER_ORG))],
        [cluster()],
        [("organization_mismatch", str(SHOOT))],
    ),
    (
        "organization label missing",
        [shoot(organization_label=None)],
        [cluster()],
        [("organization_mismatch", str(SHOOT))],
    ),
    (
        "organization label not a UUID",
        [shoot(organization_label="acme")],
        [cluster()],
        [("organization_mismatch", str(SHOOT))],
    ),
    (
        "organization label in upper case is the same UUID",
        [shoot(organization_label=str(ORG).upper())],
        [cluster()],
        [],
    ),
    (
        "an orphan has no organization to disagree with",
        [shoot(cluster_label=str(uuid4()), organization_label=str(OTHER_ORG))],
        [],
        [("orphan_shoot", str(SHOOT))],
    ),
    (
        "a deleted cluster's shoot can also name the wrong organization",
        [shoot(organization_label=str(OTHER_ORG))],
        [cluster(deleted=T0, shoot_status="deleted")],
        [("organization_mismatch", str(SHOOT)), ("shoot_of_deleted_cluster", str(SHOOT))],
    ),
    (
        "two shoots claim one cluster: no missing shoot, the disagreeing one is a mismatch",
        [shoot(), shoot(SHOOT_2, name="acme-b2c", kubernetes_version="1.29.1")],
        [cluster()],
        [("version_mismatch", str(CLUSTER))],
    ),
]


@pytest.mark.parametrize(("shoots", "clusters", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rules(shoots: list[ShootObservation], clusters: list[ClusterFacts], expected: list[tuple[str, str]]) -> None:
    assert kinds_of(shoots, clusters) == expected


def test_every_finding_says_what_was_expected_and_observed() -> None:
    shoots = [
        shoot(cluster_label="nope"),
        shoot(SHOOT_2, organization_label=str(OTHER_ORG), kubernetes_version="1.29.0"),
    ]
    deleted = cluster(id=uuid4(), deleted=T0, shoot_status="deleted")
    missing = cluster(id=uuid4())
    shoots.append(shoot(uuid4(), cluster_label=str(deleted.id)))
    world = Observed(
        shoots,
        {c.id: c for c in [cluster(), deleted, missing]},
        unlabeled=[unlabeled()],
        organizations=[ACME],
        projects=[ACME_PROJECT],
    )
    findings = find_drift(world)
    assert {f.kind for f in findings} == set(KIND_IDS)
    for finding in findings:
        assert "expected" in finding.details
        assert "observed" in finding.details
        assert finding.details["reason"]


def test_version_mismatch_details_show_both_sides_by_minor() -> None:
    finding = only([shoot(kubernetes_version="1.30.8")], [cluster(kubernetes_version="1.31.0")])
    assert finding.shoot_uid == SHOOT
    assert finding.cluster_id == CLUSTER
    assert finding.details["expected"] == {"kubernetes_version": "1.31.0", "minor": "1.31"}
    observed = finding.details["observed"]
    assert isinstance(observed, list)
    assert observed == [
        {
            "uid": str(SHOOT),
            "namespace": "garden-acme",
            "name": "acme-a1b",
            "kubernetes_version": "1.30.8",
            "minor": "1.30",
        }
    ]
    assert "unparseable" not in finding.details


def test_an_unparseable_version_is_reported_not_raised() -> None:
    finding = only([shoot(kubernetes_version="latest")], [cluster()])
    assert finding.details["unparseable"] == [
        "shoot garden-acme/acme-a1b version 'latest' does not parse as major.minor"
    ]
    finding = only([shoot()], [cluster(kubernetes_version="1.x")])
    assert finding.details["unparseable"] == ["the database version '1.x' does not parse as major.minor"]
    assert finding.details["expected"] == {"kubernetes_version": "1.x", "minor": None}


def test_orphan_details_keep_the_raw_label() -> None:
    finding = only([shoot(cluster_label="acme-prod")], [])
    assert finding.cluster_id is None
    assert finding.details["observed"] == {"cluster_label": "acme-prod", "cluster": None}
    assert finding.details["reason"] == "the label is not a UUID"


def test_duplicate_claims_are_named_and_every_claimant_is_compared() -> None:
    world = Observed(
        [shoot(SHOOT_2, kubernetes_version="1.29.1"), shoot()],
        {CLUSTER: cluster()},
    )
    assert world.duplicate_claims() == {CLUSTER: (SHOOT, SHOOT_2)}
    (finding,) = find_drift(world)
    assert finding.shoot_uid == SHOOT_2
    observed = finding.details["observed"]
    assert isinstance(observed, list)
    assert [o["uid"] for o in observed if isinstance(o, dict)] == [str(SHOOT), str(SHOOT_2)]


def test_rules_are_deterministic_whatever_the_listing_order() -> None:
    shoots = [shoot(uuid4(), cluster_label=str(uuid4())) for _ in range(20)]
    clusters = {c.id: c for c in (cluster(id=uuid4()) for _ in range(20))}
    first = find_drift(Observed(shoots, clusters))
    again = find_drift(Observed(list(reversed(shoots)), dict(reversed(list(clusters.items())))))
    assert first == again
    assert len(first) == 40


@pytest.mark.parametrize(
    ("version", "minor"),
    [
        ("1.31", "1.31"),
        ("1.31.4", "1.31"),
        ("1.31.0", "1.31"),
        ("v1.28.15", "1.28"),
        (" 1.30.1 ", "1.30"),
        ("1.31.0-rc.1", "1.31"),
        ("1.31.2+build.5", "1.31"),
        ("1.031", "1.31"),
        ("1", None),
        ("1.", None),
        ("", None),
        ("latest", None),
        ("1.x.3", None),
        ("1.31.4.5", None),
        (None, None),
    ],
)
def test_minor_version(version: str | None, minor: str | None) -> None:
    assert minor_version(version) == minor


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        (str(CLUSTER), CLUSTER),
        (str(CLUSTER).upper(), CLUSTER),
        ("", None),
        ("not-a-uuid", None),
        (None, None),
    ],
)
def test_parse_id_label(text: str | None, parsed: UUID | None) -> None:
    assert parse_id_label(text) == parsed


def test_shoot_observation_parses_its_labels_once() -> None:
    observed = shoot(cluster_label="x", organization_label=str(ORG))
    assert observed.cluster_id is None
    assert observed.organization_id == ORG


def test_kind_registry_is_the_six_kinds_of_the_design() -> None:
    assert len(set(KIND_IDS)) == len(KIND_IDS)
    assert KIND_IDS == (
        "orphan_shoot",
        "shoot_of_deleted_cluster",
        "missing_shoot",
        "version_mismatch",
        "organization_mismatch",
        "unlabeled_shoot",
    )
    subjects = {kind.id: kind.subject for kind in KINDS}
    assert subjects["missing_shoot"] == subjects["version_mismatch"] == "cluster id"
    shoot_kinds = ("orphan_shoot", "shoot_of_deleted_cluster", "organization_mismatch", "unlabeled_shoot")
    assert {subjects[k] for k in shoot_kinds} == {"shoot uid"}


@pytest.mark.parametrize(
    ("under_way", "reported"),
    [(timedelta(minutes=14), False), (timedelta(minutes=15), False), (timedelta(minutes=15, seconds=1), True)],
)
def test_a_deletion_under_way_is_excused_up_to_the_bound(under_way: timedelta, reported: bool) -> None:
    deleting = cluster(deleted=T0, shoot_status="deleting", shoot_operation="delete")
    world = Observed([shoot()], {CLUSTER: deleting}, now=T0 + under_way, deletion_timeout=timedelta(minutes=15))
    findings = [f for f in find_drift(world) if f.kind == "shoot_of_deleted_cluster"]
    assert bool(findings) is reported
    if reported:
        assert findings[0].details["deletion_under_way_seconds"] == 901
        assert "longer than 900 s" in str(findings[0].details["reason"])
    # Without a bound (no pass time), a deletion under way is never drift.
    assert not [f for f in find_drift(Observed([shoot()], {CLUSTER: deleting})) if f.kind == "shoot_of_deleted_cluster"]


def test_times_in_details_are_rfc3339_with_z() -> None:
    deleted_at = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    gone = cluster(deleted=deleted_at, shoot_status="deleted")
    finding = only([shoot()], [gone])
    assert finding.kind == "shoot_of_deleted_cluster"
    expected = finding.details["expected"]
    assert isinstance(expected, dict)
    assert expected["cluster_deleted"] == "2026-01-02T03:04:05.678Z"
