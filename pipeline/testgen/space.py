"""The input space of one functional problem: its signature, the statement's constraints, and
what the statement's examples show (bounds no constraint states, alphabets, row widths).

`Space.range(key, env)` evaluates the constraints on `key` against the values drawn so far;
`Space.violations(values)` checks a whole input against every constraint it can evaluate (a
generated input that breaks one is redrawn; a constraint the statement's own examples break was
misread and is dropped when the space is built).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pipeline.testgen.constraints import (
    Bound,
    Constraints,
    KeyMap,
    Unresolved,
    evaluate,
    finite,
    parse_constraints,
)
from pipeline.testgen.types import Signature, Type


class _Groups:
    """Union-find over keys that the statement says are equal (`n == nums.length`)."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, k: str) -> str:
        while self.parent.get(k, k) != k:
            k = self.parent[k]
        return k

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def members(self, k: str, keys) -> list[str]:
        r = self.find(k)
        return sorted({x for x in keys if self.find(x) == r} | {k})


@dataclass
class Observed:
    """Per key, the numbers the examples show (values, lengths) and the characters of strings."""

    numbers: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    chars: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))


def parse_input(text: str, n: int) -> list[Any] | None:
    """A functional test input (newline-separated JSON values) as `n` values, or None."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if len(lines) != n:
        return None
    try:
        return [json.loads(ln) for ln in lines]
    except ValueError:
        return None


def format_input(values: list[Any]) -> str:
    return "\n".join(json.dumps(v, separators=(",", ":"), ensure_ascii=False) for v in values)


def observe(sig: Signature, values: list[Any], obs: Observed | None = None) -> Observed:
    """Every key's numbers in one concrete input."""
    obs = obs or Observed()
    for name, typ, value in zip(sig.names, sig.types, values, strict=True):
        _observe(f"{name}", typ, value, obs, top=True)
    return obs


def _observe(path: str, typ: Type, value: Any, obs: Observed, top: bool = False) -> None:
    kind = typ.kind
    if value is None:
        return
    if kind in ("int", "float") and finite(value):
        obs.numbers[f"val:{path}"].append(value)
    elif kind == "bool":
        return
    elif kind == "str" and isinstance(value, str):
        obs.numbers[f"len:{path}"].append(len(value))
        obs.chars[f"val:{path}"].update(value)
    elif kind in ("tree", "linked") and isinstance(value, list):
        nodes = [v for v in value if v is not None]
        obs.numbers["len:nodes"].append(len(nodes))
        obs.numbers["val:node"].extend(v for v in nodes if finite(v))
    elif kind == "list" and isinstance(value, list):
        obs.numbers[f"len:{path}"].append(len(value))
        for item in value:
            _observe(f"{path}[]", typ.inner, item, obs)
        if typ.inner.kind == "list" and typ.inner.inner.kind in ("int", "float"):
            for row in value:
                if isinstance(row, list):
                    for k, cell in enumerate(row[:8]):
                        if finite(cell):
                            obs.numbers[f"val:{path}[][{k}]"].append(cell)


