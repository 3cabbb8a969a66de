"""The one HTTP client of fleet-sim's control endpoint, for the demo, the soak and the benchmarks.

Each action of `sim.control.actions.HTTP_ACTIONS` is a method here with the same name and
arguments (a test ties the two), answering what the endpoint answers as JSON: dataclasses arrive
as dicts. A refused action or an unreachable simulator raises `ControlError`.

    async with ControlClient.from_state_dir(Path(".fleet/demo/sim")) as control:
        keys = await control.shoot_keys()
        await control.fault(keys[0], "500", resource="pods", times=2)
"""

from __future__ import annotations

import ssl
from pathlib import Path
from types import TracebackType
from typing import Any, cast

import httpx

from common.text import truncate
from sim.control.statedir import SimState

DEFAULT_TIMEOUT_SECONDS = 30.0


class ControlError(RuntimeError):
    """The control endpoint refused a call (`status` is its HTTP status) or could not be reached (None)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ControlClient:
    """fleet-sim's `/_sim` endpoint over HTTPS, authenticated with the control token."""

    def __init__(
        self, url: str, token: str, ca_file: Path | str, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=f"{url.rstrip('/')}/_sim/",
            verify=ssl.create_default_context(cafile=str(ca_file)),
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout_seconds,
        )

    @classmethod
    def from_state_dir(cls, state_dir: Path, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS) -> ControlClient:
        """A client of the simulator that writes to `state_dir` (it must be listening: `sim.json` exists)."""
        state = SimState.read(state_dir)
        return cls(state.url, state.control_token(), state.ca_file, timeout_seconds=timeout_seconds)

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> ControlClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()

    async def _send(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise ControlError(f"fleet-sim's control endpoint: {type(error).__name__}: {error}") from error
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code != 200:
            message = body.get("error") if isinstance(body, dict) else None
            raise ControlError(
                f"{method} /_sim/{path}: {response.status_code} {message or truncate(response.text)}",
                response.status_code,
            )
        return body

    # --- reading the simulator -----------------------------------------------------------------

    async def state(self) -> dict[str, Any]:
        """Address, shoots, active faults, minted credentials and the simulator's clock."""
        return cast(dict[str, Any], await self._send("GET", "state"))

    async def requests(self, target: str | None = None) -> list[dict[str, Any]]:
        """The request log, oldest first, optionally of one target (`garden` or a shoot key)."""
        params = {} if target is None else {"target": target}
        return cast(list[dict[str, Any]], await self._send("GET", "requests", params=params))

    async def call(self, action: str, **arguments: Any) -> Any:
        """Any action by name (what the typed methods below use); answers the action's result."""
        answer = await self._send("POST", f"actions/{action}", json=arguments)
        return answer["result"]

    # --- the actions ---------------------------------------------------------------------------

    async def reset(self) -> None:
        await self.call("reset")

    async def advance_clock(self, seconds: float) -> None:
        await self.call("advance_clock", seconds=seconds)

    async def clear_requests(self) -> None:
        await self.call("clear_requests")

    async def fault(
        self,
        target: str,
        kind: str,
        *,
        resource: str | None = None,
        seconds: float = 0.0,
        times: int | None = None,
        count: int = 0,
    ) -> None:
        await self.call("fault", target=target, kind=kind, resource=resource, seconds=seconds, times=times, count=count)

    async def hostile(self, keys: list[str] | None = None, seconds: float = 60.0) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], await self.call("hostile", keys=keys, seconds=seconds))

    async def hostile_monitoring(self, keys: list[str] | None = None, seconds: float = 60.0) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], await self.call("hostile_monitoring", keys=keys, seconds=seconds))

    async def rotate_monitoring(self, key: str) -> None:
        await self.call("rotate_monitoring", key=key)

    async def set_monitoring_labels(self, exported: bool, key: str | None = None) -> None:
        await self.call("set_monitoring_labels", exported=exported, key=key)

    async def set_monitoring_stack(self, stack: str, key: str | None = None) -> None:
        await self.call("set_monitoring_stack", stack=stack, key=key)

    async def set_monitoring_url(self, key: str, url: str | None) -> None:
        await self.call("set_monitoring_url", key=key, url=url)

    async def clear_faults(self, target: str | None = None) -> None:
        await self.call("clear_faults", target=target)

    async def faults(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], await self.call("faults"))

    async def compact(self, target: str = "garden") -> None:
        await self.call("compact", target=target)

    async def shoot_keys(self) -> list[str]:
        return cast(list[str], await self.call("shoot_keys"))

    async def expected(self, key: str) -> dict[str, Any]:
        """`sim.control.expected.ExpectedShoot` as JSON."""
        return cast(dict[str, Any], await self.call("expected", key=key))

    async def object_counts(self, key: str) -> dict[str, int]:
        return cast(dict[str, int], await self.call("object_counts", key=key))

    async def shoot_kubeconfig(
        self, key: str, *, viewer: bool = False, expiration_seconds: int = 3600
    ) -> dict[str, Any]:
        return cast(
            dict[str, Any],
            await self.call("shoot_kubeconfig", key=key, viewer=viewer, expiration_seconds=expiration_seconds),
        )

    async def scale_pool(self, key: str, worker: str, nodes: int) -> None:
        await self.call("scale_pool", key=key, worker=worker, nodes=nodes)

    async def add_pods(self, key: str, namespace: str, count: int, phase: str = "Running") -> list[str]:
        return cast(list[str], await self.call("add_pods", key=key, namespace=namespace, count=count, phase=phase))

    async def remove_pods(self, key: str, namespace: str, count: int) -> list[str]:
        return cast(list[str], await self.call("remove_pods", key=key, namespace=namespace, count=count))

    async def set_pod_phase(self, key: str, namespace: str, name: str, phase: str) -> None:
        await self.call("set_pod_phase", key=key, namespace=namespace, name=name, phase=phase)

    async def add_namespace(self, key: str, name: str, *, namespace_id: str | None = None, pods: int = 0) -> None:
        await self.call("add_namespace", key=key, name=name, namespace_id=namespace_id, pods=pods)

    async def remove_namespace(self, key: str, name: str) -> None:
        await self.call("remove_namespace", key=key, name=name)

    async def delete_shoot(self, key: str) -> None:
        await self.call("delete_shoot", key=key)

    async def recreate_shoot(self, key: str) -> str:
        """Returns the shoot's new uid."""
        return cast(str, await self.call("recreate_shoot", key=key))

    async def add_shoot(
        self,
        project: str,
        name: str,
        *,
        cluster_label: str,
        organization_label: str,
        kubernetes_version: str = "1.31.4",
        region: str = "local",
    ) -> str:
        """Returns the new shoot's key."""
        return cast(
            str,
            await self.call(
                "add_shoot",
                project=project,
                name=name,
                cluster_label=cluster_label,
                organization_label=organization_label,
                kubernetes_version=kubernetes_version,
                region=region,
            ),
        )

    async def add_project(
        self, name: str, *, namespace: str | None = None, organization_label: str | None = None
    ) -> None:
        await self.call("add_project", name=name, namespace=namespace, organization_label=organization_label)

    async def set_kubernetes_version(self, key: str, version: str) -> None:
        await self.call("set_kubernetes_version", key=key, version=version)

    async def bump_version(self, key: str) -> str:
        """Returns the version the shoot moved to."""
        return cast(str, await self.call("bump_version", key=key))

    async def hibernate(self, key: str, hibernated: bool = True) -> None:
        await self.call("hibernate", key=key, hibernated=hibernated)

    async def set_last_operation(self, key: str, operation: str, state: str) -> None:
        await self.call("set_last_operation", key=key, operation=operation, state=state)

    async def set_control_plane_healthy(self, key: str, healthy: bool) -> None:
        await self.call("set_control_plane_healthy", key=key, healthy=healthy)

    async def set_labels(
        self, key: str, *, cluster_label: str | None = None, organization_label: str | None = None
    ) -> None:
        await self.call("set_labels", key=key, cluster_label=cluster_label, organization_label=organization_label)

    async def set_cluster_labelled(self, key: str, labelled: bool) -> None:
        """Remove the shoot's `fundament.io/cluster-id` label (False) or put it back (True)."""
        await self.call("set_cluster_labelled", key=key, labelled=labelled)

    async def set_worker(
        self,
        key: str,
        name: str,
        *,
        machine_type: str | None = None,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> None:
        """Change (or add) a pool of the shoot's `spec.provider.workers`."""
        await self.call("set_worker", key=key, name=name, machine_type=machine_type, minimum=minimum, maximum=maximum)

    async def remove_worker(self, key: str, name: str) -> None:
        await self.call("remove_worker", key=key, name=name)

    async def set_extension(self, key: str, kind: str, disabled: bool = False) -> None:
        """Ask for an extension in the shoot's `spec.extensions` (`disabled`: turn it off)."""
        await self.call("set_extension", key=key, kind=kind, disabled=disabled)

    async def remove_extension(self, key: str, kind: str) -> None:
        await self.call("remove_extension", key=key, kind=kind)

    async def set_addon(self, key: str, name: str, enabled: bool = True) -> None:
        """Enable or disable one of the shoot's `spec.addons`."""
        await self.call("set_addon", key=key, name=name, enabled=enabled)
