"""The demo's world script: the simulated landscape changing while the demo runs.

Pods start and finish, a shoot disappears from the garden and comes back, a shoot moves to another
minor version and is put back; each step goes to fleet-sim through its control client, so the
inventory and reconcile loops have something to notice.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.naming import namespace_name
from fleet_description.model import Fleet
from sim.control.client import ControlClient, ControlError
from sim.world.shoots import shoot_key

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorldStep:
    """One change to the simulated world, said in words for the demo's log."""

    says: str
    action: str
    arguments: dict[str, Any]


def world_script(fleet: Fleet) -> list[WorldStep]:
    """A loop of changes over three ready shoots of the demo fleet: pods, a lost shoot, a version drift."""
    live_orgs = {o.id for o in fleet.organizations if o.deleted is None}
    ready = [
        c
        for c in fleet.clusters
        if c.deleted is None
        and c.organization_id in live_orgs
        and c.sync is not None
        and c.sync.shoot_status == "ready"
    ]
    shoots = {s.cluster_label: s for s in fleet.shoots}
    candidates = [(c, shoots[str(c.id)]) for c in ready if str(c.id) in shoots]
    if len(candidates) < 3:
        return []
    (busy_cluster, busy), (_, lost), (_, drifting) = candidates[:3]
    projects = {p.id: p for p in fleet.projects if p.cluster_id == busy_cluster.id and p.deleted is None}
    namespace = next(
        (
            namespace_name(projects[n.project_id].name, n.project_id, n.name)
            for n in fleet.namespaces
            if n.project_id in projects and n.deleted is None
        ),
        None,
    )

    def key(shoot: Any) -> str:
        return shoot_key(shoot.project, shoot.name)

    steps: list[WorldStep] = []
    if namespace is not None:
        steps.append(
            WorldStep(
                f"8 pods start in {key(busy)}/{namespace}",
                "add_pods",
                {"key": key(busy), "namespace": namespace, "count": 8},
            )
        )
    steps += [
        WorldStep(f"shoot {key(lost)} disappears from the garden", "delete_shoot", {"key": key(lost)}),
        WorldStep(f"shoot {key(drifting)} moves to another minor version", "bump_version", {"key": key(drifting)}),
    ]
    if namespace is not None:
        steps.append(
            WorldStep(
                f"the 8 pods in {key(busy)}/{namespace} finish",
                "remove_pods",
                {"key": key(busy), "namespace": namespace, "count": 8},
            )
        )
    steps += [
        WorldStep(
            f"shoot {key(lost)} is created again (new uid)",
            "add_shoot",
            {
                "project": lost.project,
                "name": lost.name,
                "cluster_label": lost.cluster_label,
                "organization_label": lost.organization_label,
                "kubernetes_version": lost.kubernetes_version,
                "region": lost.region,
            },
        ),
        WorldStep(
            f"shoot {key(drifting)} is put back on {drifting.kubernetes_version}",
            "set_kubernetes_version",
            {"key": key(drifting), "version": drifting.kubernetes_version},
        ),
    ]
    return steps


async def play_world(fleet: Fleet | None, sim_state_dir: Path, step_seconds: float, stop: asyncio.Event) -> None:
    """Apply the world script to the fleet-sim of `sim_state_dir` step by step, forever, until `stop` is set."""
    steps = world_script(fleet) if fleet else []
    if not steps:
        return
    async with ControlClient.from_state_dir(sim_state_dir, timeout_seconds=10) as control:
        for step in itertools.cycle(steps):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=step_seconds)
            if stop.is_set():
                return
            try:
                await control.call(step.action, **step.arguments)
                logger.info("world: %s", step.says)
            except ControlError as error:
                logger.warning("world: could not apply %r: %s", step.action, error)
