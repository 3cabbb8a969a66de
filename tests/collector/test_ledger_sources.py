"""The ledger's source registry and its plan (pure: no database, no API server)."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from collector.inventory.ledger import ActiveRow, plan
from collector.inventory.sources import RESOURCE_TYPES, SOURCES, Discovered, SourceResult, Unlisted
from collector.kube.objects import KubeObject

TENANTS = frozenset({"team-a", "team-b"})


def source(resource_type: str) -> Any:
    return next(s for s in SOURCES if s.resource_type == resource_type)


def obj(data: dict[str, Any]) -> KubeObject:
    return data  # type: ignore[return-value]


def test_resource_types_are_unique_and_namespaced_ids() -> None:
    assert len(set(RESOURCE_TYPES)) == len(RESOURCE_TYPES)
    for resource_type in RESOURCE_TYPES:
        # The same rule as the table's CHECK constraint.
        assert re.fullmatch(r"[a-z0-9]+(\.[a-z0-9]+)+", resource_type)


def test_the_registry_is_what_design_section_8_lists() -> None:
    described = {(s.resource_type, s.kind, s.namespaced, s.billable) for s in SOURCES}
    assert described == {
        ("kubernetes.node", "Node", False, True),
        ("kubernetes.persistentvolume", "PersistentVolume", False, True),
        ("kubernetes.loadbalancer", "Service", True, True),
        ("kubernetes.ingress", "Ingress", True, False),
        ("kubernetes.certificate", "Certificate", True, False),
    }


@pytest.mark.parametrize(
    ("resource_type", "item", "expected"),
    [
        (
            "kubernetes.node",
            {"metadata": {"name": "n1"}, "spec": {"providerID": "aws:///eu-1a/i-1"}},
            Discovered("kubernetes.node", "", "n1", "aws:///eu-1a/i-1", True),
        ),
        (
            "kubernetes.node",
            {"metadata": {"name": "n2"}, "spec": {}},
            Discovered("kubernetes.node", "", "n2", None, True),
        ),
        (
            "kubernetes.persistentvolume",
            {
                "metadata": {"name": "pv-1"},
                "spec": {"claimRef": {"namespace": "team-a", "name": "data"}, "csi": {"volumeHandle": "vol-9"}},
            },
            Discovered("kubernetes.persistentvolume", "", "pv-1", "vol-9", True),
        ),
        (
            "kubernetes.persistentvolume",
            {"metadata": {"name": "pv-2"}, "spec": {"claimRef": {"namespace": "kube-system"}}},
            None,
        ),
        ("kubernetes.persistentvolume", {"metadata": {"name": "pv-3"}, "spec": {}}, None),
        (
            "kubernetes.persistentvolume",
            {"metadata": {"name": "local-1"}, "spec": {"claimRef": {"namespace": "team-a"}, "local": {"path": "/x"}}},
            None,
        ),
        (
            "kubernetes.loadbalancer",
            {
                "metadata": {"name": "web", "namespace": "team-b"},
                "spec": {"type": "LoadBalancer"},
                "status": {"loadBalancer": {"ingress": [{"hostname": "a1.elb.example"}]}},
            },
            Discovered("kubernetes.loadbalancer", "team-b", "web", "a1.elb.example", True),
        ),
        (
            "kubernetes.loadbalancer",
            {
                "metadata": {"name": "web", "namespace": "team-b"},
                "spec": {"type": "LoadBalancer"},
                "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}},
            },
            Discovered("kubernetes.loadbalancer", "team-b", "web", "203.0.113.7", True),
        ),
        (
            "kubernetes.loadbalancer",
            {"metadata": {"name": "pending", "namespace": "team-a"}, "spec": {"type": "LoadBalancer"}, "status": {}},
            None,
        ),
        (
            "kubernetes.loadbalancer",
            {"metadata": {"name": "internal", "namespace": "team-a"}, "spec": {"type": "ClusterIP"}},
            None,
        ),
        (
            "kubernetes.loadbalancer",
            {"metadata": {"name": "gw", "namespace": "istio-system"}, "spec": {"type": "LoadBalancer"}},
            None,
        ),
        (
            "kubernetes.ingress",
            {
                "metadata": {"name": "site", "namespace": "team-a"},
                "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}},
            },
            Discovered("kubernetes.ingress", "team-a", "site", "lb.example", False),
        ),
        (
            "kubernetes.certificate",
            {"metadata": {"name": "tls", "namespace": "team-b"}, "spec": {"secretName": "tls-secret"}},
            Discovered("kubernetes.certificate", "team-b", "tls", "tls-secret", False),
        ),
        ("kubernetes.certificate", {"metadata": {"namespace": "team-b"}, "spec": {}}, None),
    ],
    ids=[
        "node",
        "node-without-provider-id",
        "volume-of-a-tenant-claim",
        "volume-of-a-system-claim",
        "unclaimed-volume",
        "local-volume",
        "load-balancer-hostname",
        "load-balancer-ip",
        "load-balancer-pending",
        "cluster-ip-service",
        "load-balancer-outside-tenants",
        "ingress",
        "certificate",
        "object-without-name",
    ],
)
def test_each_source_reads_what_counts_and_its_cloud_id(
    resource_type: str, item: dict[str, Any], expected: Discovered | None
) -> None:
    assert source(resource_type).discover(obj(item), TENANTS) == expected


def row(resource_type: str, name: str, resource_id: str | None, namespace: str = "") -> ActiveRow:
    return ActiveRow(uuid.uuid4(), resource_type, namespace, name, resource_id)


def found(resource_type: str, name: str, resource_id: str | None, namespace: str = "") -> Discovered:
    return Discovered(resource_type, namespace, name, resource_id, True)


def test_plan_creates_destroys_changes_and_touches() -> None:
    kept = row("kubernetes.node", "n1", "p1")
    gone = row("kubernetes.node", "n2", "p2")
    moved = row("kubernetes.loadbalancer", "web", None, "team-a")
    results: dict[str, SourceResult] = {
        "kubernetes.node": (found("kubernetes.node", "n1", "p1"), found("kubernetes.node", "n3", "p3")),
        "kubernetes.loadbalancer": (found("kubernetes.loadbalancer", "web", "lb.example", "team-a"),),
    }
    p = plan(results, [kept, gone, moved])
    assert [d.name for d in p.create] == ["n3"]
    assert p.destroy == (gone.id,)
    assert p.change_id == ((moved.id, "lb.example"),)
    assert p.touch == (kept.id,)
    assert dict(p.found) == {"kubernetes.node": 2, "kubernetes.loadbalancer": 1}


def test_an_unlisted_source_leaves_its_rows_alone() -> None:
    certificate = row("kubernetes.certificate", "tls", "s", "team-a")
    node = row("kubernetes.node", "n1", "p1")
    results: dict[str, SourceResult] = {
        "kubernetes.certificate": Unlisted("not_found", "the kind is not installed"),
        "kubernetes.node": (),
    }
    p = plan(results, [certificate, node])
    assert p.destroy == (node.id,), "none exist is not could not list"
    assert certificate.id not in p.destroy + p.touch
    assert p.unlisted["kubernetes.certificate"].reason == "not_found"
    assert "kubernetes.certificate" not in p.found


def test_the_same_name_in_another_namespace_is_another_resource() -> None:
    active = row("kubernetes.ingress", "site", None, "team-a")
    results: dict[str, SourceResult] = {"kubernetes.ingress": (found("kubernetes.ingress", "site", None, "team-b"),)}
    p = plan(results, [active])
    assert p.destroy == (active.id,)
    assert [(d.namespace, d.name) for d in p.create] == [("team-b", "site")]


def test_nothing_changed_plans_only_touches() -> None:
    rows = [row("kubernetes.node", f"n{i}", f"p{i}") for i in range(5)]
    results: dict[str, SourceResult] = {
        "kubernetes.node": tuple(found("kubernetes.node", r.name, r.resource_id) for r in rows)
    }
    p = plan(results, rows)
    assert (p.create, p.destroy, p.change_id) == ((), (), ())
    assert set(p.touch) == {r.id for r in rows}
