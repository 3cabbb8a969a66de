"""One minted shoot credential per cluster, reused until shortly before it expires.

A credential is minted about once per its lifetime rather than every round: every mint shows in
Gardener's audit log and costs the garden a request (docs/architecture.md, 'Shoot credentials live in
memory and are renewed before they expire').
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from uuid import UUID

from collector.kube.credential import Credential
from collector.kube.garden import Gardener, ShootRef
from collector.kube.per_cluster import PerCluster
from common.clock import Clock, utc_now

logger = logging.getLogger(__name__)


@dataclass
class CredentialCache:
    """One credential per cluster, reused until `renew_before` ahead of its expiry.

    `renew_before` must cover one whole collection (INVENTORY_TIMEOUT_SECONDS plus a margin), so a
    credential never expires half-way. A 401 from a shoot means the cached credential is no good
    (revoked, rotated CA): the caller `drop`s it and asks again, once.
    """

    gardener: Gardener
    kind: str
    lifetime_seconds: int
    renew_before: timedelta
    clock: Clock = utc_now
    minted: dict[UUID, int] = field(default_factory=dict)
    """Credentials minted per cluster since start (tests and `collect` summaries read it)."""
    _credentials: PerCluster[Credential] = field(default_factory=PerCluster)

    async def get(self, cluster_id: UUID, shoot: ShootRef) -> Credential:
        """A credential for the cluster's shoot, minted only when none is cached or it is about to expire."""
        # One mint per cluster at a time: an on-demand collection racing the loop reuses the new credential.
        async with self._credentials.lock(cluster_id):
            cached = self._credentials.kept(cluster_id)
            if cached is not None and self._fresh(cached):
                return cached
            credential = await self.gardener.mint_credential(
                shoot, kind=self.kind, lifetime_seconds=self.lifetime_seconds
            )
            self._credentials.keep(cluster_id, credential)
            self.minted[cluster_id] = self.minted.get(cluster_id, 0) + 1
            logger.info(
                "shoot credential minted",
                extra={
                    "cluster_id": str(cluster_id),
                    "shoot": str(shoot),
                    "kind": self.kind,
                    "expires": credential.expires,
                },
            )
            return credential

    def drop(self, cluster_id: UUID) -> None:
        """Forget the cluster's credential (after a 401): the next `get` mints a new one."""
        self._credentials.drop(cluster_id)

    def forget_except(self, cluster_ids: set[UUID]) -> None:
        """Forget the credentials of clusters no longer collected (deleted, no longer ready)."""
        self._credentials.forget_except(cluster_ids)

    def _fresh(self, credential: Credential) -> bool:
        if credential.expires is None:
            return False
        return credential.expires - self.clock() > self.renew_before


def renew_margin(timeout_seconds: float) -> timedelta:
    """How long before expiry a credential is renewed: one whole collection plus a minute."""
    return timedelta(seconds=timeout_seconds + 60)
