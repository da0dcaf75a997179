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

Relations across values: a comparison between two fields of one row (`1 <= starti < endi <= 10^5`
gives `val:events[][1] > starti`; the space checks those row by row), `!=` between two keys
(`differ`), and phrases (`_parse_relations`): "the answer is unique" / "exactly one solution"
(`unique_answer`), `n is even` (flag even / odd), `c occurs at least once in s` (`contains`), "no
repeated edges" / "All the pairs (xi, yi) are distinct" (flag distinct on the rows; distinct-edges
where they are edges: `[u, v]` repeats `[v, u]`), "Each colori
is distinct" (on the field), "n does not have leading zeros" (flag no-leading-zero), and "an array
of unique strings words" in the prose (`_prose_distinct`).

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
_FIELDS = re.compile(r"(\w+)\[i\]\s*=\s*[\[(]([^\])\n]+)[\])]")  # `times[i] = (ui, vi, wi)` too
# `X is in the range [a, b]`: the tail is found first and X is what comes before it on the line; a
# bound is at most 200 characters of one line. (Unbounded, the lazy `(.+?)` before the tail and a
# bound without its `]` each took quadratic time: 2.4 s on a 14 KB line.)
_RANGE_TAIL = re.compile(r" (?:is|are|will be) in the range \[([^,\]\n]{1,200}),\s*([^\]\n]{1,200})\]", re.I)


def _range(text: str) -> tuple[str, str, str] | None:
    """(what, low, high) of the first `what is in the range [low, high]`; `what` is the rest of its
    line before the tail."""
    for m in _RANGE_TAIL.finditer(text):
        what = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        what = what[4:] if what[:4].lower() == "the " and len(what) > 4 else what
        if what:
            return what, m.group(1), m.group(2)
    return None
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
        return lookup(_text_of(node))
    raise Unresolved(f"unsupported expression ({type(node).__name__})")


@functools.lru_cache(maxsize=65536)
def _text_of(node: ast.expr) -> str:
    """A reference's text (`ast.unparse` per evaluation was most of a draw's time: a row relation is
    evaluated once per row). Nodes hash by identity and come from `_parsed`'s cache."""
    return ast.unparse(node)


