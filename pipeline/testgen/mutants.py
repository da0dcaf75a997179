"""Mutants of a reference solution: simple AST mutations (a flipped comparison, a constant + 1, min
swapped for max, + for -). A test suite is as strong as the share of mutants it kills; equivalent
mutants survive every suite, so the figure is a comparison (examples alone vs examples + generated
tests), not an absolute. The mutants are dataset code too: they run only in the sandbox."""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass

_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add}


@dataclass
class Mutant:
    label: str  # e.g. "compare Lt->LtE at line 7"
    code: str


def _sites(tree: ast.AST) -> list[tuple[ast.AST, str, int]]:
    """(node, kind, index within the node) of every mutable spot, in source order."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            out += [(node, "compare", i) for i, op in enumerate(node.ops) if type(op) in _FLIP]
        elif (isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)):
            out.append((node, "constant", 0))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
            out.append((node, "minmax", 0))
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _ARITH:
            out.append((node, "arith", 0))
    out.sort(key=lambda s: (getattr(s[0], "lineno", 0), getattr(s[0], "col_offset", 0), s[1], s[2]))
    return out


def _apply(node: ast.AST, kind: str, index: int) -> tuple[str, object]:
    """Mutate in place; returns (description, undo state)."""
    if kind == "compare":
        old = node.ops[index]
        node.ops[index] = _FLIP[type(old)]()
        return f"{type(old).__name__}->{type(node.ops[index]).__name__}", old
    if kind == "constant":
        old = node.value
        node.value = old + 1
        return f"{old}->{old + 1}", old
    if kind == "minmax":
        old = node.func.id
        node.func.id = "max" if old == "min" else "min"
        return f"{old}->{node.func.id}", old
    old = node.op
    node.op = _ARITH[type(old)]()
    return f"{type(old).__name__}->{type(node.op).__name__}", old


def _undo(node: ast.AST, kind: str, index: int, old: object) -> None:
    if kind == "compare":
        node.ops[index] = old
    elif kind == "constant":
        node.value = old
    elif kind == "minmax":
        node.func.id = old
    else:
        node.op = old


def _solution_lines(tree: ast.Module) -> tuple[int, int]:
    """The lines that are the solution: a top-level `class Solution` where there is one (LeetCode
    style: the helpers before it, `ListNode`, `list_node`, `is_same_list`, are the dataset's shared
    prelude, and a mutant of an unused helper is equivalent), else everything from the first
    definition on (the imports and constants of the prelude are not the solution)."""
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and n.name == "Solution":
            return n.lineno, n.end_lineno or n.lineno
    start = next((n.lineno for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))), 0)
    return start, 1 << 30


def make_mutants(code: str, limit: int, seed: int) -> list[Mutant]:
    """Up to `limit` distinct mutants, the sites drawn deterministically from `seed`, inside the
    solution only (`_solution_lines`)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return []
    first, last = _solution_lines(tree)
    sites = [s for s in _sites(tree) if first <= getattr(s[0], "lineno", 0) <= last]
    rng = random.Random(seed)
    order = list(range(len(sites)))
    rng.shuffle(order)
    original = ast.unparse(tree)
    out: list[Mutant] = []
    seen = {original}
    for i in order:
        if len(out) >= limit:
            break
        node, kind, index = sites[i]
        what, old = _apply(node, kind, index)
        try:
            text = ast.unparse(tree)
        finally:
            _undo(node, kind, index, old)
        if text in seen:
            continue
        seen.add(text)
        out.append(Mutant(f"{kind} {what} at line {getattr(node, 'lineno', 0)}", text))
    return out
