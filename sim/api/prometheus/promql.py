"""The PromQL subset the simulated Prometheus answers: a tokenizer, a recursive-descent parser and an evaluator.

No maintained Python package parses PromQL, so the simulator carries this one. It is a real parser
of a subset of the language, not string matching, so a collector's query is answered exactly when
Prometheus would answer it the same way, and refused (`PromQLError`, a 400 `bad_data`) when it
leaves the subset. The subset is what instant queries over kube-state-metrics need:

    expr       := term (('+' | '-') modifiers term)*
    term       := primary (('*' | '/') modifiers primary)*
    primary    := NUMBER | '(' expr ')' | aggregate | selector
    aggregate  := AGG grouping? '(' expr ')' grouping?        AGG: sum count max min avg
    grouping   := ('by' | 'without') '(' labels ')'
    modifiers  := (('on' | 'ignoring') '(' labels ')')? (('group_left' | 'group_right') ('(' labels ')')?)?
    selector   := NAME ('{' matchers '}')? | '{' matchers '}'
    matcher    := LABEL ('=' | '!=' | '=~' | '!~') STRING

Evaluation follows Prometheus's rules: regular expressions are anchored at both ends, a missing
label matches as the empty string, a selector needs at least one matcher that does not match the
empty string, aggregation drops the metric name (and, with `by`, every label not named; labels with
an empty value are absent), arithmetic drops the metric name, one-to-one matching with `on` keeps
only the matching labels, `group_left`/`group_right` copy the named labels from the "one" side, and
duplicate series on a side that must be unique are an error (Prometheus's "many-to-many matching
not allowed"). Range vectors, functions, offsets, `@`, comparison and set operators are outside the
subset.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal

Labels = dict[str, str]
NAME_LABEL = "__name__"
MAX_QUERY_CHARS = 64 * 1024
AGGREGATORS = frozenset({"sum", "count", "max", "min", "avg"})
_KEYWORDS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"}) | AGGREGATORS


class PromQLError(ValueError):
    """A query outside the subset, or one Prometheus itself would refuse; the message says where."""


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # NAME, STRING, NUMBER, or the punctuation itself
    text: str
    position: int


_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<NUMBER>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<NAME>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<STRING>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<punct>=~|!~|!=|==|[{}(),=*/+\-\[\]@])
    """,
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


def tokenize(query: str) -> list[Token]:
    if len(query) > MAX_QUERY_CHARS:
        raise PromQLError(f"the query is longer than {MAX_QUERY_CHARS} characters")
    tokens: list[Token] = []
    position = 0
    while position < len(query):
        match = _TOKEN.match(query, position)
        if match is None:
            raise PromQLError(f"1:{position + 1}: parse error: unexpected character {query[position]!r}")
        kind = match.lastgroup or ""
        text = match.group()
        if kind == "STRING":
            text = _unquote(text, position)
        if kind != "space":
            tokens.append(Token(text if kind == "punct" else kind, text, position))
        position = match.end()
    tokens.append(Token("EOF", "", len(query)))
    return tokens


def _unquote(quoted: str, position: int) -> str:
    body = quoted[1:-1]
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            escaped = body[index + 1]
            if escaped not in _ESCAPES:
                raise PromQLError(f"1:{position + index + 2}: parse error: unknown escape sequence \\{escaped}")
            out.append(_ESCAPES[escaped])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


# --- the syntax tree ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Matcher:
    label: str
    op: str  # = != =~ !~
    value: str

    def matches(self, value: str) -> bool:
        if self.op == "=":
            return value == self.value
        if self.op == "!=":
            return value != self.value
        hit = _anchored(self.value).fullmatch(value) is not None
        return hit if self.op == "=~" else not hit


@dataclass(frozen=True, slots=True)
class Selector:
    name: str | None
    matchers: tuple[Matcher, ...]


@dataclass(frozen=True, slots=True)
class Number:
    value: float


@dataclass(frozen=True, slots=True)
class Aggregate:
    op: str
    expr: Expr
    labels: tuple[str, ...]
    without: bool


@dataclass(frozen=True, slots=True)
class Binary:
    op: str
    lhs: Expr
    rhs: Expr
    on: tuple[str, ...] | None  # None: no on(); with `ignoring`, these are the ignored labels
    ignoring: bool
    group: str | None  # "left" | "right" | None (one-to-one)
    include: tuple[str, ...]


Expr = Selector | Number | Aggregate | Binary


