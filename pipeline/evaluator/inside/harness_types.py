"""LeetCode node types in functional calls (stdlib only; imported by harness_child.py in the sandbox).

A parameter or result annotated with `ListNode` / `TreeNode`, or with any nesting of them in
lists and optionals (`List[Optional[ListNode]]`, `Optional[List[TreeNode]]`,
`list[ListNode | None]`), travels as JSON in LeetCode's notation (`microcoder.pipeline.sources.
leetcode_types`): a linked list as its values, a tree in level order with `null` for a missing
child. `annotation_shape` reads that nesting from the annotation, whether Python evaluated it
(`typing.List[typing.Optional[solution.ListNode]]`, where module prefixes are in the text) or
kept it as a string (`from __future__ import annotations`, quoted forward references); the
arguments are then built to that shape, and an empty structure in a result (`None` where a node
belongs) is reported as `[]`, as LeetCode prints it. An annotation that names no node type, or is
ambiguous (`Union[ListNode, TreeNode]`), leaves the value as plain JSON.

Everything here runs in the session child, on the submission's own annotation objects, after the
submission's code has run: nothing it does is more trusted than the submission.
"""

import ast
import typing
from collections import deque

NODE_TYPES = ("ListNode", "TreeNode")
_SEQUENCE_NAMES = ("List", "list", "Sequence", "MutableSequence", "Iterable", "Collection")
_SEQUENCE_ORIGINS = ("list", "Sequence", "MutableSequence", "Iterable", "Collection")

# A shape is None (plain JSON), ("node", "ListNode" | "TreeNode"), or ("list", inner shape).
_NONE = ("none",)  # the None member of an optional, dropped by _union


# --- shapes -------------------------------------------------------------------------------------------
def annotation_shape(ann):
    """The shape of one annotation object or string; None for anything that is not a node type
    nested in lists / optionals (also when inspecting the annotation fails)."""
    try:
        shape = _object_shape(ann, 0)
    except Exception:  # noqa: BLE001 - an annotation object of the submission's own making
        return None
    return None if shape == _NONE else shape


def _object_shape(ann, depth):
    if depth > 20:
        return None
    if ann is None or ann is type(None):
        return _NONE
    if isinstance(ann, str):
        return _text_shape(ann, depth + 1)
    if isinstance(ann, typing.ForwardRef):
        return _text_shape(ann.__forward_arg__, depth + 1)
    origin = typing.get_origin(ann)
    if origin is not None:
        args = typing.get_args(ann)
        if origin is typing.Union or getattr(origin, "__name__", None) == "UnionType":
            return _union([_object_shape(a, depth + 1) for a in args])
        if getattr(origin, "__name__", None) in _SEQUENCE_ORIGINS and len(args) == 1:
            return _list_of(_object_shape(args[0], depth + 1))
        return None
    if isinstance(ann, type) and ann.__name__ in NODE_TYPES:
        return ("node", ann.__name__)
    return None


def _text_shape(text, depth):
    if depth > 20 or len(text) > 1000:
        return None
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _ast_shape(node, depth)


def _name(node):
    """`ListNode`, `typing.List`, `solution.ListNode` -> the last name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _ast_shape(node, depth):
    if depth > 40:
        return None
    if isinstance(node, ast.Constant):
        if node.value is None:
            return _NONE
        return _text_shape(node.value, depth + 1) if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # X | None
        return _union([_ast_shape(node.left, depth + 1), _ast_shape(node.right, depth + 1)])
    if isinstance(node, ast.Subscript):
        base = _name(node.value)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base == "Optional" and len(args) == 1:
            return _union([_ast_shape(args[0], depth + 1), _NONE])
        if base == "Union":
            return _union([_ast_shape(a, depth + 1) for a in args])
        if base in _SEQUENCE_NAMES and len(args) == 1:
            return _list_of(_ast_shape(args[0], depth + 1))
        return None
    name = _name(node)
    if name == "None":
        return _NONE
    return ("node", name) if name in NODE_TYPES else None


def _union(members):
    """Optional[X] / X | None / Union[X, None] -> X; a union of several real types is plain."""
    real = [m for m in members if m != _NONE]
    if not real:
        return _NONE
    return real[0] if len(real) == 1 else None


def _list_of(inner):
    return ("list", inner) if inner not in (None, _NONE) else None


# --- values ---------------------------------------------------------------------------------------------
def to_linked_list(values, cls):
    if values is None:
        return None
    head = None
    for v in reversed(values):
        head = cls(v, head)
    return head


def to_tree(values, cls):
    if not values or values[0] is None:
        return None
    it = iter(values)
    root = cls(next(it))
    queue = deque([root])
    while queue:
        node = queue.popleft()
        for side in ("left", "right"):
            try:
                v = next(it)
            except StopIteration:
                return root
            if v is not None:
                child = cls(v)
                setattr(node, side, child)
                queue.append(child)
    return root


BUILDERS = {"ListNode": to_linked_list, "TreeNode": to_tree}


def build_argument(value, shape, classes):
    """A JSON argument built to `shape`; `classes` maps a node type name to the class to build
    (None: leave the value as it is). Values that do not fit the shape are passed unchanged."""
    if shape is None:
        return value
    if shape[0] == "list":
        if not isinstance(value, list):
            return value
        return [build_argument(v, shape[1], classes) for v in value]
    cls = classes.get(shape[1])
    if cls is None or not (value is None or isinstance(value, list)):
        return value
    return BUILDERS[shape[1]](value, cls)


def empty_nodes_as_lists(value, shape):
    """A result of `shape` with every missing structure (None where a node belongs) as `[]`, as
    LeetCode prints an empty list or tree. Lists and tuples are rebuilt as what they were
    (exact types only: a subclass's own iteration is the Encoder's business)."""
    if shape is None:
        return value
    if shape[0] == "node":
        return [] if value is None else value
    if type(value) in (list, tuple):
        items = [empty_nodes_as_lists(v, shape[1]) for v in value]
        return items if type(value) is list else tuple(items)
    return value
