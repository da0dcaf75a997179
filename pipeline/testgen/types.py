"""Parameter types of a functional entry point, read from its annotations (the reference's or the
starter code's), in the JSON forms the evaluator's harness accepts: a `TreeNode` / `ListNode`
travels as a list in LeetCode notation (see `microcoder.pipeline.sources.leetcode_types`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from microcoder.pipeline.sources.pyliterals import find_signature

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


def signature_of(entry_point: str, starter_code: str | None, reference: str | None,
                 examples: list[list] | None = None) -> Signature:
    """The entry point's parameters and types, from the starter code, else the reference; a
    parameter without a usable annotation takes the type its example values have. Only parsed
    (ast), never run."""
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
    types = []
    for k, text in enumerate(sig.annotations[:-1]):
        try:
            types.append(parse_annotation(text))
        except Unsupported:
            seen = [ex[k] for ex in examples or [] if k < len(ex)]
            typ = _complete(type_of_values(seen))
            if typ is None:
                raise
            types.append(typ)
    return Signature(list(sig.params), types)


def type_of_values(values: list) -> Type | None:
    """A parameter's type read off the examples' JSON values (no or a bare annotation: `list`);
    None when they do not agree on one we generate (int and float agree on float)."""
    out: Type | None = None
    for v in values:
        if v is None:
            continue
        t = _value_type(v)
        out = t if out is None else _merge(out, t)
        if out is None:
            return None
    return out


def _complete(t: Type | None) -> Type | None:
    """Lists only ever seen empty hold ints."""
    if t is None or t.kind != "list":
        return t
    return Type("list", _complete(t.inner) if t.inner is not None else Type("int"))


def _merge(a: Type | None, b: Type | None) -> Type | None:
    if a is None or b is None:
        return None
    if a == b:
        return a
    if {a.kind, b.kind} == {"int", "float"}:
        return Type("float")
    if a.kind == b.kind == "list":
        if a.inner is None or b.inner is None:
            return a if b.inner is None else b  # an empty list says nothing about its items
        inner = _merge(a.inner, b.inner)
        return Type("list", inner) if inner is not None else None
    return None


def _value_type(v) -> Type | None:
    if isinstance(v, bool):
        return Type("bool")
    if isinstance(v, int):
        return Type("int")
    if isinstance(v, float):
        return Type("float")
    if isinstance(v, str):
        return Type("str")
    if isinstance(v, list):
        if not v:
            return Type("list", None)
        inner = type_of_values(v)
        return Type("list", inner) if inner is not None else None
    return None
