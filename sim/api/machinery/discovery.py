"""API discovery documents (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>[/<version>]`).

kubectl asks for aggregated discovery first (`as=APIGroupDiscoveryList`) and falls back to these
legacy documents when the answer is plain JSON, which is what the simulator serves. The Python
client's typed APIs need no discovery at all; its dynamic client does.
"""

from __future__ import annotations

from typing import Any

from sim.api.machinery.kinds import KUBECONFIG_REQUEST_KINDS, Kind

Json = dict[str, Any]
CLIENT_CIDRS = [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:443"}]


def version_info(kubernetes_version: str) -> Json:
    major, minor, *_ = [*kubernetes_version.split("."), "0", "0"]
    return {
        "major": major,
        "minor": minor,
        "gitVersion": f"v{kubernetes_version}",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.23.4",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def core_versions() -> Json:
    return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": CLIENT_CIDRS}


def _group(kinds: tuple[Kind, ...], name: str) -> Json | None:
    versions = list(dict.fromkeys(k.version for k in kinds if k.group == name))
    if not versions:
        return None
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def group_list(kinds: tuple[Kind, ...]) -> Json:
    names = list(dict.fromkeys(k.group for k in kinds if k.group))
    groups = [g for g in (_group(kinds, n) for n in names) if g is not None]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def group(kinds: tuple[Kind, ...], name: str) -> Json | None:
    found = _group(kinds, name)
    return None if found is None else {"kind": "APIGroup", "apiVersion": "v1", **found}


def resource_list(kinds: tuple[Kind, ...], group_name: str, version: str) -> Json | None:
    served = [k for k in kinds if k.group == group_name and k.version == version]
    if not served:
        return None
    resources: list[Json] = []
    for kind in served:
        entry: Json = {
            "name": kind.resource,
            "singularName": kind.singular,
            "namespaced": kind.namespaced,
            "kind": kind.kind,
            "verbs": ["get", "list"],
        }
        if kind.short_names:
            entry["shortNames"] = list(kind.short_names)
        if kind.categories:
            entry["categories"] = list(kind.categories)
        resources.append(entry)
        for sub in kind.subresources:
            resources.append(
                {
                    "name": f"{kind.resource}/{sub}",
                    "singularName": "",
                    "namespaced": kind.namespaced,
                    "group": "authentication.gardener.cloud",
                    "version": "v1alpha1",
                    "kind": KUBECONFIG_REQUEST_KINDS[sub],
                    "verbs": ["create"],
                }
            )
    group_version = f"{group_name}/{version}" if group_name else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}


def root_paths(kinds: tuple[Kind, ...]) -> Json:
    paths = {"/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"}
    for kind in kinds:
        if kind.group:
            paths |= {f"/apis/{kind.group}", f"/apis/{kind.group}/{kind.version}"}
    return {"paths": sorted(paths)}


def discovery_document(kinds: tuple[Kind, ...], segments: tuple[str, ...], kubernetes_version: str) -> Json | None:
    """The discovery answer for a non-resource path, or None when the path is not a discovery path."""
    document: Json | None = None
    match segments:
        case ():
            document = root_paths(kinds)
        case ("version",):
            document = version_info(kubernetes_version)
        case ("api",):
            document = core_versions()
        case ("api", version):
            document = resource_list(kinds, "", version)
        case ("apis",):
            document = group_list(kinds)
        case ("apis", name):
            document = group(kinds, name)
        case ("apis", name, version):
            document = resource_list(kinds, name, version)
    return document
