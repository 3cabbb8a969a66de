"""Evaluating a parsed PromQL query (`promql.py`) over a shoot's series, as Prometheus does.

Evaluation follows Prometheus's rules: regular expressions are anchored at both ends, a missing
label matches as the empty string, a selector needs at least one matcher that does not match the
empty string, aggregation drops the metric name (and, with `by`, every label not named; labels with
an empty value are absent), arithmetic drops the metric name, one-to-one matching with `on` keeps
only the matching labels, `group_left`/`group_right` copy the named labels from the "one" side, and
duplicate series on a side that must be unique are an error (Prometheus's "many-to-many matching
not allowed").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from decimal import Decimal

from sim.api.prometheus.promql import NAME_LABEL, Aggregate, Binary, Expr, Labels, Number, PromQLError, Selector

Sample = tuple[Labels, float]
SeriesSource = Callable[[str | None], Iterable[Sample]]
"""The series of one metric name (None: every series); each sample's labels carry `__name__`."""


def evaluate(expr: Expr, series: SeriesSource) -> list[Sample] | float:
    """An instant vector (or, for a bare number, a scalar). Raises PromQLError."""
    if isinstance(expr, Number):
        return expr.value
    if isinstance(expr, Selector):
        return _select(expr, series)
    if isinstance(expr, Aggregate):
        inner = evaluate(expr.expr, series)
        if isinstance(inner, float):
            raise PromQLError("expected type instant vector in aggregation expression, got scalar")
        return _aggregate(expr, inner)
    return _binary(expr, evaluate(expr.lhs, series), evaluate(expr.rhs, series))


def _select(selector: Selector, series: SeriesSource) -> list[Sample]:
    matchers = selector.matchers
    out: list[Sample] = []
    for labels, value in series(selector.name):
        if all(m.matches(labels.get(m.label, "")) for m in matchers):
            out.append((labels, value))
    return out


def _aggregate(aggregate: Aggregate, samples: list[Sample]) -> list[Sample]:
    groups: dict[tuple[tuple[str, str], ...], list[float]] = {}
    for labels, value in samples:
        if aggregate.without:
            dropped = set(aggregate.labels) | {NAME_LABEL}
            kept = {k: v for k, v in labels.items() if k not in dropped}
        else:
            kept = {k: labels[k] for k in aggregate.labels if labels.get(k)}
        groups.setdefault(tuple(sorted(kept.items())), []).append(value)
    combine: dict[str, Callable[[list[float]], float]] = {
        "sum": math.fsum,
        "count": lambda values: float(len(values)),
        "max": max,
        "min": min,
        "avg": lambda values: math.fsum(values) / len(values),
    }
    return [(dict(key), combine[aggregate.op](values)) for key, values in groups.items()]


def _arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


def _binary(expr: Binary, lhs: list[Sample] | float, rhs: list[Sample] | float) -> list[Sample] | float:
    op = expr.op
    if isinstance(lhs, float) and isinstance(rhs, float):
        return _arith(op, lhs, rhs)
    if isinstance(lhs, float):
        assert not isinstance(rhs, float)
        return [(_without_name(labels), _arith(op, lhs, value)) for labels, value in rhs]
    if isinstance(rhs, float):
        return [(_without_name(labels), _arith(op, value, rhs)) for labels, value in lhs]
    if expr.group == "right":  # group_right is group_left with the sides swapped
        mirrored = Binary(op, expr.rhs, expr.lhs, expr.on, expr.ignoring, "left", expr.include)
        swapped = _match(mirrored, rhs, lhs)
        return [(labels, _arith(op, b, a)) for labels, a, b in swapped]
    return [(labels, _arith(op, a, b)) for labels, a, b in _match(expr, lhs, rhs)]


def _signature(expr: Binary, labels: Labels) -> tuple[tuple[str, str], ...]:
    if expr.on is not None and not expr.ignoring:
        return tuple((k, labels.get(k, "")) for k in sorted(expr.on))
    ignored = set(expr.on or ()) | {NAME_LABEL}
    return tuple(sorted((k, v) for k, v in labels.items() if k not in ignored))


def _match(expr: Binary, many: list[Sample], one: list[Sample]) -> list[tuple[Labels, float, float]]:
    """(result labels, many side's value, one side's value) per match; `many` is the left side."""
    by_signature: dict[tuple[tuple[str, str], ...], Sample] = {}
    for sample in one:
        signature = _signature(expr, sample[0])
        if signature in by_signature:
            raise PromQLError(
                f"found duplicate series for the match group {dict(signature)} on the right hand-side of the "
                "operation; many-to-many matching not allowed: matching labels must be unique on one side"
            )
        by_signature[signature] = sample
    out: list[tuple[Labels, float, float]] = []
    seen: set[tuple[tuple[str, str], ...]] = set()
    for labels, value in many:
        signature = _signature(expr, labels)
        match = by_signature.get(signature)
        if match is None:
            continue
        result = _without_name(labels)
        if expr.group is None:
            if expr.on is not None and not expr.ignoring:
                result = {k: v for k, v in result.items() if k in expr.on}
            elif expr.on is not None:
                result = {k: v for k, v in result.items() if k not in expr.on}
        for name in expr.include:
            if match[0].get(name):
                result[name] = match[0][name]
            else:
                result.pop(name, None)
        key = tuple(sorted(result.items())) if expr.group is not None else signature
        if key in seen:
            raise PromQLError(
                "multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)"
                if expr.group is None
                else "multiple matches for labels: grouping labels must ensure unique matches"
            )
        seen.add(key)
        out.append((result, value, match[1]))
    return out


def _without_name(labels: Labels) -> Labels:
    return {k: v for k, v in labels.items() if k != NAME_LABEL}


def format_value(value: float) -> str:
    """A sample value as Prometheus writes it: the shortest exact decimal, no exponent; NaN, +Inf, -Inf."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    text = format(Decimal(repr(value)), "f")
    return text.removesuffix(".0") if "." in text and text.endswith(".0") else text
