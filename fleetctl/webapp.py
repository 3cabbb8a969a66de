"""Serving the /platform pages: the console's public page and DCIM's staff section, each on its own origin.

    browser ──> console_app(platform_api_url) ──> web/console + web/common + /config.js
       │                                             (static files, no build step)
       └──────> platform-public-api / platform-admin-api   (Connect over fetch, CORS from the page's origin)

The pages are plain files under `web/`. What differs per environment is only where the APIs are, so
each app answers `/config.js` itself: `window.FLEET_CONFIG = {platformApiUrl, adminApiUrl}`. An empty
`platformApiUrl` is the console's convention for "this environment runs no platform-public-api"
(as the requirements allow): the page then says the overview is unavailable and calls nothing.

Each page is served with a Content-Security-Policy that allows scripts and styles from its own origin
only and network calls to its own origin and its API's, so even a string from the API that slipped past
the pages' text-only rendering could not run or send data elsewhere.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from common.health import HttpServer, bind_tcp

logger = logging.getLogger(__name__)

WEB_ROOT = Path(__file__).resolve().parents[1] / "web"
PAGE = "platform.html"


class PageConfigError(ValueError):
    """An API URL given to a page app cannot be used by a browser."""


def api_url(name: str, value: str) -> str:
    """`value` checked as a browser-usable API base URL: empty, a same-origin path, or http(s)://host[/path].

    Raises `PageConfigError` for anything else (another scheme, a query or fragment, no host).
    """
    url = value.strip()
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.query or parts.fragment:
        raise PageConfigError(f"{name}={value!r}: a base URL takes no query or fragment")
    if url.startswith("/") and not url.startswith("//"):
        return url.rstrip("/")
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise PageConfigError(f"{name}={value!r}: expected http(s)://host[:port][/path], a /path, or empty")
    return url.rstrip("/")


def _origin(url: str) -> str | None:
    """The origin of an absolute URL (for CSP `connect-src`); None for a same-origin path or empty."""
    parts = urlsplit(url)
    if not parts.scheme:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def config_script(platform_api_url: str = "", admin_api_url: str = "", gardener_dashboard_url: str = "") -> str:
    """The text of /config.js. JSON-encoded, with `<` escaped, so no value can end the script early."""
    config = {"platformApiUrl": platform_api_url, "adminApiUrl": admin_api_url}
    if gardener_dashboard_url:
        config["gardenerDashboardUrl"] = gardener_dashboard_url
    encoded = json.dumps(config, ensure_ascii=True).replace("<", "\\u003c")
    return f"window.FLEET_CONFIG = Object.freeze({encoded});\n"


def content_security_policy(api_origin: str | None) -> str:
    connect = "'self'" if api_origin is None else f"'self' {api_origin}"
    return "; ".join(
        (
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            f"connect-src {connect}",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        )
    )


class PageHeaders:
    """Adds the security headers and a revalidate-always cache policy to every response of a page app.

    `no-cache` still lets the browser keep the files, but it asks (ETag) before using them, so a
    changed page or a changed /config.js is seen on the next load.
    """

    def __init__(self, app: ASGIApp, api_origin: str | None) -> None:
        self.app = app
        self.headers: list[tuple[bytes, bytes]] = [
            (b"content-security-policy", content_security_policy(api_origin).encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"cache-control", b"no-cache"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in self.headers}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message["headers"] = kept + self.headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _pages_app(page_dir: Path, common_dir: Path, script: str, api_origin: str | None) -> ASGIApp:
    for directory in (page_dir, common_dir):
        if not (directory / ".").is_dir():
            raise PageConfigError(f"{directory}: the page files are missing (is this a full checkout?)")

    async def config_js(_: Request) -> Response:
        return Response(script, media_type="text/javascript")

    async def page(_: Request) -> Response:
        return FileResponse(page_dir / PAGE, media_type="text/html")

    async def home(_: Request) -> Response:
        return RedirectResponse("/platform", status_code=307)

    routes: list[BaseRoute] = [
        Route("/config.js", config_js),
        Route("/platform", page),
        Route("/", home),
        Mount("/common", StaticFiles(directory=common_dir)),
        Mount("/", StaticFiles(directory=page_dir)),
    ]
    return PageHeaders(Starlette(routes=routes), api_origin)


def console_app(platform_api_url: str, *, web_root: Path = WEB_ROOT) -> ASGIApp:
    """The console's public /platform page; empty `platform_api_url` makes it say the overview is unavailable."""
    url = api_url("platformApiUrl", platform_api_url)
    return _pages_app(web_root / "console", web_root / "common", config_script(platform_api_url=url), _origin(url))


def dcim_app(admin_api_url: str, *, gardener_dashboard_url: str = "", web_root: Path = WEB_ROOT) -> ASGIApp:
    """DCIM's staff /platform section, calling platform-admin-api at `admin_api_url`.

    With `gardener_dashboard_url` (the Gardener dashboard's base URL) shoot names link to the shoot's
    page there (`<url>/namespace/<namespace>/shoots/<name>`); without it they are shown as text.
    """
    url = api_url("adminApiUrl", admin_api_url)
    dashboard = api_url("gardenerDashboardUrl", gardener_dashboard_url)
    if dashboard.startswith("/"):
        raise PageConfigError(f"gardenerDashboardUrl={gardener_dashboard_url!r}: expected http(s)://host[:port][/path]")
    script = config_script(admin_api_url=url, gardener_dashboard_url=dashboard)
    return _pages_app(web_root / "dcim", web_root / "common", script, _origin(url))


def bind_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A TCP socket bound to `host:port` (port 0: a free one), for `serve_pages`.

    Binding before building the app lets a caller learn the page's origin first, e.g. to allow it in
    an API's CORS settings and then hand the API's URL to the page.
    """
    return bind_tcp(host, port)


def socket_url(sock: socket.socket) -> str:
    """The http:// base URL a bound socket will serve at."""
    host, port = sock.getsockname()[:2]
    return f"http://{host}:{port}"


@contextlib.asynccontextmanager
async def serve_pages(
    app: ASGIApp, *, sock: socket.socket | None = None, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[str]:
    """Serve `app` in the running event loop until the block ends; yields its base URL.

    Uses `sock` when given (see `bind_socket`), else binds `host:port`. The socket is closed
    afterwards. Raises whatever stopped uvicorn if it could not start.
    """
    server = HttpServer(app, sock or bind_socket(host, port), name="page", graceful_seconds=2)
    await server.start()
    try:
        logger.info("serving pages", extra={"url": server.url})
        yield server.url
    finally:
        await server.stop()