class Space:
    def __init__(self, sig: Signature, statement: str, examples: list[list[Any]]):
        self.sig = sig
        self.types = dict(zip(sig.names, sig.types, strict=True))
        self.keys = KeyMap(self.types, statement)
        self.c: Constraints = parse_constraints(statement, self.keys)
        self.groups = _Groups()
        for a, b in self.c.equal:
            self.groups.union(a, b)
        self.examples = examples
        self.seen = Observed()
        for ex in examples:
            observe(sig, ex, self.seen)
        self.bst = bool(re.search(r"binary search tree|\bBST\b", statement))
        self.unique_nodes = bool(re.search(r"(unique|distinct) values?|values? (of|in) the (tree|nodes?) (are|is) (unique|distinct)",
                                           "\n".join(self.c.lines), re.I))
        self.tree_edges = bool(re.search(r"valid tree|represents? a (valid )?tree|forms? a tree|edges? (of|form) a tree",
                                         statement, re.I))
        self.dropped: list[str] = []
        self._keys = set(self.c.lower) | set(self.c.upper) | {k for pair in self.c.equal for k in pair}
        self._bounds: dict[str, tuple[list[Bound], list[Bound]]] = {}
        self._observed: dict[str, list[float]] = {}
        self._drop_broken_bounds()
        self._bounds.clear()
        # scalars that size other parameters (`edges.length == n - 1`): drawn within the element budget
        words = {w for k in self._keys if k.startswith(("len:", "var:"))
                 for b in self.c.lower.get(k, []) + self.c.upper.get(k, []) for w in re.findall(r"[A-Za-z_]\w*", b.expr)}
        self.size_names = {n for n in sig.names if n in words}

    # --- bounds ---------------------------------------------------------------------------------------
    def all_keys(self) -> set[str]:
        return self._keys

    def lookup_in(self, env: dict[str, Any]):
        def lookup(ref: str):
            key = self.keys.key(ref)
            if key is None:
                raise Unresolved(ref)
            root = self.groups.find(key)
            if root in env:
                return env[root]
            raise Unresolved(ref)
        return lookup

    def bounds(self, key: str) -> tuple[list[Bound], list[Bound]]:
        if key not in self._bounds:
            lo: list[Bound] = []
            hi: list[Bound] = []
            for k in self.groups.members(key, self.all_keys()):
                lo += self.c.lower.get(k, [])
                hi += self.c.upper.get(k, [])
            self._bounds[key] = (lo, hi)
        return self._bounds[key]

    def range(self, key: str, env: dict[str, Any], integral: bool = True) -> tuple[float | None, float | None]:
        """(lo, hi) for `key` from the constraints that evaluate now; None where none does."""
        lookup = self.lookup_in(env)
        lows, highs = self.bounds(key)
        lo = hi = None
        for b in lows:
            try:
                v = evaluate(b.expr, lookup)
            except Unresolved:
                continue
            if finite(v):
                v = v + 1 if b.strict and integral else v
                lo = v if lo is None else max(lo, v)
        for b in highs:
            try:
                v = evaluate(b.expr, lookup)
            except Unresolved:
                continue
            if finite(v):
                v = v - 1 if b.strict and integral else v
                hi = v if hi is None else min(hi, v)
        return lo, hi

    def observed(self, key: str) -> list[float]:
        if key not in self._observed:
            out: list[float] = []
            for k in self.groups.members(key, set(self.seen.numbers)):
                out += self.seen.numbers.get(k, [])
            self._observed[key] = out
        return self._observed[key]

    # --- checking a concrete input --------------------------------------------------------------------
    def env_of(self, values: list[Any]) -> tuple[dict[str, Any], Observed]:
        obs = observe(self.sig, values)
        env: dict[str, Any] = {}
        for key, nums in obs.numbers.items():
            if len(nums) == 1 and (key.startswith("len:") and "[]" not in key or key.count("[") == 0):
                env[self.groups.find(key)] = nums[0]
        return env, obs

    def violations(self, values: list[Any]) -> list[str]:
        env, obs = self.env_of(values)
        lookup = self.lookup_in(env)
        bad = []
        keys = set(obs.numbers) | {self.groups.find(k) for k in env}
        for key in sorted(self.all_keys()):
            nums = list(obs.numbers.get(key, []))
            root = self.groups.find(key)
            if not nums and root in env:
                nums = [env[root]]
            if not nums or (key not in keys and root not in env):
                continue
            for side, bounds in (("lower", self.c.lower.get(key, [])), ("upper", self.c.upper.get(key, []))):
                for b in bounds:
                    try:
                        v = evaluate(b.expr, lookup)
                    except Unresolved:
                        continue
                    if not finite(v):
                        continue
                    if side == "lower":
                        broken = any(x < v or (b.strict and x == v) for x in nums)
                    else:
                        broken = any(x > v or (b.strict and x == v) for x in nums)
                    if broken:
                        bad.append(f"{key} {side} {b.expr}")
        for key, chars in self.c.alphabets.items():
            got = obs.chars.get(key)
            if got and not got <= set(chars):
                bad.append(f"{key} alphabet")
        return bad

    def _drop_broken_bounds(self) -> None:
        """A bound an example breaks was misread (a lost superscript, a bound on something else)."""
        for ex in self.examples:
            for v in self.violations(ex):
                key, side, expr = (v.split(" ", 2) + [""])[:3]
                if side == "alphabet":
                    self.dropped.append(f"alphabet of {key}")
                    self.c.alphabets.pop(key, None)
                    continue
                table = self.c.lower if side == "lower" else self.c.upper
                before = len(table.get(key, []))
                table[key] = [b for b in table.get(key, []) if b.expr != expr]
                if len(table[key]) != before:
                    self.dropped.append(f"{side} bound {expr} of {key}")
