"""The `Constraints:` section of a LeetCode statement as bounds, equalities, alphabets and flags.

LeetCode writes `1 <= nums.length <= 10^5`, but LeetCodeDataset's text lost the superscripts:
`10^5` reads `105`, `2^31` reads `231`. `number()` undoes that where it is unambiguous enough
(`10d` / `10dd` with an exponent 1..18, `231` / `232`); `check_against_examples` (in the
generator) then drops any bound the statement's own examples break, so a misread number costs a
constraint, not the problem.

Every reference in a constraint becomes a *key*:
- `val:k` the value of scalar parameter `k`; `val:nums[]` the elements of `nums`; `val:grid[][]`
  the cells of a grid; `val:flights[][2]` one field of every row (`flights[i] = [fromi, toi,
  pricei]` in the statement names the fields); `val:node` a tree or list node's value;
- `len:nums` a length (`nums.length`), `len:grid[]` the row lengths; `len:nodes` how many nodes a
  tree or linked list has ("The number of nodes in the tree is in the range [0, 10^4]");
- `var:n` a name the statement introduces (`n == nums.length`, `1 <= n <= 10^5`).

Bounds are kept as expression text (`n - 1`, `nums.length`, `2 * 10^4`) and evaluated when
values are drawn, against what has been drawn so far (`evaluate`).

A statement without a Constraints section (HumanEval's docstrings, MBPP's one sentence) gets the
comparisons and a few phrases its prose states (`prose_constraints`); `Constraints.section` says
which it was (the space infers relations from the examples only where there is no section).
"""

from __future__ import annotations

import ast
import functools
import math
import operator
import re
import string
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

_CMP = re.compile(r"(<=|>=|==|!=|<|>)")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\ufeff\xa0"), " ")
_TARGET = re.compile(r"^[A-Za-z_]\w*(\[[A-Za-z_0-9]+\])*(\.(length|val|size))?$")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s*(?:\^|\*\*)\s*(\d+))?(?![\w.])")
_FIELDS = re.compile(r"(\w+)\[i\]\s*=\s*\[([^\]\n]+)\]")
_RANGE = re.compile(r"(?:the )?(.+?) (?:is|are) in the range \[([^,\]]+),\s*([^\]]+)\]", re.I)
_NODES = re.compile(r"number of nodes", re.I)
_MARKER = re.compile(r"^(?:[-*•]|\d{1,2}[.)])\s+")  # a list marker: `- `, `* `, `1. `
_LEN_CALL = re.compile(r"\blen\(\s*([A-Za-z_]\w*)\s*\)")  # `len(arr)` in a docstring: `arr.length`


def number(token: str, power: str | None = None) -> str:
    """One number token as Python text, with lost superscripts restored (`105` -> `10**5`)."""
    if power is not None:
        return f"({token}**{power})"
    if "." in token:
        return token
    m = re.fullmatch(r"10(\d{1,2})", token)
    if m and 1 <= int(m.group(1)) <= 18 and not m.group(1).startswith("0"):
        return f"(10**{int(m.group(1))})"
    if token in ("231", "232"):
        return f"(2**{token[1:]})"
    return token


def to_python(text: str) -> str:
    """Constraint arithmetic as Python expression text (numbers restored, `^` as power)."""
    return _NUMBER.sub(lambda m: number(m.group(1), m.group(2)), text).replace("^", "**")


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.Mod: operator.mod}


class Unresolved(ValueError):
    """An expression names something not (yet) known."""


def evaluate(expr: str, lookup) -> float | int:
    """Arithmetic over numbers and keys. `lookup(key)` gives a key's value or raises Unresolved.
    Our own tiny evaluator (the statement's text is data, never run as code)."""
    tree = _parsed(expr)
    if tree is None:
        raise Unresolved(f"not arithmetic: {expr!r}")
    return _eval(tree, lookup)


@functools.lru_cache(maxsize=4096)
def _parsed(expr: str) -> ast.expr | None:
    try:
        return ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def _eval(node: ast.expr, lookup) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand, lookup)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left, lookup), _eval(node.right, lookup)
        if isinstance(node.op, ast.Pow) and (abs(right) > 64 or abs(left) > 10**6):
            raise Unresolved("power too large")
        try:
            out = _BINOPS[type(node.op)](left, right)
        except (ZeroDivisionError, OverflowError) as e:
            raise Unresolved(str(e)) from e
        return int(out) if isinstance(out, float) and out.is_integer() and isinstance(node.op, ast.Div) else out
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max") and node.args:
        return (min if node.func.id == "min" else max)(_eval(a, lookup) for a in node.args)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return lookup(ast.unparse(node))
    raise Unresolved(f"unsupported expression {ast.unparse(node)!r}")