def arithmetic(expr: str) -> bool:
    """Whether `_eval` can read `expr` at all (numbers, references, + - * / // % **, min, max):
    a bound that is not (`1 or queries[i][0]`, cut out of `x == 1 or x == 2`) never says anything,
    and re-trying it on every row of every draw cost minutes."""
    def ok(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, (ast.USub, ast.UAdd)) and ok(node.operand)
        if isinstance(node, ast.BinOp):
            return type(node.op) in _BINOPS and ok(node.left) and ok(node.right)
        if isinstance(node, ast.Call):
            return isinstance(node.func, ast.Name) and node.func.id in ("min", "max") and bool(node.args) \
                and all(ok(a) for a in node.args)
        return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript))
    tree = _parsed(expr)
    return tree is not None and ok(tree)


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
    differ: list[tuple[str, str]] = field(default_factory=list)  # key pairs that differ (`ui != vi`: per row)
    contains: list[tuple[str, str]] = field(default_factory=list)  # (item, container) parameters: `c occurs in s`
    present: list[tuple[Any, str]] = field(default_factory=list)  # (value, parameter): `s contains at least one '1'`
    excluded: list[tuple[str, Any]] = field(default_factory=list)  # (key, value): `nums[i] != 0`
    # (parameter, index path with -1 for the last, == or !=, value): `grid[0][0] == grid[m - 1][n - 1] == 0`
    positions: list[tuple[str, tuple[int, ...], str, Any]] = field(default_factory=list)
    unique_answer: bool = False  # "exactly one solution": an input of several answers has no one expected output
    lines: list[str] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    section: bool = False  # the statement has a Constraints section (else `lines` come from its prose)

    def describe(self) -> dict[str, Any]:
        return {"lower": {k: [b.expr for b in v] for k, v in sorted(self.lower.items())},
                "upper": {k: [b.expr for b in v] for k, v in sorted(self.upper.items())},
                "equal": self.equal, "differ": self.differ, "contains": self.contains, "present": self.present,
                "excluded": self.excluded, "positions": self.positions,
                "unique_answer": self.unique_answer, "alphabets": dict(sorted(self.alphabets.items())),
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
        if re.match(r"(follow[- ]?up|note)\b|```|implement:|#+\s*example|example\s*\d*\s*:", line, re.I):
            break  # HumanEval: the signature follows; Markdown statements: the examples
        quoted = re.findall(r"`([^`]+)`", line)
        if quoted and not re.sub(r"`[^`]+`|[\s,.;]|and", "", line):  # `1 <= m, n <= 100`, `-100 <= x <= 100`.
            out += [q.strip() for q in quoted]
        else:
            out.append(line)
    return out


class KeyMap:
    """Statement references -> keys, for one signature (parameter names and their types)."""

    def __init__(self, params: dict[str, Any], statement: str):
        self.params = params  # name -> Type (microcoder.pipeline.testgen.types)
        self.fields: dict[str, str] = {}  # `fromi` -> `val:flights[][0]`
        for m in _FIELDS.finditer(statement.translate(_ZERO_WIDTH)):
            owner = m.group(1) if m.group(1) in params else m.group(1) + "s"  # "Each rectangle[i] = [xi1, ...]"
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
    _prose_distinct(statement, keys, c)
    if c.section:
        _given_facts(statement, keys, c)
    return c


def body_sentences(statement: str) -> list[str]:
    """The sentences before a Constraints section and its examples (none without a section)."""
    text = statement.translate(_ZERO_WIDTH)
    m = re.search(r"^\s*Constraints\s*:?\s*$", text, re.M | re.I) or re.search(r"Constraints\s*:", text, re.I)
    if not m:
        return []
    body = re.split(r"^\s*(?:\*\*)?Example\b", text[:m.start()], maxsplit=1, flags=re.M | re.I)[0]
    return [x.strip() for x in re.split(r"(?<=[.!?])\s+|\n+", body) if x.strip()]


_GIVEN = re.compile(r"(?:Given|You are given|You're given)\b")
_NOT_FACT = re.compile(r"\(?\b(?:not necessarily|may or may not be) (?:distinct|unique|sorted)\)?|may contain duplicates", re.I)
# distinct items of a list ("distinct characters" are a string's: no fact about a list)
_DISTINCT_ITEMS = re.compile(r"\b(?:distinct|unique) (?:(?:positive|negative|non-negative|prime) )?(?:integers|numbers|elements|values"
                             r"|digits|strings|words)\b|\b(?:integers|numbers|elements|values) (?:are |is )?(?:all )?"
                             r"(?:distinct|unique)\b", re.I)


def given_facts(statement: str) -> list[str]:
    """The parts of the sentences introducing the inputs ("You are given an integer array nums, which
    contains distinct elements and an integer k"; "Given three integer arrays arr1, arr2 and arr3
    sorted in strictly increasing order, return ...") up to what is asked ("return"), without
    "(not necessarily distinct)"."""
    out = []
    for sentence in body_sentences(statement):
        if _GIVEN.match(sentence):
            part = _NOT_FACT.sub("", re.split(r"\breturn\b", sentence, maxsplit=1, flags=re.I)[0]).strip(" ,")
            if part:
                out.append(part)
    return out


def _given_facts(statement: str, keys: KeyMap, c: Constraints) -> None:
    """What a Given sentence says of a list's order or items (sorted, strictly increasing, distinct
    items, a permutation), read as a Constraints line would be; an example that breaks it drops it
    (`Space._drop_broken_bounds`), as it does a misread line."""
    lists = [n for n, t in keys.params.items() if t.kind == "list"]
    for part in given_facts(statement):
        if len(lists) == 1 and not any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", part) for n in keys.params):
            part = f"{part} ({lists[0]})"  # "You are given a sorted array consisting of only integers": the one list
        got = Constraints()
        _parse_words(part, keys, got)
        for key, flags in got.flags.items():
            typ = keys.params.get(key[4:].split("[")[0])
            if typ is None or (key.count("[") == 0 and typ.inner is not None and typ.inner.kind == "list"):
                continue  # a grid's own order ("sort each matrix diagonal in ascending order") is no list's
            if "distinct" in flags and not _DISTINCT_ITEMS.search(part) and not {"sorted", "desc"} & flags:
                flags = flags - {"distinct"}  # "choose four distinct indices" is no fact about nums
            if flags:
                c.flags[key] |= flags


_DISTINCT_PROSE = re.compile(r"\b(?:array|list|set)\s+of\s+(?:\w+\s+)?(?:unique|distinct)\s+(strings|words|integers|numbers|elements|values)"
                             r"(?:\s+([A-Za-z_]\w*))?", re.I)


def _prose_distinct(statement: str, keys: KeyMap, c: Constraints) -> None:
    """"You are given a 0-indexed array of unique strings words" (the statement's first lines, not
    its Constraints): the list named after it, else the only list of that kind, has distinct items."""
    for m in _DISTINCT_PROSE.finditer(statement.translate(_ZERO_WIDTH)):
        stringy = m.group(1).lower() in ("strings", "words")
        fits = [n for n, t in keys.params.items() if t.kind == "list" and t.inner is not None
                and (t.inner.kind == "str") == stringy and t.inner.kind != "list"]
        name = m.group(2) if m.group(2) in fits else fits[0] if len(fits) == 1 else None
        if name:
            c.flags[f"val:{name}"].add("distinct")


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
    if _parse_present(text, keys, c):  # before the alphabet's reading: `s contains at least one '1'` is no alphabet
        return True
    if _parse_positions(text, keys, c) or _parse_excluded(text, keys, c) or _parse_char_range(text, keys, c):
        return True
    text = _PARITY_OF.sub(lambda m: f"{m.group(1)} is {'even' if m.group(2) == '0' else 'odd'}", text)
    text = _EVEN_LENGTH.sub(lambda m: f"{m.group(1)}.length is {m.group(2)}", text)
    ranged = _range(text)
    if ranged:
        what, lo, hi = ranged[0], to_python(ranged[1]), to_python(ranged[2])
        key = "len:nodes" if _NODES.search(what) else keys.key(what.split()[-1])
        if key:
            c.lower[key].append(Bound(lo))
            c.upper[key].append(Bound(hi))
            found = True
    elif _CMP.search(text) and not re.search(r"[A-Za-z]{3,} [A-Za-z]{3,} [A-Za-z]{3,}", text):
        found = _parse_chain(text, keys, c)
    elif _CHOICE_WORDS.match(text):  # `grid[i][j] is either 0 or 1`: as `== 0 or == 1` (each name of `a and b are`)
        names, values = _CHOICE_WORDS.match(text).group(1), re.findall(r"-?\d+", _CHOICE_WORDS.match(text).group(2))
        read = [_parse_choice(" or ".join(f"{name} == {v}" for v in values), keys, c) for name in names.split(" and ")]
        found = all(read)
    found = _parse_relations(text, keys, c) or found
    found = _parse_adjacent(text, keys, c) or found
    found = _parse_words(text, keys, c) or found
    return found


# Phrases that relate values (a stated relation a random draw breaks fails correct code):
_UNIQUE_ANSWER = re.compile(r"exactly one (?:valid )?(?:solution|answer)|(?:answer|solution) is unique|unique (?:answer|solution)"
                            r"|only one (?:valid |optimal )?(?:answer|solution|division)", re.I)
_PARITY = re.compile(r"^([A-Za-z_][\w.\[\]]*) is (even|odd)$")
_CONTAINS = re.compile(r"\b([A-Za-z_]\w*) (?:occurs|appears|is present)(?: at least once)? in ([A-Za-z_]\w*)"
                       r"|\b([A-Za-z_]\w*) is guaranteed to be in ([A-Za-z_]\w*)$")
_ROWS_DISTINCT = re.compile(r"no (?:self-loops or )?(?:repeated|duplicate|multiple) (?:edges|connections|points|pairs)"
                            r"|\b(?:pairs|points|edges|connections)\b.*\b(?:are|is) (?:all )?(?:unique|distinct)", re.I)
_SELF_LOOPS = re.compile(r"no self-loops", re.I)
_SENTENCE = re.compile(r"separated by a single space|no (?:leading or trailing|two consecutive|consecutive) spaces"
                       r"|single space between|does not have leading or trailing spaces", re.I)
_LEADING_ZERO = re.compile(r"^([A-Za-z_]\w*)\b.*\b(?:no|not? (?:have|has|contain)s?(?: any)?) leading zeros?", re.I)


_ADJACENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\[i\]\s*(<=|<|>=|>)\s*\1\[i\s*\+\s*1\]")
_ORDER = {"<=": {"sorted"}, "<": {"sorted", "distinct"}, ">=": {"desc"}, ">": {"desc", "distinct"}}


def _parse_adjacent(text: str, keys: KeyMap, c: Constraints) -> bool:
    """`releaseTimes[i] < releaseTimes[i+1]`, `nums[i] <= nums[i + 1]`: the list is sorted (strictly:
    distinct too; `>`, `>=` descending)."""
    found = False
    for m in _ADJACENT.finditer(text):
        typ = keys.params.get(m.group(1))
        if typ is not None and typ.kind == "list":
            c.flags[f"val:{m.group(1)}"] |= _ORDER[m.group(2)]
            found = True
    return found


_LITERAL = r"""'[^']'|"[^"]"|-?\d+"""
_PARITY_OF = re.compile(r"^([A-Za-z_][\w.\[\]]*) % 2 == ([01])$")  # `nums.length % 2 == 0`: as `... is even`
_EVEN_LENGTH = re.compile(r"^([A-Za-z_]\w*) has an? (even|odd) length$", re.I)
_INDEXED = re.compile(r"^([A-Za-z_]\w*)((?:\[[^\[\]]+\])+)$")


def _literal(text: str, typ: Any) -> tuple[bool, Any]:
    """A quoted character or an integer as a value of `typ`'s leaves: (whether it is one, the value)."""
    text = text.strip()
    quoted = len(text) == 3 and text[0] == text[2] and text[0] in "'\""
    if typ.is_stringy() and quoted:
        return True, text[1]
    if typ.leaf().kind == "int" and re.fullmatch(r"-?\d+", text):
        return True, int(text)
    return False, None


def _index_path(brackets: str) -> tuple[int, ...] | None:
    """`[0][m - 1]` as (0, -1): a number, or anything minus one read as the last index."""
    out = []
    for part in re.findall(r"\[([^\[\]]+)\]", brackets):
        part = part.strip()
        if re.fullmatch(r"\d+", part):
            out.append(int(part))
        elif re.fullmatch(r"[A-Za-z_][\w.]*\s*-\s*1", part):
            out.append(-1)
        else:
            return None
    return tuple(out)


def _parse_positions(text: str, keys: KeyMap, c: Constraints) -> bool:
    """Values at fixed places: `s[0] != 'i'`, `s[2] is equal to the character ":"`, `s[0] == '(' and
    s[s.length - 1] == ')'`, `grid[0][0] == grid[m - 1][n - 1] == 0` (`m - 1`: the last index).
    Every clause of the line must read so, or none is taken."""
    text = re.sub(r"\s+is equal to(?: the character)?\s+", " == ", text.strip())
    found: list[tuple[str, tuple[int, ...], str, Any]] = []
    for clause in re.split(r"\s+and\s+", text):
        pieces = [p.strip() for p in _CMP.split(clause)]
        terms, ops = pieces[0::2], pieces[1::2]
        if not ops or any(op not in ("==", "!=") for op in ops) or (len(ops) > 1 and "!=" in ops):
            return False
        places = [_INDEXED.match(t) for t in terms[:-1]]
        if not all(places):
            return False
        for m in places:
            name, path = m.group(1), _index_path(m.group(2))
            typ = keys.params.get(name)
            if typ is None or path is None or len(path) > typ.depth() + (typ.leaf().kind == "str"):
                return False
            ok, value = _literal(terms[-1], typ)
            if not ok:
                return False
            found.append((name, path, ops[-1], value))
    c.positions += found
    return True


def _parse_excluded(text: str, keys: KeyMap, c: Constraints) -> bool:
    """`nums[i] != 0`, `freq[i] != 0`: a value no item takes."""
    m = re.fullmatch(r"([A-Za-z_][\w.\[\]]*)\s*!=\s*(-?\d+)", text.strip())
    key = keys.key(m.group(1)) if m else None
    if not key or not key.startswith("val:"):
        return False
    c.excluded.append((key, int(m.group(2))))
    return True
_PRESENT = re.compile(rf"^(?:the input is generated such that |it is guaranteed that )?(?:"
                      rf"there (?:is|will be|exists) at least one (?P<v1>{_LITERAL}) in (?P<b1>[A-Za-z_]\w*)"
                      rf"|(?P<b2>[A-Za-z_]\w*) (?:contains|has) at least one (?P<v2>{_LITERAL}))\.?$", re.I)


def _parse_present(text: str, keys: KeyMap, c: Constraints) -> bool:
    """`s contains at least one '1'`, `There is at least one 0 in mat`: the value occurs in the
    parameter (a character of a string, an item of a list at any depth). A drawn input gets it put
    in (a random draw of a long binary string rarely lacks a '1'; a small or sparse one does)."""
    m = _PRESENT.match(text.strip())
    if not m:
        return False
    literal, name = (m.group("v1"), m.group("b1")) if m.group("v1") else (m.group("v2"), m.group("b2"))
    typ = keys.params.get(name)
    if typ is None:
        return False
    quoted = literal[0] in "'\""
    if typ.is_stringy():
        value: Any = literal[1:-1] if quoted else literal
    elif typ.leaf().kind == "int" and not quoted:
        value = int(literal)
    else:
        return False
    c.present.append((value, name))
    return True


def _parse_relations(text: str, keys: KeyMap, c: Constraints) -> bool:
    """`It is guaranteed that the answer is unique` / `exactly one solution`, `n is even`,
    `c occurs at least once in s`, `There are no repeated edges` / `All the pairs (xi, yi) are
    distinct` (distinct rows), `no self-loops` (an edge's ends differ), `Each colori is distinct`
    (a field distinct across rows). `ui != vi` is a comparison (`_parse_chain`)."""
    if _UNIQUE_ANSWER.search(text):
        c.unique_answer = True
        return True
    m = _PARITY.match(text.strip())
    if m and keys.key(m.group(1)) and not keys.key(m.group(1)).startswith("var:"):
        c.flags[keys.key(m.group(1))].add(m.group(2))
        return True
    m = _CONTAINS.search(text)
    if m:
        item, box = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if item in keys.params and box in keys.params:
            c.contains.append((item, box))
            return True
    if _SENTENCE.search(text):  # words separated by single spaces: the string named, else the only one
        strings = [n for n, t in keys.params.items() if t.kind == "str"]
        named = [n for n in strings if re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text)]
        target = named if named else strings if len(strings) == 1 else []
        for name in target:
            c.flags[f"val:{name}"].add("sentence")
        if target:
            return True
    m = _LEADING_ZERO.search(text)
    if m and keys.params.get(m.group(1)) is not None and keys.params[m.group(1)].kind == "str":
        c.flags[f"val:{m.group(1)}"].add("no-leading-zero")
        return True
    rows = _rows_named(text, keys)
    if rows and _ROWS_DISTINCT.search(text):
        # an edge is the same edge either way round (`[2, 4]` repeats `[4, 2]`): narrower, so safe
        undirected = re.search(r"edges|connections", text, re.I) and not re.search(r"\bdirected\b", text, re.I)
        c.flags[f"val:{rows}"].add("distinct-edges" if undirected else "distinct")
        if _SELF_LOOPS.search(text):
            c.differ.append((f"val:{rows}[][0]", f"val:{rows}[][1]"))
        return True
    m = re.fullmatch(r"(?:each|the) ([A-Za-z_]\w*)(?: of each \w+)? (?:is|are) (?:unique|distinct)", text.strip(), re.I)
    if m and keys.fields.get(m.group(1)):
        c.flags[keys.fields[m.group(1)]].add("distinct")
        return True
    return False


