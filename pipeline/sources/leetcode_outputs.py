"""The expected value of a LeetCodeDataset `input_output` item, whichever release wrote it.

Releases up to v0.2 write outputs as literals: a string answer is quoted (`"\\"001\\""`). v0.3
writes `str(value)`: a string answer is bare (`"abcdef"`, `"8"`, `"-1"`, `"None"`), while lists
keep Python's quoting (`"['a', 'b']"`). Read naively, a bare `"8"` becomes the int 8 and every
correct solution then fails, so the value's type is decided by the method's return annotation:

- annotated `str` (or `Optional[str]`): the row is in the old convention when its outputs are
  quoted strings (or null), otherwise each output is the bare text itself (`None` in an
  `Optional[str]` row that no quoted output dates may be the absent answer or the word);
- annotated with another type: the literal must conform to it (`int`, `List[str]`, ...);
- not annotated (or `Any`): a literal that is a container is taken; a bare word or a scalar that
  could as well be a string (`8`, `True`, `None`) is ambiguous.

The row's `test` asserts (`assert candidate(...) == value`) break ties and win where they
disagree with the reading; what stays ambiguous is reported, and the problem is rejected.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any

from microcoder.pipeline.sources.pyliterals import NotLiteral, convert_asserts, parse_literal, to_json

_UNKNOWN = object()  # "cannot tell" from conforms()


class AmbiguousOutput(ValueError):
    """An expected value whose type neither the annotation nor the asserts settle."""


@dataclass(frozen=True)
class ResultType:
    """A method's return annotation, parsed once per problem."""

    node: ast.expr | None  # None: not annotated / unreadable
    text: str = ""

    @classmethod
    def parse(cls, annotation: str) -> ResultType:
        text = annotation.strip()
        if not text:
            return cls(None)
        try:
            node = ast.parse(text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            return cls(None, text)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):  # 'str' forward reference
            return cls.parse(node.value)
        return cls(node, text)

    @property
    def known(self) -> bool:
        return self.node is not None and conforms(None, self.node, probe=True) is not _UNKNOWN

    @property
    def admits_str(self) -> bool:
        """The annotation is `str`, possibly optional (a bare output may be the answer itself)."""
        return self.node is not None and any(_name(n) == "str" for n in _alternatives(self.node))

    @property
    def admits_none(self) -> bool:
        return self.node is not None and any(_is_none(n) for n in _alternatives(self.node))


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return None


def _is_none(node: ast.expr) -> bool:
    return _name(node) == "None"


