"""The PromQL subset the simulated Prometheus answers: a tokenizer, the syntax tree and a recursive-descent parser.

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

Range vectors, functions, offsets, `@`, comparison and set operators are outside the subset.
`evaluation.py` evaluates a parsed query by Prometheus's rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

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
