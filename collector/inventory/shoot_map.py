"""Which shoot is each cluster's: the garden listed once per round, shared by both sources.

`refresh` runs once per round: the garden's shoots are listed once (label `fundament.io/cluster-id`)
and each cluster id mapped to its shoot, instead of one lookup per cluster. If that listing fails,
the previous round's map is used (shoots rarely move) and clusters without a known shoot fail with
the garden's error and its reason (e.g. `too_large` for a listing refused at its bounds).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from uuid import UUID

from collector.inventory.reading import ClusterRow, NoShoot
from collector.kube.errors import KubeError
from collector.kube.garden import Gardener, ShootRef, shoot_refs
from common.labels import CLUSTER_ID_LABEL

logger = logging.getLogger(__name__)


class ShootMap:
    """Cluster id -> the shoot that carries it in its cluster-id label."""

    def __init__(self, gardener: Gardener, *, page_size: int = 500) -> None:
        self._gardener = gardener
        self._page_size = page_size
        self._refs: dict[UUID, ShootRef] = {}
        self._garden_error: str | None = None
        self._garden_reason = "no_shoot"

    async def refresh(self, clusters: Sequence[ClusterRow], *, full_round: bool) -> None:
        """List the garden's shoots for these clusters; never raises (a failure keeps the last map)."""
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
            self._garden_reason = e.reason
            logger.warning("cannot list the garden's shoots; using the last known ones", extra={"error": str(e)})
            return
        refs = shoot_refs(shoots, CLUSTER_ID_LABEL)
        if full_round:
            self._refs = refs
        else:
            self._refs.update(refs)
        self._garden_error = None

    def ref(self, cluster: ClusterRow) -> ShootRef:
        """The cluster's shoot. Raises NoShoot."""
        ref = self._refs.get(cluster.id)
        if ref is None:
            if self._garden_error:
                raise NoShoot(
                    f"no shoot in the garden carries {CLUSTER_ID_LABEL}={cluster.id}"
                    f" (listing the garden failed: {self._garden_error})",
                    reason=self._garden_reason,
                )
            raise NoShoot(f"no shoot in the garden carries {CLUSTER_ID_LABEL}={cluster.id}")
        return ref
