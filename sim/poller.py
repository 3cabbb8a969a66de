"""The provisioning side's status poller, played by the simulator for the demo (DESIGN.md §10).

In production another system writes `tenant.cluster_sync_state` from Gardener; this project only
reads it. So that statuses change in the demo as the simulated world does (a deleted shoot turns
its cluster LOST, a hibernation STOPPED, a reconcile in progress UPGRADING), the poller lists the
garden's shoots over HTTPS, like any client, and writes the shoot columns of each cluster's row
over a privileged connection that no service role has. It never touches the sync columns of an
existing row (they describe the provisioning side's own applies), and a failed garden list
changes nothing: "could not list" is never "missing".

The mapping follows Fundament's producer rules (`reference/fundament-facts.md` §3.4), with this
project's vocabulary for the cases it adds (unhealthy, missing, hibernating, hibernated):

| the shoot | shoot_status |
|---|---|
| carries `deletionTimestamp` (or the cluster is deleted and the shoot still exists) | deleting |
| hibernation on: finished / under way | hibernated / hibernating |
| last operation Pending or Processing | progressing |
| last operation Error, Failed or Aborted | error |
| Succeeded, APIServerAvailable + ControlPlaneHealthy + SystemComponentsHealthy True | ready |
| Succeeded, any of them not True | unhealthy |
| gone, for a live cluster that ever synced | missing |
| gone, for a deleted cluster | deleted |

A row already `deleted` is final and never polled again (as in Fundament), so a shoot that outlives
its confirmed deletion stays the drift it is.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp

from common.labels import CLUSTER_ID_LABEL
from sim.poller_queries import (
    ClusterStatusRow,
    DatabaseError,
    StatusWrite,
    clusters_with_status,
    connect,
    write_statuses,
)

logger = logging.getLogger(__name__)

READY_CONDITIONS = ("APIServerAvailable", "ControlPlaneHealthy", "SystemComponentsHealthy")
SHOOTS_PATH = "/apis/core.gardener.cloud/v1beta1/shoots"
PAGE_SIZE = 500
REQUEST_TIMEOUT_SECONDS = 30.0


class PollError(RuntimeError):
    """The garden could not be listed; nothing is written this round."""


@dataclass(frozen=True, slots=True)
class ShootView:
    """What the poller reads of one shoot."""

    cluster_label: str
    deleting: bool
    hibernation_enabled: bool
    is_hibernated: bool
    operation: str | None  # lastOperation.type
    state: str | None  # lastOperation.state
    description: str
    healthy: bool  # the three conditions Fundament checks are True

    @classmethod
    def of(cls, shoot: dict[str, Any]) -> ShootView:
        metadata, spec, status = shoot.get("metadata", {}), shoot.get("spec", {}), shoot.get("status", {})
        last = status.get("lastOperation") or {}
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        return cls(
            cluster_label=(metadata.get("labels") or {}).get(CLUSTER_ID_LABEL, ""),
            deleting=bool(metadata.get("deletionTimestamp")),
            hibernation_enabled=bool((spec.get("hibernation") or {}).get("enabled")),
            is_hibernated=bool(status.get("isHibernated")),
            operation=last.get("type"),
            state=last.get("state"),
            description=str(last.get("description") or ""),
            healthy=all(conditions.get(kind) == "True" for kind in READY_CONDITIONS),
        )


@dataclass(frozen=True, slots=True)
class ShootStatus:
    status: str
    operation: str | None
    message: str


def shoot_status(shoot: ShootView | None, *, cluster_deleted: bool, ever_completed: bool) -> ShootStatus | None:
    """The shoot columns for a cluster, or None when there is nothing to say (never synced, no shoot)."""
    if shoot is None:
        if cluster_deleted:
            return ShootStatus("deleted", "delete", "Shoot confirmed deleted")
        return ShootStatus("missing", None, "Shoot not found in Gardener") if ever_completed else None
    if shoot.deleting or cluster_deleted:
        return ShootStatus("deleting", "delete", "Shoot is being deleted")
    operation = shoot.operation.lower() if shoot.operation else None
    if shoot.hibernation_enabled:
        if shoot.is_hibernated:
            return ShootStatus("hibernated", operation, "Shoot is hibernated")
        return ShootStatus("hibernating", operation, "Hibernating the shoot")
    return _by_last_operation(shoot, operation)


def _by_last_operation(shoot: ShootView, operation: str | None) -> ShootStatus:
    if shoot.state is None or shoot.state in {"Pending", "Processing"}:
        message = f"{shoot.operation}: {shoot.description}" if shoot.operation else "Shoot is being created"
        return ShootStatus("progressing", operation or "create", message)
    if shoot.state in {"Error", "Failed", "Aborted"}:
        return ShootStatus("error", operation, shoot.description or f"Operation was {shoot.state.lower()}")
    if shoot.healthy:
        return ShootStatus("ready", operation, "Shoot is ready")
    return ShootStatus("unhealthy", operation, "Shoot reconciled but not all conditions healthy")


def plan_writes(rows: list[ClusterStatusRow], shoots: dict[str, ShootView], *, now: datetime) -> list[StatusWrite]:
    """The rows whose shoot columns change this round."""
    writes = []
    for row in rows:
        if row.shoot_status == "deleted":
            continue  # final: the provisioning side stops polling a confirmed deletion
        status = shoot_status(
            shoots.get(str(row.cluster_id)), cluster_deleted=row.deleted, ever_completed=row.ever_completed
        )
        if status is None:
            continue
        if row.has_state:
            if (row.shoot_status, row.shoot_operation, row.shoot_message) == (
                status.status,
                status.operation,
                status.message,
            ):
                continue
            writes.append(StatusWrite(row.cluster_id, status.status, status.operation, status.message, insert=False))
            continue
        completed = status.status in {"ready", "unhealthy", "hibernated"}
        writes.append(
            StatusWrite(
                row.cluster_id,
                status.status,
                status.operation,
                status.message,
                insert=True,
                sync_status="completed" if completed else "pending",
                first_completed=now if completed else None,
            )
        )
    return writes


def _ssl_context(kubeconfig: dict[str, Any]) -> ssl.SSLContext:
    cluster = kubeconfig["clusters"][0]["cluster"]
    return ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())


async def list_shoots(kubeconfig: dict[str, Any]) -> dict[str, ShootView]:
    """Every shoot carrying the cluster label, by that label (first one wins), paged like a careful client."""
    server = kubeconfig["clusters"][0]["cluster"]["server"]
    token = kubeconfig["users"][0]["user"]["token"]
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_SECONDS)
    shoots: dict[str, ShootView] = {}
    connector = aiohttp.TCPConnector(ssl=_ssl_context(kubeconfig))
    async with aiohttp.ClientSession(headers=headers, timeout=timeout, connector=connector) as session:
        token_continue = ""
        while True:
            params = {"labelSelector": CLUSTER_ID_LABEL, "limit": str(PAGE_SIZE)}
            if token_continue:
                params["continue"] = token_continue
            try:
                async with session.get(server + SHOOTS_PATH, params=params) as response:
                    if response.status != 200:
                        raise PollError(f"listing shoots answered {response.status}")
                    page = await response.json()
            except (aiohttp.ClientError, TimeoutError, ValueError) as error:
                raise PollError(f"listing shoots failed: {type(error).__name__}") from error
            for item in page.get("items") or []:
                view = ShootView.of(item)
                shoots.setdefault(view.cluster_label, view)
            token_continue = (page.get("metadata") or {}).get("continue") or ""
            if not token_continue:
                return shoots


class StatusPoller:
    """Writes cluster shoot statuses from the simulated garden, once or every `interval_seconds`."""

    def __init__(self, dsn: str, garden_kubeconfig: dict[str, Any], *, interval_seconds: float = 10.0) -> None:
        self.dsn = dsn
        self.garden_kubeconfig = garden_kubeconfig
        self.interval_seconds = interval_seconds

    async def run_once(self, now: datetime | None = None) -> int:
        """One round; returns how many clusters' rows changed. Raises PollError if the garden failed."""
        moment = now or datetime.now(UTC)
        shoots = await list_shoots(self.garden_kubeconfig)
        async with await connect(self.dsn) as conn, conn.transaction():
            rows = await clusters_with_status(conn)
            writes = plan_writes(rows, shoots, now=moment)
            await write_statuses(conn, writes, now=moment)
        return len(writes)

    async def run(self, stop: asyncio.Event) -> None:
        """Poll until `stop` is set; a failed round is logged and the next one tries again."""
        while not stop.is_set():
            try:
                changed = await self.run_once()
                logger.info("status poll done", extra={"changed": changed})
            except (PollError, DatabaseError) as error:
                logger.warning("status poll failed: %s", error)
            try:
                await asyncio.wait_for(stop.wait(), self.interval_seconds)
            except TimeoutError:
                continue
