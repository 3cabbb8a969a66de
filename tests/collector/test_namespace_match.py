"""Which namespace is which (collector/inventory/namespaces.py), the pinned evaluation time, and the summary.

The rules without a database or a shoot: a namespace is read by its id, or by its generated name only
where that is certain; every other case gets its reason and no count. fleet-sim plays the same cases
end to end in test_prometheus_namespaces.py.
"""

from __future__ import annotations

import io
from uuid import UUID, uuid4

import pytest

from collector.inventory.namespaces import AMBIGUOUS, NOT_FOUND, RENAMED, NamespaceRow, count_namespaces
from collector.inventory.reading import ClusterRow, Reading
from collector.inventory.report import print_summary
from collector.inventory.results import ClusterResult, RoundSummary
from collector.kube.errors import BadResponse
from collector.prometheus.queries import vector
from common.naming import namespace_name
from tests.fixtures.collector import T0

PROJECT = UUID("5b0f6c4e-8a33-4f0e-9a77-2f1a3a1c0d11")


def reading(by_name: dict[str, int] | None, by_id: dict[UUID, int] | None = None) -> Reading:
    return Reading(
        nodes=0,
        ready_nodes=0,
        pods=sum((by_name or by_id or {}).values()),
        allocatable_pods=0,
        cpu_allocatable_millicores=0,
        memory_allocatable_bytes=0,
        pool_nodes={},
        namespace_pods=by_id or {},
        ledger={},
        pods_by_namespace_name=by_name,
    )


def row(name: str, project: str = "payments", project_id: UUID = PROJECT) -> NamespaceRow:
    return NamespaceRow(uuid4(), name, project, project_id)


def test_by_id_every_live_namespace_is_read_and_one_the_shoot_lacks_runs_none() -> None:
    api, gone = row("api"), row("gone")
    counts = count_namespaces(reading(None, {api.id: 4}), [api, gone])
    assert (counts.pods, counts.unread) == ({api.id: 4, gone.id: 0}, {})


def test_by_name_the_generated_name_alone_is_a_certain_match() -> None:
    api, idle = row("api"), row("idle")
    counts = count_namespaces(reading({api.kube_name: 7, idle.kube_name: 0, "kube-system": 12}), [api, idle])
    assert (counts.pods, counts.unread) == ({api.id: 7, idle.id: 0}, {})


def test_a_renamed_project_leaves_its_namespaces_unread() -> None:
    api = row("api", project="billing")  # the database's name now; the shoot kept the old one
    old = namespace_name("payments", PROJECT, "api")
    assert old != api.kube_name and old[8:] == api.kube_name[8:]
    counts = count_namespaces(reading({old: 5}), [api])
    assert (counts.pods, counts.unread) == ({}, {api.id: RENAMED})


def test_the_old_and_the_new_name_both_on_the_shoot_are_ambiguous() -> None:
    api = row("api", project="billing")
    counts = count_namespaces(reading({namespace_name("payments", PROJECT, "api"): 5, api.kube_name: 0}), [api])
    assert (counts.pods, counts.unread) == ({}, {api.id: AMBIGUOUS})


def test_two_live_namespaces_sharing_a_project_hash_and_name_are_ambiguous() -> None:
    # Two projects whose ids' 16-bit hash digits clash: found by search, so the test needs no luck.
    first = row("api", project="alpha")
    other = next(
        candidate
        for candidate in (UUID(int=n) for n in range(1 << 20))
        if namespace_name("beta", candidate, "api")[8:12] == first.kube_name[8:12]
    )
    second = row("api", project="beta", project_id=other)
    counts = count_namespaces(reading({first.kube_name: 3, second.kube_name: 4}), [first, second])
    assert (counts.pods, counts.unread) == ({}, {first.id: AMBIGUOUS, second.id: AMBIGUOUS})


def test_a_namespace_the_shoot_does_not_show_by_name_is_not_found_never_zero() -> None:
    api, missing = row("api"), row("missing")
    counts = count_namespaces(reading({api.kube_name: 2}), [api, missing])
    assert (counts.pods, counts.unread) == ({api.id: 2}, {missing.id: NOT_FOUND})


def answer(*stamps: object) -> dict[str, object]:
    result = [{"metric": {"namespace": f"n{i}"}, "value": [stamp, "1"]} for i, stamp in enumerate(stamps)]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


def test_an_answer_is_of_the_asked_evaluation_time() -> None:
    at = 1767268800.123
    assert len(vector(answer(1767268800.123, 1767268800.123), "q", at=at)) == 2
    assert len(vector(answer(1767268800), "q", at=1767268800.0)) == 1
    with pytest.raises(BadResponse, match="did not evaluate the query at the time asked"):
        vector(answer(1767268800.123, 1767268860.5), "q", at=at)
    with pytest.raises(BadResponse, match="time asked"):
        vector(answer("1767268800.123"), "q", at=at)


def test_the_summary_names_the_clusters_with_namespaces_not_read() -> None:
    cluster = ClusterRow(uuid4(), "prod", uuid4(), "acme")
    unread = {uuid4(): RENAMED, uuid4(): RENAMED, uuid4(): NOT_FOUND}
    result = ClusterResult(cluster, 0.1, reading=reading({}), unread_namespaces=unread)
    out = io.StringIO()
    print_summary(RoundSummary(T0, 0.1, (result,)), out)
    assert "acme/prod: 3 namespace(s) not read (1 not_found, 2 renamed); counts kept" in out.getvalue()
