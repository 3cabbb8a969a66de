"""The collector's one door to Kubernetes API servers (the garden and every shoot).

    kube/garden.py         ─┐                      ┌─> kubernetes.aio ApiClient (auth, TLS, URLs)
    inventory/shoot.py     ─┼─> KubeClient ────────┤
    (the ledger's sources) ─┘   (this module)      └─> aiohttp response, streamed into liststream

Only this module imports `kubernetes` (enforced by import-linter). It uses the official client's
asyncio flavour, `kubernetes.aio` (bundled in v37), for transport only: requests are built with
`ApiClient.param_serialize` and sent with `call_api`, the body is read raw and parsed with orjson,
never through the typed models, which cost several times the CPU (docs/architecture.md, 'Lists come
from the watch cache and are parsed as they stream'). What leaves here is plain dicts and
TypedDicts (kube/objects.py), or a `KubeError` (kube/errors.py).

Why asyncio rather than the sync client in threads: cancelling an awaited aiohttp request (at
INVENTORY_TIMEOUT_SECONDS) closes its connection at once, so a hung shoot frees its worker, where a
thread blocked in urllib3 keeps its slot until its socket timeout; parsing holds the GIL either way
(docs/architecture.md, 'Asyncio with explicit timeouts and no hidden retries').

Timeouts and retries are explicit: every call passes `_request_timeout` (the whole request, body
included), the client's own retries are off, and the caller decides what to do about a failure.

Every answer is bounded in bytes (kube/limits.py) and checked before it is read (kube/guards.py):
bodies are asked for uncompressed and a compressed one is refused unread, lists stream through a
splitter that bounds each item, answers parsed whole are read up to a cap, and a streamed list
yields to the event loop after every chunk so one fast hostile server cannot starve the health port.
Only `https` servers are spoken to and no redirect is ever followed: the bearer token goes to the
server the credential names, nowhere else.

Each failure is raised `from` what the client raised (or, for an HTTP status, from the client's own
`ApiException` for it), with the server's message truncated; no caller ever sees `ApiException` or
an aiohttp error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from kubernetes.aio import config as kube_config
from kubernetes.aio.client import ApiClient, Configuration
from kubernetes.aio.client.exceptions import OpenApiException

from collector.kube import translate
from collector.kube.credential import Credential, credential_from_kubeconfig, pem_paths
from collector.kube.errors import BadResponse, ConnectionFailed, TooLarge
from collector.kube.guards import JSON, refuse_redirects, require_https, require_json, require_size, too_large
from collector.kube.limits import (
    CREDENTIAL_ANSWER_BYTES,
    DEFAULT_LIMITS,
    ETCD_OBJECT_BYTES,
    GARDEN_PAGE_VALUES,
    ONE_OBJECT_VALUES,
    ResponseLimits,
)
from collector.kube.liststream import DEFAULT_BATCH_BYTES, Items, ItemTooLarge, ListSplitter, MalformedList
from collector.kube.objects import ListMeta
from collector.kube.paging import PagedList, list_meta
from collector.kube.values import count_values, loads_bounded
from common.text import truncate

# Metadata-only lists (PartialObjectMetadataList: each object's metadata, nothing else), with plain JSON as
# the fallback a server that cannot send them answers with.
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

_ERROR_BODY_LIMIT = 64 << 10
_CHUNK = 1 << 20


def _configuration(server: str) -> Configuration:
    cfg = Configuration(host=server)
    _explicit(cfg)
    return cfg


def _explicit(cfg: Configuration) -> None:
    """What every client of the collector does differently from the official client's defaults."""
    # No hidden retries: one request is one attempt, and the caller owns every retry decision.
    cfg.retries = None
    cfg.client_go_retries = False
    # No proxy or netrc lookups from the environment: aiohttp would do both in a thread for every
    # request (two thread hops each, a large part of the CPU of a small shoot). A kubeconfig's
    # `proxy-url` still applies.
    # Bodies are read as they were sent (`Accept-Encoding: identity` is asked for, and a compressed
    # body is refused unread): aiohttp would otherwise inflate gzip on the event loop without bound.
    cfg.client_session_kwargs = {
        "trust_env": False,
        "auto_decompress": False,
        "middlewares": (refuse_redirects,),
    }