def _rows_named(text: str, keys: KeyMap) -> str | None:
    """The list-of-rows parameter a line is about: named (`prerequisites`, or one of its fields:
    `(xi, yi)`), else the only one there is."""
    grids = [n for n, t in keys.params.items() if t.kind == "list" and t.inner is not None and t.inner.kind == "list"]
    named = [n for n in grids if re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text)]
    owners = {keys.fields[w][4:].split("[")[0] for w in re.findall(r"[A-Za-z_]\w*", text) if w in keys.fields}
    named += [n for n in grids if n in owners and n not in named]
    if len(named) == 1:
        return named[0]
    return grids[0] if len(grids) == 1 and not named else None


def _targets(part: str, keys: KeyMap) -> list[str] | None:
    names = [p.strip() for p in part.split(",")]
    out = [keys.key(n) for n in names]
    return out if names and all(out) else None


_CHOICE_WORDS = re.compile(r"^(\S+(?: and \S+)*) (?:is|are) (?:either )?((?:-?\d+, )*-?\d+,? or -?\d+)$")
_CHOICE = re.compile(r"^(\S+) == (-?\d+)(?: or \1 == (-?\d+))+$")


def _parse_choice(text: str, keys: KeyMap, c: Constraints) -> bool:
    """`queries[i][0] == 1 or queries[i][0] == 2`: consecutive integers are a range (other sets are
    left unparsed: nothing here draws from a set)."""
    m = _CHOICE.match(text)
    key = keys.key(m.group(1)) if m else None
    if not key:
        return False
    values = sorted({int(v) for v in re.findall(r"== (-?\d+)", text)})
    if values != list(range(values[0], values[-1] + 1)):
        return False
    c.lower[key].append(Bound(str(values[0])))
    c.upper[key].append(Bound(str(values[-1])))
    return True


