"""The Gardener client behind a small interface: list shoots, mint shoot credentials.

    inventory.py / reconcile.py ──> Gardener ──┬─> RealGardener: the garden's API (collector/kube.py)
                                               └─> MockGardener: the database (GARDENER_MODE=mock)

`list_shoots` reads every shoot of the garden that matches a label selector, in pages of
`page_size` with limit/continue; any failure, including a 410 for a continue token that expired
mid-way, raises, so callers never act on a partial list (reconcile would otherwise soft-delete the
shoots it missed). `mint_credential` asks for `shoots/adminkubeconfig` or `shoots/viewerkubeconfig`
(DESIGN.md §7 step 1, reference notes 4.4). `CredentialCache` keeps one minted credential per
cluster until close to its expiry, so a credential is minted about once per its lifetime rather than
every interval (every mint shows in Gardener's audit log).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from uuid import UUID

from collector import inventory_metrics as metrics
from collector.credential import Credential, credential_from_kubeconfig
from collector.kube import BadResponse, KubeClient
from common.clock import Clock, utc_now

logger = logging.getLogger(__name__)

SHOOTS = "/apis/core.gardener.cloud/v1beta1/shoots"
_SUBRESOURCE = {
    "admin": ("adminkubeconfig", "AdminKubeconfigRequest"),
    "viewer": ("viewerkubeconfig", "ViewerKubeconfigRequest"),
}
# Gardener refuses credentials asked to live less than 10 minutes (reference notes 4.4).
MIN_LIFETIME_SECONDS = 600


@dataclass(frozen=True, slots=True)
class ShootRef:
    """Where a shoot lives in the garden."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class Gardener(Protocol):
    """What the collector and reconcile need from Gardener."""

    async def list_shoots(self, *, label_selector: str, page_size: int = 500) -> list[dict[str, Any]]:
        """Every shoot matching `label_selector` across the garden (raw objects).

        Raises collector.kube.KubeError on any failure; never returns a partial list.
        """
        ...

    async def mint_credential(self, shoot: ShootRef, *, kind: str, lifetime_seconds: int) -> Credential:
        """A fresh credential for the shoot's API server (`kind` is `admin` or `viewer`). Raises KubeError."""
        ...

    async def close(self) -> None: ...


class RealGardener:
    """The garden's API through the official client (GARDENER_MODE=real)."""

    def __init__(self, client: KubeClient) -> None:
        self._client = client

    async def close(self) -> None:
        await self._client.close()

    async def list_shoots(self, *, label_selector: str, page_size: int = 500) -> list[dict[str, Any]]:
        if page_size < 1:
            raise ValueError(f"page_size={page_size}: must be positive")
        return await self._client.list_all(SHOOTS, query={"labelSelector": label_selector}, page_size=page_size)

    async def mint_credential(self, shoot: ShootRef, *, kind: str, lifetime_seconds: int) -> Credential:
        if kind not in _SUBRESOURCE:
            raise ValueError(f"credential kind {kind!r}: expected admin or viewer")
        subresource, request_kind = _SUBRESOURCE[kind]
        path = f"/apis/core.gardener.cloud/v1beta1/namespaces/{shoot.namespace}/shoots/{shoot.name}/{subresource}"
        answer = await self._client.post(
            path,
            {
                "apiVersion": "authentication.gardener.cloud/v1alpha1",
                "kind": request_kind,
                "spec": {"expirationSeconds": max(MIN_LIFETIME_SECONDS, lifetime_seconds)},
            },
        )
        metrics.CREDENTIALS_MINTED.labels(kind).inc()
        return credential_from_answer(answer, what=f"{subresource} of {shoot}")


