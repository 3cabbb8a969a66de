"""Shards beyond one process: 3 inventory shard processes, then the shard count changed to 4 as a
StatefulSet does it (the new pod first, then the old ones replaced one at a time, highest first),
against one database and fleet-sim.

With the jump consistent hash (collector/inventory/loop.py, `shard_of`) a change from 3 to 4 moves
only clusters to the new shard: at every step some running shard owns each ready cluster (none is
left for longer than the interval), the only clusters two running shards own are the moved ones (each
collected early once at most), and their stores take turns on the cluster's write lock (the ledger
never holds a resource twice).
"""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import pytest

from collector.inventory.shards import in_shard, shard_of
from collector.settings import Shard
from tests.collector.test_process import DUPLICATES, Worker, ready_ids, real_worker_env, scalar
from tests.fixtures.postgres import TestDatabase
from tests.fixtures.sim import SimUnderTest

pytestmark = pytest.mark.slow

ATTEMPTED_SINCE = (
    "SELECT count(*) FROM tenant.cluster_snapshots"
    " WHERE greatest(observed, last_error_at) >= '{since}' AND cluster_id::text = ANY(ARRAY[{ids}])"
)


def owners(cluster: UUID, running: list[Shard]) -> list[Shard]:
    return [shard for shard in running if in_shard(cluster, shard)]


def test_three_shards_become_four_without_a_gap_or_two_writers(
    sim: SimUnderTest, sim_database: TestDatabase, tmp_path: Path
) -> None:
    ready = [UUID(cid) for cid in ready_ids(sim_database)]
    moved = {cid for cid in ready if shard_of(cid, 3) != shard_of(cid, 4)}
    assert moved and all(shard_of(cid, 4) == 3 for cid in moved)

    def start(shard: Shard) -> Worker:
        settings = {"INVENTORY_WORKERS": "2", "INVENTORY_SHARD": str(shard), "INVENTORY_TIMEOUT_SECONDS": "20"}
        env = real_worker_env(sim, sim_database, tmp_path, **settings)
        worker = Worker(env)
        done = worker.wait_for_log("inventory round done")
        assert done["clusters"] == sum(1 for cid in ready if in_shard(cid, shard)), shard
        return worker

    running: dict[Shard, Worker] = {}
    try:
        for index in range(3):
            running[Shard(index, 3)] = start(Shard(index, 3))
        changed_at = scalar(sim_database, "SELECT now()")
        # The StatefulSet's steps: the new pod, then each old pod replaced, highest ordinal first.
        steps: list[tuple[Shard | None, Shard]] = [(None, Shard(3, 4))]
        steps += [(Shard(index, 3), Shard(index, 4)) for index in (2, 1, 0)]
        for old, new in steps:
            if old is not None:
                running.pop(old).stop()
                # While the old pod is gone and its successor starts, the others own all but its clusters.
                for cid in ready:
                    assert owners(cid, list(running)) or shard_of(cid, 4) == new.index, (cid, old)
            running[new] = start(new)
            for cid in ready:
                found = owners(cid, list(running))
                assert found, f"cluster {cid} belongs to no running shard"
                assert len(found) == 1 or cid in moved, f"cluster {cid} is collected by {found}"
        assert set(running) == {Shard(index, 4) for index in range(4)}
        # Every ready cluster was collected (or its failure recorded) since the change began.
        ids = ",".join(f"'{cid}'" for cid in ready)
        assert scalar(sim_database, ATTEMPTED_SINCE.format(since=changed_at.isoformat(), ids=ids)) == len(ready)
        assert scalar(sim_database, DUPLICATES) == 0
    finally:
        for worker in running.values():
            worker.stop()