def _alternatives(node: ast.expr) -> list[ast.expr]:
    """`Optional[X]` -> [X, None]; `X | Y` and `Union[X, Y]` -> [X, Y]; else [node]."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _alternatives(node.left) + _alternatives(node.right)
    if isinstance(node, ast.Subscript):
        head = _name(node.value)
        if head == "Optional":
            return [*_alternatives(node.slice), ast.Constant(None)]
        if head == "Union":
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return [alt for p in parts for alt in _alternatives(p)]
    return [node]


_SEQUENCES = {"List", "list", "Sequence", "Tuple", "tuple", "Set", "set", "FrozenSet", "frozenset"}
_SCALARS = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}


def conforms(value: Any, node: ast.expr, *, probe: bool = False) -> bool | object:
    """Whether `value` (parsed JSON/Python literal) fits annotation `node`; `_UNKNOWN` for
    annotations this cannot judge (`Any`, node classes, unknown names). With `probe`, only
    whether the annotation is judgeable is computed."""
    alts = _alternatives(node)
    if len(alts) > 1:
        results = [conforms(value, a, probe=probe) for a in alts]
        if any(r is _UNKNOWN for r in results):
            return _UNKNOWN
        return probe or any(results)
    name = _name(node)
    if name == "None":
        return probe or value is None
    if name in _SCALARS:
        if probe:
            return True
        if isinstance(value, bool) and name != "bool":
            return False
        return isinstance(value, _SCALARS[name])
    if isinstance(node, ast.Subscript) and _name(node.value) in _SEQUENCES:
        inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if probe:
            return _UNKNOWN if any(conforms(None, i, probe=True) is _UNKNOWN for i in inner if _name(i) != "...") \
                else True
        if not isinstance(value, (list, tuple)):
            return False
        if len(inner) == 1 or (len(inner) == 2 and isinstance(inner[1], ast.Constant) and inner[1].value is ...):
            return all(conforms(v, inner[0]) for v in value)
        return len(inner) == len(value) and all(conforms(v, i) for v, i in zip(value, inner, strict=True))
    if name in _SEQUENCES:  # bare `list`
        return probe or isinstance(value, (list, tuple))
    if name in ("dict", "Dict") or isinstance(node, ast.Subscript) and _name(node.value) in ("dict", "Dict"):
        return probe or isinstance(value, dict)
    return _UNKNOWN


def assert_outputs(test_source: Any, params: list[str]) -> dict[str, str]:
    """{encoded arguments: expected JSON} from the `test` field's equality asserts (inputs that
    two asserts give different values are left out)."""
    if not isinstance(test_source, str) or not test_source.strip():
        return {}
    try:
        found = convert_asserts(test_source, params)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, str] = {}
    clashes = set()
    for t in found.tests:
        if out.get(t.input, t.output) != t.output:
            clashes.add(t.input)
        out[t.input] = t.output
    for key in clashes:
        del out[key]
    return out


def old_string_convention(outputs: list[Any], result: ResultType) -> bool | None:
    """For a str-returning method: True when the outputs are quoted literal strings (or null), as
    releases up to v0.2 wrote them; False when some output is bare text (v0.3); None when no
    output tells (every one is null / None) or the method does not return str."""
    if not result.admits_str:
        return None
    quoted = False
    for text in outputs:
        if not isinstance(text, str):
            continue
        try:
            value = parse_literal(text)
        except NotLiteral:
            return False
        if isinstance(value, str) and text.strip()[:1] in ("'", '"'):
            quoted = True
        elif value is not None:
            return False
    return True if quoted else None


def expected_output(text: str, result: ResultType, old_strings: bool | None, asserted: str | None) -> tuple[Any, str]:
    """(expected value, how it was decided) for one output text; AmbiguousOutput when the
    annotation and the asserts leave more than one reading (or none)."""
    try:
        literal: Any = parse_literal(text)
        parsed = True
    except NotLiteral:
        literal, parsed = None, False
    readings: list[Any] = []
    if result.admits_str:
        if old_strings:
            readings.append(literal)
        else:
            readings.append(text)
            if parsed and literal is None and result.admits_none and text.strip() in ("None", "null"):
                readings.append(None)  # Optional[str]: the absent answer, or the word itself
    elif result.known:
        if not parsed and asserted is None:
            raise NotLiteral(f"output {text[:40]!r} is not a literal")  # a malformed item, skipped
        if parsed and conforms(literal, result.node):
            readings.append(literal)
    else:  # no usable annotation
        if parsed and isinstance(literal, (list, tuple, dict)):
            readings.append(literal)
        elif parsed and isinstance(literal, str) and text.strip()[:1] in ("'", '"'):
            readings.extend([literal, text])  # v0.2 quoted string, or v0.3 text with quotes in it
        else:
            readings.extend(([literal] if parsed else []) + [text])
    encoded = _unique_json(readings)
    if asserted is not None:
        asserted_value = json.loads(asserted)
        if result.known and conforms(asserted_value, result.node) is False:
            raise AmbiguousOutput(f"the test asserts {asserted[:40]} where the annotation says {result.text}")
        how = "asserts" if len(encoded) != 1 or asserted not in encoded else "reading"
        return asserted_value, how
    if len(encoded) == 1:
        return json.loads(next(iter(encoded))), "reading"
    if not encoded:
        raise AmbiguousOutput(f"output {text[:40]!r} does not fit the return annotation {result.text or '(none)'}")
    raise AmbiguousOutput(f"output {text[:40]!r} reads as {' or '.join(sorted(encoded))[:80]} "
                          f"(return annotation {result.text or '(none)'}) and no assert settles it")


def _unique_json(values: list[Any]) -> set[str]:
    out = set()
    for v in values:
        try:
            out.add(to_json(v))
        except NotLiteral:
            continue
    return out
