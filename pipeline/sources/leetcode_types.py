"""LeetCode's ListNode / TreeNode arguments and results as JSON lists, in LeetCode's own notation.

A linked list is the list of its values; a binary tree is its level order with `null` for a
missing child of a present node, trailing nulls dropped (`[1,null,2,3]`). The evaluator's harness
builds the nodes from such lists by the parameter annotations (`ListNode`, `TreeNode`, and one
level of `List[...]` of them) and turns returned nodes back into lists, so problems whose
signatures use only these node types can be judged.

What has no faithful JSON form is reported as `Unrepresentable`: other node types (`Node` with
random / next / neighbors / children pointers, `NestedInteger`, interfaces such as
`MountainArray`), deeper nesting of nodes in arguments, and node *references* (a TreeNode argument
given as a value, as in lowest-common-ancestor problems, where `p = 5` names a node of `root`).
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass
from typing import Any

from microcoder.pipeline.sources.pyliterals import NotLiteral

STRUCTURES = ("ListNode", "TreeNode")
# Names a JSON value can stand for (builtins and typing generics seen in LeetCode signatures).
PLAIN_NAMES = frozenset({
    "int", "float", "str", "bool", "None", "list", "dict", "set", "tuple", "frozenset",
    "List", "Optional", "Dict", "Set", "Tuple", "FrozenSet", "Union", "Any", "Sequence",
})
_OPTIONAL = ("Optional",)
_SEQUENCES = ("List", "list", "Sequence")


class Unrepresentable(ValueError):
    """A signature or value that JSON lists cannot stand for (the problem is rejected)."""


@dataclass(frozen=True)
class Shape:
    """How one parameter or result maps: `structure` None (plain JSON), "ListNode" or "TreeNode";
    `many` when it is a list of such structures (`List[Optional[ListNode]]`)."""

    structure: str | None = None
    many: bool = False

    def describe(self) -> str:
        if self.structure is None:
            return "plain"
        return f"List[{self.structure}]" if self.many else self.structure


PLAIN = Shape()


def annotation_shape(text: str) -> Shape:
    """The Shape of a Python annotation given as source text ('' = no annotation = plain)."""
    if not text.strip():
        return PLAIN
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError) as e:
        raise Unrepresentable(f"annotation {text!r} does not parse") from e
    node = _unquote(node)
    names = _names(node)
    unknown = sorted(names - PLAIN_NAMES - set(STRUCTURES))
    if unknown:
        raise Unrepresentable(f"type {', '.join(unknown)} has no JSON form")
    used = sorted(names & set(STRUCTURES))
    if not used:
        return PLAIN
    if len(used) > 1:
        raise Unrepresentable(f"annotation {text!r} mixes {used}")
    node = _strip_optional(node)
    if isinstance(node, ast.Name):
        return Shape(node.id)
    if isinstance(node, ast.Subscript) and _name_of(node.value) in _SEQUENCES:
        inner = _strip_optional(_unquote(node.slice))
        if isinstance(inner, ast.Name) and inner.id in STRUCTURES:
            return Shape(inner.id, many=True)
    raise Unrepresentable(f"annotation {text!r} nests {used[0]} deeper than a list of them")


def _unquote(node: ast.expr) -> ast.expr:
    """A string annotation (`'TreeNode'`, forward reference) parsed into its expression."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _unquote(ast.parse(node.value, mode="eval").body)
        except SyntaxError as e:
            raise Unrepresentable(f"annotation {node.value!r} does not parse") from e
    return node


def _name_of(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # typing.Optional
        return node.attr
    return None


def _names(node: ast.expr) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out |= _names(_unquote(n))
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.Name):
            out.add(n.id)
    out.discard("typing")  # `typing.List` walks to Attribute(attr=List) and Name(id=typing)
    return out


def _strip_optional(node: ast.expr) -> ast.expr:
    """`Optional[X]`, `X | None`, `None | X`, `Union[X, None]` -> X."""
    while True:
        node = _unquote(node)
        if isinstance(node, ast.Subscript) and _name_of(node.value) in _OPTIONAL:
            node = node.slice
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            sides = [s for s in (node.left, node.right) if not _is_none(s)]
            if len(sides) != 1:
                return node
            node = sides[0]
        elif (isinstance(node, ast.Subscript) and _name_of(node.value) == "Union"
              and isinstance(node.slice, ast.Tuple)):
            sides = [s for s in node.slice.elts if not _is_none(s)]
            if len(sides) != 1:
                return node
            node = sides[0]
        else:
            return node


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None or isinstance(node, ast.Name) and node.id == "None"


