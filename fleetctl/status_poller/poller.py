"""The status poller's rounds: list the garden's shoots over HTTPS, write the statuses they imply.

In production another system writes `tenant.cluster_sync_state` from Gardener; this project only
reads it. So that statuses change in the demo as the simulated world does (a deleted shoot turns
its cluster LOST, a hibernation STOPPED, a reconcile in progress UPGRADING), `fleet demo` runs this
stand-in next to fleet-sim. It lists the garden's shoots like any Kubernetes client, through the
garden kubeconfig, and writes the shoot columns of each cluster's row over a privileged connection
that no service role has (the rules: `fleetctl/status_poller/rules.py`). It never touches the sync
columns of an existing row (they describe the provisioning side's own applies), and a failed garden
list changes nothing: "could not list" is never "missing".
"""

from __future__ import annotations

import asyncio
import base64
import logging
import ssl
from datetime import datetime
from typing import Any

import aiohttp

from common.clock import utc_now
from common.labels import CLUSTER_ID_LABEL
from fleetctl.status_poller.queries import DatabaseError, clusters_with_status, connect, write_statuses
from fleetctl.status_poller.rules import ShootView, plan_writes

logger = logging.getLogger(__name__)

SHOOTS_PATH = "/apis/core.gardener.cloud/v1beta1/shoots"
PAGE_SIZE = 500
REQUEST_TIMEOUT_SECONDS = 30.0


class PollError(RuntimeError):
    """The garden could not be listed; nothing is written this round."""


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
        moment = now or utc_now()
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
