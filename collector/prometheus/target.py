"""A shoot's Prometheus as its monitoring secret describes it: the address and the basic-auth pair.

The secret `<shoot>.monitoring` in the shoot's garden project namespace carries the annotation
`prometheus-url` (the standard Prometheus HTTP API) and the data keys `username` and `password`.
Parsed strictly: the address as `address.py` says (https only, no userinfo, no whitespace or
control characters, a host the policy allows), the data must be base64 of UTF-8 text, and a
username cannot hold a colon (basic auth could not carry it). A secret without the annotation or
the keys means the shoot has no monitoring to read: `MonitoringUnavailable`.

The secret must be the shoot's: Gardener gives it one controller owner reference, to the Shoot,
carrying the Shoot's uid. When the uid of the shoot read is known, a secret without that owner is
refused (`WrongPrometheus`): a same-named secret is not enough.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from collector.kube.errors import BadResponse, NotFound
from collector.prometheus.address import AddressPolicy

PROMETHEUS_URL_ANNOTATION = "prometheus-url"
USERNAME_KEY = "username"
PASSWORD_KEY = "password"  # noqa: S105  # the data key, not a password
# Bounds of what is taken from a secret: a password is short.
MAX_CREDENTIAL_CHARS = 1024


class MonitoringUnavailable(NotFound):
    """The shoot has no monitoring to read: no secret, or no address or credentials in it."""

    reason = "monitoring_unavailable"


class WrongPrometheus(BadResponse):
    """The secret or the Prometheus is not the shoot's: no owner reference to it, or other external labels."""

    reason = "wrong_prometheus"


def monitoring_secret_name(shoot_name: str) -> str:
    """The name Gardener gives a shoot's monitoring secret in its garden project namespace."""
    return f"{shoot_name}.monitoring"


@dataclass(frozen=True, slots=True)
class MonitoringTarget:
    """Where one shoot's Prometheus answers and how to log in (the password is never printed)."""

    url: str
    username: str
    password: str = field(repr=False)

    @property
    def query_url(self) -> str:
        return self.url.rstrip("/") + "/api/v1/query"

    @property
    def config_url(self) -> str:
        return self.url.rstrip("/") + "/api/v1/status/config"


def target_from_secret(
    secret: Mapping[str, Any], *, what: str, policy: AddressPolicy, shoot_uid: str = ""
) -> MonitoringTarget:
    """The target a monitoring secret names, when the policy allows its address and (with `shoot_uid`)
    the shoot owns it. Raises MonitoringUnavailable, AddressRefused, WrongPrometheus or BadResponse."""
    meta = secret.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    url = annotations.get(PROMETHEUS_URL_ANNOTATION) if isinstance(annotations, Mapping) else None
    if url is None:
        raise MonitoringUnavailable(f"{what}: no {PROMETHEUS_URL_ANNOTATION} annotation; the shoot has no monitoring")
    address = policy.check(url, what)
    if shoot_uid and not _owned_by(meta, shoot_uid):
        raise WrongPrometheus(
            f"{what}: no controller owner reference to the Shoot (uid {shoot_uid}); not the shoot's monitoring secret"
        )
    data = secret.get("data")
    if not isinstance(data, Mapping) or USERNAME_KEY not in data or PASSWORD_KEY not in data:
        raise MonitoringUnavailable(f"{what}: no {USERNAME_KEY} and {PASSWORD_KEY} in its data")
    username = _decoded(data[USERNAME_KEY], what, USERNAME_KEY)
    password = _decoded(data[PASSWORD_KEY], what, PASSWORD_KEY)
    if ":" in username or not username:
        raise BadResponse(f"{what}: the {USERNAME_KEY} is empty or holds a colon; basic auth cannot carry it")
    return MonitoringTarget(address.url, username, password)


def _owned_by(meta: object, uid: str) -> bool:
    owners = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    if not isinstance(owners, list):
        return False
    return any(
        isinstance(o, Mapping) and o.get("kind") == "Shoot" and o.get("controller") is True and o.get("uid") == uid
        for o in owners
    )


def _decoded(value: object, what: str, key: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_CREDENTIAL_CHARS * 2:
        raise BadResponse(f"{what}: data.{key} is not a short base64 string")
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise BadResponse(f"{what}: data.{key} is not base64 of UTF-8 text") from None
