"""The simulated landscape: the garden's shoots and projects, and every shoot's contents.

Built from a `fleet_description.model.Fleet` (the same description that seeds the database, so both
agree, minus the drift the fleet plants on purpose). The fleet's Gardener projects come first; a shoot
of a project the fleet does not describe (an orphan's, or one added through the control API) gets a
project of Gardener's default shape: namespace `garden-<project>`, no Fundament label. A shoot's
contents are built the first time they are needed and then kept, so changes stick; `reset()` returns
to the generated world.

Every method runs on the server's event loop; `sim/control/actions.py` marshals callers from other threads.
Changes raise `WorldError` (unknown shoot, pool, namespace) or `ValueError` (bad argument).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TypeVar

from fleet_description.model import Fleet, GardenProjectSpec
from sim.world import derive
from sim.world.clock import Clock
from sim.world.contents import ContentsError, ShootContents, build_contents
from sim.world.generate import DEFAULT_PROFILE, ContentProfile, FleetIndex, workers_of
from sim.world.records import NamespaceRecord
from sim.world.shoots import (
    OPERATION_STATES,
    OPERATION_TYPES,
    ExtensionSpec,
    ProjectRecord,
    ShootState,
    WorkerSpec,
    default_extensions,
    initial_state,
    shoot_key,
)
from sim.world.store import Store

logger = logging.getLogger(__name__)
T = TypeVar("T")


class WorldError(LookupError):
    """A change or lookup names a shoot (or something in it) that does not exist."""


def _minor_bumped(version: str) -> str:
    parts = version.split(".")
    if len(parts) < 2 or not parts[1].isdigit():
        raise ValueError(f"cannot bump version {version!r}: expected MAJOR.MINOR[.PATCH]")
    return f"{parts[0]}.{int(parts[1]) + 1}.0"


class World:
    """Garden and shoots, with the operations the control API offers."""

    def __init__(self, fleet: Fleet, clock: Clock, *, profile: ContentProfile = DEFAULT_PROFILE) -> None:
        self.fleet = fleet
        self.clock = clock
        self.profile = profile
        self.index = FleetIndex(fleet)
        self.garden_rv = 0
        self.garden_compacted_rv = 0
        self.shoots: Store[ShootState] = Store()
        self.projects: Store[ProjectRecord] = Store()
        self.garden_namespaces: Store[NamespaceRecord] = Store()
        self._namespace_projects: dict[str, str] = {}  # garden namespace -> the project it belongs to
        self._contents: dict[str, ShootContents] = {}
        self._generations: dict[str, int] = {}
        self.reset()

    def next_garden_rv(self) -> int:
        self.garden_rv += 1
        return self.garden_rv

    def reset(self) -> None:
        """Back to the world the fleet describes: every change and every built shoot forgotten."""
        self.garden_rv = 0
        self.garden_compacted_rv = 0
        self.shoots = Store()
        self.projects = Store()
        self.garden_namespaces = Store()
        self._namespace_projects.clear()
        self._contents.clear()
        self._generations.clear()
        for project in self.fleet.garden_projects:
            self._put_project(project)
        for spec in self.fleet.shoots:
            cluster = self.index.cluster_of(spec.cluster_label)
            healthy = cluster is None or cluster.sync is None or cluster.sync.shoot_status != "unhealthy"
            state = initial_state(spec, workers_of(self.index, cluster), healthy=healthy, rv=self.next_garden_rv())
            if self.shoots.get(state.namespace, state.name) is not None:
                raise ValueError(f"the fleet has two shoots named {state.key!r}")
            if self._add_project(state.project, spec.created) != state.namespace:
                raise ValueError(f"shoot {state.key!r} is not in its project's namespace {state.namespace!r}")
            self.shoots.put(state)

    def _put_project(self, spec: GardenProjectSpec) -> None:
        if self.projects.get("", spec.name) is not None:
            raise ValueError(f"the fleet describes project {spec.name!r} twice")
        if spec.namespace in self._namespace_projects:
            raise ValueError(f"two projects claim namespace {spec.namespace!r}")
        uid = str(derive.stable_uuid("project", spec.name))
        rv = self.next_garden_rv()
        self.projects.put(ProjectRecord(spec.name, uid, spec.created, rv, spec.namespace, spec.organization_label))
        self._namespace_projects[spec.namespace] = spec.name
        self.garden_namespaces.put(NamespaceRecord(spec.namespace, None, None, self.next_garden_rv()))

    def _add_project(self, project: str, created: datetime) -> str | None:
        """The project's namespace; a project the fleet does not describe is made in Gardener's default shape."""
        record = self.projects.get("", project)
        if record is None:
            self._put_project(GardenProjectSpec(project, f"garden-{project}", None, created))
            return f"garden-{project}"
        return record.garden_namespace

    # --- lookups -----------------------------------------------------------------------------

    def shoot(self, key: str) -> ShootState | None:
        project, sep, name = key.partition("--")
        record = self.projects.get("", project) if sep else None
        if record is None or record.garden_namespace is None:
            return None
        return self.shoots.get(record.garden_namespace, name)

    def require_shoot(self, key: str) -> ShootState:
        shoot = self.shoot(key)
        if shoot is None:
            raise WorldError(f"no shoot {key!r}")
        return shoot

    def contents(self, key: str) -> ShootContents:
        """A shoot's objects, built on first use."""
        shoot = self.require_shoot(key)
        contents = self._contents.get(key)
        if contents is None:
            contents = self._contents[key] = build_contents(shoot, self.index, self.profile)
        return contents

    def project_of_namespace(self, namespace: str) -> ProjectRecord | None:
        """The project whose `spec.namespace` is this garden namespace."""
        project = self._namespace_projects.get(namespace)
        return self.projects.get("", project) if project is not None else None

    # --- garden changes ----------------------------------------------------------------------

    def _replace(self, shoot: ShootState, **changes: object) -> ShootState:
        updated = replace(shoot, rv=self.next_garden_rv(), **changes)  # type: ignore[arg-type]
        self.shoots.put(updated)
        return updated

    def delete_shoot(self, key: str) -> None:
        """The shoot disappears from the garden; its API and every credential for it stop working."""
        shoot = self.require_shoot(key)
        self.shoots.delete(shoot.namespace, shoot.name)
        self._contents.pop(key, None)
        self.next_garden_rv()

    def recreate_shoot(self, key: str) -> ShootState:
        """Delete and create again under the same name: a new uid, fresh contents, old credentials void."""
        shoot = self.require_shoot(key)
        generation = self._generations.get(key, 0) + 1
        self._generations[key] = generation
        self._contents.pop(key, None)
        now = self.clock.now()
        return self._replace(
            shoot,
            uid=str(derive.stable_uuid("recreated", shoot.uid, generation)),
            created=now,
            changed=now,
            last_operation="Create",
            last_operation_state="Succeeded",
            generation=1,
        )

    def add_shoot(
        self,
        project: str,
        name: str,
        *,
        cluster_label: str,
        organization_label: str,
        kubernetes_version: str = "1.31.4",
        region: str = "local",
    ) -> ShootState:
        """A shoot the fleet does not describe (an orphan, unless its labels match a cluster)."""
        key = shoot_key(project, name)
        if self.shoot(key) is not None:
            raise ValueError(f"shoot {key!r} already exists")
        now = self.clock.now()
        namespace = self._add_project(project, now)
        if namespace is None:
            raise ValueError(f"project {project!r} has no namespace yet")
        cluster = self.index.cluster_of(cluster_label)
        shoot = ShootState(
            name=name,
            project=project,
            namespace=namespace,
            uid=str(derive.stable_uuid("added", key, self.garden_rv)),
            cluster_label=cluster_label,
            organization_label=organization_label,
            kubernetes_version=kubernetes_version,
            region=region,
            created=now,
            hibernated=False,
            last_operation="Create",
            last_operation_state="Succeeded",
            control_plane_healthy=True,
            workers=workers_of(self.index, cluster),
            has_certificates_crd=True,
            rv=self.next_garden_rv(),
            extensions=default_extensions(str(derive.stable_uuid("added", key, self.garden_rv))),
        )
        self.shoots.put(shoot)
        return shoot

    def add_project(self, name: str, *, namespace: str | None = None, organization_label: str | None = None) -> None:
        """A Gardener project the fleet does not describe, in `namespace` (default `garden-<name>`),
        labelled `fundament.io/organization-id` when `organization_label` is given."""
        if "--" in name or "/" in name or not name:
            raise ValueError(f"{name!r} cannot name a project (empty, '--' or '/')")
        if self.projects.get("", name) is not None:
            raise ValueError(f"project {name!r} already exists")
        garden_namespace = namespace or f"garden-{name}"
        if garden_namespace in self._namespace_projects:
            raise ValueError(f"namespace {garden_namespace!r} already belongs to a project")
        self._put_project(GardenProjectSpec(name, garden_namespace, organization_label, self.clock.now()))

    def set_kubernetes_version(self, key: str, version: str) -> ShootState:
        shoot = self.require_shoot(key)
        return self._replace(shoot, kubernetes_version=version, generation=shoot.generation + 1)

    def bump_minor_version(self, key: str) -> ShootState:
        """An upgrade to the next minor version (`1.30.5` → `1.31.0`)."""
        shoot = self.require_shoot(key)
        return self.set_kubernetes_version(key, _minor_bumped(shoot.kubernetes_version))

    def set_hibernated(self, key: str, hibernated: bool) -> ShootState:
        shoot = self.require_shoot(key)
        return self._replace(
            shoot,
            hibernated=hibernated,
            generation=shoot.generation + 1,
            last_operation="Reconcile",
            last_operation_state="Succeeded",
            changed=self.clock.now(),
        )

    def set_last_operation(self, key: str, operation: str, state: str) -> ShootState:
        if operation not in OPERATION_TYPES:
            raise ValueError(f"operation {operation!r} is not one of {', '.join(OPERATION_TYPES)}")
        if state not in OPERATION_STATES:
            raise ValueError(f"state {state!r} is not one of {', '.join(OPERATION_STATES)}")
        shoot = self.require_shoot(key)
        return self._replace(shoot, last_operation=operation, last_operation_state=state, changed=self.clock.now())

    def set_control_plane_healthy(self, key: str, healthy: bool) -> ShootState:
        shoot = self.require_shoot(key)
        return self._replace(shoot, control_plane_healthy=healthy, changed=self.clock.now())

    def set_labels(
        self, key: str, *, cluster_label: str | None = None, organization_label: str | None = None
    ) -> ShootState:
        """Point a shoot's Fundament labels elsewhere (to plant drift while running)."""
        shoot = self.require_shoot(key)
        return self._replace(
            shoot,
            cluster_label=shoot.cluster_label if cluster_label is None else cluster_label,
            organization_label=shoot.organization_label if organization_label is None else organization_label,
        )

    def set_cluster_labelled(self, key: str, labelled: bool) -> ShootState:
        """Take the shoot's `fundament.io/cluster-id` label away (or give it back): an unlabeled shoot."""
        shoot = self.require_shoot(key)
        return self._replace(shoot, cluster_labelled=labelled)

    def set_worker(
        self,
        key: str,
        name: str,
        *,
        machine_type: str | None = None,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> ShootState:
        """Change a pool of `spec.provider.workers`, or add one; the nodes follow only `scale_pool`.

        No validation beyond the types: a test may play a garden that answers what Gardener would refuse.
        """
        shoot = self.require_shoot(key)
        workers = list(shoot.workers)
        at = next((i for i, w in enumerate(workers) if w.name == name), None)
        if at is None:
            default = workers[0].machine_type if workers else "m5.large"
            low = 1 if minimum is None else minimum
            workers.append(
                WorkerSpec(
                    name,
                    machine_type or default,
                    low,
                    max(low, 3) if maximum is None else maximum,
                    (f"{shoot.region}-a",),
                )
            )
        else:
            old = workers[at]
            workers[at] = replace(
                old,
                machine_type=old.machine_type if machine_type is None else machine_type,
                minimum=old.minimum if minimum is None else minimum,
                maximum=old.maximum if maximum is None else maximum,
            )
        return self._replace(shoot, workers=tuple(workers), generation=shoot.generation + 1)

    def remove_worker(self, key: str, name: str) -> ShootState:
        shoot = self.require_shoot(key)
        if all(w.name != name for w in shoot.workers):
            raise WorldError(f"shoot {key!r} has no worker pool {name!r}")
        workers = tuple(w for w in shoot.workers if w.name != name)
        return self._replace(shoot, workers=workers, generation=shoot.generation + 1)

    def set_extension(self, key: str, kind: str, *, disabled: bool = False) -> ShootState:
        """Ask for an extension in `spec.extensions` (or turn it off with `disabled`)."""
        if not kind:
            raise ValueError("an extension needs a type")
        shoot = self.require_shoot(key)
        extensions = [e for e in shoot.extensions if e.type != kind] + [ExtensionSpec(kind, disabled)]
        return self._replace(shoot, extensions=tuple(extensions), generation=shoot.generation + 1)

    def remove_extension(self, key: str, kind: str) -> ShootState:
        shoot = self.require_shoot(key)
        if all(e.type != kind for e in shoot.extensions):
            raise WorldError(f"shoot {key!r} has no extension {kind!r}")
        extensions = tuple(e for e in shoot.extensions if e.type != kind)
        return self._replace(shoot, extensions=extensions, generation=shoot.generation + 1)

    def set_addon(self, key: str, name: str, enabled: bool) -> ShootState:
        """Enable or disable one of `spec.addons` (a shoot with any enabled is an evaluation shoot)."""
        if not name:
            raise ValueError("an add-on needs a name")
        shoot = self.require_shoot(key)
        addons = sorted({*shoot.addons, name} if enabled else set(shoot.addons) - {name})
        return self._replace(shoot, addons=tuple(addons), generation=shoot.generation + 1)

    def compact_garden(self) -> None:
        """Expire every continue token the garden has handed out."""
        self.garden_compacted_rv = self.next_garden_rv()

    # --- shoot content changes ---------------------------------------------------------------

    def scale_pool(self, key: str, worker: str, nodes: int) -> None:
        shoot = self.require_shoot(key)
        self.contents(key).scale_pool(shoot, worker, nodes)

    def add_pods(self, key: str, namespace: str, count: int, phase: str | None = "Running") -> list[str]:
        return self._contents_call(lambda c: c.add_pods(namespace, count, phase), key)

    def remove_pods(self, key: str, namespace: str, count: int) -> list[str]:
        return self._contents_call(lambda c: c.remove_pods(namespace, count), key)

    def add_namespace(self, key: str, name: str, *, namespace_id: str | None = None, pods: int = 0) -> None:
        self._contents_call(lambda c: c.add_namespace(name, namespace_id, pods), key)

    def remove_namespace(self, key: str, name: str) -> None:
        self._contents_call(lambda c: c.remove_namespace(name), key)

    def _contents_call(self, change: Callable[[ShootContents], T], key: str) -> T:
        try:
            return change(self.contents(key))
        except ContentsError as error:
            raise WorldError(str(error)) from None
