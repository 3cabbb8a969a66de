"""Parse a Kubernetes API path into group, version, namespace, resource, name and subresource."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ApiPath:
    segments: tuple[str, ...]
    group: str | None = None  # None: not a resource path (discovery, /version, health)
    version: str | None = None
    namespace: str | None = None
    resource: str | None = None
    name: str | None = None
    subresource: str | None = None

    @property
    def is_resource(self) -> bool:
        return self.resource is not None


def parse_api_path(path: str) -> ApiPath:
    """`/api/v1/namespaces/x/pods/y` → group "", version v1, namespace x, resource pods, name y."""
    segments = tuple(part for part in path.split("/") if part)
    if len(segments) >= 3 and segments[0] == "api":
        group, version, rest = "", segments[1], segments[2:]
    elif len(segments) >= 4 and segments[0] == "apis":
        group, version, rest = segments[1], segments[2], segments[3:]
    else:
        return ApiPath(segments)
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        return ApiPath(segments)
    return ApiPath(
        segments,
        group,
        version,
        namespace,
        rest[0],
        rest[1] if len(rest) > 1 else None,
        rest[2] if len(rest) > 2 else None,
    )
