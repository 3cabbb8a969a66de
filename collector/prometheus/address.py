"""Where a shoot's Prometheus may be: the `prometheus-url` annotation parsed strictly, its host under a policy.

The annotation is written in the garden, which a tenant cannot do, but the collector sends the
basic-auth pair there and stores what answers as the cluster's numbers, so it is read as hostile
input (docs/security.md): a wrong address must never get the pair, nor make another endpoint's
answer count as this cluster's.

Parsed strictly (`parse_address`): at most 2,048 characters, printable ASCII only (no whitespace,
no control characters: an internationalized host arrives as punycode), `https` only, no userinfo
(`user:pass@`), no query or fragment, a host, a port in range, and a path of plain segments (no
`.` or `..`, no percent escapes). Anything else is refused with the reason `address_refused`.

The host must then pass the policy (`AddressPolicy`):

- with PROMETHEUS_ALLOWED_DOMAINS set (the landscape's seed ingress domains), only a host under one
  of them (Gardener publishes each shoot's Prometheus as `p-<project>--<shoot>.<ingress domain>`);
- never a loopback, link-local, unspecified, multicast or reserved address, nor the database's
  host, whether the annotation names it or a DNS name resolves to it (`PolicyResolver` checks
  every address a name resolves to before aiohttp connects, so a name pointing at 127.0.0.1 or at
  the database fails like the literal would);
- loopback only with PROMETHEUS_ALLOW_LOOPBACK=true: the tests and the demo, whose Prometheus is
  fleet-sim on 127.0.0.1, opt in explicitly; a landscape never needs it. The opt-in lets a loopback
  literal (`https://127.0.0.1:…`) pass the domain rule too (fleet-sim has no name), never a name:
  `https://localhost:…` still has to be under an allowed domain.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from collector.kube.errors import BadResponse
from common.text import truncate

MAX_URL_CHARS = 2048
_PRINTABLE = re.compile(r"^[\x21-\x7e]+$")
_SEGMENT = re.compile(r"^[A-Za-z0-9_~!$&'()*+,;=:@-][A-Za-z0-9._~!$&'()*+,;=:@-]*$")
_LOCALHOST = frozenset({"localhost", "localhost.localdomain"})
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressRefused(BadResponse):
    """The monitoring secret names an address the collector will not send the credentials to."""

    reason = "address_refused"


@dataclass(frozen=True, slots=True)
class Address:
    """A parsed, allowed `prometheus-url`: https, a host, a port, a plain path."""

    host: str
    port: int
    path: str

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == 443 else f":{self.port}"
        return f"https://{host}{port}{self.path}"


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Which hosts a Prometheus may be at (PROMETHEUS_ALLOWED_DOMAINS, PROMETHEUS_ALLOW_LOOPBACK, the database)."""

    domains: tuple[str, ...] = ()
    """Lower-case domains a host must be under (or equal); empty: any host not refused below."""
    allow_loopback: bool = False
    """Loopback allowed (tests and the demo only)."""
    database: frozenset[tuple[str, int]] = field(default_factory=frozenset)
    """The database's (host, port) pairs: its host is never allowed; on loopback with `allow_loopback`,
    only its port is refused (the tests run everything on 127.0.0.1)."""

    def is_database(self, host: str, port: int) -> bool:
        """Whether (host, port) reaches the database as this policy sees it."""
        for db_host, db_port in self.database:
            if host != db_host:
                continue
            literal = _ip(host)
            loopback = host in _LOCALHOST or (literal is not None and literal.is_loopback)
            if port == db_port or not (loopback and self.allow_loopback):
                return True
        return False

    def check(self, url: object, what: str) -> Address:
        """The address `url` names, parsed strictly and allowed by the policy. Raises AddressRefused."""
        address = parse_address(url, what)
        host = address.host
        shown = truncate(address.url, 120)
        if self.is_database(host, address.port):
            raise AddressRefused(f"{what}: prometheus-url {shown!r} is the database's address; refused")
        literal = _ip(host)
        if literal is not None:
            refusal = self.refusal(literal)
            if refusal:
                raise AddressRefused(f"{what}: prometheus-url {shown!r} is {refusal}; refused")
        elif host in _LOCALHOST and not self.allow_loopback:
            raise AddressRefused(f"{what}: prometheus-url {shown!r} is a loopback address; refused")
        loopback_literal = literal is not None and literal.is_loopback and self.allow_loopback
        if self.domains and not loopback_literal and not any(host == d or host.endswith("." + d) for d in self.domains):
            raise AddressRefused(
                f"{what}: prometheus-url {shown!r} is not under PROMETHEUS_ALLOWED_DOMAINS"
                f" ({truncate(', '.join(self.domains), 120)}); refused"
            )
        return address

    def refusal(self, address: IpAddress) -> str:
        """Why the collector must not connect to `address` ('' when it may)."""
        mapped = getattr(address, "ipv4_mapped", None)
        if mapped is not None:  # ::ffff:a.b.c.d reaches a.b.c.d
            return self.refusal(mapped)
        if address.is_loopback:
            return "" if self.allow_loopback else "a loopback address"
        if address.is_link_local:
            return "a link-local address"
        if address.is_unspecified or address.is_multicast or address.is_reserved:
            return "not a unicast address"
        return ""