def _parse_chain(text: str, keys: KeyMap, c: Constraints) -> bool:
    if " or " in text:
        return _parse_choice(text, keys, c)
    pieces = _CMP.split(text)
    parts, ops = [p.strip() for p in pieces[0::2]], pieces[1::2]
    if any(not p for p in parts):
        return False
    if not all(_targets(p, keys) or arithmetic(to_python(p)) for p in parts):
        return False  # a piece that is neither a key nor arithmetic: the line says something else
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
        if op == "!=":  # `ui != vi`: one key against another (a value against a number says little)
            if lt and rt and len(lt) == len(rt) == 1:
                c.differ.append((lt[0], rt[0]))
                found = True
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


# An alphabet for some places only ("All characters except s[2] are digits", "... for i > 0"): no
# alphabet of the whole string; unread, the line stays unmodelled.
_SCOPED = re.compile(r"\bexcept\b|\bfor i\s*[<>=!]")
_CHAR_RANGE = re.compile(r"'(.)'\s*<=\s*([A-Za-z_]\w*)\[[a-z]\](?:\[[a-z]\])?\s*<=\s*'(.)'")


def _parse_char_range(text: str, keys: KeyMap, c: Constraints) -> bool:
    """`'0' <= s[i] <= '9'`, `'a' <= suits[i] <= 'd'`: every character in the range (not one place's:
    `'a' <= coordinates[0] <= 'h'` is unread)."""
    m = _CHAR_RANGE.fullmatch(text.strip())
    typ = keys.params.get(m.group(2)) if m else None
    if typ is None or not typ.is_stringy() or m.group(1) > m.group(3):
        return False
    c.alphabets[f"val:{m.group(2)}" + "[]" * typ.depth()] = "".join(map(chr, range(ord(m.group(1)), ord(m.group(3)) + 1)))
    return True


