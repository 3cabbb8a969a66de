"""The checks every answer passes before the collector reads it: scheme, redirects, type, encoding, size.

kube/client.py applies them: `require_https` before any request (a bearer token never travels in
cleartext), `refuse_redirects` as the session's middleware (no redirect is followed, to this origin
or another: the request's headers carry the credential), and `require_json` and `require_size` once
the headers arrived (a compressed body, or one announced over its bound, is refused unread).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiohttp

from collector.kube.errors import BadResponse, ConnectionFailed, TooLarge
from collector.kube.limits import describe_bytes
from common.text import truncate

JSON = "application/json"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def require_https(server: str) -> None:
    """Refuse a server that is not `https://`: a bearer token must never travel in cleartext."""
    if not server.lower().startswith("https://"):
        raise ConnectionFailed(f"the server {truncate(server, 80)!r} is not https; refusing to send it a credential")


async def refuse_redirects(
    request: aiohttp.ClientRequest,
    handler: Callable[[aiohttp.ClientRequest], Awaitable[aiohttp.ClientResponse]],
) -> aiohttp.ClientResponse:
    """No redirect is followed, to this origin or another: the request's headers carry the credential.

    The official client does not let its caller turn aiohttp's redirects off, so a session middleware
    (which sees every hop before aiohttp follows it) stops at the first one.
    """
    response = await handler(request)
    if response.status in _REDIRECTS:
        location = response.headers.get("Location", "")
        response.close()
        raise BadResponse(
            f"{request.method} {request.url.path}: {response.status} redirect to {truncate(location, 80)!r} refused"
        )
    return response


def require_json(response: aiohttp.ClientResponse, what: str) -> None:
    """Refuse a body that is not JSON, or that is compressed (identity was asked for: no inflating here)."""
    content_type = response.headers.get("Content-Type", "")
    if not content_type.startswith(JSON):
        raise BadResponse(f"{what}: expected JSON, got {truncate(content_type or 'no content type', 80)}")
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in {"", "identity"}:
        raise BadResponse(
            f"{what}: the body is compressed ({truncate(encoding, 40)}) though identity was asked for; refused unread"
        )


def require_size(response: aiohttp.ClientResponse, what: str, limit: int, variable: str) -> None:
    """Refuse before reading when the server announces a body over the bound."""
    if response.content_length is not None and response.content_length > limit:
        raise too_large(what, limit, variable)


def too_large(what: str, limit: int, variable: str) -> TooLarge:
    """The error of an answer over its bound; `variable` names the setting (or the fixed bound) it broke."""
    return TooLarge(f"{what}: response over {describe_bytes(limit)} ({variable}); not read further")