# Connections one shoot client opens: one, kept alive for all of a collection's requests. Every
# connection costs a TLS handshake on both sides, the largest part of the CPU a small cluster costs,
# and across clusters the workers hide the latency anyway. Requests take the connection in the
# order they are made (inventory/shoot.py makes the small ledger lists first, the big node and pod lists last).
SHOOT_CONNECTIONS = 1


def shoot_client(
    credential: Credential,
    *,
    timeout_seconds: float,
    name: str = "",
    connections: int = SHOOT_CONNECTIONS,
    limits: ResponseLimits = DEFAULT_LIMITS,
) -> KubeClient:
    """A client for one API server (a shoot's, or the garden's) from a credential held in memory.

    Raises ConnectionFailed for a server that is not https.
    """
    require_https(credential.server)
    cfg = _configuration(credential.server)
    cfg.connection_pool_maxsize = connections
    cfg.ca_cert_data = credential.ca_data
    cfg.verify_ssl = not credential.insecure
    cfg.tls_server_name = credential.tls_server_name
    if credential.token:
        cfg.api_key["BearerToken"] = f"Bearer {credential.token}"
    if credential.client_cert and credential.client_key:
        # The TLS context is built (and the files read) inside ApiClient(); after that they may go.
        with pem_paths(credential.client_cert, credential.client_key) as (cert_path, key_path):
            cfg.cert_file, cfg.key_file = cert_path, key_path
            api = ApiClient(cfg)
        cfg.cert_file = cfg.key_file = None
    else:
        api = ApiClient(cfg)
    return KubeClient(api, server=credential.server, timeout_seconds=timeout_seconds, name=name, limits=limits)


# Requests to the garden at once at most: every worker may be minting a credential.
GARDEN_CONNECTIONS = 100


async def garden_client(
    kubeconfig: Path, *, timeout_seconds: float, limits: ResponseLimits = DEFAULT_LIMITS
) -> KubeClient:
    """A client for the garden from a kubeconfig file.

    A kubeconfig with inline data (a token or a client certificate, what a service account or
    Gardener hands out) is used from memory, so the worker runs on a read-only root filesystem; the
    official loader, which writes inline certificates to temporary files, is only used for the rest
    (exec plugins, auth providers, files). Raises ConnectionFailed when the file cannot be loaded.
    """
    try:
        text = await asyncio.to_thread(kubeconfig.read_bytes)
    except OSError as e:
        raise ConnectionFailed(f"cannot read the garden kubeconfig {kubeconfig}: {e.strerror}") from e
    try:
        credential = credential_from_kubeconfig(text, expires=None)
    except BadResponse:
        return await _garden_client_from_loader(kubeconfig, timeout_seconds=timeout_seconds, limits=limits)
    return shoot_client(
        credential, timeout_seconds=timeout_seconds, name="garden", connections=GARDEN_CONNECTIONS, limits=limits
    )


async def _garden_client_from_loader(kubeconfig: Path, *, timeout_seconds: float, limits: ResponseLimits) -> KubeClient:
    cfg = _configuration("")
    try:
        await kube_config.load_kube_config(  # type: ignore[no-untyped-call]  # the client is partly unannotated
            config_file=str(kubeconfig), client_configuration=cfg, persist_config=False
        )
    except (OSError, OpenApiException, kube_config.ConfigException, yaml.YAMLError, KeyError, ValueError) as e:
        raise ConnectionFailed(f"cannot load the garden kubeconfig {kubeconfig}: {truncate(str(e))}") from e
    require_https(cfg.host)
    _explicit(cfg)
    return KubeClient(ApiClient(cfg), server=cfg.host, timeout_seconds=timeout_seconds, name="garden", limits=limits)