@dataclass
class Bound:
    expr: str  # Python expression text
    strict: bool = False


@dataclass
class Constraints:
    lower: dict[str, list[Bound]] = field(default_factory=lambda: defaultdict(list))
    upper: dict[str, list[Bound]] = field(default_factory=lambda: defaultdict(list))
    equal: list[tuple[str, str]] = field(default_factory=list)  # key pairs that are equal
    alphabets: dict[str, str] = field(default_factory=dict)  # key (val:s, val:words[]) -> characters
    flags: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # key -> sorted, desc, distinct, permutation
    lines: list[str] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    section: bool = False  # the statement has a Constraints section (else `lines` come from its prose)

    def describe(self) -> dict[str, Any]:
        return {"lower": {k: [b.expr for b in v] for k, v in sorted(self.lower.items())},
                "upper": {k: [b.expr for b in v] for k, v in sorted(self.upper.items())},
                "equal": self.equal, "alphabets": dict(sorted(self.alphabets.items())),
                "flags": {k: sorted(v) for k, v in sorted(self.flags.items())}}


def constraint_lines(statement: str) -> list[str]:
    """The lines of the statement's Constraints section (up to a Follow-up or the end)."""
    text = statement.translate(_ZERO_WIDTH)
    m = re.search(r"^\s*Constraints\s*:?\s*$", text, re.M | re.I) or re.search(r"Constraints\s*:", text, re.I)
    if not m:
        return []
    out = []
    for line in text[m.end():].splitlines():
        line = _MARKER.sub("", line.strip()).strip()
        if not line:
            continue
        if re.match(r"(follow[- ]?up|note)\b|```|implement:", line, re.I):  # HumanEval: the signature follows
            break
        out.append(line)
    return out


class KeyMap:
    """Statement references -> keys, for one signature (parameter names and their types)."""

    def __init__(self, params: dict[str, Any], statement: str):
        self.params = params  # name -> Type (microcoder.pipeline.testgen.types)
        self.fields: dict[str, str] = {}  # `fromi` -> `val:flights[][0]`
        for m in _FIELDS.finditer(statement.translate(_ZERO_WIDTH)):
            owner = m.group(1)
            if owner not in params:
                continue
            for k, name in enumerate(n.strip() for n in m.group(2).split(",")):
                if re.fullmatch(r"[A-Za-z_]\w*", name) and name not in params:
                    self.fields.setdefault(name, f"val:{owner}[][{k}]")

    def key(self, ref: str) -> str | None:
        ref = ref.strip()
        if not _TARGET.match(ref):
            return None
        if re.fullmatch(r"(?i)node\.val|node\.value", ref):
            return "val:node"
        base = re.match(r"[A-Za-z_]\w*", ref).group(0)
        rest = ref[len(base):]
        length = rest.endswith((".length", ".size"))
        rest = re.sub(r"\.(length|size|val)$", "", rest)
        dims = re.sub(r"\[[A-Za-z_]\w*\]", "[]", rest)  # nums[i] / nums[j] / grid[r][c] -> []
        if base in self.params:
            return f"len:{base}{dims}" if length else f"val:{base}{dims}"
        if base in self.fields and not rest and not length:
            return self.fields[base]
        if length or rest:
            return None
        return f"var:{base}"


def parse_constraints(statement: str, keys: KeyMap) -> Constraints:
    c = Constraints()
    c.lines = constraint_lines(statement)
    c.section = bool(c.lines)
    if not c.section:
        c.lines = prose_constraints(statement, keys)
    for line in c.lines:
        if not _parse_line(line, keys, c):
            c.unparsed.append(line)
    return c


# In prose: a chain of comparisons between numbers and parameters (`1 <= n <= 10^3`, `n > 1`,
# `0 <= k <= len(arr)`); and a few phrases (`a positive integer n`, `base numbers are less than 10`).
_TERM = r"(?:-?\d+(?:\.\d+)?(?:\s*\^\s*\d+)?(?:\s*\*\s*\d+(?:\s*\^\s*\d+)?)?|len\(\s*[A-Za-z_]\w*\s*\)|[A-Za-z_]\w*(?:\.length)?)"
_CHAIN = re.compile(rf"(?<![\w.(\[]){_TERM}(?:\s*(?:<=|>=|<|>|≤|≥)\s*{_TERM})+(?![\w(\[])")
_EXAMPLE_LINE = re.compile(r">>>|=>|==|->")
_SIGNED = re.compile(r"\b(positive|non-?negative)\s+(?:whole\s+)?(?:integers?|numbers?)\s+"
                     r"([A-Za-z_]\w*)(?:\s*(?:,|and)\s*([A-Za-z_]\w*))?", re.I)
