"""How talking to a Kubernetes API server can fail: the KubeError tree every caller sees.

collector/kube/client.py (the only module that imports the `kubernetes` client) turns whatever the
client or aiohttp raised into one of these; no caller ever sees the client's own exceptions. They
live apart from the client so that modules which only look at errors (the ledger, tests) do not load
it.

    KubeError                  anything that went wrong talking to an API server
     ├── Unauthorized          401: the credential is not (or no longer) accepted
     ├── Forbidden             403: the credential may not do this
     ├── NotFound              404: no such object, or the kind is not installed
     ├── Gone                  410: a continue token or resource version expired
     ├── ServerError           5xx and any other unexpected status
     ├── Timeout               no complete answer within the request's timeout
     ├── BadResponse           a truncated, malformed or non-JSON body, a redirect, a compressed body
     ├── TooLarge              an answer over one of the byte bounds (kube/limits.py)
     └── ConnectionFailed      no connection (refused, reset, DNS, TLS)
"""

from __future__ import annotations

from typing import ClassVar


class KubeError(Exception):
    """Talking to a Kubernetes API server failed; the message says what and where, briefly."""

    reason: ClassVar[str] = "error"
    """A short stable label for metrics and summaries."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Unauthorized(KubeError):
    reason = "unauthorized"


class Forbidden(KubeError):
    reason = "forbidden"


class NotFound(KubeError):
    reason = "not_found"


class Gone(KubeError):
    reason = "gone"


class ServerError(KubeError):
    reason = "server_error"


class Timeout(KubeError):
    reason = "timeout"


class BadResponse(KubeError):
    reason = "bad_response"


class TooLarge(KubeError):
    """An answer broke one of the byte bounds; it was not read any further."""

    reason = "too_large"


class ConnectionFailed(KubeError):
    reason = "connection_failed"


_BY_STATUS: dict[int, type[KubeError]] = {401: Unauthorized, 403: Forbidden, 404: NotFound, 410: Gone}


def status_error_class(status: int) -> type[KubeError]:
    """The KubeError for an HTTP status that is no success."""
    return _BY_STATUS.get(status, ServerError)
