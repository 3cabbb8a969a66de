"""docs/configuration.md's table lists exactly the environment variables the code reads.

The names come from the source, read with `ast`: every call of the `env_*` helpers (`env_secret`
also reads `NAME_FILE`; an `old=` name, accepted for one release, is read too and must share its new
name's row), and every `env.get("X")`, `environ.get("X")`, `os.environ["X"]` and
`os.getenv("X")`. A helper called with a parameter as the variable's name (`HttpSettings.from_env`
takes `origins_var`) is followed one call up to the literal its callers pass. Where a default is a
plain literal, or a constant of the same module, the table's default column must show it; defaults
computed at run time (a DSN built from the role, a path under the project) are checked by name only.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Every package whose processes read configuration, and the test fixtures (TEST_DATABASE_URL and such).
SOURCE_GLOBS: tuple[str, ...] = (
    "common/**/*.py",
    "services/**/*.py",
    "collector/**/*.py",
    "sim/**/*.py",
    "fleetctl/**/*.py",
    "soak/**/*.py",
)
SOURCE_GLOBS += ("db/**/*.py", "tests/fixtures/**/*.py", "tests/conftest.py")

# helper name -> index of the default among its positional arguments (None: it takes no default)
HELPERS: dict[str, int | None] = {
    "env_str": 2,
    "env_int": 2,
    "env_float": 2,
    "env_bool": 2,
    "env_list": 2,
    "env_choice": 2,
    "env_secret": None,
}
ENVIRONMENT_NAMES = {"env", "environ", "environment"}
_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_UNRESOLVED = object()


@dataclass
class Reads:
    """What the code reads: variable -> its literal defaults (with where), and what could not be told."""

    defaults: dict[str, list[tuple[object, str]]] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    old_names: dict[str, str] = field(default_factory=dict)
    """old name -> the name that replaced it"""

    def add(self, name: str, default: object, where: str) -> None:
        self.defaults.setdefault(name, [])
        if default is not _UNRESOLVED:
            self.defaults[name].append((default, where))


@dataclass(frozen=True)
class Function:
    """A function or method definition, named as its callers spell it (`from_env` of `HttpSettings`)."""

    owner: str | None
    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef


def source_files() -> list[Path]:
    found = {path for pattern in SOURCE_GLOBS for path in ROOT.glob(pattern)}
    return sorted(p for p in found if "gen" not in p.relative_to(ROOT).parts[:1])


def module_constants(tree: ast.Module) -> dict[str, object]:
    constants: dict[str, object] = {}
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and value is not None:
            try:
                constants[target.id] = ast.literal_eval(value)
            except ValueError:
                continue
    return constants


def functions(tree: ast.Module) -> Iterator[Function]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield Function(None, node.name, node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield Function(node.name, item.name, item)


def parameter_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr | None]:
    """Each parameter of the function and the expression of its default (None: it has none)."""
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    result: dict[str, ast.expr | None] = {a.arg: None for a in positional}
    for argument, default in zip(
        positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True
    ):
        result[argument.arg] = default
    for argument, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        result[argument.arg] = kw_default
    return result


def calls_of(function: Function, trees: dict[Path, ast.Module]) -> Iterator[tuple[Path, ast.Call]]:
    """Calls spelled `owner.name(...)` (or `name(...)` for a module-level function), anywhere scanned."""
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (function.owner is None and isinstance(func, ast.Name) and func.id == function.name) or (
                function.owner is not None
                and isinstance(func, ast.Attribute)
                and func.attr == function.name
                and isinstance(func.value, ast.Name)
                and func.value.id == function.owner
            ):
                yield path, node


class Resolver:
    """Turns an argument expression into the values it can have: literals, module constants, callers' literals."""

    def __init__(self, trees: dict[Path, ast.Module]) -> None:
        self.trees = trees
        self.constants = {path: module_constants(tree) for path, tree in trees.items()}

    def value(self, expr: ast.expr | None, path: Path) -> tuple[object, str]:
        """A literal, or a constant of the module; `_UNRESOLVED` for anything computed."""
        where = f"{path.relative_to(ROOT).as_posix()}:{getattr(expr, 'lineno', 0)}"
        if expr is None:
            return _UNRESOLVED, where
        try:
            return ast.literal_eval(expr), where
        except ValueError:
            pass
        if isinstance(expr, ast.Name):
            return self.constants[path].get(expr.id, _UNRESOLVED), where
        return _UNRESOLVED, where

    def call_sites(
        self, exprs: list[ast.expr | None], path: Path, within: Function | None
    ) -> list[list[tuple[object, str]]]:
        """The values of `exprs` for each way they are bound: once, or per call of the enclosing function
        when one of them is its parameter (followed one call up, no further)."""
        parameters = parameter_defaults(within.node) if within is not None else {}
        forwarded = [isinstance(e, ast.Name) and e.id in parameters for e in exprs]
        if within is None or not any(forwarded):
            return [[self.value(e, path) for e in exprs]]
        sites: list[list[tuple[object, str]]] = []
        for caller_path, call in calls_of(within, self.trees):
            passed = {k.arg: k.value for k in call.keywords if k.arg is not None}
            positional = list(parameters)[1:] if within.owner is not None else list(parameters)  # past self/cls
            passed.update(zip(positional, call.args, strict=False))
            site = []
            for expr, is_parameter in zip(exprs, forwarded, strict=True):
                if not is_parameter:
                    site.append(self.value(expr, path))
                    continue
                name = expr.id if isinstance(expr, ast.Name) else ""
                if name in passed:
                    site.append(self.value(passed[name], caller_path))
                else:
                    site.append(self.value(parameters[name], path))
            sites.append(site)
        return sites or [[self.value(e, path) for e in exprs]]


