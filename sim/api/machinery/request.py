"""One API request as the API modules see it: parsed path, query, Accept header, credential, body."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sim.api.credentials.tokens import Principal
from sim.api.machinery.paths import ApiPath

HEALTH_PATHS = frozenset({("healthz",), ("livez",), ("readyz",)})


@dataclass(frozen=True, slots=True)
class ApiRequest:
    method: str
    path: ApiPath
    query: Mapping[str, str]
    accept: str
    principal: Principal
    body: bytes

    @property
    def is_health(self) -> bool:
        return self.path.segments in HEALTH_PATHS