_SIGNED_LIST = re.compile(r"\b(?:list|array)\s+of\s+(positive|non-?negative)\s+(?:integers|numbers)", re.I)
_SORTED_INPUT = re.compile(r"\b(?:given|takes|receives)\s+(?:an?\s+|the\s+)?sorted\s+(?:array|list)\b", re.I)
_COMPARED = re.compile(r"\b([A-Za-z_]\w*)(?:\s+numbers?)?\s+(?:is|are)\s+(less than|at most|greater than|at least)\s+(-?\d+)\b",
                       re.I)


def prose_constraints(statement: str, keys: KeyMap) -> list[str]:
    """Constraint lines read from a statement without a Constraints section (HumanEval's docstrings,
    MBPP's one sentence): comparison chains that name a parameter (`Restrictions: 1 <= num <= 1000`,
    `Assume n > 1 and is not a prime`), and the phrases `positive` / `non-negative integer(s) n`,
    `list of positive integers`, `base numbers are less than 10` on a parameter, `given a sorted
    array` where there is one list. Example lines (`>>>`, `=>`) are not read. A misreading the
    statement's examples break is dropped later with every other bound they break (`Space`)."""
    text = statement.translate(_ZERO_WIDTH)
    out: list[str] = []
    for line in text.splitlines():
        if _EXAMPLE_LINE.search(line):
            continue
        for m in _CHAIN.finditer(line):
            chain = _LEN_CALL.sub(r"\1.length", m.group(0))
            refs = [t for t in re.split(r"\s*(?:<=|>=|<|>|≤|≥)\s*", chain) if re.match(r"[A-Za-z_]", t)]
            if len(set(refs)) == 1 and not _is_param_ref(refs[0], keys):
                chain = _abbreviation(chain, refs[0], keys)
                refs = [t for t in re.split(r"\s*(?:<=|>=|<|>|≤|≥)\s*", chain) if re.match(r"[A-Za-z_]", t)]
            if refs and all(_is_param_ref(r, keys) for r in refs):
                out.append(chain)
    return out + _phrases(text, keys)


def _abbreviation(chain: str, name: str, keys: KeyMap) -> str:
    """`1 <= num <= 1000` for the parameter `number`: a name that begins, or is the beginning of,
    exactly one numeric scalar parameter's name is that parameter."""
    numeric = [n for n, t in keys.params.items() if t.kind in ("int", "float")]
    match = [n for n in numeric if n.lower().startswith(name.lower()) or name.lower().startswith(n.lower())]
    if len(match) != 1 or "." in name:
        return chain
    return re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w.])", match[0], chain)


def _is_param_ref(ref: str, keys: KeyMap) -> bool:
    key = keys.key(ref)
    return key is not None and not key.startswith("var:") and key != "val:node"


def _phrases(text: str, keys: KeyMap) -> list[str]:
    ints = [n for n, t in keys.params.items() if t.kind == "int"]
    int_lists = [n for n, t in keys.params.items() if t.kind == "list" and t.inner is not None and t.inner.kind == "int"]
    out = []
    for m in _SIGNED.finditer(text):
        low = "1" if m.group(1).lower() == "positive" else "0"
        out += [f"{low} <= {n}" for n in m.groups()[1:] if n in ints]
    for m in _SIGNED_LIST.finditer(text):
        if len(int_lists) == 1:  # which list is meant is clear only when there is one
            out.append(f"{'1' if m.group(1).lower() == 'positive' else '0'} <= {int_lists[0]}[i]")
    lists = [n for n, t in keys.params.items() if t.kind == "list"]
    if len(lists) == 1 and _SORTED_INPUT.search(text):  # "Given a sorted array of integers"
        out.append(f"{lists[0]} is sorted in non-decreasing order")
    for m in _COMPARED.finditer(text):
        name, how, number = m.groups()
        if name in ints:
            op = {"less than": "<", "at most": "<=", "greater than": ">", "at least": ">="}[how.lower()]
            out.append(f"{name} {op} {number}")
    return out