def enclosing_function(tree: ast.Module, target: ast.AST) -> Function | None:
    for function in functions(tree):
        if any(node is target for node in ast.walk(function.node)):
            return function
    return None


def _literal_name(expr: ast.expr) -> str | None:
    return expr.value if isinstance(expr, ast.Constant) and isinstance(expr.value, str) else None


def _is_environment(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Name):
        return expr.id in ENVIRONMENT_NAMES
    return isinstance(expr, ast.Attribute) and expr.attr == "environ"


@functools.cache  # a pure function of the sources, and the costliest part of the three tests
def code_reads() -> Reads:
    trees = {path: ast.parse(path.read_text(), filename=str(path)) for path in source_files()}
    resolver = Resolver(trees)
    reads = Reads()
    for path, tree in trees.items():
        relative = path.relative_to(ROOT).as_posix()
        helper_bodies = {id(f.node) for f in functions(tree) if f.owner is None and f.name in HELPERS}
        for function in [*functions(tree), None]:
            nodes = ast.walk(function.node) if function is not None else _module_level(tree)
            if function is not None and id(function.node) in helper_bodies:
                continue  # the helpers themselves read whatever name they are given
            for node in nodes:
                where = f"{relative}:{getattr(node, 'lineno', 0)}"
                if isinstance(node, ast.Call):
                    _read_call(node, path, function, resolver, reads, where)
                elif (
                    isinstance(node, ast.Subscript)
                    and _is_environment(node.value)
                    and (name := _literal_name(node.slice)) is not None
                ):
                    reads.add(name, _UNRESOLVED, where)
    return reads


def _module_level(tree: ast.Module) -> Iterator[ast.AST]:
    for statement in tree.body:
        if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield from ast.walk(statement)


def _read_call(
    node: ast.Call, path: Path, within: Function | None, resolver: Resolver, reads: Reads, where: str
) -> None:
    func = node.func
    helper = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if helper in HELPERS:
        name_expr = (
            node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "name"), None)
        )
        default_at = HELPERS[helper]
        default_expr = None
        if default_at is not None:
            default_expr = node.args[default_at] if len(node.args) > default_at else None
            default_expr = default_expr or next((k.value for k in node.keywords if k.arg == "default"), None)
        for name_value, default_value in resolver.call_sites([name_expr, default_expr], path, within):
            name, _ = name_value
            if not isinstance(name, str):
                reads.unknown.append(f"{where}: {helper}(...) reads a variable whose name cannot be told")
                continue
            reads.add(name, *default_value)
            old = next((k.value for k in node.keywords if k.arg == "old"), None)
            if old is not None:
                old_name, _ = resolver.value(old, path)
                if not isinstance(old_name, str):
                    reads.unknown.append(f"{where}: {helper}(...) accepts an old name that cannot be told")
                    continue
                reads.add(old_name, *default_value)
                reads.old_names[old_name] = name
            if helper == "env_secret":
                reads.add(f"{name}_FILE", _UNRESOLVED, where)
        return
    is_get = isinstance(func, ast.Attribute) and func.attr == "get" and _is_environment(func.value)
    is_getenv = isinstance(func, ast.Attribute) and func.attr == "getenv"
    if (is_get or is_getenv) and node.args and (name := _literal_name(node.args[0])) is not None:
        reads.add(name, _UNRESOLVED, where)


@dataclass(frozen=True)
class Row:
    names: tuple[str, ...]
    default: str
    line: int


TABLE_DOCUMENT = ROOT / "docs" / "configuration.md"
TABLE_HEADING = "## The variables"


