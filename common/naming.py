"""Fundament's naming contract: the names its provisioning side gives Gardener and Kubernetes objects.

Whatever reads a real landscape must derive exactly these names (the collector maps nodes to
node pools by them), and the simulator must generate them the same way, so the tests prove
compatibility with the provisioning side instead of agreement with ourselves. The contract:

- `hash_hex(data)`: the lowercase hex SHA-256 digest (64 characters);
- `sanitize(s)`: lowercase, then keep only `[a-z0-9]` (hyphens are dropped too);
- `sanitize_dns1035(s)`: `sanitize(s)`, prefixed with `x` when it starts with a digit;
- `bounded(sanitized, hex, prefix_len, hash_len, hash_offset)`: `sanitized` cut to `prefix_len`,
  padded from the start of `hex` when shorter, then `hex[hash_offset : hash_offset + hash_len]`;
  always exactly `prefix_len + hash_len` characters, so no input (not even one with no usable
  character, or an empty one) lacks a name.

Names (hash input in brackets):

- Gardener project of an organization: `bounded(dns1035(name), hash[name], 6, 4, 6)`, 10 characters;
  its namespace in the garden is `garden-<project>`;
- shoot of a cluster: `bounded(dns1035(name), hash[16 raw bytes of the cluster id], 8, 3, 0)`, 11;
- worker of a node pool: `bounded(dns1035(name), hash[name], 4, 4, 4)`, 8; Gardener labels the
  pool's nodes `worker.gardener.cloud/pool=<worker>`; the hash keeps pools with a common prefix apart;
- namespace on a shoot: `bounded(sanitize(project), hash[16 raw bytes of the project id], 8, 4, 8)`
  + `-` + the namespace's name.
"""

from __future__ import annotations

import hashlib
import re
from uuid import UUID

PROJECT_NAME_LENGTH = 10
SHOOT_NAME_LENGTH = 11
WORKER_NAME_LENGTH = 8
_NOT_SANITIZED = re.compile(r"[^a-z0-9]+")


def hash_hex(data: bytes) -> str:
    """The lowercase hex SHA-256 digest of `data`."""
    return hashlib.sha256(data).hexdigest()


def sanitize(text: str) -> str:
    """Lowercase, then only `[a-z0-9]` kept (hyphens are dropped too)."""
    return _NOT_SANITIZED.sub("", text.lower())


def sanitize_dns1035(text: str) -> str:
    """`sanitize`, prefixed with `x` when the result starts with a digit (a DNS-1035 label starts with a letter)."""
    cleaned = sanitize(text)
    return f"x{cleaned}" if cleaned[:1].isdigit() else cleaned


def bounded(sanitized: str, hex_digest: str, prefix_len: int, hash_len: int, hash_offset: int) -> str:
    """`sanitized` cut or padded (from `hex_digest`) to `prefix_len`, then `hash_len` hex digits from `hash_offset`."""
    prefix = sanitized[:prefix_len]
    if len(prefix) < prefix_len:
        prefix += hex_digest[: prefix_len - len(prefix)]
    return prefix + hex_digest[hash_offset : hash_offset + hash_len]


def project_name(organization_name: str) -> str:
    """The Gardener project of an organization (10 characters); its garden namespace is `garden-<project>`."""
    return bounded(sanitize_dns1035(organization_name), hash_hex(organization_name.encode()), 6, 4, 6)


def garden_namespace(organization_name: str) -> str:
    """The garden namespace the organization's shoots live in."""
    return f"garden-{project_name(organization_name)}"


def shoot_name(cluster_name: str, cluster_id: UUID) -> str:
    """The shoot of a cluster (11 characters); the hash is over the id's 16 raw bytes."""
    return bounded(sanitize_dns1035(cluster_name), hash_hex(cluster_id.bytes), 8, 3, 0)


def worker_name(node_pool_name: str) -> str:
    """The Gardener worker of a node pool (8 characters), the value of its nodes' `worker.gardener.cloud/pool`."""
    return bounded(sanitize_dns1035(node_pool_name), hash_hex(node_pool_name.encode()), 4, 4, 4)


def namespace_name(project: str, project_id: UUID, namespace: str) -> str:
    """The name on the shoot of a tenant namespace: 12 characters naming its project, `-`, its own name."""
    return bounded(sanitize(project), hash_hex(project_id.bytes), 8, 4, 8) + "-" + namespace
