"""docs/staff-api.md's RPC and errors tables say what fleet.v1 and the staff API's code say.

The RPCs and their request fields come from the generated descriptors
(`fundament.fleet.v1.fleet_pb2.DESCRIPTOR`), so a proto change shows here as soon as `make generate`
ran. The RPC table must have one row per RPC of `FleetService`, no other, mark exactly the RPCs that
take a page token `(paged)`, and name every other request field (in backticks) in its order or
filters column. Every "fleet.v1 (N RPCs" in README.md and docs/ must count them right.

The refusals come from the source, read with `ast`: every `InvalidArgument(...)` the services build,
by the request field its message starts with (`page_size must not be negative`,
`f"{field} is required"`, the parameter followed up through its callers to the literal they pass).
The errors table's `INVALID_ARGUMENT` row must name each such field. A refusal that names no field
is listed in `REFUSALS_WITHOUT_A_FIELD` with the fields it concerns.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fundament.fleet.v1 import fleet_pb2
from google.protobuf import descriptor_pb2

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "staff-api.md"
SERVICE = "FleetService"
PAGING_FIELDS = frozenset({"page_size", "page_token"})
# A refusal whose message starts with no field name -> the request fields it is about.
REFUSALS_WITHOUT_A_FIELD: dict[str, tuple[str, ...]] = {
    "the range holds more than": ("start", "end", "step_seconds"),
    "the window holds": ("start", "end", "step_seconds"),
}
_BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")
_RPC_COUNT = re.compile(r"fleet\.v1 \((\d+) RPCs")


def current_proto() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    fleet_pb2.DESCRIPTOR.CopyToProto(proto)
    return proto


def request_fields(proto: descriptor_pb2.FileDescriptorProto) -> dict[str, list[str]]:
    """Each RPC of FleetService -> the field names of its request message."""
    messages = {f".{proto.package}.{m.name}": m for m in proto.message_type}
    (service,) = [s for s in proto.service if s.name == SERVICE]
    return {method.name: [f.name for f in messages[method.input_type].field] for method in service.method}


# --- the document --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    cells: tuple[str, ...]
    line: int

    @property
    def names(self) -> set[str]:
        return {name for cell in self.cells for name in _BACKTICKED.findall(cell)}


def table_after(heading: str, text: str) -> list[Row]:
    """The rows (header and separator left out) of the first table after `heading`."""
    lines = text.splitlines()
    index = lines.index(heading) + 1
    rows: list[Row] = []
    while index < len(lines) and not lines[index].startswith("|"):
        index += 1
    for number in range(index + 2, len(lines)):
        line = lines[number]
        if not line.startswith("|"):
            break
        rows.append(Row(tuple(cell.strip() for cell in line.strip().strip("|").split("|")), number + 1))
    return rows


def rpc_rows(text: str) -> dict[str, Row]:
    """The RPC table's rows by the RPC their first cell names."""
    rows: dict[str, Row] = {}
    for row in table_after("## The RPCs", text):
        names = _BACKTICKED.findall(row.cells[0])
        assert names, f"docs/staff-api.md:{row.line}: a row of the RPC table names no RPC"
        rows[names[0]] = row
    return rows


def rpc_table_problems(requests: dict[str, list[str]], text: str) -> list[str]:
    rows = rpc_rows(text)
    problems = [f"{rpc}: no row in the RPC table" for rpc in requests if rpc not in rows]
    problems += [
        f"docs/staff-api.md:{rows[rpc].line}: {rpc} is no RPC of fleet.v1" for rpc in rows if rpc not in requests
    ]
    for rpc, fields in requests.items():
        if rpc not in rows:
            continue
        row = rows[rpc]
        where = f"docs/staff-api.md:{row.line} {rpc}"
        paged = set(fields) >= PAGING_FIELDS
        if paged != ("(paged)" in row.cells[0]):
            problems.append(f"{where}: {'paged' if paged else 'not paged'}, but the row says otherwise")
        named = {name for cell in row.cells[2:] for name in _BACKTICKED.findall(cell)}
        missing = [f for f in fields if f not in PAGING_FIELDS and f not in named]
        if missing:
            problems.append(f"{where}: request fields not in its order or filters column: {', '.join(missing)}")
    return problems


