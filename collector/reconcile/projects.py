"""Fundament's garden projects, found the way Fundament finds them: through Gardener's Project objects.

The namespace a Gardener project's shoots live in is `Project.spec.namespace`. It is `garden-<project>`
by Gardener's default, but not by guarantee (a project may adopt another namespace), and it is empty
until Gardener has created it. So reconcile lists the projects and reads the namespace off each one
instead of deriving it from an organization's name.

Which organization a project belongs to is decided as Fundament's provisioning side decides it
(`EnsureProject`): the project labelled `fundament.io/organization-id=<organization>` is that
organization's. Only when no project carries an organization's label would Fundament create one,
named `common.naming.project_name(<organization name>)`; a project of exactly that name without the
label is therefore taken as the organization's too. A project whose label names no live organization
(or is not a UUID) is nobody's: the label decides, the name is never consulted then.

    loop.py ──> observe_projects(listing) ──> GardenProject ──┐
                store.read_garden_organizations ──> OrganizationFacts ──┴─> project_owners ──> Observed
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from uuid import UUID

from common.labels import ORGANIZATION_ID_LABEL, parse_id_label
from common.naming import project_name


@dataclass(frozen=True, slots=True)
class OrganizationFacts:
    """A live, non-system organization: what may own a Gardener project that Fundament manages."""

    id: UUID
    name: str

    @property
    def project_name(self) -> str:
        """The name Fundament gives the organization's Gardener project when it creates one."""
        return project_name(self.name)


@dataclass(frozen=True, slots=True)
class GardenProject:
    """One listed Gardener Project (`core.gardener.cloud/v1beta1`, cluster-scoped)."""

    name: str
    namespace: str | None
    """`spec.namespace`; None while Gardener has not created the namespace yet."""
    organization_label: str | None
    """The raw value of label fundament.io/organization-id; None when the project lacks the label."""
    organization_id: UUID | None = field(init=False)
    """The label parsed as a UUID; None when absent or not one."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "organization_id", parse_id_label(self.organization_label))


@dataclass(frozen=True, slots=True)
class ProjectOwner:
    """The organization a garden namespace belongs to, through which project, matched how."""

    organization: OrganizationFacts
    project: str
    namespace: str
    matched_by: Literal["label", "name"]


class MalformedProject(ValueError):
    """A listed project lacks what every project has (a name): the project listing is not trusted."""


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def observe_project(obj: Mapping[str, Any]) -> GardenProject:
    """One listed project object; raises MalformedProject when it has no name."""
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name = _text(metadata.get("name"))
    if not name:
        raise MalformedProject("a listed project has no name")
    labels = metadata.get("labels")
    labels = labels if isinstance(labels, Mapping) else {}
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    return GardenProject(
        name=name,
        namespace=_text(spec.get("namespace")) or None,
        organization_label=_text(labels.get(ORGANIZATION_ID_LABEL)),
    )


def observe_projects(objects: Iterable[Mapping[str, Any]]) -> list[GardenProject]:
    """Every listed project, each name once, by name."""
    by_name: dict[str, GardenProject] = {}
    for obj in objects:
        project = observe_project(obj)
        by_name.setdefault(project.name, project)
    return sorted(by_name.values(), key=lambda p: p.name)


def project_owners(
    projects: Iterable[GardenProject], organizations: Iterable[OrganizationFacts]
) -> dict[str, ProjectOwner]:
    """Garden namespace -> the live organization whose Fundament project it is.

    A project without a namespace yet is skipped (no shoot can be in it). Label matches come first;
    a name match counts only for an organization that no labelled project claims, as Fundament's
    `EnsureProject` would then create (or reuse) the project of that name. Gardener gives every
    project its own namespace; should two claim one anyway, the first by (label before name,
    project name) wins, so the answer does not depend on the listing's order.
    """
    by_id = {o.id: o for o in organizations}
    by_project_name = {o.project_name: o for o in by_id.values()}
    ordered = sorted(projects, key=lambda p: p.name)
    owners: dict[str, ProjectOwner] = {}
    labelled: set[UUID] = set()
    for project in ordered:
        if project.organization_label is None:
            continue
        organization = by_id.get(project.organization_id) if project.organization_id is not None else None
        if organization is None:
            continue
        labelled.add(organization.id)
        if project.namespace is not None:
            owners.setdefault(project.namespace, ProjectOwner(organization, project.name, project.namespace, "label"))
    for project in ordered:
        if project.organization_label is not None or project.namespace is None:
            continue
        organization = by_project_name.get(project.name)
        if organization is None or organization.id in labelled:
            continue
        owners.setdefault(project.namespace, ProjectOwner(organization, project.name, project.namespace, "name"))
    return owners
