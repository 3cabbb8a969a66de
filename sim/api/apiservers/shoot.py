"""One shoot's kube-apiserver: discovery, and get/list of every kind the shoot holds.

Served under `/shoots/<project>--<name>/`. Only a kubeconfig minted for this shoot (and this uid)
gets in; the garden token does not. A hibernated shoot, or one whose creation has not finished,
has no API server running: it answers 503. The cert-manager CRD is served only where the shoot has
it; elsewhere its paths are 404, as on a cluster without the CRD.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.api.credentials.tokens import TokenKind
from sim.api.machinery.discovery import discovery_document
from sim.api.machinery.kinds import CERTIFICATES, SHOOT_KINDS, Kind, find_kind
from sim.api.machinery.listing import ListContext
from sim.api.machinery.replies import Json, Reply, json_reply, read_objects, text_reply
from sim.api.machinery.request import ApiRequest
from sim.api.machinery.status import no_such_resource, service_unavailable, unauthorized
from sim.api.objects.core import render_namespace, render_node, render_pod
from sim.api.objects.network import render_certificate, render_ingress, render_service
from sim.api.objects.storage import render_claim, render_volume
from sim.api.simulator import Simulator
from sim.world.shoots import ShootState

RENDERERS: dict[str, Callable[[Any, ShootState], Json]] = {
    "nodes": render_node,
    "namespaces": render_namespace,
    "pods": render_pod,
    "persistentvolumes": render_volume,
    "persistentvolumeclaims": render_claim,
    "services": render_service,
    "ingresses": render_ingress,
    "certificates": render_certificate,
}


def served_kinds(shoot: ShootState) -> tuple[Kind, ...]:
    return tuple(k for k in SHOOT_KINDS if k is not CERTIFICATES or shoot.has_certificates_crd)


def handle_shoot(sim: Simulator, key: str, request: ApiRequest) -> Reply:
    """Answer one request to a shoot's API server (raises `ApiError` for failures)."""
    shoot = sim.world.shoot(key)
    if shoot is None:
        raise no_such_resource()
    principal = request.principal
    if principal.kind not in {TokenKind.ADMIN, TokenKind.VIEWER} or principal.shoot_uid != shoot.uid:
        raise unauthorized()
    if not shoot.serving:
        reason = "hibernated" if shoot.hibernated else "not created yet"
        raise service_unavailable(f"the API server of shoot {key} is not running ({reason})")
    if request.is_health:
        return text_reply("ok")
    kinds = served_kinds(shoot)
    path = request.path
    if not path.is_resource:
        document = discovery_document(kinds, path.segments, shoot.kubernetes_version)
        if document is None:
            raise no_such_resource()
        return json_reply(document)
    kind = find_kind(kinds, path.group or "", path.version or "", path.resource or "")
    if kind is None or path.subresource is not None or (path.namespace is not None and not kind.namespaced):
        raise no_such_resource()
    contents = sim.world.contents(key)
    render = RENDERERS[kind.resource]
    return read_objects(
        method=request.method,
        kind=kind,
        store=contents.store(kind.resource),
        render=lambda record: render(record, shoot),
        namespace=path.namespace,
        name=path.name,
        query=request.query,
        accept=request.accept,
        context=ListContext(
            contents.resource_version, contents.compacted_rv, sim.clock.time(), sim.settings.continue_ttl_seconds
        ),
        chunk_bytes=sim.settings.chunk_bytes,
        cache=sim.list_cache,
        render_key=shoot,
    )
