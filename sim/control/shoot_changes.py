"""The control actions that change shoots: pools, pods, namespaces, versions, labels, specs, life and death.

Each runs on the simulator's event loop (sim/control/marshal.py); SimControl (sim/control/actions.py)
offers them with the rest.
"""

from __future__ import annotations

from sim.control.marshal import LoopBound, on_loop


class ShootChanges(LoopBound):
    """What a test, the demo or the soak may change about the simulator's shoots."""

    @on_loop
    def scale_pool(self, key: str, worker: str, nodes: int) -> None:
        """Run `nodes` nodes in a worker pool (a pool unknown to the database if the name is new)."""
        self.sim.world.scale_pool(key, worker, nodes)

    @on_loop
    def scale_pool_after_queries(self, key: str, worker: str, nodes: int, *, queries: int = 1) -> None:
        """`scale_pool` once the shoot's Prometheus answered `queries` more queries: a change that lands
        between two queries of one collection, deterministically (in-process tests; not over HTTP)."""
        self.sim.world.require_shoot(key)
        self.sim.monitoring.history.after_queries(key, queries, lambda: self.sim.world.scale_pool(key, worker, nodes))

    @on_loop
    def add_pods(self, key: str, namespace: str, count: int, phase: str = "Running") -> list[str]:
        return self.sim.world.add_pods(key, namespace, count, phase)

    @on_loop
    def remove_pods(self, key: str, namespace: str, count: int) -> list[str]:
        return self.sim.world.remove_pods(key, namespace, count)

    @on_loop
    def set_pod_phase(self, key: str, namespace: str, name: str, phase: str) -> None:
        self.sim.world.contents(key).set_pod_phase(namespace, name, phase)

    @on_loop
    def add_namespace(self, key: str, name: str, *, namespace_id: str | None = None, pods: int = 0) -> None:
        self.sim.world.add_namespace(key, name, namespace_id=namespace_id, pods=pods)

    @on_loop
    def remove_namespace(self, key: str, name: str) -> None:
        self.sim.world.remove_namespace(key, name)

    @on_loop
    def delete_shoot(self, key: str) -> None:
        self.sim.world.delete_shoot(key)

    @on_loop
    def recreate_shoot(self, key: str) -> str:
        """Delete and create the shoot again; returns its new uid."""
        return self.sim.world.recreate_shoot(key).uid

    @on_loop
    def add_shoot(
        self,
        project: str,
        name: str,
        *,
        cluster_label: str,
        organization_label: str,
        kubernetes_version: str = "1.31.4",
        region: str = "local",
    ) -> str:
        """A shoot the fleet does not describe; returns its key."""
        shoot = self.sim.world.add_shoot(
            project,
            name,
            cluster_label=cluster_label,
            organization_label=organization_label,
            kubernetes_version=kubernetes_version,
            region=region,
        )
        return shoot.key

    @on_loop
    def add_project(self, name: str, *, namespace: str | None = None, organization_label: str | None = None) -> None:
        """A Gardener project the fleet does not describe (namespace default `garden-<name>`); `add_shoot`
        with its name puts a shoot in its namespace."""
        self.sim.world.add_project(name, namespace=namespace, organization_label=organization_label)

    @on_loop
    def set_kubernetes_version(self, key: str, version: str) -> None:
        self.sim.world.set_kubernetes_version(key, version)

    @on_loop
    def bump_version(self, key: str) -> str:
        """Upgrade to the next minor version; returns it."""
        return self.sim.world.bump_minor_version(key).kubernetes_version

    @on_loop
    def hibernate(self, key: str, hibernated: bool = True) -> None:
        self.sim.world.set_hibernated(key, hibernated)

    @on_loop
    def set_last_operation(self, key: str, operation: str, state: str) -> None:
        self.sim.world.set_last_operation(key, operation, state)

    @on_loop
    def set_control_plane_healthy(self, key: str, healthy: bool) -> None:
        self.sim.world.set_control_plane_healthy(key, healthy)

    @on_loop
    def set_labels(self, key: str, *, cluster_label: str | None = None, organization_label: str | None = None) -> None:
        self.sim.world.set_labels(key, cluster_label=cluster_label, organization_label=organization_label)

    @on_loop
    def set_cluster_labelled(self, key: str, labelled: bool) -> None:
        """Remove the shoot's cluster-id label (labelled=False) or put it back."""
        self.sim.world.set_cluster_labelled(key, labelled)

    @on_loop
    def set_worker(
        self,
        key: str,
        name: str,
        *,
        machine_type: str | None = None,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> None:
        """Change (or add) a pool of the shoot's `spec.provider.workers`; its nodes follow only `scale_pool`."""
        self.sim.world.set_worker(key, name, machine_type=machine_type, minimum=minimum, maximum=maximum)

    @on_loop
    def remove_worker(self, key: str, name: str) -> None:
        self.sim.world.remove_worker(key, name)

    @on_loop
    def set_extension(self, key: str, kind: str, disabled: bool = False) -> None:
        """Ask for an extension in the shoot's `spec.extensions` (`disabled`: turn it off)."""
        self.sim.world.set_extension(key, kind, disabled=disabled)

    @on_loop
    def remove_extension(self, key: str, kind: str) -> None:
        self.sim.world.remove_extension(key, kind)

    @on_loop
    def set_addon(self, key: str, name: str, enabled: bool = True) -> None:
        """Enable or disable one of the shoot's `spec.addons` (e.g. nginxIngress)."""
        self.sim.world.set_addon(key, name, enabled)
