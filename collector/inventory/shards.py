"""Which inventory shard collects a cluster: a stable hash of its id, with no coordination between shards.

docs/architecture.md, 'One collector, sharded by a stable hash'.
"""

from __future__ import annotations

import hashlib
from uuid import UUID

from collector.settings import Shard


def jump_hash(key: int, buckets: int) -> int:
    """Lamping and Veach's jump consistent hash of a 64-bit `key` into `buckets` buckets.

    When the buckets grow from N to N+1, a key either stays where it was or moves to the new bucket N
    (a share of 1/(N+1) moves); shrinking is the same the other way round. No table, no coordination.
    """
    bucket, jump = -1, 0
    while jump < buckets:
        bucket = jump
        key = (key * 2862933555777941757 + 1) & 0xFFFFFFFFFFFFFFFF
        jump = int((bucket + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return bucket


def shard_of(cluster_id: UUID, count: int) -> int:
    """The shard (of `count`) that collects the cluster: a jump consistent hash of its id's BLAKE2b hash."""
    digest = hashlib.blake2b(cluster_id.bytes, digest_size=8).digest()
    return jump_hash(int.from_bytes(digest, "big"), count)


def in_shard(cluster_id: UUID, shard: Shard) -> bool:
    """Whether this replica collects the cluster (docs/architecture.md, 'One collector, sharded by a
    stable hash'): while the shard count changes from N to N+1, a cluster stays with its shard or
    moves to the new one, so an old and a new replica overlap on the moved clusters only."""
    if shard.count == 1:
        return True
    return shard_of(cluster_id, shard.count) == shard.index