def _parse_line(line: str, keys: KeyMap, c: Constraints) -> bool:
    line = _LEN_CALL.sub(r"\1.length", line)
    text = re.sub(r"(?<=[\w)\]\s])=(?=[\s\w(-])", "==", line.rstrip("."))  # `a.length = b.length`
    text = text.replace("===", "==").replace("≤", "<=").replace("≥", ">=").replace("–", "-").replace("−", "-")
    found = False
    m = _RANGE.search(text)
    if m:
        what, lo, hi = m.group(1), to_python(m.group(2)), to_python(m.group(3))
        key = "len:nodes" if _NODES.search(what) else keys.key(what.split()[-1])
        if key:
            c.lower[key].append(Bound(lo))
            c.upper[key].append(Bound(hi))
            found = True
    elif _CMP.search(text) and not re.search(r"[A-Za-z]{3,} [A-Za-z]{3,} [A-Za-z]{3,}", text):
        found = _parse_chain(text, keys, c)
    found = _parse_words(text, keys, c) or found
    return found


def _targets(part: str, keys: KeyMap) -> list[str] | None:
    names = [p.strip() for p in part.split(",")]
    out = [keys.key(n) for n in names]
    return out if names and all(out) else None


def _parse_chain(text: str, keys: KeyMap, c: Constraints) -> bool:
    pieces = _CMP.split(text)
    parts, ops = [p.strip() for p in pieces[0::2]], pieces[1::2]
    if any(not p for p in parts):
        return False
    found = False
    for left, op, right in zip(parts, ops, parts[1:], strict=False):
        lt, rt = _targets(left, keys), _targets(right, keys)
        if op == "==":
            if lt and rt:
                for a in lt:
                    for b in rt:
                        c.equal.append((a, b))
                found = True
            elif lt or rt:
                targets, other = (lt, right) if lt else (rt, left)
                for t in targets:
                    c.lower[t].append(Bound(to_python(other)))
                    c.upper[t].append(Bound(to_python(other)))
                found = True
            continue
        if op == "!=":
            continue
        if op in (">", ">="):  # a >= b  is  b <= a
            left, right, lt, rt = right, left, rt, lt
        strict = op in ("<", ">")
        if rt and not (lt and len(lt) > 1):  # left bounds each target on the right from below
            for t in rt:
                c.lower[t].append(Bound(to_python(left), strict))
            found = True
        if lt and not (rt and len(rt) > 1):
            for t in lt:
                c.upper[t].append(Bound(to_python(right), strict))
            found = True
    return found


def _parse_words(text: str, keys: KeyMap, c: Constraints) -> bool:
    low = text.lower()
    named = [n for n in keys.params if re.search(rf"(?<![\w.\[]){re.escape(n)}(\[[a-z]\])*(?![\w(])", text)]
    found = False
    if re.search(r"consist|contain|only|either|characters|letters|digits|is one of", low):
        lower = re.search(r"lower\s*-?\s*case", low)
        upper = re.search(r"upper\s*-?\s*case", low)
        if lower or upper:
            chars = (string.ascii_lowercase if lower else "") + (string.ascii_uppercase if upper else "")
        else:
            chars = string.ascii_letters if re.search(r"\bletters\b", low) else ""
        if re.search(r"\bdigits?\b", low):
            chars += string.digits
        chars += "".join(re.findall(r"'(.)'", text)) + "".join(re.findall(r'"(.)"', text))
        if re.search(r"\bspaces?\b|' '", low):
            chars += " "
        chars = "".join(sorted(set(chars)))
        if chars:
            targets = named or [n for n, t in keys.params.items() if t.is_stringy()][:1]
            for n in targets:
                key = f"val:{n}" + "[]" * keys.params[n].depth()  # the characters' key: `board[i][j]` too
                c.alphabets[key] = chars
            found = bool(targets)
    flags = set()
    if re.search(r"sorted|non-?decreasing|ascending|increasing order", low):
        desc = re.search(r"non-?increasing|descending|(?<!non-)(?<!non)decreasing order", low)
        flags.add("desc" if desc else "sorted")
    if re.search(r"\bdistinct\b|\bunique\b", low) and not re.search(r"unique (answer|solution)", low):
        flags.add("distinct")
    if "permutation" in low:
        flags.add("permutation")
    if flags:
        lists = [n for n in named if keys.params[n].kind == "list"]
        if not lists and "permutation" not in flags:
            return found
        for n in lists or [n for n, t in keys.params.items() if t.kind == "list"][:1]:
            c.flags[f"val:{n}"] |= flags
        found = True
    return found


def finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
