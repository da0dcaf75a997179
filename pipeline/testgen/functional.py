"""Functional (LeetCode-style) inputs from the entry point's signature and the statement's
constraints: edge cases first (minimum and maximum sizes, extreme values, duplicates), then random
cases of growing size up to the stated maxima (capped by `max_elements` and `max_input_bytes`).

Deterministic: every draw comes from a `random.Random` seeded by (seed, problem id, case index).
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import string
from dataclasses import dataclass
from typing import Any

from pipeline.testgen.space import Space, format_input, parse_input
from pipeline.testgen.types import Signature, Type

INT_FALLBACK = (0, 100)
LEN_FALLBACK = (1, 20)

# Edge plans: (label, size mode, value mode). Sizes: min | max | mid; values: min | max | random | dup.
EDGE_PLANS = [
    ("edge:min-size-min-values", "min", "min"),
    ("edge:min-size-max-values", "min", "max"),
    ("edge:max-size-random", "max", "random"),
    ("edge:max-size-max-values", "max", "max"),
    ("edge:max-size-min-values", "max", "min"),
    ("edge:mid-size-duplicates", "mid", "dup"),
    ("edge:min-size-random", "min", "random"),
    ("edge:small-size-extremes", "small", "extreme"),
]


class TooBig(ValueError):
    """The draw would exceed the element budget: redraw with a smaller one."""


@dataclass
class Candidate:
    input: str
    method: str  # edge | random
    generator: str  # the plan's label
    seed: int


@dataclass
class Plan:
    size: str  # min | max | mid | small | grow
    values: str  # min | max | random | dup | extreme
    scale: float = 1.0  # for size == grow: the upper size as a fraction of the maximum


def case_seed(seed: int, problem_id: str, index: int) -> int:
    h = hashlib.sha256(f"{seed}\0{problem_id}\0{index}".encode()).hexdigest()
    return int(h[:12], 16)


class Drawer:
    """Draws one input for one plan."""

    def __init__(self, space: Space, rng: random.Random, plan: Plan, max_elements: int):
        self.s, self.rng, self.plan, self.max_elements = space, rng, plan, max_elements
        self.env: dict[str, Any] = {}
        self.pool: list[int] | None = None  # the value pool for `dup`
        self._memo: dict[tuple, tuple[float, float]] = {}
        self._version = 0  # bumped whenever env changes (memoised bounds depend on it)

    def _set(self, root: str, value: Any) -> None:
        self.env[root] = value
        self._version += 1

    def _unset(self, root: str) -> None:
        if self.env.pop(root, None) is not None:
            self._version += 1

    # sizes and numbers -----------------------------------------------------------------------------
    def _bounds(self, key: str, fallback: tuple[float, float], integral: bool = True) -> tuple[float, float]:
        memo = (key, fallback, integral, self._version)
        if memo not in self._memo:
            self._memo[memo] = self._bounds_now(key, fallback, integral)
        return self._memo[memo]

    def _bounds_now(self, key: str, fallback: tuple[float, float], integral: bool) -> tuple[float, float]:
        lo, hi = self.s.range(key, self.env, integral)
        seen = self.s.observed(key)
        if lo is None:
            lo = min(seen) if seen else fallback[0]
            if seen and lo > 0 and key.startswith("val:"):
                lo = min(lo, fallback[0]) if fallback[0] >= 0 else lo
        if hi is None:  # unstated: up to twice what the examples show (not more: sizes may be exponential)
            hi = max(max(seen) * 2, 10) if seen else fallback[1]
            if seen and key.startswith("val:") and max(seen) <= 1 and min(seen) >= 0:
                hi = 1  # 0/1 flags and binary grids stay binary
        if hi < lo:
            hi = lo
        return lo, hi

    def length(self, key: str, budget: int) -> int:
        root = self.s.groups.find(key)
        if root in self.env:
            n = max(0, int(self.env[root]))
            if n > budget:  # fixed by values drawn earlier (`cells.length == row * col`)
                raise TooBig(f"{key} = {n} > {budget}")
            return n
        lo, hi = self._bounds(key, LEN_FALLBACK)
        lo, hi = max(0, int(lo)), max(0, int(hi))
        hi = max(lo, min(hi, budget))
        size = self.plan.size
        if size == "min":
            n = lo
        elif size == "max":
            n = hi
        elif size == "mid":
            n = (lo + hi) // 2
        elif size == "small":
            n = min(hi, lo + 2)
        else:
            top = lo + int((hi - lo) * self.plan.scale)
            n = self.rng.randint(lo, max(lo, top))
        self._set(root, n)
        return n

    def number(self, key: str, kind: str, store: bool = True) -> Any:
        store = store and "[]" not in key
        root = self.s.groups.find(key)
        if root in self.env and store:
            return self.env[root]
        integral = kind == "int"
        lo, hi = self._bounds(key, INT_FALLBACK, integral)
        if key[4:] in self.s.size_names:  # k scalars that size lists together: each within budget^(1/k)
            cap = int(self.max_elements ** (1 / len(self.s.size_names)))
            hi = max(lo, min(hi, max(cap, 1)))
        mode = self.plan.values
        if mode == "extreme":
            mode = self.rng.choice(["min", "max"])
        if mode == "dup":
            if self.pool is None:
                self.pool = [lo, hi] if lo != hi else [lo]
            mode = "pool"
        if kind == "float":
            v = lo if mode == "min" else hi if mode == "max" else self.rng.uniform(lo, hi)
            v = round(v, 5)
        else:
            lo, hi = int(lo), int(hi)
            if mode == "min":
                v = lo
            elif mode == "max":
                v = hi
            elif mode == "pool":
                v = self.rng.choice([x for x in range(lo, min(hi, lo + 2) + 1)])
            else:
                v = self._int(lo, hi)
        if store:
            self._set(root, v)
        return v

    def _int(self, lo: int, hi: int) -> int:
        """Uniform, with a share near the ends and near zero (where off-by-one bugs live)."""
        r = self.rng.random()
        if r < 0.1:
            return self.rng.randint(lo, min(hi, lo + 2))
        if r < 0.2:
            return self.rng.randint(max(lo, hi - 2), hi)
        if r < 0.3 and lo <= 0 <= hi:
            return self.rng.randint(max(lo, -3), min(hi, 3))
        if r < 0.55 and hi - lo > 1000:  # small magnitudes too, not only huge ones
            mag = 10 ** self.rng.randint(1, max(1, len(str(hi - lo)) - 1))
            return self.rng.randint(max(lo, -mag), max(max(lo, -mag), min(hi, mag)))
        return self.rng.randint(lo, hi)

    # values by type -------------------------------------------------------------------------------
    def draw(self) -> list[Any] | None:
        values: dict[str, Any] = {}
        for name in self.order():
            values[name] = self.value(name, self.s.types[name], name, self.max_elements)
        return [values[n] for n in self.s.sig.names]

    def order(self) -> list[str]:
        """Parameters whose bounds name other parameters come after them."""
        names = self.s.sig.names
        deps: dict[str, set[str]] = {}
        for n in names:
            refs: set[str] = set()
            for key in self.s.all_keys():
                if _owner(key) != n:
                    continue
                lows, highs = self.s.bounds(key)
                for b in lows + highs:
                    refs |= {m for m in names if m != n and m in _words(b.expr)}
                    for var in _words(b.expr):
                        root = self.s.groups.find(f"var:{var}")
                        refs |= {_owner(k) for k in self.s.groups.members(root, self.s.all_keys())} - {n, None}
            deps[n] = refs
        done: list[str] = []
        left = list(names)
        while left:
            ready = [n for n in left if deps[n] <= set(done)] or left[:1]
            done.append(ready[0])
            left.remove(ready[0])
        return done

    def value(self, name: str, typ: Type, path: str, budget: int) -> Any:
        kind = typ.kind
        if kind == "bool":
            mode = self.plan.values
            return mode == "max" if mode in ("min", "max") else self.rng.random() < 0.5
        if kind in ("int", "float"):
            return self.number(f"val:{path}", kind)
        if kind == "str":
            return self.text(path, budget)
        if kind in ("tree", "linked"):
            return self.nodes(kind, budget)
        return self.sequence(name, typ, path, budget)

    def text(self, path: str, budget: int) -> str:
        n = self.length(f"len:{path}", budget)
        chars = self.s.c.alphabets.get(f"val:{path}") or "".join(sorted(self.s.seen.chars.get(f"val:{path}", ())))
        chars = chars or string.ascii_lowercase
        if self.plan.values in ("dup", "min"):
            return chars[0] * n if self.plan.values == "min" else "".join(self.rng.choice(chars[:2]) for _ in range(n))
        if self.plan.values == "max":
            return chars[-1] * n
        return "".join(self.rng.choice(chars) for _ in range(n))

    def nodes(self, kind: str, budget: int) -> list:
        n = self.length("len:nodes", budget)
        values = [self.number("val:node", "int", store=False) for _ in range(n)]
        if kind == "linked":
            if any("sorted" in f for f in self.s.c.flags.values()):
                values.sort()
            return values
        if self.s.unique_nodes:
            lo, hi = self._bounds("val:node", INT_FALLBACK)
            values = self.rng.sample(range(int(lo), int(hi) + 1), min(n, int(hi) - int(lo) + 1))
        return random_tree(self.rng, values, bst=self.s.bst)

    def sequence(self, name: str, typ: Type, path: str, budget: int) -> list:
        inner = typ.inner
        if self.s.tree_edges and path == name and inner.kind == "list" and inner.inner.kind == "int":
            return self.tree_edges(path, budget)
        flags = self.s.c.flags.get(f"val:{path}", set()) if path == name else set()
        if inner.kind == "list":
            width_key = f"len:{path}[]"
            fixed = self.s.groups.find(width_key) in self.env or self._fixed(width_key)
            wlo, whi = self._bounds(width_key, LEN_FALLBACK)
            width = max(1, int(wlo if wlo == whi else (wlo + min(whi, budget)) // 2))
            square = self.s.groups.find(width_key) == self.s.groups.find(f"len:{path}")
            rows = self.length(f"len:{path}", max(1, math.isqrt(budget) if square else budget // width))
            out = []
            for _ in range(rows):
                if not fixed:
                    self._unset(self.s.groups.find(width_key))
                row_budget = max(1, budget // max(rows, 1))
                out.append(self.row(inner, f"{path}[]", row_budget))
            if not fixed:
                self._unset(self.s.groups.find(width_key))
            return out
        n = self.length(f"len:{path}", budget)
        if "permutation" in flags and inner.kind == "int":
            lo, _ = self._bounds(f"val:{path}[]", (0, n))
            start = int(lo) if lo in (0, 1) else 1 if self.s.observed(f"val:{path}[]") and min(self.s.observed(f"val:{path}[]")) >= 1 else 0
            items = list(range(start, start + n))
            self.rng.shuffle(items)
            return items
        if "distinct" in flags and inner.kind == "int":
            lo, hi = self._bounds(f"val:{path}[]", INT_FALLBACK)
            lo, hi = int(lo), int(hi)
            n = min(n, hi - lo + 1)
            items = self.rng.sample(range(lo, hi + 1), n) if self.plan.values != "min" else list(range(lo, lo + n))
        else:
            items = [self.value(name, inner, f"{path}[]", max(1, budget // max(n, 1))) for _ in range(n)]
        if "sorted" in flags:
            items.sort()
        elif "desc" in flags:
            items.sort(reverse=True)
        return items

    def tree_edges(self, path: str, budget: int) -> list:
        """Edges of a random tree ("The given input represents a valid tree"): nodes numbered from
        the examples' smallest label (0 or 1); extra columns (weights) from their field bounds."""
        rows = self.length(f"len:{path}", budget)
        seen = self.s.observed(f"val:{path}[][0]") + self.s.observed(f"val:{path}[][1]")
        base = 1 if seen and min(seen) >= 1 else 0
        width = max(2, int(self._bounds(f"len:{path}[]", (2, 2))[0]))
        order = list(range(base, base + rows + 1))
        self.rng.shuffle(order)
        out = []
        for i in range(1, len(order)):
            a, b = order[i], order[self.rng.randrange(i)]
            row = [a, b] if self.rng.random() < 0.5 else [b, a]
            row += [self.number(f"val:{path}[][{k}]", "int", store=False) for k in range(2, width)]
            out.append(row)
        self.rng.shuffle(out)
        return out

    def row(self, typ: Type, path: str, budget: int) -> list:
        n = self.length(f"len:{path}", budget)
        leaf = typ.inner
        if leaf.kind in ("int", "float"):
            out = []
            for k in range(n):
                field_key = f"val:{path}[{k}]"
                key = field_key if self.s.bounds(field_key) != ([], []) or self.s.observed(field_key) else f"val:{path}[]"
                if key == field_key and not self.s.bounds(field_key)[0] and not self.s.bounds(field_key)[1]:
                    key = f"val:{path}[]" if self.s.bounds(f"val:{path}[]") != ([], []) else field_key
                out.append(self.number(key, leaf.kind))
            return out
        return [self.value(path, leaf, f"{path}[]", max(1, budget // max(n, 1))) for _ in range(n)]

    def _fixed(self, key: str) -> bool:
        lo, hi = self.s.range(key, self.env)
        if lo is not None and lo == hi:
            return True
        seen = self.s.observed(key)
        return bool(self.s.groups.members(key, self.s.all_keys()) != [key]) or (len(set(seen)) == 1 and len(seen) > 2)


def _owner(key: str) -> str | None:
    if ":" not in key:
        return None
    rest = key.split(":", 1)[1]
    return rest.split("[", 1)[0] if not key.startswith("var:") else None


def _words(expr: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", expr))


def random_tree(rng: random.Random, values: list, bst: bool = False) -> list:
    """A random binary tree shape with these values, in LeetCode's level order (trailing nulls dropped).
    `bst`: distinct values laid out in order (a binary search tree)."""
    n = len(values)
    if n == 0:
        return []
    left = [-1] * n
    right = [-1] * n
    free = [(0, 0), (0, 1)]  # (node, side) slots
    for i in range(1, n):
        k = rng.randrange(len(free))
        node, side = free[k]
        free[k] = free[-1]
        free.pop()
        (left if side == 0 else right)[node] = i
        free += [(i, 0), (i, 1)]
    if bst:
        vals = sorted(set(values))
        lo = vals[0] if vals else 0
        while len(vals) < n:
            lo -= 1
            vals.insert(0, lo)
        order: list[int] = []
        stack, cur = [], 0
        while stack or cur != -1:
            while cur != -1:
                stack.append(cur)
                cur = left[cur]
            cur = stack.pop()
            order.append(cur)
            cur = right[cur]
        assigned = [0] * n
        for rank, node in enumerate(order):
            assigned[node] = vals[rank]
        values = assigned
    out: list = []
    queue = [0]
    head = 0
    while head < len(queue):
        node = queue[head]
        head += 1
        if node == -1:
            out.append(None)
            continue
        out.append(values[node])
        queue += [left[node], right[node]]
    while out and out[-1] is None:
        out.pop()
    return out


def generate_inputs(space: Space, problem_id: str, count: int, *, seed: int, max_elements: int,
                    max_input_bytes: int, existing: set[str], attempts: int = 4) -> list[Candidate]:
    """Up to `count` distinct inputs not in `existing`: edge plans first, then growing random ones."""
    out: list[Candidate] = []
    seen = set(existing)
    plans: list[tuple[str, str, Plan]] = [(label, "edge", Plan(size, values)) for label, size, values in EDGE_PLANS]
    n_random = max(count * 2, 8)
    for i in range(n_random):
        scale = ((i + 1) / n_random) ** 2
        plans.append((f"random:scale={scale:.3f}", "random", Plan("grow", "random", scale)))
    for index, (label, method, plan) in enumerate(plans):
        if len(out) >= count:
            break
        s = case_seed(seed, problem_id, index)
        budget = max(1, min(max_elements, max_input_bytes // 8))  # ~8 bytes per JSON number
        for attempt in range(attempts):
            rng = random.Random(s + attempt)
            try:
                values = Drawer(space, rng, plan, budget).draw()
            except TooBig:
                budget = max(1, budget // 4)
                continue
            except (ValueError, OverflowError, MemoryError, RecursionError):
                values = None
            if values is None:
                break
            text = format_input(values)
            if len(text.encode()) > max_input_bytes:
                budget = max(1, budget // 4)
                continue
            if space.violations(values):
                continue
            if text not in seen:
                seen.add(text)
                out.append(Candidate(text, method, label, s + attempt))
            break
    return out


def example_values(space_sig: Signature, inputs: list[str]) -> list[list[Any]]:
    out = []
    for text in inputs:
        values = parse_input(text, len(space_sig.names))
        if values is not None:
            out.append(values)
    return out
