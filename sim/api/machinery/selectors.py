"""Label and field selectors, parsed and matched as the API server does.

Label selectors follow apimachinery's grammar: comma-separated requirements `key`, `!key`,
`key=v`, `key==v`, `key!=v`, `key in (a,b)`, `key notin (a,b)`, `key>n`, `key<n`. `!=` and `notin`
also match objects without the key. Field selectors are `field=v`, `field==v` and `field!=v` terms,
and each resource supports only a fixed set of fields: any other gets 400 `field label not
supported`, like the real server. Errors are `SelectorError`; the server turns them into 400s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Getter = Callable[[str], str | None]

_KEY_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_TOKEN = re.compile(r"\s*(!=|==|=|!|\(|\)|,|>|<|[^\s!=(),<>]+)")


class SelectorError(ValueError):
    """A selector that cannot be parsed or names an unsupported field."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # exists | !exists | = | != | in | notin | > | <
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        if self.operator in {"exists", "!exists"}:
            return (self.key in labels) == (self.operator == "exists")
        if self.operator in {"=", "in"}:
            return value in self.values
        if self.operator in {"!=", "notin"}:
            return value not in self.values
        # > and <: only integer values can match
        if value is None or not value.lstrip("-").isdigit():
            return False
        bound = int(next(iter(self.values)))
        return int(value) > bound if self.operator == ">" else int(value) < bound


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def _check_key(key: str) -> None:
    prefix, _, name = key.rpartition("/")
    if (prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix))) or not _KEY_NAME.match(name):
        raise SelectorError(
            f'unable to parse requirement: Invalid value: "{key}": name part must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        )


def _check_value(value: str) -> None:
    if len(value) > 63 or not _VALUE.match(value):
        raise SelectorError(
            f'unable to parse requirement: Invalid value: "{value}": a valid label must be an empty string or '
            "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
        )


def _tokens(text: str) -> list[str]:
    tokens = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            break
        tokens.append(match.group(1))
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
    return tokens


_PUNCTUATION = frozenset({"(", ")", ",", "=", "==", "!=", "!", ">", "<"})


class _LabelParser:
    """A recursive-descent reader of one label selector, token by token."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.position = 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def fail(self, expected: str) -> SelectorError:
        found = self.peek() or "end of string"
        return SelectorError(f"unable to parse requirement: found '{found}', expected: {expected}")

    def identifier(self) -> str:
        word = self.peek()
        if word is None or word in _PUNCTUATION:
            raise self.fail("identifier")
        self.position += 1
        return word

    def parse(self) -> LabelSelector:
        requirements: list[Requirement] = []
        while self.peek() is not None:
            requirements.append(self.requirement())
            if self.peek() is None:
                break
            if self.peek() != ",":
                raise self.fail("','")
            self.position += 1
            if self.peek() is None:
                raise self.fail("identifier")
        return LabelSelector(tuple(requirements))

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.position += 1
            key = self.identifier()
            _check_key(key)
            return Requirement(key, "!exists")
        key = self.identifier()
        _check_key(key)
        operator = self.peek()
        if operator is None or operator == ",":
            return Requirement(key, "exists")
        self.position += 1
        if operator in {"=", "==", "!=", ">", "<"}:
            return self.comparison(key, operator)
        if operator in {"in", "notin"}:
            return Requirement(key, operator, self.value_set())
        self.position -= 1
        raise self.fail("in, notin, =, ==, !=, gt, lt")

    def comparison(self, key: str, operator: str) -> Requirement:
        word = self.peek()
        value = "" if word is None or word == "," else word
        if value:
            self.position += 1
        if operator in {">", "<"} and not value.lstrip("-").isdigit():
            raise SelectorError(
                f"unable to parse requirement: for 'gt', 'lt' operators, the value must be an integer: {value!r}"
            )
        _check_value(value)
        normalized = {"==": "="}.get(operator, operator)
        return Requirement(key, normalized, frozenset({value}))

    def value_set(self) -> frozenset[str]:
        if self.peek() != "(":
            raise self.fail("'('")
        self.position += 1
        values: set[str] = set()
        while self.peek() != ")":
            word = self.peek()
            if word is None:
                raise self.fail("')'")
            if word != ",":
                _check_value(word)
                values.add(word)
            self.position += 1
        self.position += 1
        return frozenset(values)


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a `labelSelector` query value; an empty one matches everything."""
    return _LabelParser(text).parse()


@dataclass(frozen=True, slots=True)
class FieldTerm:
    field: str
    negate: bool
    value: str


@dataclass(frozen=True, slots=True)
class FieldSelector:
    terms: tuple[FieldTerm, ...] = ()

    def matches(self, get: Getter) -> bool:
        for term in self.terms:
            value = get(term.field) or ""
            if (value == term.value) == term.negate:
                return False
        return True

    @property
    def empty(self) -> bool:
        return not self.terms


def _split_unescaped(text: str, separator: str) -> list[str]:
    parts, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def parse_field_selector(text: str, supported: frozenset[str]) -> FieldSelector:
    """Parse a `fieldSelector` query value against the fields a resource supports."""
    if not text.strip():
        return FieldSelector()
    terms = []
    for part in _split_unescaped(text, ","):
        for operator, negate in (("!=", True), ("==", False), ("=", False)):
            left, found, right = part.partition(operator)
            if found:
                field = left.strip()
                if field not in supported:
                    raise SelectorError(f"field label not supported: {field}")
                terms.append(FieldTerm(field, negate, _unescape(right)))
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
    return FieldSelector(tuple(terms))
