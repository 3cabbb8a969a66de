"""The worker name of a node pool, which the collector and the simulator must derive identically.

Gardener labels every node with `worker.gardener.cloud/pool: <worker name>`, where the worker is
the shoot's `spec.provider.workers[].name`. Fundament names each worker after its node pool; worker
names are DNS labels of at most 15 characters in Gardener, so the node pool name is lowered, every run
of characters outside [a-z0-9-] becomes one `-`, the ends are trimmed of `-`, and the result cut to 15.
The collector groups nodes by this name; the simulator labels nodes with it.
"""

from __future__ import annotations

import re

WORKER_NAME_MAX = 15
_NOT_DNS = re.compile(r"[^a-z0-9-]+")


def worker_name(node_pool_name: str) -> str:
    """The Gardener worker (and node label) name of a node pool."""
    name = _NOT_DNS.sub("-", node_pool_name.lower()).strip("-")[:WORKER_NAME_MAX].rstrip("-")
    if not name:
        raise ValueError(f"node pool name {node_pool_name!r} has no character usable in a worker name")
    return name