def table_rows() -> list[Row]:
    """The rows of the first table under `## The variables` in docs/configuration.md."""
    lines = TABLE_DOCUMENT.read_text().splitlines()
    start = lines.index(TABLE_HEADING)
    rows: list[Row] = []
    in_table = False
    for number, line in enumerate(lines[start + 1 :], start=start + 2):
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            if in_table:
                break  # a table ends at its first line that is not a row
            continue
        in_table = True
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        names = tuple(re.findall(r"`([A-Z][A-Z0-9_]*)`", cells[0]))
        if names:
            rows.append(Row(names, cells[2] if len(cells) > 2 else "", number))
    return rows


def shows_default(cell: str, default: object) -> bool:
    """Whether the table's default column shows this default value."""
    text = cell.replace("`", "")
    if default in ("", (), None):
        return bool(re.search(r"\b(none|required|unset)\b", text))
    if isinstance(default, bool):
        return str(default).lower() in text.lower()
    if isinstance(default, int | float):
        value = f"{default:g}" if isinstance(default, float) else str(default)
        return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w])", text.replace(",", "")) is not None
    if isinstance(default, tuple):
        return all(shows_default(cell, item) for item in default)
    return re.search(rf"(?<![\w.]){re.escape(str(default))}(?![\w])", text) is not None


def test_the_table_lists_every_variable_the_code_reads_and_no_other() -> None:
    reads = code_reads()
    assert not reads.unknown, "\n".join(reads.unknown)
    listed = [name for row in table_rows() for name in row.names]
    duplicates = sorted({name for name in listed if listed.count(name) > 1})
    missing = sorted(set(reads.defaults) - set(listed))
    unread = sorted(set(listed) - set(reads.defaults))
    problems = []
    if missing:
        problems.append(f"read by the code but not in docs/configuration.md's table: {', '.join(missing)}")
    if unread:
        problems.append(f"in the table but read by no code: {', '.join(unread)}")
    if duplicates:
        problems.append(f"in the table more than once: {', '.join(duplicates)}")
    assert not problems, "\n".join(problems)


def test_the_table_shows_the_defaults_the_code_uses() -> None:
    reads = code_reads()
    wrong = []
    for row in table_rows():
        for name in row.names:
            for default, where in reads.defaults.get(name, []):
                if not shows_default(row.default, default):
                    wrong.append(
                        f"docs/configuration.md:{row.line} {name}: the default {default!r} ({where})"
                        f" is not in {row.default!r}"
                    )
    assert not wrong, "\n".join(wrong)


def test_each_old_name_shares_the_row_of_the_name_that_replaced_it() -> None:
    reads = code_reads()
    rows = {name: row for row in table_rows() for name in row.names}
    wrong = [
        f"{old} (the old name of {new}) is not in {new}'s row"
        for old, new in sorted(reads.old_names.items())
        if new in rows and old not in rows[new].names
    ]
    unmarked = [
        f"docs/configuration.md:{rows[new].line}: {new}'s row does not say that {old} is its old name"
        for old, new in sorted(reads.old_names.items())
        if new in rows and f"old name: `{old}`" not in TABLE_DOCUMENT.read_text().splitlines()[rows[new].line - 1]
    ]
    assert not wrong and not unmarked, "\n".join(wrong + unmarked)


def test_the_reader_finds_helper_calls_forwarded_names_and_plain_gets() -> None:
    reads = code_reads()
    # Spot checks of each way a variable is read, so a change to the reader cannot quietly find less.
    assert ("DCIM_ORIGINS" in reads.defaults) and ("CONSOLE_ORIGINS" in reads.defaults)  # via origins_var
    assert {"JWT_SECRET", "JWT_SECRET_FILE"} <= set(reads.defaults)  # env_secret reads both
    assert "STATUS_POLLER_DSN" in reads.defaults  # env.get("...")
    assert "TEST_DATABASE_URL" in reads.defaults  # os.environ.get("...") in a fixture
    assert (15443, "sim/main.py") in {(d, w.split(":")[0]) for d, w in reads.defaults["FLEET_SIM_PORT"]}
    assert shows_default("`127.0.0.1` / 15443", 15443)
    assert not shows_default("5000 staff", 5)
    assert shows_default("none", ())
    assert reads.old_names["INVENTORY_INTERVAL"] == "INVENTORY_INTERVAL_SECONDS"  # env_float(..., old="...")


# Read at import (collection, before any test starts a thread): CPython 3.11's AST constructor keeps one
# recursion counter per interpreter, and another thread formatting a traceback (which parses the
# failing line) at the same moment makes a parse fail with "recursion depth mismatch"
# (python/cpython#106905).
code_reads()
