"""The HTTP port of an API: its Connect app under the service path behind CORS, plus /livez, /readyz, /metrics."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp

from common.health import ReadinessProbe, operations_routes
from services.common.serving.refusals import RefusalLayer

# The headers a browser may send to a Connect endpoint (Connect protocol plus our own).
CONNECT_REQUEST_HEADERS = (
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "x-user-agent",
    "x-request-id",
)
CONNECT_EXPOSED_HEADERS = ("grpc-status", "grpc-message", "grpc-status-details-bin", "x-request-id", "cache-control")


def http_app(
    connect_app: ASGIApp,
    mount_path: str,
    readiness: ReadinessProbe,
    *,
    origins: Sequence[str],
    allow_credentials: bool,
    extra_request_headers: Sequence[str] = (),
    methods: Collection[str] = (),
) -> Starlette:
    """The HTTP port: the Connect app under its service path behind CORS, plus the operations routes.

    `RefusalLayer` comes first: it refuses what would break inside the Connect library (non-UTF-8
    headers, gRPC over HTTP/1.1), labelling its metrics with `methods` (the service's method names).
    """
    refusals = Middleware(
        RefusalLayer, service_name=mount_path.strip("/"), mount_path=mount_path, methods=tuple(methods)
    )
    cors = Middleware(
        CORSMiddleware,
        allow_origins=list(origins),
        allow_methods=["GET", "POST"],
        allow_headers=[*CONNECT_REQUEST_HEADERS, *extra_request_headers],
        expose_headers=list(CONNECT_EXPOSED_HEADERS),
        allow_credentials=allow_credentials,
        max_age=7200,
    )
    routes: list[BaseRoute] = [*operations_routes(readiness), Mount(mount_path, app=connect_app)]
    return Starlette(routes=routes, middleware=[refusals, cors])