def _one_place(text: str, keys: KeyMap) -> bool:
    """Whether the line is about one place of a string (`board[clickr][clickc] is either 'M' or 'E'`:
    indexed by a name or a number, not by `i`) and about no whole one: no alphabet of it."""
    places = [bool(re.match(r"\[\s*(?:\d+|[A-Za-z_]\w+)\s*\]", text[m.end():]))
              for n, t in keys.params.items() if t.is_stringy()
              for m in re.finditer(rf"(?<![\w.\[]){re.escape(n)}(?!\w)", text)]
    return any(places) and all(places)


def _parse_words(text: str, keys: KeyMap, c: Constraints) -> bool:
    low = text.lower()
    named = [n for n in keys.params if re.search(rf"(?<![\w.\[]){re.escape(n)}(\[[a-z]\])*(?![\w(])", text)]
    found = False
    if (re.search(r"consist|contain|only|either|characters|letters|digits|is one of|'.' or '.'", low)
            and not _SCOPED.search(low) and not _one_place(text, keys)):
        lower = re.search(r"lower\s*-?\s*case", low)
        upper = re.search(r"upper\s*-?\s*case", low)
        if lower or upper:
            chars = (string.ascii_lowercase if lower else "") + (string.ascii_uppercase if upper else "")
        else:
            chars = string.ascii_letters if re.search(r"\bletters\b", low) else ""
        if re.search(r"\bdigits?\b", low):
            chars += string.digits
        # digits from '2' - '9', a digit in the range ['2', '9']
        spans = re.findall(r"""['"](.)['"]\s*(?:-|to)\s*['"](.)['"]|\[\s*['"](.)['"]\s*,\s*['"](.)['"]\s*\]""", text)
        spans = [(dash_lo or list_lo, dash_hi or list_hi) for dash_lo, dash_hi, list_lo, list_hi in spans]
        if spans and re.search(r"\bdigits?\b", low) and not re.search(r"letters", low):
            chars = chars.replace(string.digits, "")
        for a, b in spans:
            chars += "".join(map(chr, range(ord(a), ord(b) + 1))) if a <= b else ""
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
    if re.search(r"sorted|non-?decreasing|ascending|increasing order|strictly (?:increasing|decreasing)", low):
        desc = re.search(r"non-?increasing|descending|(?<!non-)(?<!non)decreasing order|strictly decreasing", low)
        flags.add("desc" if desc else "sorted")
        if re.search(r"strictly (?:increasing|decreasing)", low):  # no two equal
            flags.add("distinct")
    if re.search(r"\bdistinct\b|\bunique\b", low) and not _UNIQUE_ANSWER.search(text) and not _rows_named_distinct(text, keys):
        flags.add("distinct")
    if "permutation" in low:
        flags.add("permutation")
    by_row = _row_flags(text, keys, flags)
    for n, row_flags in by_row.items():
        c.flags[f"val:{n}[]"] |= row_flags
    if by_row:
        return True
    if flags:
        lists = [n for n in named if keys.params[n].kind == "list"]
        if not lists and "permutation" not in flags:
            return found
        for n in lists or [n for n, t in keys.params.items() if t.kind == "list"][:1]:
            c.flags[f"val:{n}"] |= flags
        found = True
    return found


