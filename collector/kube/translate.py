"""What the Kubernetes client and aiohttp raise, turned into the collector's KubeError.

collector/kube/client.py sends every request inside `translating(...)`; a failure leaves here as the
most specific KubeError (kube/errors.py), chained from the original, with the foreign message cut
short (a hostile server's text never reaches a log or `last_error` whole). Cancellation and our own
bugs pass through untouched. An HTTP status is raised from the client's own ApiException for it, so
the chain reads the same whichever way the status arrived.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import aiohttp
import orjson
from kubernetes.aio.client.exceptions import ApiException, OpenApiException

from collector.kube.errors import BadResponse, ConnectionFailed, KubeError, Timeout, status_error_class
from common.text import truncate


def status_error(status: int, reason: str, detail: bytes, what: str) -> KubeError:
    """The KubeError for an HTTP status, chained from the client's own ApiException for it."""
    message = reason
    try:
        parsed = orjson.loads(detail)
        if isinstance(parsed, dict) and parsed.get("message"):
            message = str(parsed["message"])
    except orjson.JSONDecodeError:
        if detail:
            message = detail.decode("utf-8", "replace")
    cls = status_error_class(status)
    error = cls(f"{what}: {status} {reason}: {truncate(message)}", status=status)
    error.__cause__ = ApiException(status=status, reason=reason)
    return error


@contextlib.contextmanager
def owning(response: aiohttp.ClientResponse) -> Iterator[None]:
    """A body read to its end gives the connection back for the next request (no new TLS handshake);
    anything else, a failure or a cancellation half-way, closes it."""
    try:
        yield
    except BaseException:
        response.close()
        raise
    response.release()


@contextlib.contextmanager
def translating(what: str, seconds: float, *, answered: bool = True) -> Iterator[None]:
    """Re-raise what the client or aiohttp raised as a KubeError (cancellation passes untouched)."""
    try:
        yield
    except KubeError:
        raise
    except Exception as e:
        error = translate(e, what, seconds, answered=answered)
        if error is None:
            raise
        raise error from e


def translate(e: Exception, what: str, seconds: float, *, answered: bool) -> KubeError | None:  # noqa: PLR0911
    """The KubeError for an exception of the client or aiohttp; None for anything else (a bug).

    `answered` says whether the response had begun: a connection that drops before it is a
    connection failure (a reset, a refused client certificate), after it a cut-off body.
    """
    if isinstance(e, TimeoutError):
        return Timeout(f"{what}: no complete answer within {seconds:g} s")
    if answered and isinstance(e, aiohttp.ClientPayloadError | aiohttp.ServerDisconnectedError):
        return BadResponse(f"{what}: the body was cut off ({truncate(str(e) or type(e).__name__, 120)})")
    if isinstance(e, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return ConnectionFailed(f"{what}: TLS failed ({truncate(str(e), 120)})")
    if isinstance(e, aiohttp.ClientConnectorError):
        return ConnectionFailed(f"{what}: cannot connect ({truncate(str(e), 120)})")
    if not answered and isinstance(e, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError):
        return ConnectionFailed(f"{what}: the connection closed before an answer ({truncate(str(e), 120)})")
    if isinstance(e, aiohttp.ClientOSError | OSError):
        return ConnectionFailed(f"{what}: the connection failed ({truncate(str(e), 120)})")
    if isinstance(e, aiohttp.ClientResponseError):
        return BadResponse(f"{what}: {truncate(str(e), 120)}")
    if isinstance(e, aiohttp.ClientError):
        return ConnectionFailed(f"{what}: {truncate(str(e) or type(e).__name__, 120)}")
    if isinstance(e, ApiException):
        return status_error_class(e.status or 0)(f"{what}: {e.status} {e.reason}", status=e.status)
    if isinstance(e, OpenApiException):
        return BadResponse(f"{what}: {truncate(str(e), 120)}")
    return None
