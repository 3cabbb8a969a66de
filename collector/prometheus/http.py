"""The one door to a shoot's Prometheus: instant queries over HTTPS with basic auth, bounded like every answer.

What the API-server source guarantees holds here too, with the same modules: only `https://` is
spoken to (the basic-auth password never travels in cleartext), no redirect is followed
(`collector.kube.guards.refuse_redirects`), bodies are asked for uncompressed and a compressed one is
refused unread, an answer is read up to `max_answer_bytes` (GARDENER_MAX_ANSWER_MIB: an instant
vector is parsed whole) and an announced larger one is refused before reading, an answer holding
more than PROMETHEUS_ANSWER_VALUES JSON values is refused unparsed (kube/values.py), every request has
its own timeout and there are no retries. One connection per collection, kept alive for its
queries; the TLS context is the reader's, shared by every shoot (all Prometheus endpoints are
verified against the same trust store, unlike shoot API servers with a CA each).

Failures leave as the KubeError tree (`collector.kube.errors`), so the loop records and counts them
like the API server's; the message names the Prometheus.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import orjson
from aiohttp.abc import AbstractResolver

from collector.kube.errors import (
    BadResponse,
    ConnectionFailed,
    KubeError,
    Timeout,
    status_error_class,
)
from collector.kube.guards import JSON, refuse_redirects, require_https, require_json, require_size, too_large
from collector.kube.limits import DEFAULT_LIMITS, PROMETHEUS_ANSWER_VALUES, ResponseLimits
from collector.kube.values import loads_bounded
from collector.prometheus.target import MonitoringTarget
from common.text import truncate

_CHUNK = 1 << 16
# A configuration answer is one object holding the YAML as one string.
CONFIG_ANSWER_VALUES = 1_000
_ERROR_BODY_LIMIT = 64 << 10


def tls_context(ca_file: Path | None) -> ssl.SSLContext:
    """The context every Prometheus is verified with: PROMETHEUS_CA_FILE's CAs (development), else the system's."""
    if ca_file is None:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=str(ca_file))


@dataclass
class PrometheusClient:
    """Queries of one shoot's Prometheus. Close it (or use `async with`) to free its connection."""

    target: MonitoringTarget
    timeout_seconds: float
    context: ssl.SSLContext
    limits: ResponseLimits = DEFAULT_LIMITS
    resolver: AbstractResolver | None = None
    """Resolves the host under the address policy (address.PolicyResolver), shared by the reader's clients."""
    requests: int = field(default=0, init=False)
    bytes_read: int = field(default=0, init=False)
    _session: aiohttp.ClientSession | None = field(default=None, init=False, repr=False)

    async def __aenter__(self) -> PrometheusClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=1, ssl=self.context, resolver=self.resolver),
                headers={"Authorization": aiohttp.encode_basic_auth(self.target.username, self.target.password)},
                # As for the shoot clients: no proxy or netrc lookups, no inflating, no redirects.
                trust_env=False,
                auto_decompress=False,
                middlewares=(refuse_redirects,),
                timeout=aiohttp.ClientTimeout(total=None),
            )
        return self._session

    async def query(self, expression: str, *, name: str, at: float | None = None) -> dict[str, object]:
        """GET /api/v1/query for one instant query, evaluated at `at` (Unix seconds; None: the Prometheus's
        now); the answer's JSON object. Raises KubeError."""
        params = {"query": expression} if at is None else {"query": expression, "time": f"{at:.3f}"}
        what = f"Prometheus {truncate(self.target.url, 80)} query {name}"
        return await self._get(
            self.target.query_url, params, what, PROMETHEUS_ANSWER_VALUES, "an instant query's bound"
        )

    async def configuration(self) -> dict[str, object]:
        """GET /api/v1/status/config: the Prometheus's configuration (YAML in `data.yaml`). Raises KubeError."""
        what = f"Prometheus {truncate(self.target.url, 80)} configuration"
        return await self._get(self.target.config_url, {}, what, CONFIG_ANSWER_VALUES, "a configuration's bound")

    async def _get(self, url: str, params: dict[str, str], what: str, max_values: int, bound: str) -> dict[str, object]:
        require_https(url)
        self.requests += 1
        limit = self.limits.max_answer_bytes
        try:
            async with asyncio.timeout(self.timeout_seconds):
                async with self._open().get(
                    url, params=params, headers={"Accept": JSON, "Accept-Encoding": "identity"}
                ) as response:
                    if response.status != 200:
                        detail = await response.content.read(_ERROR_BODY_LIMIT)
                        self.bytes_read += len(detail)
                        raise _status_error(response.status, response.reason or "", detail, what)
                    require_json(response, what)
                    require_size(response, what, limit, "GARDENER_MAX_ANSWER_MIB")
                    raw = bytearray()
                    async for chunk in response.content.iter_chunked(_CHUNK):
                        raw += chunk
                        self.bytes_read += len(chunk)
                        if len(raw) > limit:
                            raise too_large(what, limit, "GARDENER_MAX_ANSWER_MIB")
                        await asyncio.sleep(0)  # a fast sender must not keep the event loop
        except KubeError:
            raise
        except TimeoutError as e:
            raise Timeout(f"{what}: no complete answer within {self.timeout_seconds:g} s") from e
        except aiohttp.ClientPayloadError as e:
            raise BadResponse(f"{what}: the body was cut off ({truncate(str(e) or type(e).__name__, 120)})") from e
        except (aiohttp.ClientConnectorCertificateError, aiohttp.ClientSSLError) as e:
            raise ConnectionFailed(f"{what}: TLS failed ({truncate(str(e), 120)})") from e
        except aiohttp.ClientResponseError as e:
            raise BadResponse(f"{what}: {truncate(str(e), 120)}") from e
        except (aiohttp.ClientError, OSError) as e:
            raise ConnectionFailed(
                f"{what}: the connection failed ({truncate(str(e) or type(e).__name__, 120)})"
            ) from e
        except ValueError as e:  # aiohttp refusing a URL or header it cannot send: never `internal`
            raise BadResponse(f"{what}: {truncate(str(e), 120)}") from e
        parsed = loads_bounded(raw, max_values=max_values, what=what, bound=bound)
        if not isinstance(parsed, dict):
            raise BadResponse(f"{what}: the body is not a JSON object")
        return parsed


def _status_error(status: int, reason: str, detail: bytes, what: str) -> KubeError:
    """A status that is no success; Prometheus's own errors carry `error`, an ingress's are HTML or text."""
    message = reason
    try:
        parsed = orjson.loads(detail)
        if isinstance(parsed, dict) and parsed.get("error"):
            message = str(parsed["error"])
    except orjson.JSONDecodeError:
        pass
    return status_error_class(status)(f"{what}: {status} {reason}: {truncate(message)}", status=status)
