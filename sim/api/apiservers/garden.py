"""The garden's API server: project namespaces, projects, shoots, and the kubeconfig subresources.

Only the garden token gets in. `POST .../shoots/<name>/adminkubeconfig` (or `viewerkubeconfig`)
takes an `AdminKubeconfigRequest` (`ViewerKubeconfigRequest`) and answers 201 with a kubeconfig for
that shoot's API, valid for `spec.expirationSeconds` (default one hour, at least 600 s: less is 422,
capped at 24 h), as gardener-apiserver does.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from sim.api.credentials.kubeconfig import kubeconfig, to_yaml
from sim.api.credentials.tokens import TokenKind
from sim.api.machinery.discovery import discovery_document
from sim.api.machinery.kinds import (
    GARDEN_KINDS,
    GARDENER,
    KUBECONFIG_REQUEST_KINDS,
    NAMESPACES,
    PROJECTS,
    SECRETS,
    Kind,
    find_kind,
)
from sim.api.machinery.listing import ListContext
from sim.api.machinery.replies import Json, Reply, json_reply, read_objects, text_reply
from sim.api.machinery.request import ApiRequest
from sim.api.machinery.status import (
    bad_request,
    forbidden,
    invalid,
    method_not_allowed,
    no_such_resource,
    not_found,
    unauthorized,
)
from sim.api.objects.gardener import (
    render_garden_namespace,
    render_kubeconfig_request,
    render_project,
    render_shoot,
)
from sim.api.prometheus.monitoring import render_secret
from sim.api.simulator import (
    DEFAULT_KUBECONFIG_SECONDS,
    MAX_KUBECONFIG_SECONDS,
    MIN_KUBECONFIG_SECONDS,
    Simulator,
)
from sim.world.records import NamespaceRecord
from sim.world.shoots import ShootState
from sim.world.store import Store

GARDEN_VERSION = "1.31.4"
AUTHENTICATION_GROUP = "authentication.gardener.cloud"


def handle_garden(sim: Simulator, request: ApiRequest) -> Reply:
    """Answer one request to the garden (raises `ApiError` for failures)."""
    if request.is_health:
        return text_reply("ok")
    if request.principal.kind is not TokenKind.GARDEN:
        raise unauthorized()
    path = request.path
    if not path.is_resource:
        document = discovery_document(GARDEN_KINDS, path.segments, GARDEN_VERSION)
        if document is None:
            raise no_such_resource()
        return json_reply(document)
    kind = find_kind(GARDEN_KINDS, path.group or "", path.version or "", path.resource or "")
    if kind is None or (path.namespace is not None and not kind.namespaced):
        raise no_such_resource()
    if path.subresource is not None:
        if path.subresource not in kind.subresources or path.namespace is None or path.name is None:
            raise no_such_resource()
        return mint_kubeconfig(sim, request, path.namespace, path.name, path.subresource)
    if kind is SECRETS:
        return monitoring_secret(sim, request, path.namespace, path.name)
    world = sim.world
    store, render = _store_and_renderer(sim, kind)
    return read_objects(
        method=request.method,
        kind=kind,
        store=store,
        render=render,
        namespace=path.namespace,
        name=path.name,
        query=request.query,
        accept=request.accept,
        context=ListContext(
            world.garden_rv, world.garden_compacted_rv, sim.clock.time(), sim.settings.continue_ttl_seconds
        ),
        chunk_bytes=sim.settings.chunk_bytes,
    )


def monitoring_secret(sim: Simulator, request: ApiRequest, namespace: str | None, name: str | None) -> Reply:
    """GET one shoot's `<shoot>.monitoring` secret; the garden holds no other secret fleet-sim plays."""
    if request.method != "GET":
        raise method_not_allowed()
    if namespace is None or name is None:
        raise forbidden(request.principal.user, "list", "", "secrets", namespace)
    shoot = sim.world.shoots.get(namespace, name.removesuffix(".monitoring")) if name.endswith(".monitoring") else None
    if shoot is None:
        raise not_found("", "secrets", name)
    answer = render_secret(
        shoot,
        prometheus_url=sim.prometheus_url(shoot.key),
        plutono_url=f"{sim.base_url}/plutono/{shoot.key}",
        password=sim.monitoring.password(shoot),
    )
    return json_reply(answer)


def _store_and_renderer(sim: Simulator, kind: Kind) -> tuple[Store[Any], Callable[[Any], Json]]:
    world = sim.world
    if kind is NAMESPACES:

        def namespace(record: NamespaceRecord) -> Json:
            project = world.project_of_namespace(record.name)
            return render_garden_namespace(record, project, project.created if project else sim.clock.now())

        return world.garden_namespaces, namespace
    if kind is PROJECTS:
        return world.projects, render_project

    def shoot(record: ShootState) -> Json:
        return render_shoot(record, sim.shoot_url(record.key))

    return world.shoots, shoot


def _expiration_seconds(body: bytes, request_kind: str) -> int:
    if not body.strip():
        return DEFAULT_KUBECONFIG_SECONDS
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise bad_request(
            "the body of the request was in an unknown format - accepted media types include: application/json"
        ) from None
    if not isinstance(document, dict):
        raise bad_request(
            "the body of the request was in an unknown format - accepted media types include: application/json"
        )
    if document.get("kind") not in {None, request_kind}:
        raise bad_request(f"kind {document.get('kind')!r} does not match the subresource: expected {request_kind}")
    spec = document.get("spec") or {}
    seconds = spec.get("expirationSeconds", DEFAULT_KUBECONFIG_SECONDS) if isinstance(spec, dict) else None
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        raise bad_request(f"spec.expirationSeconds: expected an integer, got {seconds!r}")
    return seconds


def mint_kubeconfig(sim: Simulator, request: ApiRequest, namespace: str, name: str, subresource: str) -> Reply:
    if request.method != "POST":
        raise method_not_allowed()
    request_kind = KUBECONFIG_REQUEST_KINDS[subresource]
    seconds = _expiration_seconds(request.body, request_kind)
    shoot = sim.world.shoots.get(namespace, name)
    if shoot is None:
        raise not_found(GARDENER, "shoots", name)
    if seconds < MIN_KUBECONFIG_SECONDS:
        raise invalid(
            request_kind,
            AUTHENTICATION_GROUP,
            name,
            field="spec.expirationSeconds",
            value=seconds,
            detail="may not specify a duration less than 10 minutes",
        )
    seconds = min(seconds, MAX_KUBECONFIG_SECONDS)
    if not shoot.has_advertised_addresses:
        raise bad_request("no kube-apiserver advertised addresses in Shoot .status.advertisedAddresses")
    token_kind = TokenKind.ADMIN if subresource == "adminkubeconfig" else TokenKind.VIEWER
    expires = sim.clock.time() + seconds
    token = sim.tokens.mint(token_kind, shoot.key, shoot.uid, expires)
    config = kubeconfig(
        name=f"{shoot.key}-external",
        server=sim.shoot_url(shoot.key),
        ca_pem=sim.tls.ca_pem,
        token=token,
        user=f"{shoot.key}-{token_kind.value}",
    )
    answer = render_kubeconfig_request(
        request_kind,
        name,
        namespace,
        expiration_seconds=seconds,
        kubeconfig=to_yaml(config),
        expires=datetime.fromtimestamp(expires, UTC),
    )
    return json_reply(answer, 201)
