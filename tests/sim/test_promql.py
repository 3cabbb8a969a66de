"""fleet-sim's PromQL subset: parsed properly, evaluated by Prometheus's rules, refused outside the subset."""

from __future__ import annotations

import pytest

from collector.prometheus.queries import QUERIES
from sim.api.prometheus.evaluation import Sample, evaluate, format_value
from sim.api.prometheus.promql import Aggregate, Binary, PromQLError, Selector, parse

SERIES: list[Sample] = [
    ({"__name__": "kube_node_labels", "node": "a", "label_pool": "p1"}, 1.0),
    ({"__name__": "kube_node_labels", "node": "b", "label_pool": "p1"}, 1.0),
    ({"__name__": "kube_node_labels", "node": "c", "label_pool": "p2"}, 1.0),
    ({"__name__": "kube_node_labels", "node": "d"}, 1.0),
    ({"__name__": "ready", "node": "a", "status": "true"}, 1.0),
    ({"__name__": "ready", "node": "b", "status": "true"}, 0.0),
    ({"__name__": "ready", "node": "c", "status": "true"}, 1.0),
    ({"__name__": "ready", "node": "d", "status": "true"}, 1.0),
    ({"__name__": "phase", "namespace": "x", "phase": "Running"}, 1.0),
    ({"__name__": "phase", "namespace": "x", "phase": "Succeeded"}, 1.0),
    ({"__name__": "phase", "namespace": "y", "phase": "Failed"}, 1.0),
    ({"__name__": "phase", "namespace": "y", "phase": "Pending"}, 1.0),
]


def run(query: str) -> dict[tuple[tuple[str, str], ...], float] | float:
    result = evaluate(parse(query), lambda name: [s for s in SERIES if name is None or s[0]["__name__"] == name])
    if isinstance(result, float):
        return result
    return {tuple(sorted(labels.items())): value for labels, value in result}


@pytest.mark.parametrize("name", list(QUERIES))
def test_every_query_of_the_collector_parses(name: str) -> None:
    tree = parse(QUERIES[name])
    assert isinstance(tree, Aggregate)


def test_the_join_query_has_its_modifiers() -> None:
    tree = parse("sum by (p) (ready * on (node) group_left (label_pool) kube_node_labels)")
    assert isinstance(tree, Aggregate) and tree.labels == ("p",)
    inner = tree.expr
    assert isinstance(inner, Binary)
    assert (inner.op, inner.on, inner.group, inner.include) == ("*", ("node",), "left", ("label_pool",))
    assert isinstance(inner.lhs, Selector) and inner.lhs.name == "ready"


def test_aggregation_by_a_label_groups_and_drops_the_rest() -> None:
    assert run("count by (label_pool) (kube_node_labels)") == {
        (("label_pool", "p1"),): 2.0,
        (("label_pool", "p2"),): 1.0,
        (): 1.0,  # the node without the label: an empty value is no label
    }
    assert run("count(kube_node_labels)") == {(): 4.0}
    assert run("sum without (phase) (phase)") == {(("namespace", "x"),): 2.0, (("namespace", "y"),): 2.0}


def test_regular_expressions_are_anchored_and_negation_works() -> None:
    assert run('sum by (namespace) (phase{phase!~"Succeeded|Failed"})') == {
        (("namespace", "x"),): 1.0,
        (("namespace", "y"),): 1.0,
    }
    assert run('count(phase{phase=~"Run"})') == {}, "a regex matches the whole value, not a part"


def test_group_left_copies_labels_from_the_one_side() -> None:
    assert run('sum by (label_pool) (ready{status="true"} * on (node) group_left (label_pool) kube_node_labels)') == {
        (("label_pool", "p1"),): 1.0,
        (("label_pool", "p2"),): 1.0,
        (): 1.0,
    }


def test_one_to_one_with_on_keeps_only_the_matching_labels() -> None:
    result = run("ready * on (node) kube_node_labels")
    assert isinstance(result, dict)
    assert set(result) == {(("node", n),) for n in "abcd"}


def test_duplicates_on_the_one_side_are_refused() -> None:
    with pytest.raises(PromQLError, match="many-to-many"):
        run("kube_node_labels * on (label_pool) group_left ready")


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("", "no expression"),
        ("rate(x[5m])", "unexpected"),
        ("x[5m]", "range vectors"),
        ('{job=""}', "non-empty matcher"),
        ('x{a=~"("}', "regexp"),
        ("sum(x", "expected"),
        ('x{a="b"', "expected"),
        ("x{a='\\q'}", "escape"),
        ("sum by (a (x)", "expected"),
        ("x ^ 2", "unexpected character"),
    ],
)
def test_queries_outside_the_subset_are_refused_with_a_position(query: str, says: str) -> None:
    with pytest.raises(PromQLError, match=says):
        parse(query)


def test_values_are_written_as_prometheus_writes_them() -> None:
    assert [format_value(v) for v in (3.0, 3.88, 17179869184.0, 1e16, 0.001)] == [
        "3",
        "3.88",
        "17179869184",
        "10000000000000000",
        "0.001",
    ]
    assert [format_value(v) for v in (float("nan"), float("inf"), float("-inf"))] == ["NaN", "+Inf", "-Inf"]


def test_scalars_and_arithmetic() -> None:
    assert run("2 * 3 + 1") == 7.0
    assert run("count(kube_node_labels) * 2") == {(): 8.0}