def parse_address(url: object, what: str) -> Address:
    """`prometheus-url` parsed strictly (no policy yet). Raises AddressRefused."""
    if not isinstance(url, str) or not url:
        raise AddressRefused(f"{what}: prometheus-url is not a string")
    if len(url) > MAX_URL_CHARS:
        raise AddressRefused(f"{what}: prometheus-url is longer than {MAX_URL_CHARS} characters")
    if not _PRINTABLE.match(url):
        raise AddressRefused(
            f"{what}: prometheus-url {truncate(ascii(url), 120)} holds whitespace, control or non-ASCII characters"
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise AddressRefused(f"{what}: prometheus-url {truncate(url, 120)!r} is not a URL ({e})") from None
    shown = truncate(_without_userinfo(parts), 120)
    if parts.scheme.lower() != "https":
        raise AddressRefused(f"{what}: prometheus-url {shown!r} is not https; refused")
    if "@" in parts.netloc:
        raise AddressRefused(f"{what}: prometheus-url {shown!r} carries userinfo (user:password@); refused")
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise AddressRefused(f"{what}: prometheus-url {shown!r} has a query or a fragment; refused")
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        raise AddressRefused(f"{what}: prometheus-url {shown!r} names no host")
    if port == 0:
        raise AddressRefused(f"{what}: prometheus-url {shown!r} has port 0")
    path = parts.path.rstrip("/")
    for segment in path.split("/")[1:]:
        if not _SEGMENT.match(segment):
            raise AddressRefused(f"{what}: prometheus-url {shown!r} has a path segment that is not plain")
    return Address(host, port or 443, path)


def _without_userinfo(parts: SplitResult) -> str:
    netloc = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=netloc).geturl()


def _ip(host: str) -> IpAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


class PolicyResolver(AbstractResolver):
    """aiohttp's resolver, refusing every address the policy does not allow (a name pointing at loopback,
    link-local or the database). The database's host names are resolved once, on first use."""

    def __init__(self, policy: AddressPolicy) -> None:
        self._policy = policy
        self._resolver: AbstractResolver | None = None  # made on first use, inside the event loop
        self._database: frozenset[tuple[str, int]] | None = None

    @property
    def _inner(self) -> AbstractResolver:
        if self._resolver is None:
            self._resolver = DefaultResolver()
        return self._resolver

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        database = await self._database_addresses()
        found = await self._inner.resolve(host, port, family)
        allowed: list[ResolveResult] = []
        refusals: list[str] = []
        for result in found:
            address = _ip(result["host"])
            reaches = AddressPolicy(allow_loopback=self._policy.allow_loopback, database=database)
            why = "the database's address" if reaches.is_database(result["host"], result["port"] or port) else ""
            if not why and address is not None:
                why = self._policy.refusal(address)
            if why:
                refusals.append(f"{result['host']} ({why})")
            else:
                allowed.append(result)
        if not allowed:
            raise OSError(f"{host} resolves only to refused addresses: {truncate(', '.join(refusals), 160)}")
        return allowed

    async def _database_addresses(self) -> frozenset[tuple[str, int]]:
        if self._database is None:
            addresses: set[tuple[str, int]] = set()
            for name, db_port in self._policy.database:
                if _ip(name) is not None:
                    addresses.add((name, db_port))
                    continue
                try:
                    found = await self._inner.resolve(name, 0, socket.AF_UNSPEC)
                except OSError:
                    continue  # a name that does not resolve here cannot be connected to either
                addresses.update((r["host"], db_port) for r in found)
            self._database = frozenset(addresses)
        return self._database

    async def close(self) -> None:
        if self._resolver is not None:
            await self._resolver.close()