def credential_from_answer(answer: Mapping[str, Any], *, what: str) -> Credential:
    """The credential in an Admin/ViewerKubeconfigRequest answer (base64 kubeconfig, expiry). Raises BadResponse."""
    status = answer.get("status")
    if not isinstance(status, Mapping) or not isinstance(status.get("kubeconfig"), str):
        raise BadResponse(f"{what}: the answer carries no status.kubeconfig")
    try:
        kubeconfig = base64.b64decode(status["kubeconfig"], validate=True)
    except (binascii.Error, ValueError):
        raise BadResponse(f"{what}: status.kubeconfig is not base64") from None
    expires = parse_time(status.get("expirationTimestamp"))
    if expires is None:
        raise BadResponse(f"{what}: the answer carries no usable status.expirationTimestamp")
    return credential_from_kubeconfig(kubeconfig, expires=expires)


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 timestamp as Kubernetes writes it (`2026-11-30T12:00:00Z`), or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


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


class MockGardener:
    """GARDENER_MODE=mock: the garden as the database says it should be, for local work without Gardener.

    Every live cluster of a live organization appears as one shoot (uid derived from the cluster
    id), so reconcile finds no drift. Shoots cannot be read in mock mode: the collector reads the
    database instead (collector/mock.py), and minting a credential is an error.
    """

    def __init__(self, load: Callable[[], Awaitable[list[MockShootRow]]]) -> None:
        # `load` reads the rows of every live cluster of a live organization (collector.inventory_store).
        self._load = load

    async def close(self) -> None:
        return None

    async def list_shoots(self, *, label_selector: str, page_size: int = 500) -> list[dict[str, Any]]:
        rows = await self._load()
        return [mock_shoot(row) for row in rows]

    async def mint_credential(self, shoot: ShootRef, *, kind: str, lifetime_seconds: int) -> Credential:
        raise BadResponse(f"GARDENER_MODE=mock has no shoot API servers (asked for {kind} access to {shoot})")


_MOCK_NAMESPACE = uuid.UUID("7d5f2c1e-0b8a-4c3e-9a61-2f4e8b6d1c90")


@dataclass(frozen=True, slots=True)
class MockShootRow:
    """What the database knows of a live cluster, enough to describe its shoot."""

    cluster_id: UUID
    organization_id: UUID
    organization_name: str
    name: str
    region: str
    kubernetes_version: str
    created: datetime


def mock_shoot(row: MockShootRow) -> dict[str, Any]:
    """The shoot object the mock garden lists for a cluster row."""
    return {
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {
            "name": row.name,
            "namespace": f"garden-{row.organization_name}",
            "uid": str(uuid.uuid5(_MOCK_NAMESPACE, str(row.cluster_id))),
            "creationTimestamp": row.created.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "labels": {
                "fundament.io/cluster-id": str(row.cluster_id),
                "fundament.io/organization-id": str(row.organization_id),
            },
        },
        "spec": {"kubernetes": {"version": row.kubernetes_version}, "region": row.region},
        "status": {"lastOperation": {"type": "Reconcile", "state": "Succeeded"}},
    }


def shoot_refs(shoots: list[dict[str, Any]], label: str) -> dict[str, ShootRef]:
    """Cluster id (the label's value) -> the shoot to read; a shoot being deleted loses to a live one.

    When several live shoots claim one cluster (drift reconcile reports), the newest wins.
    """
    chosen: dict[str, tuple[bool, str, ShootRef]] = {}
    for shoot in shoots:
        meta = shoot.get("metadata") or {}
        cluster = (meta.get("labels") or {}).get(label)
        name, namespace = meta.get("name"), meta.get("namespace")
        if not isinstance(cluster, str) or not isinstance(name, str) or not isinstance(namespace, str):
            continue
        rank = ("deletionTimestamp" not in meta, str(meta.get("creationTimestamp") or ""), ShootRef(namespace, name))
        best = chosen.get(cluster.strip())
        if best is None or rank[:2] > best[:2]:
            chosen[cluster.strip()] = rank
    return {cluster: rank[2] for cluster, rank in chosen.items()}


def renew_margin(timeout_seconds: float) -> timedelta:
    """How long before expiry a credential is renewed: one whole collection plus a minute."""
    return timedelta(seconds=timeout_seconds + 60)
