"""The cluster reader of GARDENER_MODE=real: each cluster's shoot, read with a credential from Gardener.

    InventoryLoop ──> GardenReader ──> shoot map + CredentialCache (kube/) ──> shoot.read_shoot

`prepare` runs once per round: the garden reader lists the garden's shoots once (label
`fundament.io/cluster-id`) and maps each cluster id to its shoot, instead of one lookup per cluster.
If that listing fails, the previous round's map is used (shoots rarely move) and clusters without a
known shoot fail with the garden's error.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from uuid import UUID

from collector.inventory.reading import ClusterRow, CredentialFailed, NoShoot, Reading
from collector.inventory.shoot import DEFAULT_LEDGER_MAX_PER_TYPE, read_shoot
from collector.inventory.sources import LedgerSource
from collector.kube.client import shoot_client
from collector.kube.credential_cache import CredentialCache
from collector.kube.errors import KubeError, Unauthorized
from collector.kube.garden import Gardener, ShootRef, shoot_refs
from collector.kube.limits import DEFAULT_LIMITS, ResponseLimits
from common.labels import CLUSTER_ID_LABEL

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
    ) -> None:
        self._gardener = gardener
        self._credentials = credentials
        self._sources = tuple(sources)
        self._timeout_seconds = timeout_seconds
        # A ledger source gets half the cluster's budget, so a hung CRD cannot cost the snapshot.
        self._ledger_timeout_seconds = timeout_seconds / 2
        self._page_size = page_size
        self._limits = limits
        self._ledger_max_per_type = ledger_max_per_type
        self._refs: dict[UUID, ShootRef] = {}
        self._garden_error: str | None = None

    async def prepare(self, clusters: Sequence[ClusterRow], *, full_round: bool) -> None:
        if not clusters:
            return
        # One cluster (an on-demand collect) asks for its own shoot; a round lists the garden once.
        selector = CLUSTER_ID_LABEL if len(clusters) > 1 else f"{CLUSTER_ID_LABEL}={clusters[0].id}"
        try:
            shoots = await self._gardener.list_shoots(label_selector=selector, page_size=self._page_size)
            if not shoots and selector != CLUSTER_ID_LABEL:
                # A selector matches the text exactly; the label may spell the id otherwise (upper case,
                # braces), which still claims the cluster, so look through every labelled shoot.
                shoots = await self._gardener.list_shoots(label_selector=CLUSTER_ID_LABEL, page_size=self._page_size)
        except KubeError as e:
            self._garden_error = str(e)
            logger.warning("cannot list the garden's shoots; using the last known ones", extra={"error": str(e)})
        else:
            refs = shoot_refs(shoots, CLUSTER_ID_LABEL)
            if full_round:
                self._refs = refs
            else:
                self._refs.update(refs)
            self._garden_error = None
        if full_round:
            self._credentials.forget_except({cluster.id for cluster in clusters})

    async def read(self, cluster: ClusterRow) -> Reading:
        ref = self._refs.get(cluster.id)
        if ref is None:
            why = f" (listing the garden failed: {self._garden_error})" if self._garden_error else ""
            raise NoShoot(f"no shoot in the garden carries {CLUSTER_ID_LABEL}={cluster.id}{why}")
        for attempt in (1, 2):
            try:
                credential = await self._credentials.get(cluster.id, ref)
            except KubeError as e:
                raise CredentialFailed(f"cannot get a credential for shoot {ref}: {e}") from e
            client = shoot_client(credential, timeout_seconds=self._timeout_seconds, name=str(ref), limits=self._limits)
            try:
                return await read_shoot(
                    client,
                    self._sources,
                    ledger_timeout_seconds=self._ledger_timeout_seconds,
                    ledger_max_per_type=self._ledger_max_per_type,
                )
            except Unauthorized:
                if attempt == 2:
                    raise
                # Revoked or rotated: drop it and try once more with a fresh one.
                self._credentials.drop(cluster.id)
                logger.info("shoot refused the credential; minting a new one", extra={"cluster_id": str(cluster.id)})
            finally:
                await client.close()
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises
