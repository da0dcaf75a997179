"""Python-literal test data -> LiveCodeBench functional encoding, without executing anything.

Everything here works on `ast` trees: `ast.literal_eval` on nodes, never `eval`. LeetCode-style
data mixes Python and JSON spellings (`None`/`null`, `True`/`true`), so the bare names `null`,
`true` and `false` are read as their JSON values, and LeetCodeDataset's node builders
`list_node([...])` / `tree_node([...])` as the list they wrap (LeetCode's notation for a linked
list or a tree, which the evaluator turns back into nodes).
"""

from __future__ import annotations

import ast
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from microcoder.pipeline.schema import TestCase

MAX_LITERAL_CHARS = 2_000_000  # bigger inputs are rejected before parsing (parser memory)
_JSON_NAMES = {"null": None, "true": True, "false": False}
NODE_BUILDERS = frozenset({"list_node", "tree_node"})
_PARSE_ERRORS = (ValueError, SyntaxError, TypeError, RecursionError, MemoryError, AttributeError)


class NotLiteral(ValueError):
    """A node or text that is not a plain literal (or not representable as JSON)."""


class _JsonNames(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in _JSON_NAMES:
            return ast.copy_location(ast.Constant(_JSON_NAMES[node.id]), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        """`list_node([1,2])` / `tree_node([1,None,2])` -> the wrapped list (anything else stays a
        call, which `literal_eval` refuses)."""
        if (isinstance(node.func, ast.Name) and node.func.id in NODE_BUILDERS and len(node.args) == 1
                and not node.keywords and not isinstance(node.args[0], ast.Starred)):
            return self.visit(node.args[0])
        return node


def literal(node: ast.AST) -> Any:
    """The value of a literal expression node (JSON names allowed); NotLiteral otherwise."""
    try:
        return ast.literal_eval(_JsonNames().visit(node))
    except _PARSE_ERRORS as e:
        raise NotLiteral(f"not a literal: {_short(node)}") from e


def parse_literal(text: str) -> Any:
    """The value of literal text (`[1,2]`, `true`, `"a"`, `None`); NotLiteral otherwise."""
    text = text.strip()
    if len(text) > MAX_LITERAL_CHARS:
        raise NotLiteral(f"literal longer than {MAX_LITERAL_CHARS} characters")
    try:
        return json.loads(text)
    except RecursionError as e:
        raise NotLiteral("literal nested too deeply") from e
    except ValueError:
        pass
    try:
        tree = ast.parse(text, mode="eval")
    except _PARSE_ERRORS as e:
        raise NotLiteral(f"not a literal: {text[:80]!r}") from e
    return literal(tree.body)


def to_json(value: Any) -> str:
    """Strict JSON for a test value; tuples become lists. Sets, complex numbers, bytes, NaN/inf and
    dicts with non-string keys are refused (their JSON would not decode to the same value)."""
    return json.dumps(_check_jsonable(value), allow_nan=False)


def _check_jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotLiteral(f"non-finite float {value!r} has no JSON form")
        return value
    if isinstance(value, (list, tuple)):
        return [_check_jsonable(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise NotLiteral("dict with non-string keys has no faithful JSON form")
        return {k: _check_jsonable(v) for k, v in value.items()}
    raise NotLiteral(f"{type(value).__name__} value has no JSON form")


def encode_args(args: list[Any]) -> str:
    """LiveCodeBench functional input: one JSON value per line, one line per positional argument."""
    return "\n".join(to_json(a) for a in args)


def call_arguments(call: ast.Call, params: list[str] | None) -> list[Any]:
    """Positional argument values of a call, keyword arguments placed by the signature `params`."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise NotLiteral("starred or ** arguments")
    args = [literal(a) for a in call.args]
    if not call.keywords:
        return args
    if params is None:
        raise NotLiteral("keyword arguments but the function signature is unknown")
    by_name = {k.arg: literal(k.value) for k in call.keywords}
    unknown = sorted(set(by_name) - set(params))
    if unknown:
        raise NotLiteral(f"keyword arguments {unknown} not in the signature {params}")
    for name in params[len(args):]:
        if name not in by_name:
            raise NotLiteral(f"argument {name!r} is not given")
        args.append(by_name.pop(name))
    if by_name:
        raise NotLiteral(f"arguments {sorted(by_name)} given both by position and by keyword")
    return args


def parse_call_text(text: str, params: list[str] | None) -> list[Any]:
    """Arguments from call-argument text such as `nums = [2,7], target = 9` or `[1,2], 3`."""
    if len(text) > MAX_LITERAL_CHARS:
        raise NotLiteral(f"input longer than {MAX_LITERAL_CHARS} characters")
    try:
        tree = ast.parse(f"f({text}\n)", mode="eval")
    except _PARSE_ERRORS as e:
        raise NotLiteral(f"cannot parse arguments {text[:80]!r}") from e
    return call_arguments(tree.body, params)


# --- signatures -------------------------------------------------------------------------------
@dataclass
class Signature:
    name: str
    params: list[str]  # positional parameter names, without `self`
    annotations: list[str]  # parameter and return annotations as source text ('' when absent)


def find_signature(source: str, name: str, class_name: str | None = None) -> Signature | None:
    """The signature of function `name` (a method of `class_name` when given) in Python source."""
    try:
        tree = ast.parse(source)
    except _PARSE_ERRORS:
        return None
    scope: list[ast.stmt] = tree.body
    if class_name:
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
        if not classes:
            return None
        scope = classes[-1].body
    for node in reversed(scope):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            args = node.args.posonlyargs + node.args.args
            if class_name and args and args[0].arg in ("self", "cls"):
                args = args[1:]
            annotations = [ast.unparse(a.annotation) if a.annotation else "" for a in args]
            annotations.append(ast.unparse(node.returns) if node.returns else "")
            return Signature(node.name, [a.arg for a in args], annotations)
    return None


# --- assert-based tests -----------------------------------------------------------------------
@dataclass
class AssertTests:
    tests: list[TestCase] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)  # why each unconverted assert was skipped

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


def convert_asserts(test_source: str, params: list[str] | None, callee: str = "candidate") -> AssertTests:
    """Functional tests from `assert callee(args) == value` statements (also `value == callee(...)`,
    `is True/False/None`, with or without a message). Other asserts are skipped and counted by kind."""
    out = AssertTests()
    tree = ast.parse(test_source)  # SyntaxError is the caller's to report
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        try:
            call, expected = _equality_parts(node.test, callee)
            args = call_arguments(call, params)
            out.tests.append(TestCase(input=encode_args(args), output=to_json(literal(expected)), kind="public"))
        except _NotEquality:
            out.skipped["not_equality"] += 1
        except NotLiteral:
            out.skipped["not_literal"] += 1
    return out


class _NotEquality(Exception):
    pass


def _is_call_to(node: ast.AST, callee: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == callee


def _equality_parts(test: ast.expr, callee: str) -> tuple[ast.Call, ast.expr]:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        raise _NotEquality
    left, op, right = _unwrap_sequence(test.left), test.ops[0], _unwrap_sequence(test.comparators[0])
    if isinstance(op, ast.Is) and not (isinstance(right, ast.Constant) and any(right.value is v for v in (True, False, None))):
        raise _NotEquality
    if not isinstance(op, (ast.Eq, ast.Is)):
        raise _NotEquality
    if _is_call_to(left, callee) and not _is_call_to(right, callee):
        return left, right
    if _is_call_to(right, callee) and not _is_call_to(left, callee):
        return right, left
    raise _NotEquality


def _unwrap_sequence(node: ast.expr) -> ast.expr:
    """`tuple(x)` / `list(x)` -> `x`: both sides of a sequence comparison have one JSON form."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tuple", "list")
            and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred)):
        return node.args[0]
    return node


def _short(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - only for a message
        text = type(node).__name__
    return text if len(text) <= 80 else text[:77] + "..."
