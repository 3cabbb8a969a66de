"""One minted shoot credential per cluster, reused until shortly before it expires.

A credential is minted about once per its lifetime rather than every round: every mint shows in
Gardener's audit log and costs the garden a request (docs/architecture.md, 'Shoot credentials live in
memory and are renewed before they expire').
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import timedelta
from uuid import UUID

from collector.kube.credential import Credential
from collector.kube.garden import Gardener, ShootRef
from common.clock import Clock, utc_now

logger = logging.getLogger(__name__)


@dataclass
class CredentialCache:
    """One credential per cluster, reused until `renew_before` ahead of its expiry.

    `renew_before` must cover one whole collection (INVENTORY_TIMEOUT plus a margin), so a
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
    _entries: dict[UUID, Credential] = field(default_factory=dict)
    _locks: dict[UUID, asyncio.Lock] = field(default_factory=dict)

    async def get(self, cluster_id: UUID, shoot: ShootRef) -> Credential:
        """A credential for the cluster's shoot, minted only when none is cached or it is about to expire."""
        # One mint per cluster at a time: an on-demand collection racing the loop reuses the new credential.
        lock = self._locks.setdefault(cluster_id, asyncio.Lock())
        async with lock:
            cached = self._entries.get(cluster_id)
            if cached is not None and self._fresh(cached):
                return cached
            credential = await self.gardener.mint_credential(
                shoot, kind=self.kind, lifetime_seconds=self.lifetime_seconds
            )
            self._entries[cluster_id] = credential
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
        self._entries.pop(cluster_id, None)

    def forget_except(self, cluster_ids: set[UUID]) -> None:
        """Forget the credentials of clusters no longer collected (deleted, no longer ready)."""
        for cluster_id in set(self._entries) - cluster_ids:
            del self._entries[cluster_id]
            self._locks.pop(cluster_id, None)

    def _fresh(self, credential: Credential) -> bool:
        if credential.expires is None:
            return False
        return credential.expires - self.clock() > self.renew_before


def renew_margin(timeout_seconds: float) -> timedelta:
    """How long before expiry a credential is renewed: one whole collection plus a minute."""
    return timedelta(seconds=timeout_seconds + 60)
