"""PerCluster: the per-cluster value and lock the credential cache and the Prometheus resolver share."""

from __future__ import annotations

import asyncio
from uuid import uuid4

from collector.kube.per_cluster import PerCluster
from tests.fixtures.waiting import eventually_async


async def test_callers_of_one_cluster_share_the_value_made_once() -> None:
    held: PerCluster[int] = PerCluster()
    cluster = uuid4()
    made = 0
    arrived = 0

    async def get() -> int:
        nonlocal made, arrived
        arrived += 1
        async with held.lock(cluster):
            kept = held.kept(cluster)
            if kept is not None:
                return kept
            made += 1
            await eventually_async(lambda: arrived == 5, "the others arriving while it is made")
            held.keep(cluster, made)
            return made

    assert await asyncio.gather(*(get() for _ in range(5))) == [1] * 5
    assert made == 1


def test_drop_forgets_one_and_forget_except_keeps_only_the_named() -> None:
    held: PerCluster[str] = PerCluster()
    a, b, c = uuid4(), uuid4(), uuid4()
    for cluster in (a, b, c):
        held.keep(cluster, str(cluster))
    lock_of_c = held.lock(c)
    held.drop(a)
    assert held.kept(a) is None
    held.forget_except({b})
    assert held.kept(b) == str(b)
    assert held.kept(c) is None
    assert held.lock(c) is not lock_of_c, "a forgotten cluster's lock goes with it"
    assert held.lock(b) is held.lock(b)