# --- values ---------------------------------------------------------------------------------------
def check_argument(value: Any, shape: Shape, name: str) -> Any:
    """An argument value for a parameter of `shape`, checked: structures must be given as lists
    (or null) of plain values. A scalar for a node parameter is a node reference: Unrepresentable."""
    if shape.structure is None:
        return value
    if shape.many:
        if not isinstance(value, list):
            raise Unrepresentable(f"argument {name!r} ({shape.describe()}) is given as {_kind(value)}, not a list")
        for i, item in enumerate(value):
            _check_one(item, shape.structure, f"{name}[{i}]")
        return value
    _check_one(value, shape.structure, name)
    return value


def _check_one(value: Any, structure: str, name: str) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        raise Unrepresentable(f"argument {name!r} ({structure}) is given as {_kind(value)}: a reference to a "
                              "node of another argument has no JSON form")
    if any(isinstance(v, (list, dict)) for v in value):
        raise NotLiteral(f"{structure} values must be plain, got nested data in {name!r}")
    if structure == "TreeNode":
        spare = _tree_spare_values(value)
        if spare:
            raise NotLiteral(f"tree {name!r} has {spare} value(s) after the last node's children")


def canonical_result(value: Any, shape: Shape) -> Any:
    """An expected result in the form the harness reports: a linked list as its values, a tree in
    canonical level order (trailing nulls dropped), an empty structure (`null`) as `[]`."""
    if shape.structure is None:
        return value
    if shape.many:
        if not isinstance(value, list):
            raise NotLiteral(f"expected a list of {shape.structure}, got {_kind(value)}")
        return [_canonical_one(v, shape.structure) for v in value]
    return _canonical_one(value, shape.structure)


def _canonical_one(value: Any, structure: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list) or any(isinstance(v, (list, dict)) for v in value):
        raise NotLiteral(f"expected {structure} as a list of values, got {_kind(value)}")
    if structure == "ListNode":
        return value
    if _tree_spare_values(value):
        raise NotLiteral("expected tree has values after the last node's children")
    return level_order(value)


class _Node:
    __slots__ = ("val", "left", "right")

    def __init__(self, val: Any):
        self.val, self.left, self.right = val, None, None


def _build_tree(values: list) -> tuple[_Node | None, int]:
    """The tree LeetCode (and the harness) builds from a level-order list, and how many list
    entries were consumed."""
    if not values or values[0] is None:
        return None, min(len(values), 1)
    root = _Node(values[0])
    queue, i = deque([root]), 1
    while queue and i < len(values):
        node = queue.popleft()
        for side in ("left", "right"):
            if i >= len(values):
                break
            if values[i] is not None:
                child = _Node(values[i])
                setattr(node, side, child)
                queue.append(child)
            i += 1
    return root, i


def _tree_spare_values(values: list) -> int:
    """Non-null entries that attach to no node (the builder ignores them silently)."""
    _, used = _build_tree(values)
    return sum(v is not None for v in values[used:])


def level_order(values: list) -> list:
    """The canonical level-order list of the tree `values` describes."""
    root, _ = _build_tree(values)
    out: list = []
    queue: deque[_Node | None] = deque([root] if root else [])
    while queue:
        node = queue.popleft()
        if node is None:
            out.append(None)
            continue
        out.append(node.val)
        queue.append(node.left)
        queue.append(node.right)
    while out and out[-1] is None:
        out.pop()
    return out


def _kind(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


# --- signatures -----------------------------------------------------------------------------------
@dataclass
class SignatureShapes:
    params: list[Shape]
    result: Shape
    returns_list: bool = False  # the result is a plain list (an unordered checker can apply to it)

    def structures(self, names: list[str]) -> dict[str, str]:
        """{parameter or "return": shape} for every structured one (for the problem's meta)."""
        out = {n: s.describe() for n, s in zip(names, self.params, strict=True) if s.structure}
        if self.result.structure:
            out["return"] = self.result.describe()
        return out


def signature_shapes(names: list[str], annotations: list[str]) -> SignatureShapes:
    """Shapes of a method's parameters (`names`) and result from their annotations (the parameter
    annotations then the return annotation, as `pyliterals.Signature` has them). A method that
    returns None and takes a structure first modifies it in place: that structure is the result,
    as LeetCode judges it (and the harness returns it)."""
    params = []
    for name, text in zip(names, annotations[:-1], strict=True):
        try:
            params.append(annotation_shape(text))
        except Unrepresentable as e:
            raise Unrepresentable(f"parameter {name!r}: {e}") from None
    returns = annotations[-1].strip() if annotations else ""
    try:
        result = annotation_shape(returns)
    except Unrepresentable as e:
        raise Unrepresentable(f"return type: {e}") from None
    if returns == "None" and params and params[0].structure:
        result = params[0]
    return SignatureShapes(params, result, result.structure is None and _is_list_annotation(returns))


def _is_list_annotation(text: str) -> bool:
    if not text:
        return False
    try:
        node = _strip_optional(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, Unrepresentable):
        return False
    target = node.value if isinstance(node, ast.Subscript) else node
    return _name_of(target) in _SEQUENCES