@dataclass
class KubeClient:
    """One API server; raw JSON in, dicts out. Close it (or use `async with`) to free its connections."""

    api: ApiClient
    server: str
    timeout_seconds: float
    name: str = ""
    limits: ResponseLimits = DEFAULT_LIMITS
    requests: int = field(default=0, init=False)
    """Requests sent so far (for summaries and benchmarks)."""
    bytes_read: int = field(default=0, init=False)
    """Body bytes of successful answers received so far (for benchmarks)."""

    async def __aenter__(self) -> KubeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.api.close()  # type: ignore[no-untyped-call]

    def _seconds(self, request_timeout_seconds: float | None) -> float:
        return float(request_timeout_seconds or self.timeout_seconds)

    async def get(
        self,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        accept: str = JSON,
        request_timeout_seconds: float | None = None,
    ) -> dict[str, Any]:
        """GET one object (at most one etcd object's bytes and ONE_OBJECT_VALUES values). Raises KubeError."""
        return await self._json(
            "GET",
            path,
            query=query,
            accept=accept,
            body=None,
            request_timeout_seconds=request_timeout_seconds,
            max_bytes=min(ETCD_OBJECT_BYTES, self.limits.max_answer_bytes),
            bound="one object's bound",
            max_values=ONE_OBJECT_VALUES,
        )

    async def post(
        self, path: str, body: Mapping[str, Any], *, request_timeout_seconds: float | None = None
    ) -> dict[str, Any]:
        """POST a JSON body, return the JSON answer (a kubeconfig request: one object). Raises KubeError."""
        return await self._json(
            "POST",
            path,
            query=None,
            accept=JSON,
            body=body,
            request_timeout_seconds=request_timeout_seconds,
            max_bytes=min(CREDENTIAL_ANSWER_BYTES, self.limits.max_answer_bytes),
            bound="one object's bound",
            max_values=ONE_OBJECT_VALUES,
        )

    async def stream_list(
        self,
        path: str,
        on_items: Callable[[Items], None],
        *,
        query: Mapping[str, str] | None = None,
        accept: str = JSON,
        request_timeout_seconds: float | None = None,
        batch_bytes: int = DEFAULT_BATCH_BYTES,
    ) -> ListMeta:
        """One list request, its items handed to `on_items` in bounded batches as the body streams in.

        Items handed over before a failure must be thrown away by the caller: a KubeError means the
        list as a whole did not arrive. Raises KubeError.
        """
        what = f"GET {path}"
        response = await self._send(
            "GET", path, query=query, accept=accept, body=None, request_timeout_seconds=request_timeout_seconds
        )
        limits = self.limits
        splitter = ListSplitter(on_items, batch_bytes=batch_bytes, max_item_bytes=limits.max_item_bytes)
        received = 0
        with translate.owning(response), translate.translating(what, self._seconds(request_timeout_seconds)):
            require_json(response, what)
            require_size(response, what, limits.max_list_bytes, "INVENTORY_MAX_LIST_MIB")
            async for chunk in response.content.iter_chunked(_CHUNK):
                received += len(chunk)
                self.bytes_read += len(chunk)
                if received > limits.max_list_bytes:
                    raise too_large(what, limits.max_list_bytes, "INVENTORY_MAX_LIST_MIB")
                try:
                    splitter.feed(chunk)
                except ItemTooLarge as e:
                    raise TooLarge(f"{what}: {e} ({e.bound})") from e
                # A server that sends as fast as the collector parses would otherwise keep the loop:
                # aiohttp hands out buffered chunks without suspending.
                await asyncio.sleep(0)
            try:
                rest = splitter.finish()
            except MalformedList as e:
                raise BadResponse(f"{what}: {e}") from e
            except ItemTooLarge as e:
                raise TooLarge(f"{what}: {e} ({e.bound})") from e
        return list_meta(rest, what)

    async def list_all(
        self,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        page_size: int = 500,
        accept: str = JSON,
        request_timeout_seconds: float | None = None,
    ) -> list[dict[str, Any]]:
        """Every item, read in pages of `page_size` with limit/continue (a consistent snapshot).

        Any failure of any page, including 410 Gone for an expired continue token, raises: a partial
        list is never returned. Each page is bounded in bytes and values, and the pages together in
        items, values (GARDENER_MAX_LIST_VALUES) and pages (kube/paging.py), so a chain of
        `continue` tokens that never ends is refused. Raises KubeError.
        """
        params = dict(query or {})
        params["limit"] = str(page_size)
        paged = PagedList(path, page_size, self.limits.max_list_values)
        while True:
            page, page_values = await self._page(path, params, accept, request_timeout_seconds)
            token = paged.add(page, page_values)
            if token is None:
                return paged.items
            params["continue"] = token

    async def _page(
        self, path: str, params: Mapping[str, str], accept: str, request_timeout_seconds: float | None
    ) -> tuple[dict[str, Any], int]:
        """One page of a paged list and the values it holds (counted for the list's total)."""
        counted: list[int] = []
        page = await self._json(
            "GET",
            path,
            query=params,
            accept=accept,
            body=None,
            request_timeout_seconds=request_timeout_seconds,
            max_values=GARDEN_PAGE_VALUES,
            counted=counted,
        )
        return page, counted[0]

    async def _json(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None,
        accept: str,
        body: Mapping[str, Any] | None,
        request_timeout_seconds: float | None,
        max_bytes: int | None = None,
        bound: str = "GARDENER_MAX_ANSWER_MIB",
        max_values: int,
        counted: list[int] | None = None,
    ) -> dict[str, Any]:
        """One answer parsed whole, bounded in bytes and in values; `counted` (when given) receives its
        values, counted whatever its size."""
        what = f"{method} {path}"
        limit = self.limits.max_answer_bytes if max_bytes is None else max_bytes
        response = await self._send(
            method, path, query=query, accept=accept, body=body, request_timeout_seconds=request_timeout_seconds
        )
        with translate.owning(response), translate.translating(what, self._seconds(request_timeout_seconds)):
            require_json(response, what)
            require_size(response, what, limit, bound)
            raw = bytearray()
            async for chunk in response.content.iter_chunked(_CHUNK):
                raw += chunk
                self.bytes_read += len(chunk)
                if len(raw) > limit:
                    raise too_large(what, limit, bound)
        values_bound = "a garden page's bound" if max_values == GARDEN_PAGE_VALUES else "one object's bound"
        count = None
        if counted is not None:
            count = count_values(raw)
            counted.append(count)
        parsed = loads_bounded(raw, max_values=max_values, what=what, bound=values_bound, count=count)
        if not isinstance(parsed, dict):
            raise BadResponse(f"{what}: the body is not a JSON object")
        return parsed

    async def _send(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None,
        accept: str,
        body: Mapping[str, Any] | None,
        request_timeout_seconds: float | None,
    ) -> aiohttp.ClientResponse:
        """Send one request; return the response once its headers arrived with a 2xx status."""
        what = f"{method} {path}"
        self.requests += 1
        with translate.translating(what, self._seconds(request_timeout_seconds), answered=False):
            serialized = await self.api.param_serialize(
                method=method,
                resource_path=path,
                query_params=list((query or {}).items()),
                header_params={"Accept": accept, "Content-Type": JSON, "Accept-Encoding": "identity"},
                body=dict(body) if body is not None else None,
                auth_settings=["BearerToken"],
            )
            rest = await self.api.call_api(*serialized, _request_timeout=self._seconds(request_timeout_seconds))
        response: aiohttp.ClientResponse = rest.response
        if 200 <= response.status < 300:
            return response
        try:
            with translate.translating(what, self._seconds(request_timeout_seconds)):
                detail = await response.content.read(_ERROR_BODY_LIMIT)
        finally:
            response.close()
        raise translate.status_error(response.status, response.reason or "", detail, what)
