"""The control API: inject faults, change the world, read the request log and the expected counts.

Tests in the same process call these methods directly; the demo and the soak reach the same
methods through the HTTP endpoint `/_sim/actions/<name>` (see `sim/control/endpoint.py`). The server runs on
its own event loop (usually in a background thread), and the world must only change between two
steps of that loop, so every method that touches the world is marshalled onto it
(sim/control/marshal.py). The actions that change shoots live in sim/control/shoot_changes.py.
"""

from __future__ import annotations

from typing import Any

from sim.api.credentials.kubeconfig import Json, kubeconfig
from sim.api.credentials.tokens import TokenKind
from sim.api.faults.hostile import HOSTILE_CASES, MONITORING_HOSTILE_CASES
from sim.api.faults.injected import Fault, FaultKind
from sim.api.machinery.kinds import CERTIFICATES, SHOOT_KINDS
from sim.api.requestlog import GARDEN, LoggedRequest
from sim.api.server import PROMETHEUS
from sim.api.simulator import MIN_KUBECONFIG_SECONDS
from sim.control.expected import ExpectedShoot, expected_shoot
from sim.control.marshal import on_loop
from sim.control.shoot_changes import ShootChanges
from sim.world.shoots import ShootState


class SimControl(ShootChanges):
    """Everything a test, the demo or the soak may do to the running simulator."""

    # --- the whole simulator ------------------------------------------------------------------

    @on_loop
    def reset(self) -> None:
        """The generated world again: no faults, no changes, no minted credentials, an empty log."""
        self.sim.reset()

    def advance_clock(self, seconds: float) -> None:
        """Let `seconds` pass for expiries (kubeconfigs, continue tokens) without waiting."""
        self.sim.clock.advance(seconds)

    def requests(self, target: str | None = None) -> list[LoggedRequest]:
        """The logged API requests, oldest first, optionally of one target (`garden` or a shoot key)."""
        return self.sim.requests.entries(None if target is None else (lambda e: e.target == target))

    def clear_requests(self) -> None:
        self.sim.requests.clear()

    # --- faults --------------------------------------------------------------------------------

    @on_loop
    def fault(
        self,
        target: str,
        kind: str | FaultKind,
        *,
        resource: str | None = None,
        seconds: float = 0.0,
        times: int | None = None,
        count: int = 0,
    ) -> None:
        """Make requests to `target` (`garden`, a shoot key or `*`) fail; see `sim/api/faults/injected.py`
        (and `hostile.py` beside it for the hostile answers; `count` is the items a `flood` sends)."""
        fault_kind = kind if isinstance(kind, FaultKind) else FaultKind.parse(kind)
        if target not in {GARDEN, "*"}:
            self.sim.world.require_shoot(target)
        self.sim.faults.add(Fault(fault_kind, target, resource, seconds, times, count))

    @on_loop
    def hostile(self, keys: list[str] | None = None, seconds: float = 60.0) -> list[dict[str, Any]]:
        """fleet-sim's hostile mode: each case of `sim/api/faults/hostile.py` on one shoot of `keys` (default:
        the serving shoots in order); answers which shoot plays which case. Cases beyond the shoots are left out."""
        chosen = keys if keys is not None else [s.key for s in self.sim.world.shoots.iter_from() if s.serving]
        played: list[dict[str, Any]] = []
        for key, (kind, resource, count) in zip(chosen, HOSTILE_CASES, strict=False):
            self.sim.world.require_shoot(key)
            self.sim.faults.add(Fault(kind, key, resource, seconds, None, count))
            played.append({"shoot": key, "kind": kind.value, "resource": resource, "count": count})
        return played

    @on_loop
    def hostile_monitoring(self, keys: list[str] | None = None, seconds: float = 60.0) -> list[dict[str, Any]]:
        """The hostile cases of a shoot's Prometheus (MONITORING_HOSTILE_CASES), one per shoot of `keys`
        (default: the serving shoots in order); answers which shoot plays which case."""
        chosen = keys if keys is not None else [s.key for s in self.sim.world.shoots.iter_from() if s.serving]
        played: list[dict[str, Any]] = []
        for key, (kind, count) in zip(chosen, MONITORING_HOSTILE_CASES, strict=False):
            self.sim.world.require_shoot(key)
            self.sim.faults.add(Fault(kind, key, PROMETHEUS, seconds, None, count))
            played.append({"shoot": key, "kind": kind.value, "resource": PROMETHEUS, "count": count})
        return played

    @on_loop
    def clear_faults(self, target: str | None = None) -> None:
        """Drop faults (of one target, or all), releasing requests that hang."""
        self.sim.faults.clear(target)

    @on_loop
    def faults(self) -> list[dict[str, Any]]:
        return [
            {
                "kind": f.kind.value,
                "target": f.target,
                "resource": f.resource,
                "seconds": f.seconds,
                "times": f.times,
                "count": f.count,
            }
            for f in self.sim.faults.active()
        ]

    @on_loop
    def compact(self, target: str = GARDEN) -> None:
        """Expire every continue token of the garden or of one shoot (the next page answers 410)."""
        if target == GARDEN:
            self.sim.world.compact_garden()
        else:
            self.sim.world.contents(target).compact()

    # --- reading the world ---------------------------------------------------------------------

    @on_loop
    def shoot_keys(self) -> list[str]:
        return [s.key for s in self.sim.world.shoots.iter_from()]

    @on_loop
    def shoot(self, key: str) -> ShootState:
        return self.sim.world.require_shoot(key)

    @on_loop
    def expected(self, key: str) -> ExpectedShoot:
        """What a correct collector finds in the shoot right now."""
        return expected_shoot(self.sim.world.require_shoot(key), self.sim.world.contents(key))

    @on_loop
    def object_counts(self, key: str) -> dict[str, int]:
        """How many objects of each served resource the shoot holds (certificates only with the CRD)."""
        shoot = self.sim.world.require_shoot(key)
        contents = self.sim.world.contents(key)
        resources = [k.resource for k in SHOOT_KINDS if k is not CERTIFICATES or shoot.has_certificates_crd]
        return {resource: len(contents.store(resource)) for resource in resources}

    @on_loop
    def shoot_kubeconfig(self, key: str, *, viewer: bool = False, expiration_seconds: int = 3600) -> Json:
        """A kubeconfig for the shoot, as the kubeconfig subresource would mint it (a test shortcut)."""
        if expiration_seconds < MIN_KUBECONFIG_SECONDS:
            raise ValueError(f"expiration_seconds must be at least {MIN_KUBECONFIG_SECONDS}")
        shoot = self.sim.world.require_shoot(key)
        kind = TokenKind.VIEWER if viewer else TokenKind.ADMIN
        token = self.sim.tokens.mint(kind, key, shoot.uid, self.sim.clock.time() + expiration_seconds)
        return kubeconfig(
            name=f"{key}-external",
            server=self.sim.shoot_url(key),
            ca_pem=self.sim.tls.ca_pem,
            token=token,
            user=f"{key}-{kind.value}",
        )

    # --- monitoring ----------------------------------------------------------------------------

    @on_loop
    def rotate_monitoring(self, key: str) -> None:
        """Rotate the shoot's monitoring credentials: the old password gets 401 from its Prometheus."""
        self.sim.world.require_shoot(key)
        self.sim.monitoring.rotate(key)

    @on_loop
    def set_monitoring_labels(self, exported: bool, key: str | None = None) -> None:
        """Whether kube-state-metrics exports the pool and namespace-id labels (its allow-list), for one
        shoot or (no key) for every shoot without a setting of its own."""
        if key is None:
            self.sim.monitoring.default_labels_exported = exported
            return
        self.sim.world.require_shoot(key)
        self.sim.monitoring.labels_exported[key] = exported

    @on_loop
    def set_monitoring_stack(self, stack: str, key: str | None = None) -> None:
        """Which monitoring stack a shoot's Prometheus plays, for one shoot or (no key) every shoot without a
        setting of its own: `gardener` (a stock Gardener shoot Prometheus, the default) or `fuller` (a
        landscape's own kube-state-metrics watching every namespace)."""
        if key is not None:
            self.sim.world.require_shoot(key)
        self.sim.monitoring.set_stack(stack, key)

    @on_loop
    def set_monitoring_url(self, key: str, url: str | None) -> None:
        """Point the shoot's monitoring secret at another Prometheus (a real one scraping the shoot's
        kube-state-metrics exposition); None: back to fleet-sim's own."""
        self.sim.world.require_shoot(key)
        if url is None:
            self.sim.monitoring.urls.pop(key, None)
        else:
            self.sim.monitoring.urls[key] = url

    @on_loop
    def monitoring_password(self, key: str) -> str:
        """The shoot's current monitoring password (what its secret holds), for a test's own Prometheus."""
        return self.sim.monitoring.password(self.sim.world.require_shoot(key))


# What the HTTP endpoint may call, by name (an explicit list: nothing else is reachable over HTTP).
HTTP_ACTIONS: tuple[str, ...] = (
    "reset",
    "advance_clock",
    "clear_requests",
    "fault",
    "hostile",
    "hostile_monitoring",
    "rotate_monitoring",
    "set_monitoring_labels",
    "set_monitoring_stack",
    "set_monitoring_url",
    "clear_faults",
    "faults",
    "compact",
    "shoot_keys",
    "expected",
    "object_counts",
    "shoot_kubeconfig",
    "scale_pool",
    "add_pods",
    "remove_pods",
    "set_pod_phase",
    "add_namespace",
    "remove_namespace",
    "delete_shoot",
    "recreate_shoot",
    "add_shoot",
    "add_project",
    "set_kubernetes_version",
    "bump_version",
    "hibernate",
    "set_last_operation",
    "set_control_plane_healthy",
    "set_labels",
    "set_cluster_labelled",
    "set_worker",
    "remove_worker",
    "set_extension",
    "remove_extension",
    "set_addon",
)
