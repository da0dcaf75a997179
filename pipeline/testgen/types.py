"""Parameter types of a functional entry point, read from its annotations (the reference's or the
starter code's), in the JSON forms the evaluator's harness accepts: a `TreeNode` / `ListNode`
travels as a list in LeetCode notation (see `pipeline.sources.leetcode_types`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from pipeline.sources.pyliterals import find_signature

KINDS = ("int", "float", "bool", "str", "list", "tree", "linked")
_SCALARS = {"int": "int", "float": "float", "bool": "bool", "str": "str"}
_LISTS = ("List", "list", "Sequence")
_OPTIONAL = ("Optional",)


class Unsupported(ValueError):
    """A signature whose inputs we cannot generate (other node types, dicts, no annotations...)."""


@dataclass(frozen=True)
class Type:
    kind: str
    inner: Type | None = None

    def depth(self) -> int:
        return 1 + self.inner.depth() if self.kind == "list" and self.inner else 0

    def leaf(self) -> Type:
        return self.inner.leaf() if self.kind == "list" and self.inner else self

    def is_stringy(self) -> bool:
        return self.leaf().kind == "str"

    def __str__(self) -> str:
        return f"List[{self.inner}]" if self.kind == "list" else self.kind


def parse_annotation(text: str) -> Type:
    if not text.strip():
        raise Unsupported("parameter without an annotation")
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError as e:
        raise Unsupported(f"annotation {text!r} does not parse") from e
    return _type(node)


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _type(node: ast.expr) -> Type:
    if isinstance(node, ast.Subscript) and _name(node.value) in _OPTIONAL:
        return _type(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # X | None
        sides = [s for s in (node.left, node.right) if _name(s) != "None" and not
                 (isinstance(s, ast.Constant) and s.value is None)]
        if len(sides) == 1:
            return _type(sides[0])
    name = _name(node)
    if name in _SCALARS:
        return Type(_SCALARS[name])
    if name == "TreeNode":
        return Type("tree")
    if name == "ListNode":
        return Type("linked")
    if isinstance(node, ast.Subscript) and _name(node.value) in _LISTS:
        inner = _type(node.slice)
        if inner.kind in ("tree", "linked"):
            raise Unsupported("lists of nodes are not generated")
        return Type("list", inner)
    raise Unsupported(f"type {ast.unparse(node)!r} is not generated")


@dataclass
class Signature:
    names: list[str]
    types: list[Type]


def entry_name(entry_point: str) -> tuple[str, str | None]:
    """`Solution().twoSum` -> ("twoSum", "Solution"); `add` -> ("add", None)."""
    entry = entry_point.strip()
    if "." in entry:
        owner, name = entry.rsplit(".", 1)
        return name, owner.replace("()", "").strip() or None
    return entry, None


def signature_of(entry_point: str, starter_code: str | None, reference: str | None) -> Signature:
    """The entry point's parameters and types, from the starter code, else the reference.
    Only parsed (ast), never run."""
    name, owner = entry_name(entry_point)
    sig = None
    for source in (starter_code, reference):
        if not source:
            continue
        for text in (source, source.rstrip() + "\n        pass\n", source.rstrip() + "\n    pass\n"):
            sig = find_signature(text, name, owner) or (find_signature(text, name, "Solution") if not owner else None)
            if sig:
                break
        if sig and all(a.strip() for a in sig.annotations[:-1]):
            break
    if sig is None:
        raise Unsupported(f"no signature for {entry_point!r}")
    return Signature(list(sig.params), [parse_annotation(a) for a in sig.annotations[:-1]])
