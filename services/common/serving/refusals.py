"""The first layer of the HTTP port: requests no later layer could answer sensibly are refused here.

Two kinds of request break inside the Connect library, before the request stack runs, so they were
answered 500 (or 200 with a gRPC error) with no metric:

- a header value that is not UTF-8 (any header, no credential needed): refused with 400;
- gRPC framing (`content-type: application/grpc` or `application/grpc+proto`, not gRPC-Web) over
  HTTP/1.1: refused with 415, since gRPC needs HTTP/2 and has its own port.

Each refusal is one log line at INFO and one increment of `fleet_rpc_requests`, labelled with the
procedure when the path names one of the service's methods and "unknown" otherwise, so the labels
stay bounded whatever paths a client sends. The body is a Connect error (JSON), which a Connect
client reads as such and a person can read too.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from common.text import truncate
from services.common.metrics import RPC_REQUESTS

logger = logging.getLogger(__name__)

UNKNOWN = "unknown"
# The protocol label of a refusal: what the request claimed to speak.
PROTOCOL_CONNECT = "connect"
PROTOCOL_GRPC_WEB = "grpc-web"
PROTOCOL_GRPC_HTTP1 = "grpc-http1"


@dataclass(frozen=True)
class Refusal:
    status: int
    code: str
    """The Connect code name, also the `code` label of the metric."""
    message: str


NOT_UTF8 = Refusal(400, "invalid_argument", "a header value is not UTF-8")
GRPC_OVER_HTTP1 = Refusal(415, "unimplemented", "gRPC needs HTTP/2: call the gRPC port, or Connect or gRPC-Web here")


def _is_grpc_over_http1(content_type: bytes) -> bool:
    """gRPC's own content types (`application/grpc`, `application/grpc+proto`, `;` parameters), not gRPC-Web."""
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/grpc" or (media.startswith(b"application/grpc+"))


class RefusalLayer:
    """ASGI middleware in front of everything on the HTTP port (CORS, the Connect app, operations)."""

    def __init__(self, app: ASGIApp, *, service_name: str, mount_path: str, methods: Collection[str]) -> None:
        self._app = app
        self._service_name = service_name
        self._prefix = mount_path.rstrip("/") + "/"
        self._methods = frozenset(methods)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        content_type = b""
        for name, value in headers:
            try:
                value.decode("utf-8")
            except UnicodeDecodeError:
                await self._refuse(scope, send, NOT_UTF8, name)
                return
            if name == b"content-type":
                content_type = value
        if _is_grpc_over_http1(content_type):
            await self._refuse(scope, send, GRPC_OVER_HTTP1, b"content-type")
            return
        await self._app(scope, receive, send)

    def _procedure(self, path: str) -> tuple[str, str]:
        """(service, method) labels: the real ones for a known method of this service, else "unknown"."""
        if path.startswith(self._prefix) and path[len(self._prefix) :] in self._methods:
            return self._service_name, path[len(self._prefix) :]
        return UNKNOWN, UNKNOWN

    async def _refuse(self, scope: Scope, send: Send, refusal: Refusal, header: bytes) -> None:
        status, code, message = refusal.status, refusal.code, refusal.message
        path = str(scope.get("path", ""))
        service, method = self._procedure(path)
        content_type = dict(scope["headers"]).get(b"content-type", b"")
        if refusal is GRPC_OVER_HTTP1:
            protocol = PROTOCOL_GRPC_HTTP1
        elif content_type.startswith(b"application/grpc-web"):
            protocol = PROTOCOL_GRPC_WEB
        else:
            protocol = PROTOCOL_CONNECT
        RPC_REQUESTS.labels(service, method, protocol, code).inc()
        client = scope.get("client")
        logger.info(
            "refused %s: %s",
            code,
            message,
            extra={
                "procedure": f"/{service}/{method}",
                "path": truncate(path),
                "protocol": protocol,
                "code": code,
                "http_status": status,
                "header": truncate(header.decode("latin-1"), 64),
                "peer": f"{client[0]}:{client[1]}" if client else None,
            },
        )
        body = orjson.dumps({"code": code, "message": message})
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
