"""The cluster reader of GARDENER_MODE=real: each cluster's shoot, read with a credential from Gardener.

    InventoryLoop ──> GardenReader ──> shoot map + CredentialCache (kube/) ──> shoot.read_shoot

`prepare` runs once per round: the garden's shoots are listed once and each cluster mapped to its
shoot (shoot_map.py, shared with the Prometheus source).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from uuid import UUID

from collector.inventory.reading import ClusterRow, CredentialFailed, Reading
from collector.inventory.shoot import DEFAULT_LEDGER_MAX_PER_TYPE, read_shoot
from collector.inventory.shoot_map import ShootMap
from collector.inventory.sources import LedgerSource
from collector.kube.client import shoot_client
from collector.kube.credential_cache import CredentialCache
from collector.kube.errors import KubeError, Unauthorized
from collector.kube.garden import Gardener, ShootRef
from collector.kube.limits import DEFAULT_LIMITS, ResponseLimits

logger = logging.getLogger(__name__)


class GardenReader:
    """Reads each cluster's shoot with a credential from Gardener (GARDENER_MODE=real)."""

    def __init__(
        self,
        gardener: Gardener,
        credentials: CredentialCache,
        *,
        sources: Sequence[LedgerSource],
        timeout_seconds: float,
        page_size: int = 500,
        limits: ResponseLimits = DEFAULT_LIMITS,
        ledger_max_per_type: int = DEFAULT_LEDGER_MAX_PER_TYPE,
        nodes: bool = True,
    ) -> None:
        """`nodes=False`: the node list is left out (the Prometheus source reads the nodes, split.py)."""
        self._gardener = gardener
        self._credentials = credentials
        self._sources = tuple(sources)
        self._timeout_seconds = timeout_seconds
        # A ledger source gets half the cluster's budget, so a hung CRD cannot cost the snapshot.
        self._ledger_timeout_seconds = timeout_seconds / 2
        self._limits = limits
        self._ledger_max_per_type = ledger_max_per_type
        self._nodes = nodes
        self._shoots = ShootMap(gardener, page_size=page_size)

    async def prepare(self, clusters: Sequence[ClusterRow], *, full_round: bool) -> None:
        await self._shoots.refresh(clusters, full_round=full_round)
        if full_round:
            self._credentials.forget_except({cluster.id for cluster in clusters})

    def forget_except(self, cluster_ids: set[UUID]) -> None:
        """Forget the credentials of clusters no longer collected (a reader sharing its shoot map calls it)."""
        self._credentials.forget_except(cluster_ids)

    async def read(self, cluster: ClusterRow) -> Reading:
        return await self.read_shoot(cluster.id, self._shoots.ref(cluster))

    async def read_shoot(self, cluster_id: UUID, ref: ShootRef) -> Reading:
        """Read the cluster's shoot `ref` (for a reader that mapped it itself). Raises KubeError or CollectError."""
        for attempt in (1, 2):
            try:
                credential = await self._credentials.get(cluster_id, ref)
            except KubeError as e:
                raise CredentialFailed(f"cannot get a credential for shoot {ref}: {e}") from e
            client = shoot_client(credential, timeout_seconds=self._timeout_seconds, name=str(ref), limits=self._limits)
            try:
                return await read_shoot(
                    client,
                    self._sources,
                    ledger_timeout_seconds=self._ledger_timeout_seconds,
                    ledger_max_per_type=self._ledger_max_per_type,
                    nodes=self._nodes,
                )
            except Unauthorized:
                if attempt == 2:
                    raise
                # Revoked or rotated: drop it and try once more with a fresh one.
                self._credentials.drop(cluster_id)
                logger.info("shoot refused the credential; minting a new one", extra={"cluster_id": str(cluster_id)})
            finally:
                await client.close()
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises
