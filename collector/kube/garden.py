"""The Gardener client behind a small interface: list shoots and projects, mint shoot credentials, read a secret.

    inventory/ and reconcile/ ──> Gardener ──┬─> RealGardener: the garden's API (kube/client.py)
                                             └─> MockGardener: the database (collector/mock.py)

`list_shoots` reads every shoot of the garden that matches a label selector, in pages of
`page_size` with limit/continue; any failure, including a 410 for a continue token that expired
mid-way, raises, so callers never act on a partial list (reconcile would otherwise soft-delete the
shoots it missed). `list_projects` reads every Project (cluster-scoped) the same way, with the
same bounds: each page's bytes (GARDENER_MAX_ANSWER_MIB), the items of all pages together, the
request timeout. `mint_credential` asks for `shoots/adminkubeconfig` or `shoots/viewerkubeconfig`,
Gardener's subresources that return a short-lived kubeconfig for the shoot's API server
(docs/architecture.md, 'Shoot credentials live in memory and are renewed before they expire').
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from prometheus_client import Counter

from collector.kube.client import KubeClient
from collector.kube.credential import Credential, credential_from_kubeconfig
from collector.kube.errors import BadResponse
from common.labels import parse_id_label

SHOOTS = "/apis/core.gardener.cloud/v1beta1/shoots"
PROJECTS = "/apis/core.gardener.cloud/v1beta1/projects"
_SUBRESOURCE = {
    "admin": ("adminkubeconfig", "AdminKubeconfigRequest"),
    "viewer": ("viewerkubeconfig", "ViewerKubeconfigRequest"),
}
# Gardener refuses credentials asked to live less than 10 minutes.
MIN_LIFETIME_SECONDS = 600

# One of the inventory's metrics (docs/collector.md), counted here where every real mint happens; in no
# registry here: inventory/metrics.py adds it to the inventory worker's.
CREDENTIALS_MINTED = Counter(
    "fleet_inventory_credentials_minted",
    "Shoot credentials minted from Gardener, by kind (admin or viewer).",
    ["kind"],
    registry=None,
)


@dataclass(frozen=True, slots=True)
class ShootRef:
    """Where a shoot lives in the garden, and (when listed) its uid and technical id, which identify its
    monitoring secret (the owner reference) and its Prometheus (the `cluster` external label)."""

    namespace: str
    name: str
    uid: str = field(default="", compare=False)
    technical_id: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class Gardener(Protocol):
    """What the collector and reconcile need from Gardener."""

    async def list_shoots(self, *, label_selector: str, page_size: int = 500) -> list[dict[str, Any]]:
        """Every shoot matching `label_selector` across the garden (raw objects).

        Raises KubeError (kube/errors.py) on any failure; never returns a partial list.
        """
        ...

    async def list_projects(self, *, page_size: int = 500) -> list[dict[str, Any]]:
        """Every Project of the garden (raw objects; cluster-scoped).

        Raises KubeError (kube/errors.py) on any failure; never returns a partial list.
        """
        ...

    async def mint_credential(self, shoot: ShootRef, *, kind: str, lifetime_seconds: int) -> Credential:
        """A fresh credential for the shoot's API server (`kind` is `admin` or `viewer`). Raises KubeError."""
        ...

    async def read_secret(self, namespace: str, name: str) -> dict[str, Any]:
        """One secret of the garden (raw object): the shoot's monitoring secret. Raises KubeError (NotFound)."""
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

    async def list_projects(self, *, page_size: int = 500) -> list[dict[str, Any]]:
        if page_size < 1:
            raise ValueError(f"page_size={page_size}: must be positive")
        return await self._client.list_all(PROJECTS, page_size=page_size)

    async def read_secret(self, namespace: str, name: str) -> dict[str, Any]:
        return await self._client.get(f"/api/v1/namespaces/{namespace}/secrets/{name}")

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
        CREDENTIALS_MINTED.labels(kind).inc()
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


def shoot_refs(shoots: list[dict[str, Any]], label: str) -> dict[UUID, ShootRef]:
    """Cluster id (the label parsed by `common.labels.parse_id_label`) -> the shoot to read.

    The same parse reconcile uses, so an upper-case or braced id claims the same cluster for both, and
    a label that is no UUID claims none. A shoot being deleted loses to a live one; when several
    live shoots claim one cluster (drift reconcile reports), the newest wins.
    """
    chosen: dict[UUID, tuple[bool, str, ShootRef]] = {}
    for shoot in shoots:
        meta = shoot.get("metadata") or {}
        raw = (meta.get("labels") or {}).get(label)
        cluster = parse_id_label(raw) if isinstance(raw, str) else None
        name, namespace = meta.get("name"), meta.get("namespace")
        if cluster is None or not isinstance(name, str) or not isinstance(namespace, str):
            continue
        status = shoot.get("status")
        technical_id = status.get("technicalID") if isinstance(status, dict) else None
        uid = meta.get("uid")
        found = ShootRef(
            namespace,
            name,
            uid=uid if isinstance(uid, str) else "",
            technical_id=technical_id if isinstance(technical_id, str) else "",
        )
        rank = ("deletionTimestamp" not in meta, str(meta.get("creationTimestamp") or ""), found)
        best = chosen.get(cluster)
        if best is None or rank[:2] > best[:2]:
            chosen[cluster] = rank
    return {cluster: rank[2] for cluster, rank in chosen.items()}