def _row_flags(text: str, keys: KeyMap, flags: set[str]) -> dict[str, set[str]]:
    """Flags a line states of each row of a list of lists: `values[i] are sorted in non-increasing
    order`, `mat[i] is a non-decreasing array`, `Each row is sorted`, `All the values of rooms[i] are
    unique`, `languages[i] contains only unique values`. Not `All points[i] are distinct` (the rows
    apart from each other: `_distinct_rows`), nor `grid[i][j]` (every cell)."""
    order = flags & {"sorted", "desc"}
    if not flags - {"permutation"}:
        return {}
    grids = [n for n, t in keys.params.items() if t.kind == "list" and t.inner is not None and t.inner.kind == "list"
             and t.inner.inner is not None and t.inner.inner.kind in ("int", "float", "str")]
    out: dict[str, set[str]] = {}
    for n in grids:
        row = rf"(?<![\w.]){re.escape(n)}\[[a-z]\](?![\[\w])"
        if not re.search(row, text) and not (len(grids) == 1 and re.search(r"\b(?:each|every) row\b", text, re.I)):
            continue
        items_of_row = re.search(rf"\b(?:of|in)\s+(?:each\s+)?{row}|{row}\s+(?:contains?|consists?|is an?\b|has)", text)
        if order:
            out[n] = set(flags - {"permutation"})
        elif items_of_row:
            out[n] = {"distinct"} & flags
    return {n: f for n, f in out.items() if f}


def _rows_named_distinct(text: str, keys: KeyMap) -> bool:
    """A line `_parse_relations` reads as distinct rows or a distinct field, not a list's items."""
    if _rows_named(text, keys) and _ROWS_DISTINCT.search(text):
        return True
    return any(w in keys.fields for w in re.findall(r"[A-Za-z_]\w*", text)) and not any(
        re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text) for n in keys.params)


def finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