def _anchored(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(f"(?:{pattern})")
    except re.error as e:
        raise PromQLError(f"error parsing regexp: {e}") from None


# --- the parser --------------------------------------------------------------------------------


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.index = 0

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def take(self, kind: str | None = None) -> Token:
        token = self.current
        if kind is not None and token.kind != kind:
            self.fail(f"expected {kind!r}")
        self.index += 1
        return token

    def fail(self, what: str) -> None:
        token = self.current
        found = "end of input" if token.kind == "EOF" else repr(token.text)
        raise PromQLError(f"1:{token.position + 1}: parse error: unexpected {found}, {what}")

    def keyword(self, *words: str) -> str | None:
        token = self.current
        if token.kind == "NAME" and token.text.lower() in words:
            self.index += 1
            return token.text.lower()
        return None

    def parse(self) -> Expr:
        if self.current.kind == "EOF":
            raise PromQLError("1:1: parse error: no expression found in input")
        expr = self.expr()
        if self.current.kind != "EOF":
            self.fail("expected an operator or the end of the query")
        return expr

    def expr(self) -> Expr:
        lhs = self.term()
        while self.current.kind in {"+", "-"}:
            op = self.take().kind
            lhs = self.binary(op, lhs, self.term)
        return lhs

    def term(self) -> Expr:
        lhs = self.primary()
        while self.current.kind in {"*", "/"}:
            op = self.take().kind
            lhs = self.binary(op, lhs, self.primary)
        return lhs

    def binary(self, op: str, lhs: Expr, operand: Callable[[], Expr]) -> Expr:
        on: tuple[str, ...] | None = None
        ignoring = False
        matching = self.keyword("on", "ignoring")
        if matching is not None:
            on, ignoring = self.label_list(), matching == "ignoring"
        group: str | None = None
        include: tuple[str, ...] = ()
        side = self.keyword("group_left", "group_right")
        if side is not None:
            group = side.removeprefix("group_")
            if self.current.kind == "(":
                include = self.label_list()
        rhs = operand()
        if (on is not None or group is not None) and (isinstance(lhs, Number) or isinstance(rhs, Number)):
            raise PromQLError("vector matching only allowed between instant vectors")
        return Binary(op, lhs, rhs, on, ignoring, group, include)

    def primary(self) -> Expr:
        token = self.current
        if token.kind == "NUMBER":
            self.take()
            return Number(float(token.text))
        if token.kind == "(":
            self.take()
            inner = self.expr()
            self.take(")")
            return inner
        if token.kind == "NAME" and token.text.lower() in AGGREGATORS:
            return self.aggregate()
        if token.kind == "NAME" and token.text.lower() in _KEYWORDS:
            self.fail("expected an expression")
        if token.kind in {"NAME", "{"}:
            return self.selector()
        if token.kind in {"[", "@", "=="}:
            self.fail("range vectors, @ and comparisons are outside fleet-sim's PromQL subset")
        self.fail("expected an expression")
        raise AssertionError("unreachable")  # pragma: no cover - fail raises

    def aggregate(self) -> Expr:
        op = self.take("NAME").text.lower()
        labels: tuple[str, ...] = ()
        without = False
        grouping = self.keyword("by", "without")
        if grouping is not None:
            labels, without = self.label_list(), grouping == "without"
        if self.current.kind != "(":
            self.fail(f"expected '(' after {op}")
        self.take("(")
        inner = self.expr()
        self.take(")")
        if grouping is None:
            grouping = self.keyword("by", "without")
            if grouping is not None:
                labels, without = self.label_list(), grouping == "without"
        return Aggregate(op, inner, labels, without)

    def label_list(self) -> tuple[str, ...]:
        self.take("(")
        labels: list[str] = []
        while self.current.kind != ")":
            labels.append(self.take("NAME").text)
            if self.current.kind == ",":
                self.take()
            elif self.current.kind != ")":
                self.fail("expected ',' or ')' in the label list")
        self.take(")")
        return tuple(labels)

    def selector(self) -> Expr:
        name: str | None = None
        if self.current.kind == "NAME":
            name = self.take().text
        matchers: list[Matcher] = []
        if self.current.kind == "{":
            self.take()
            while self.current.kind != "}":
                label = self.take("NAME").text
                op = self.current.kind
                if op not in {"=", "!=", "=~", "!~"}:
                    self.fail("expected a label matching operator")
                self.take()
                value = self.take("STRING").text
                matcher = Matcher(label, op, value)
                if op in {"=~", "!~"}:
                    _anchored(value)  # a bad expression fails at parse time, as in Prometheus
                matchers.append(matcher)
                if self.current.kind == ",":
                    self.take()
                elif self.current.kind != "}":
                    self.fail("expected ',' or '}' in the label matchers")
            self.take("}")
        if self.current.kind == "[":
            self.fail("range vectors are outside fleet-sim's PromQL subset")
        if name is None and all(m.matches("") for m in matchers):
            raise PromQLError("vector selector must contain at least one non-empty matcher")
        return Selector(name, tuple(matchers))


def parse(query: str) -> Expr:
    """The syntax tree of one query. Raises PromQLError."""
    return _Parser(tokenize(query)).parse()


# --- evaluation --------------------------------------------------------------------------------


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