def rpc_count_problems(count: int) -> list[str]:
    problems = []
    for document in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, line in enumerate(document.read_text().splitlines(), start=1):
            for match in _RPC_COUNT.finditer(line):
                if int(match.group(1)) != count:
                    where = f"{document.relative_to(ROOT).as_posix()}:{number}"
                    problems.append(f"{where}: says fleet.v1 has {match.group(1)} RPCs, it has {count}")
    return problems


def invalid_argument_row(text: str) -> Row:
    (row,) = [row for row in table_after("### Errors", text) if row.cells[0] == "`INVALID_ARGUMENT`"]
    return row


# --- the code ------------------------------------------------------------------------------------


@dataclass
class Refusals:
    """What the code refuses: request field -> where, and what could not be told."""

    fields: dict[str, list[str]] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)


def service_trees() -> dict[str, ast.Module]:
    return {
        path.relative_to(ROOT).as_posix(): ast.parse(path.read_text(), filename=str(path))
        for path in sorted((ROOT / "services").rglob("*.py"))
    }


# Both parsed once, when the module is imported (collection, before any test starts a thread): CPython
# 3.11's AST constructor keeps one recursion counter per interpreter, and another thread formatting a
# traceback (which parses the failing line) at the same moment makes a parse fail with "recursion depth
# mismatch" (python/cpython#106905). Nothing here changes the trees.
SERVICE_TREES = service_trees()
# A module of a made-up RPC whose refusal the errors table does not name.
WIDGETS_TREE = ast.parse("""
def checked_colour(name: str, value: str) -> str:
    if value not in {"red", "blue"}:
        raise InvalidArgument(f"{name} must be red or blue")
    return value

def list_widgets(request):
    return checked_colour("colour", request.colour)
""")


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _enclosing(tree: ast.Module, target: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    found = None
    for function in _functions(tree):
        inner = found is None or any(node is function for node in ast.walk(found))
        if inner and any(node is target for node in ast.walk(function)):
            found = function  # the innermost
    return found


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    names = [a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]]
    return [n for n in names if n not in {"self", "cls"}]


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def _argument(call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, parameter: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    positional = _parameters(function)
    index = positional.index(parameter)
    return call.args[index] if index < len(call.args) else None


def _module(where: str) -> str:
    return where.removesuffix(".py").replace("/", ".")


def calls_of(
    trees: dict[str, ast.Module], defined_in: str, function: ast.FunctionDef | ast.AsyncFunctionDef
) -> Iterator[tuple[str, ast.Call]]:
    """Calls of `function` (defined in the file `defined_in`): by its name in that file, and in any file
    that imports it by name or imports its module and calls it as an attribute of the module."""
    module = _module(defined_in)
    package, _, leaf = module.rpartition(".")
    for where, tree in trees.items():
        names, modules = set(), set()
        if where == defined_in:
            names.add(function.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == module:
                names |= {a.asname or a.name for a in node.names if a.name == function.name}
            elif isinstance(node, ast.ImportFrom) and node.module == package:
                modules |= {a.asname or a.name for a in node.names if a.name == leaf}
            elif isinstance(node, ast.Import):
                modules |= {a.asname or a.name for a in node.names if a.name == module}
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            if (isinstance(func, ast.Name) and func.id in names) or (
                isinstance(func, ast.Attribute)
                and func.attr == function.name
                and isinstance(func.value, ast.Name)
                and func.value.id in modules
            ):
                yield where, call


def parameter_values(
    trees: dict[str, ast.Module],
    defined_in: str,
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    parameter: str,
    depth: int = 0,
) -> tuple[set[str], list[str]]:
    """The literal strings callers pass for `parameter` of `function`, followed up through callers that
    pass a parameter of their own; and the calls where no literal could be told."""
    values: set[str] = set()
    unknown: list[str] = []
    for where, call in calls_of(trees, defined_in, function):
        argument = _argument(call, function, parameter)
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            values.add(argument.value)
            continue
        caller = _enclosing(trees[where], call)
        if depth < 5 and isinstance(argument, ast.Name) and caller is not None and argument.id in _parameters(caller):
            more, lost = parameter_values(trees, where, caller, argument.id, depth + 1)
            values |= more
            unknown += lost
            continue
        unknown.append(f"{where}:{call.lineno}: {function.name}(...) gets a {parameter} that cannot be told")
    if not values and not unknown:
        unknown.append(f"{defined_in}:{function.lineno}: no call of {function.name}(...) tells its {parameter}")
    return values, unknown


def code_refusals(trees: dict[str, ast.Module], fields: set[str]) -> Refusals:
    refusals = Refusals()
    for where, tree in trees.items():
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and _callee(call) == "InvalidArgument" and call.args):
                continue
            at = f"{where}:{call.lineno}"
            message = call.args[0]
            first = message.values[0] if isinstance(message, ast.JoinedStr) and message.values else message
            subjects: set[str] = set()
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                text = first.value
                word = re.match(r"[a-z_]+", text)
                if word and word.group(0) in fields:
                    subjects.add(word.group(0))
                else:
                    about = [v for prefix, v in REFUSALS_WITHOUT_A_FIELD.items() if text.startswith(prefix)]
                    subjects.update(*about)
                    if not about:
                        refusals.unknown.append(f"{at}: a refusal that names no request field: {text!r}")
            elif isinstance(first, ast.FormattedValue) and isinstance(first.value, ast.Name):
                function = _enclosing(tree, call)
                if function is None or first.value.id not in _parameters(function):
                    refusals.unknown.append(f"{at}: a refusal whose field cannot be told")
                    continue
                values, unknown = parameter_values(trees, where, function, first.value.id)
                subjects |= values
                refusals.unknown += unknown
            else:
                refusals.unknown.append(f"{at}: a refusal whose field cannot be told")
            for subject in subjects:
                if subject not in fields:
                    refusals.unknown.append(f"{at}: refuses {subject!r}, which is no request field of fleet.v1")
                refusals.fields.setdefault(subject, []).append(at)
    return refusals


def refusal_problems(refusals: Refusals, text: str) -> list[str]:
    row = invalid_argument_row(text)
    return refusals.unknown + [
        f"docs/staff-api.md:{row.line}: the INVALID_ARGUMENT row does not name `{name}` (refused at {', '.join(at)})"
        for name, at in sorted(refusals.fields.items())
        if name not in row.names
    ]


# --- the tests -----------------------------------------------------------------------------------


def test_the_rpc_table_has_a_row_per_rpc_naming_every_request_field() -> None:
    requests = request_fields(current_proto())
    problems = rpc_table_problems(requests, DOC.read_text()) + rpc_count_problems(len(requests))
    assert not problems, "\n".join(problems)


def test_the_errors_table_names_every_field_the_code_refuses() -> None:
    fields = {f for names in request_fields(current_proto()).values() for f in names}
    refusals = code_refusals(SERVICE_TREES, fields)
    problems = refusal_problems(refusals, DOC.read_text())
    assert not problems, "\n".join(problems)
    # Spot checks of each way a refusal is read, so a change to the reader cannot quietly find less.
    assert {"page_size", "page_token", "order", "statuses", "kind"} <= set(refusals.fields)  # literal text
    assert {"id", "organization_id", "cluster_id", "query", "region"} <= set(refusals.fields)  # via callers
    assert {"start", "end", "step_seconds"} <= set(refusals.fields)


def test_a_new_rpc_or_request_field_without_its_row_fails() -> None:
    proto = current_proto()
    widget = proto.message_type.add(name="ListWidgetsRequest")
    widget.field.add(name="colour", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING)
    (service,) = [s for s in proto.service if s.name == SERVICE]
    service.method.add(
        name="ListWidgets", input_type=f".{proto.package}.ListWidgetsRequest", output_type=service.method[0].output_type
    )
    (get_cluster,) = [m for m in proto.message_type if m.name == "GetClusterRequest"]
    get_cluster.field.add(name="favourite", number=99, type=descriptor_pb2.FieldDescriptorProto.TYPE_BOOL)
    problems = rpc_table_problems(request_fields(proto), DOC.read_text())
    assert any(p.startswith("ListWidgets: no row") for p in problems), problems
    assert any("GetCluster: request fields not in its order or filters column: favourite" in p for p in problems)
    assert rpc_count_problems(len(request_fields(current_proto())) + 1), "README.md's picture counts the RPCs"


def test_a_refusal_of_a_field_the_errors_table_does_not_name_fails() -> None:
    trees = {**SERVICE_TREES, "services/fleet/widgets.py": WIDGETS_TREE}
    fields = {f for names in request_fields(current_proto()).values() for f in names} | {"colour"}
    problems = refusal_problems(code_refusals(trees, fields), DOC.read_text())
    assert problems == [
        "docs/staff-api.md:"
        f"{invalid_argument_row(DOC.read_text()).line}: the INVALID_ARGUMENT row does not name `colour`"
        " (refused at services/fleet/widgets.py:4)"
    ]
