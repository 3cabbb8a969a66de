"""The HTTP port of an API: its Connect app under the service path behind CORS, plus /livez, /readyz, /metrics."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp

from common.health import Readiness, operations_routes

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
    readiness: Readiness,
    *,
    origins: Sequence[str],
    allow_credentials: bool,
    extra_request_headers: Sequence[str] = (),
) -> Starlette:
    """The HTTP port: the Connect app under its service path behind CORS, plus the operations routes."""
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
    return Starlette(routes=routes, middleware=[cors])
