"""Functional (LeetCode-style) inputs from the entry point's signature and the statement's
constraints, in four tiers, drawn in this order:

- edge: minimum and maximum sizes, extreme values, duplicates (sizes capped by `max_elements`);
- max: every size at its stated maximum (10^5 and 10^6 element arrays, maximal strings, grids,
  trees as a long path), limited only by bytes: `max_input_bytes` per input and
  `max_problem_bytes` for all max and hack inputs of a problem; a stated maximum that does not fit
  is shrunk to what does, and the label says so;
- hack: worst cases for naive algorithms at full size (sorted, reverse-sorted, all equal,
  alternating, few distinct values, periodic, the largest primes, keys that collide in CPython's
  and libstdc++'s hash tables);
- random: growing random sizes up to the stated maxima (capped like edge).

Every input honours the flags the space knows (sorted, desc, distinct, permutation) and passes
`Space.violations`; one that cannot is skipped and counted in `skipped`. Deterministic: every draw
comes from a `random.Random` seeded by (seed, problem id, plan).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import random
import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Any

from microcoder.pipeline.testgen.space import Space, format_input, has_value, parse_input, undirected
from microcoder.pipeline.testgen.types import Signature, Type

INT_FALLBACK = (0, 100)
LEN_FALLBACK = (1, 20)

TIERS = ("edge", "max", "hack", "random")  # also the order they are drawn in
FULL_SIZE = ("max", "hack")  # tiers that ignore `max_elements`

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

# Max plans: (label, value mode, shape). `path`: a tree as a chain, tree edges as a path graph.
MAX_PLANS = [
    ("max:random", "random", None),
    ("max:max-values", "max", None),
    ("max:path", "random", "path"),
]

# Hack plans: (label, value mode, order). Value modes act on every list, string and tree; `primes`
# also on integer scalars; orders sort every list (a flag the statement states wins).
HACK_PLANS = [
    ("hack:sorted", "random", "sorted"),
    ("hack:reverse-sorted", "random", "desc"),
    ("hack:all-equal", "equal", None),
    ("hack:alternating", "alternating", None),
    ("hack:few-distinct", "few", None),
    ("hack:periodic", "periodic", None),
    ("hack:large-primes", "primes", None),
    ("hack:hash-pow2", "hash-pow2", None),
    ("hack:hash-bucket-prime", "hash-bucket", None),
]
POOLED = ("equal", "alternating", "few", "periodic")  # modes that repeat a few values
INT_ONLY = ("primes", "hash-pow2", "hash-bucket")  # modes that need integer values
PROBE_ELEMENTS = 4096  # a full-size draw starts with a probe this big, to learn its bytes per element
DISTINCT_TRIES = 3  # batches of redraws for repeated rows before they are left out
PRIME_POOL = 64  # non-distinct lists draw from this many of the largest primes
BUCKET_PRIMES = (107897, 126271)  # libstdc++ unordered_map bucket counts near 10^5 elements


class TooBig(ValueError):
    """The draw would exceed the element budget: redraw with a smaller one."""


@dataclass
class Candidate:
    input: str
    method: str  # edge | random | max | hack (functional); generator | search elsewhere
    generator: str  # the plan's label
    seed: int
    tier: str = ""  # edge | random | max | hack; defaults to `method` where that is a tier

    def __post_init__(self) -> None:
        if not self.tier and self.method in TIERS:
            self.tier = self.method
        if self.tier and self.tier not in TIERS:
            raise ValueError(f"unknown test tier {self.tier!r} (one of {', '.join(TIERS)})")


@dataclass
class Plan:
    size: str  # min | max | mid | small | grow
    values: str  # min | max | random | dup | extreme, or a hack mode (see HACK_PLANS)
    scale: float = 1.0  # for size == grow: the upper size as a fraction of the maximum
    order: str | None = None  # sorted | desc: every list sorted so
    shape: str | None = None  # path: trees as a chain, tree edges as a path graph
    tier: str = "edge"

    @property
    def patterned(self) -> bool:
        """A plan whose point is a pattern: without one applied anywhere, the input is not drawn."""
        return self.tier == "hack" or self.shape is not None


def case_seed(seed: int, problem_id: str, index: int) -> int:
    h = hashlib.sha256(f"{seed}\0{problem_id}\0{index}".encode()).hexdigest()
    return int(h[:12], 16)


class Drawer:
    """Draws one input for one plan. `max_elements` is the element budget of each parameter."""

    def __init__(self, space: Space, rng: random.Random, plan: Plan, max_elements: int):
        self.s, self.rng, self.plan, self.max_elements = space, rng, plan, max_elements
        self.env: dict[str, Any] = {}
        self.pools: dict[str, list] = {}  # per key: the values a pooled hack mode repeats (rows share it)
        self.clipped: list[tuple[str, int, int]] = []  # (key, stated maximum, drawn) where the budget cut a size
        self.applied = not plan.patterned  # a patterned plan must shape at least one value
        self._memo: dict[tuple, tuple[float, float]] = {}
        self._columns: dict[tuple[str, int], str] = {}
        self._free: set[str] = set()  # free names drawn (or being drawn) as sizes
        self._version = 0  # bumped whenever env changes (memoised bounds depend on it)
        self._state: tuple[int, Any] = (-1, None)  # (version, env as a hashable value): `_env_state`
        self._parities: dict[str, int | None] = {}
        self._words_of: dict[str, list[str]] = {}

    def _set(self, root: str, value: Any) -> None:
        self.env[root] = value
        self._version += 1

    def _unset(self, root: str) -> None:
        if self.env.pop(root, None) is not None:
            self._version += 1

    def _env_state(self) -> Any:
        """What memoised bounds depend on: the values in `env` (not the version: a list's items unset
        and redraw their width one by one, and bounds that came back to the same env were computed
        again for each of 10^5 items)."""
        if self._state[0] != self._version:
            try:
                state: Any = frozenset(self.env.items())
            except TypeError:  # an unhashable value: by version, as before
                state = ("version", self._version)
            self._state = (self._version, state)
        return self._state[1]

    @property
    def full_size(self) -> bool:
        return self.plan.tier in FULL_SIZE

    # sizes and numbers -----------------------------------------------------------------------------
    def _bounds(self, key: str, fallback: tuple[float, float], integral: bool = True) -> tuple[float, float]:
        memo = (key, fallback, integral, self._env_state())
        if memo not in self._memo:
            self._memo[memo] = self._bounds_now(key, fallback, integral)
        return self._memo[memo]

    def _bounds_now(self, key: str, fallback: tuple[float, float], integral: bool) -> tuple[float, float]:
        lo, hi = self.s.range(key, self.env, integral)
        seen = self.s.observed(key)
        # unstated and not inferred (`Space._infer`: values keep the examples' sign, lengths their least)
        if lo is None:
            lo = min(seen) if seen else fallback[0]
        if hi is None:  # up to twice what the examples show (not more: sizes may be exponential)
            hi = max(max(seen) * 2, 10) if seen else fallback[1]
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
        self._draw_free_names(key, budget)
        lo, hi = self._bounds(key, LEN_FALLBACK)
        lo, stated = max(0, int(lo)), max(0, int(hi))
        hi = max(lo, min(stated, budget))
        size = self.plan.size
        if size == "min":
            n = lo
        elif size == "max":
            n = hi
            if n < stated:
                self.clipped.append((key, stated, n))
        elif size == "mid":
            n = (lo + hi) // 2
        elif size == "small":
            n = min(hi, lo + 2)
        else:
            top = lo + int((hi - lo) * self.plan.scale)
            n = self.rng.randint(lo, max(lo, top))
        n = self._parity(key, n, lo, hi)
        self._set(root, n)
        return n

    def _parity(self, key: str, n: int, lo: float, hi: float) -> int:
        """`n` moved by one to the parity the statement states for `key` (`s.length is even`,
        `n is even`), staying within [lo, hi] where it can."""
        if key not in self._parities:  # the statement's flags do not change during a draw
            flags = set().union(*(self.s.c.flags.get(k, set()) for k in self.s.groups.members(key, self.s.all_keys())))
            self._parities[key] = 0 if "even" in flags else 1 if "odd" in flags else None
        want = self._parities[key]
        if want is None or n % 2 == want:
            return n
        return n + 1 if n + 1 <= hi or n - 1 < lo else n - 1

    def _draw_free_names(self, key: str, budget: int) -> None:
        """Names the statement introduces that no parameter carries (`adjacentPairs.length == n - 1`
        with `2 <= n <= 10^5`, `n` not a parameter) are drawn as sizes first, so bounds on them resolve."""
        keys = self.s.all_keys()
        if key not in self._words_of:
            lows, highs = self.s.bounds(key)
            self._words_of[key] = [w for b in lows + highs for w in _words(b.expr) if f"var:{w}" in keys]
        for word in self._words_of[key]:
            var = f"var:{word}"
            if var in self._free or self.s.groups.find(var) in self.env:
                continue
            if any(_owner(k) for k in self.s.groups.members(var, keys)):
                continue  # a parameter carries it and is drawn in its turn
            self._free.add(var)
            self.length(var, budget)

    def number(self, key: str, kind: str, store: bool = True) -> Any:
        store = store and "[]" not in key
        root = self.s.groups.find(key)
        if root in self.env and store:
            return self.env[root]
        integral = kind == "int"
        self._draw_free_names(key, self.max_elements)
        lo, hi = self._bounds(key, INT_FALLBACK, integral)
        if key[4:] in self.s.size_names:  # k scalars that size lists together: each within budget^(1/k)
            cap = int(self.max_elements ** (1 / len(self.s.size_names)))
            stated, hi = hi, max(lo, min(hi, max(cap, 1)))
            if self.full_size:  # full-size tiers: a size is at its maximum whatever the value mode
                if hi < stated:
                    self.clipped.append((key, int(stated), int(hi)))
                v = self._parity(key, int(hi), lo, hi) if integral else hi
                if store:
                    self._set(root, v)
                return v
        v = self._scalar(lo, hi, kind)
        if integral:
            v = self._parity(key, v, lo, hi)
        if store:
            self._set(root, v)
        return v

    def _scalar(self, lo: float, hi: float, kind: str) -> Any:
        mode = self.plan.values
        if mode == "extreme":
            mode = self.rng.choice(["min", "max"])
        if kind == "float":
            v = lo if mode == "min" else hi if mode == "max" else self.rng.uniform(lo, hi)
            return round(float(v), 5)  # a float parameter gets floats (`10.0`, not `10`) at its ends too
        lo, hi = int(lo), int(hi)
        if mode == "min":
            return lo
        if mode == "max":
            return hi
        if mode == "dup":
            return self.rng.choice([x for x in range(lo, min(hi, lo + 2) + 1)])
        if mode == "primes":
            top = largest_primes(lo, hi, 1)
            if top:
                self.applied = True
                return top[0]
        return self._int(lo, hi)

    def numbers(self, key: str, kind: str, n: int) -> list:
        """`n` list items under `key` at once: the bounds are evaluated once, not per item."""
        mode = self.plan.values
        integral = kind == "int"
        lo, hi = self._bounds(key, INT_FALLBACK, integral)
        if mode in POOLED:
            ends = (int(lo), int(hi)) if integral else (float(lo), float(hi))
            return self._pattern(key, n, lambda: self._scalar(lo, hi, kind), ends)
        if integral and mode == "primes":
            pool = largest_primes(int(lo), int(hi), PRIME_POOL)
            if pool:
                self.applied = self.applied or n > 0
                return self.rng.choices(pool, k=n)
        if integral and mode in ("hash-pow2", "hash-bucket"):
            keys = self._hash_keys(int(lo), int(hi), n, distinct=False)
            if keys is not None:
                return keys
        if mode in ("min", "max"):
            return [self._scalar(lo, hi, kind)] * n
        if integral and mode in ("random", "primes", "hash-pow2", "hash-bucket"):
            return self._ints(int(lo), int(hi), n)
        return [self._scalar(lo, hi, kind) for _ in range(n)]

    def _pattern(self, key: str, n: int, draw, ends: tuple | None = None) -> list:
        """`n` items of a pooled hack mode, from a pool drawn once per key."""
        mode = self.plan.values
        pool = self.pools.get(key)
        if pool is None:
            if mode == "alternating" and ends is not None and ends[0] != ends[1]:
                pool = list(ends)  # lo, hi, lo, hi ...
            else:
                size = {"equal": 1, "alternating": 2, "few": 3}.get(mode) or self.rng.randint(2, 7)
                pool = _distinct_draws(draw, size)
            self.pools[key] = pool
        if n >= 2:
            self.applied = True
        if mode == "few":
            return self.rng.choices(pool, k=n)
        return [pool[i % len(pool)] for i in range(n)]

    def _hash_keys(self, lo: int, hi: int, n: int, distinct: bool) -> list[int] | None:
        """Integers that share a hash bucket: multiples of 2^k (CPython's dicts and sets index by the
        low bits) or of a libstdc++ bucket-count prime; None where the range holds too few."""
        if self.plan.values == "hash-pow2":
            want = n if distinct else min(n, 1 << 14)
            k = max((k for k in range(4, 62) if _multiples(lo, hi, 1 << k) >= max(want, 2)), default=None)
            if k is None:
                return None
            step = 1 << k
        else:
            step = self.rng.choice(BUCKET_PRIMES)
        count = _multiples(lo, hi, step)
        if count < 2 or (distinct and count < n):
            return None
        first = -(-lo // step) * step
        self.applied = self.applied or n >= 2
        if count >= n:
            return [first + step * i for i in self.rng.sample(range(count), n)]
        return [first + step * i for i in self.rng.choices(range(count), k=n)]

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

    def _ints(self, lo: int, hi: int, n: int) -> list[int]:
        """`n` draws like `_int`'s, a few times faster (a million in well under a second): floats
        scaled to the range instead of `randint`, exact below 2^52."""
        span = hi - lo + 1
        if span > 1 << 52:
            return [self._int(lo, hi) for _ in range(n)]
        rand = self.rng.random
        near_zero = (max(lo, -3), min(hi, 3)) if lo <= 0 <= hi else None
        # small magnitudes: ranges [max(lo, -m), min(hi, m)] for m = 10, 100, ... below the span
        mags = []
        if hi - lo > 1000:
            for d in range(1, max(1, len(str(hi - lo)) - 1) + 1):
                a = max(lo, -(10**d))
                mags.append((a, max(a, min(hi, 10**d)) - a + 1))
        ends = min(3, span)
        out = []
        append = out.append
        for _ in range(n):
            r = rand()
            if r < 0.1:
                append(lo + int(rand() * ends))
            elif r < 0.2:
                append(hi - int(rand() * ends))
            elif r < 0.3 and near_zero:
                append(near_zero[0] + int(rand() * (near_zero[1] - near_zero[0] + 1)))
            elif r < 0.55 and mags:
                a, width = mags[int(rand() * len(mags))]
                append(a + int(rand() * width))
            else:
                append(lo + int(rand() * span))
        return out

    # values by type -------------------------------------------------------------------------------
    def draw(self) -> list[Any] | None:
        values: dict[str, Any] = {}
        for name in self.order():
            values[name] = self.value(name, self.s.types[name], name, self.max_elements)
        for item, box in self.s.c.contains:  # `c occurs at least once in s`: put it there
            values[box] = _put(values.get(box), values.get(item), self.rng)
        for value, box in self.s.c.present:  # `s contains at least one '1'`: likewise
            if not has_value(values.get(box), value):
                values[box] = _put_deep(values.get(box), value, self.rng)
        for key, value in self.s.c.excluded:  # `nums[i] != 0`: another value in its place
            owner = key[4:].split("[", 1)[0]
            if owner in values:
                values[owner] = _replace_leaves(values[owner], key.count("[]"), value, self.other_than(key, value))
        for name, path, op, value in self.s.c.positions:  # `grid[0][0] == 0`, `s[0] != 'i'`
            typ = self.s.types[name]
            key = f"val:{name}" + "[]" * (typ.depth() if isinstance(value, str) else len(path))
            other = self.other_than(key, value)
            values[name] = _set_at(values[name], path, lambda got, v=value, o=other, eq=op == "==":
                                   v if eq else o if type(got) is type(v) and got == v else got)
        return [values[n] for n in self.s.sig.names]

    def other_than(self, key: str, value: Any) -> Any:
        """A value for `key` that is not `value`: the next integer within the key's bounds, or
        another character of its alphabet."""
        if isinstance(value, str):
            return next((ch for ch in self.s.c.alphabets.get(key) or "ab" if ch != value), "b" if value == "a" else "a")
        _, hi = self.s.range(key, {})
        return value + 1 if hi is None or value + 1 <= hi else value - 1

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

    def _alphabet(self, path: str) -> str:
        chars = self.s.c.alphabets.get(f"val:{path}") or "".join(sorted(self.s.seen.chars.get(f"val:{path}", ())))
        return chars or string.ascii_lowercase

    def text(self, path: str, budget: int, mode: str | None = None, longest: bool = False) -> str:
        out = self._text(path, budget, mode, longest)
        if " " in out and "sentence" in self.s.c.flags.get(f"val:{path}", ()):
            out = self._sentence(out, self._alphabet(path))
        return out

    def _sentence(self, text: str, chars: str) -> str:
        """Words separated by single spaces (`sentence` flag): a leading, trailing or second space
        becomes a letter of the alphabet (the length stays)."""
        letters = chars.replace(" ", "")
        if not letters:
            return text
        out = list(text)
        for i, ch in enumerate(out):
            if ch == " " and (i == 0 or i == len(out) - 1 or out[i - 1] == " "):
                out[i] = self.rng.choice(letters)
        return "".join(out)

    def _text(self, path: str, budget: int, mode: str | None, longest: bool) -> str:
        key = f"len:{path}"
        if longest and self.s.groups.find(key) not in self.env:
            lo, hi = self._bounds(key, LEN_FALLBACK)
            n = int(max(lo, min(hi, budget)))
        else:
            n = self.length(key, budget)
        chars = self._alphabet(path)
        mode = mode or self.plan.values
        if mode == "min":
            return chars[0] * n
        if mode == "max":
            return chars[-1] * n
        if mode == "dup":
            return "".join(self.rng.choices(chars[:2], k=n))
        if mode in POOLED:
            out = self._pattern(f"val:{path}", n, lambda: self.rng.choice(chars))
        else:
            out = self.rng.choices(chars, k=n)
        if self.plan.order and "[]" not in path:  # a top-level string: its characters in order
            out = self._ordered(list(out), set())
        nonzero = chars.replace("0", "")
        if n > 1 and out[0] == "0" and nonzero and "no-leading-zero" in self.s.c.flags.get(f"val:{path}", ()):
            out = [self.rng.choice(nonzero), *out[1:]]  # `n does not have leading zeros`
        return "".join(out)

    def nodes(self, kind: str, budget: int) -> list:
        n = self.length("len:nodes", budget)
        if kind == "tree" and (self.s.unique_nodes or self.s.bst):  # a BST's layout needs distinct values
            values = self._distinct_ints("val:node", n)
        else:
            values = self.numbers("val:node", "int", n)
        if kind == "linked":
            if any("sorted" in f for f in self.s.c.flags.values()):
                values.sort()
                return values
            return self._ordered(values, set())
        values = self._ordered(values, set())
        if self.plan.shape == "path":
            self.applied = self.applied or n >= 2
            return path_tree(self.rng, values, bst=self.s.bst)
        return random_tree(self.rng, values, bst=self.s.bst)

    def sequence(self, name: str, typ: Type, path: str, budget: int) -> list:
        inner = typ.inner
        if self.s.tree_edges and path == name and inner.kind == "list" and inner.inner.kind == "int":
            return self.tree_edges(path, budget)
        if path == name and name in self.s.parent_arrays:
            return self.parent_array(path, budget, self.s.parent_arrays[name])
        flags = self.s.c.flags.get(f"val:{path}", set()) if path == name else set()
        if inner.kind == "list":
            return self.grid(inner, path, budget)
        n = self.length(f"len:{path}", budget)
        key = f"val:{path}[]"
        if "permutation" in flags and inner.kind == "int":
            items = self._permutation(path, n)
        elif "distinct" in flags and inner.kind == "int":
            items = self._distinct_ints(key, n)
        elif inner.kind in ("int", "float"):
            items = self.numbers(key, inner.kind, n)
        else:
            items = self.items(name, inner, path, n, budget, flags)
        return self._ordered(items, flags)

    def items(self, name: str, inner: Type, path: str, n: int, budget: int, flags: set[str]) -> list:
        """`n` strings (or other non-numbers) of a list; each its own length unless the statement
        fixes one (`puzzles[i].length == 7`), and at least the least length it states."""
        width_key = f"len:{path}[]"
        fixed = self.s.groups.find(width_key) in self.env or self._fixed(width_key)
        per = max(1, int(self._bounds(width_key, LEN_FALLBACK)[0]), budget // max(n, 1))
        distinct_strings = "distinct" in flags and inner.kind == "str"
        if distinct_strings:  # long enough for n distinct strings over the alphabet
            per = max(per, math.ceil(math.log(2 * n + 1, max(2, len(self._alphabet(f"{path}[]"))))))

        def one(mode: str | None = None, longest: bool = False) -> Any:
            if not fixed:
                self._unset(self.s.groups.find(width_key))
            if inner.kind == "str":
                return self.text(f"{path}[]", per, mode, longest)
            return self.value(name, inner, f"{path}[]", per)

        if distinct_strings:  # characters at random: a repeated pattern would repeat strings
            items = _redraw_duplicates([one("random") for _ in range(n)], lambda: one("random", longest=True))
        elif inner.kind == "str" and self.plan.values in POOLED:
            items = self._pattern(f"val:{path}[]", n, lambda: one("random"))
        else:
            items = [one() for _ in range(n)]
        if "distinct" in flags and not distinct_strings:
            items = _redraw_duplicates(items, one)
        if not fixed:
            self._unset(self.s.groups.find(width_key))
        return items

    def _ordered(self, items: list, flags: set[str]) -> list:
        """A flag the statement states wins over the plan's order."""
        if "sorted" in flags:
            items.sort()
        elif "desc" in flags:
            items.sort(reverse=True)
        elif self.plan.order:
            items.sort(reverse=self.plan.order == "desc")
            self.applied = self.applied or len(items) >= 2
        return items

    def _permutation(self, path: str, n: int) -> list[int]:
        stated, _ = self.s.range(f"val:{path}[]", self.env)
        seen = self.s.observed(f"val:{path}[]")
        start = int(stated) if stated in (0, 1) else 1 if seen and min(seen) >= 1 else 0
        items = list(range(start, start + n))
        if not self.plan.order:
            self.rng.shuffle(items)
        return items

    def _distinct_ints(self, key: str, n: int) -> list[int]:
        lo, hi = self._bounds(key, INT_FALLBACK)
        lo, hi = int(lo), int(hi)
        n = min(n, hi - lo + 1)
        mode = self.plan.values
        if mode == "primes":
            primes = largest_primes(lo, hi, n)
            if len(primes) == n:
                self.applied = self.applied or n > 0
                self.rng.shuffle(primes)
                return primes
        if mode in ("hash-pow2", "hash-bucket"):
            keys = self._hash_keys(lo, hi, n, distinct=True)
            if keys is not None:
                return keys
        if mode == "min":
            return list(range(lo, lo + n))
        return self.rng.sample(range(lo, hi + 1), n)

    def grid(self, inner: Type, path: str, budget: int) -> list:
        """Rows of a list of lists; in the full-size tiers as many cells as the budget holds."""
        width_key = f"len:{path}[]"
        fixed = self.s.groups.find(width_key) in self.env or self._fixed(width_key)
        wlo, whi = self._bounds(width_key, LEN_FALLBACK)
        square = self.s.groups.find(width_key) == self.s.groups.find(f"len:{path}")
        if self.full_size:
            rows_hi = self._bounds(f"len:{path}", LEN_FALLBACK)[1]
            fits = whi * rows_hi <= budget
            width = max(1, int(min(whi, budget) if fits else min(whi, max(wlo, math.isqrt(budget)))))
        else:
            width = max(1, int(wlo if wlo == whi else (wlo + min(whi, budget)) // 2))
        rows = self.length(f"len:{path}", max(1, math.isqrt(budget) if square else budget // width))
        row_flags = self.s.c.flags.get(f"val:{path}[]", set())
        if fixed and inner.inner.kind in ("int", "float") and rows and "distinct" not in row_flags:
            width = self.length(f"len:{path}[]", max(1, int(wlo), budget // rows))
            out = self.cells(inner.inner.kind, f"{path}[]", rows, width)
            return self._distinct_rows(path, out, lambda k: self.cells(inner.inner.kind, f"{path}[]", k, width))
        row_budget = max(1, int(wlo), budget // max(rows, 1))  # a row holds at least its least width

        def one() -> list:
            if not fixed:
                self._unset(self.s.groups.find(width_key))
            return self.row(inner, f"{path}[]", row_budget)

        out = self._distinct_rows(path, [one() for _ in range(rows)], lambda k: [one() for _ in range(k)])
        if not fixed:
            self._unset(self.s.groups.find(width_key))
        return out

    def _distinct_rows(self, path: str, rows: list, draw) -> list:
        """Rows made distinct where the statement says so (`There are no repeated edges`, `All
        the pairs (xi, yi) are distinct`): the repeats are drawn again, in batches, a few times,
        then left out (a full-size draw may ask for nearly every row there is: fewer is still an
        input; where a length is pinned, `violations` rejects it)."""
        flags = self.s.c.flags.get(f"val:{path}", set())
        if not flags & {"distinct", "distinct-edges"}:
            return rows
        key = edge_key if "distinct-edges" in flags else repr
        seen: set[str] = set()
        out: list = []
        for attempt in range(DISTINCT_TRIES + 1):  # the rows, then batches for the repeats, at once
            missing = len(rows) - len(out)
            for row in rows if attempt == 0 else draw(missing):
                if key(row) not in seen and len(out) < len(rows):
                    seen.add(key(row))
                    out.append(row)
            if len(out) == len(rows):
                break
        return out

    def tree_edges(self, path: str, budget: int) -> list:
        """Edges of a random tree ("The given input represents a valid tree"), or of a path graph
        (node i - node i + 1) for the `path` shape: nodes numbered from the examples' smallest label
        (0 or 1); extra columns (weights) from their field bounds."""
        rows = self.length(f"len:{path}", budget)
        seen = self.s.observed(f"val:{path}[][0]") + self.s.observed(f"val:{path}[][1]")
        base = 1 if seen and min(seen) >= 1 else 0
        width = max(2, int(self._bounds(f"len:{path}[]", (2, 2))[0]))
        extra = [self.numbers(f"val:{path}[][{k}]", "int", rows) for k in range(2, width)]
        if self.plan.shape == "path":
            self.applied = self.applied or rows >= 2
            out = [[base + i, base + i + 1] for i in range(rows)]
        else:
            order = list(range(base, base + rows + 1))
            self.rng.shuffle(order)
            out = []
            for i in range(1, len(order)):
                a, b = order[i], order[self.rng.randrange(i)]
                out.append([a, b] if self.rng.random() < 0.5 else [b, a])
        for i, row in enumerate(out):
            row += [column[i] for column in extra]
        if self.plan.shape != "path":
            self.rng.shuffle(out)
        self._relate(f"{path}[]", out)  # `ui < vi` (stated, or every example's): nearly every random tree broke it
        return out

    def parent_array(self, path: str, budget: int, binary: bool) -> list[int]:
        """A random tree rooted at node 0 as its parent array (`parents[0] == -1`), the other labels
        shuffled; at most two children a node in a binary tree; a chain for the `path` shape."""
        n = max(1, self.length(f"len:{path}", budget))
        order = list(range(1, n))
        if self.plan.shape == "path":
            self.applied = self.applied or n >= 3
        else:
            self.rng.shuffle(order)
        order = [0, *order]
        parents = [-1] * n
        open_ = [0]  # nodes that may take another child
        children = [0] * n
        for k in range(1, n):
            i = len(open_) - 1 if self.plan.shape == "path" else self.rng.randrange(len(open_))
            p = open_[i]
            parents[order[k]] = p
            children[p] += 1
            if binary and children[p] == 2:
                open_[i] = open_[-1]
                open_.pop()
            open_.append(order[k])
        return parents

    def row(self, typ: Type, path: str, budget: int) -> list:
        n = self.length(f"len:{path}", budget)
        leaf = typ.inner
        flags = self.s.c.flags.get(f"val:{path}", set())  # of each row: `values[i] are sorted`, `rooms[i] are unique`
        if leaf.kind == "int" and "distinct" in flags:
            return self._ordered(self._distinct_ints(f"val:{path}[]", n), flags)
        if leaf.kind in ("int", "float"):
            out: list = []
            k = 0
            while k < n:  # columns under one key at once (fields like `[fromi, toi, wi]` have their own)
                key = self._column_key(path, k)
                end = k + 1
                while end < n and self._column_key(path, end) == key:
                    end += 1
                out += self.numbers(key, leaf.kind, end - k)
                k = end
            out = self._ordered(out, flags)
            self._relate(path, [out])  # after the plan's order, which would reorder a row's fields
            return out
        items = [self.value(path, leaf, f"{path}[]", max(1, budget // max(n, 1))) for _ in range(n)]
        if "distinct" in flags:
            items = _redraw_duplicates(items, lambda: self.value(path, leaf, f"{path}[]", max(1, budget // max(n, 1))))
        return self._ordered(items, flags) if flags & {"sorted", "desc"} else items

    def cells(self, kind: str, path: str, rows: int, width: int) -> list[list]:
        """A rows x width grid of numbers, drawn a column group at a time (no bound depends on the
        row: row fields are never in env)."""
        out: list[list] = [[] for _ in range(rows)]
        k = 0
        while k < width:
            key = self._column_key(path, k)
            end = k + 1
            while end < width and self._column_key(path, end) == key:
                end += 1
            span = end - k
            flat = self.numbers(key, kind, rows * span)
            for r, row in enumerate(out):
                row += flat[r * span:(r + 1) * span]
            k = end
        for row in out:
            self._ordered(row, self.s.c.flags.get(f"val:{path}", set()))
        for k in range(width):  # `Each colori is distinct`: that field's column drawn distinct
            if kind == "int" and "distinct" in self.s.c.flags.get(f"val:{path}[{k}]", ()):
                column = self._distinct_ints(self._column_key(path, k), rows)
                for row, v in zip(out, column, strict=False):
                    row[k] = v
        self._relate(path, out)
        return out

    def _relate(self, path: str, rows: list) -> None:
        """Rows whose fields the statement relates (`starti <= endi`, `durationi <= endi - starti + 1`,
        `ui != vi`: `Space.row_relations`) made to keep them: a plain order by swapping the two
        fields, anything else by redrawing the field within what its row leaves it. A row that still
        breaks one is left to `Space.violations` (the input is redrawn)."""
        owner = path[:-2]
        rels = self.s.row_relations.get(owner) if path.endswith("[]") and owner in self.s.types else None
        if not rels:
            return
        lookup = self.s.lookup_in(self.env)
        if all(self.s.rows_hold(rel, rows, lookup) for rel in rels):
            return
        for row in rows:
            if not isinstance(row, list) or all(self.s.row_holds(rel, row, lookup) for rel in rels):
                continue
            for _ in range(2):  # a swap for one relation may break one checked before it
                for rel in rels:
                    if self.s.row_holds(rel, row, lookup):
                        continue
                    if rel.plain is not None and rel.side != "differ":
                        row[rel.field], row[rel.plain] = row[rel.plain], row[rel.field]
                        if self.s.row_holds(rel, row, lookup):
                            continue
                    self._redraw_field(path, rel.field, row, rels, lookup)

    def _redraw_field(self, path: str, field: int, row: list, rels: list, lookup) -> None:
        """Field `field` of `row` drawn again between its column's bounds and its row's relations."""
        integral = all(type(x) is int for x in row)
        lo, hi = self._bounds(self._column_key(path, field), INT_FALLBACK, integral)
        mine = [r for r in rels if r.field == field]
        for rel in mine:
            if rel.side == "differ":
                continue
            other = self.s.row_bound(rel, row, lookup)
            if other is None:
                continue
            step = (1 if integral else 0) if rel.strict else 0
            lo, hi = (max(lo, other + step), hi) if rel.side == "lower" else (lo, min(hi, other - step))
        if lo > hi:
            return
        for _ in range(8):
            row[field] = self.rng.randint(int(math.ceil(lo)), int(hi)) if integral else self.rng.uniform(lo, hi)
            if all(self.s.row_holds(r, row, lookup) for r in mine):
                return

    def _column_key(self, path: str, k: int) -> str:
        """The key whose bounds hold column `k`: its field's, else the cells'."""
        k = min(k, 8)  # examples record the first 8 columns; fields are fewer
        memo = (path, k)
        if memo not in self._columns:
            field_key = f"val:{path}[{k}]"
            has_bounds = self.s.bounds(field_key) != ([], [])
            key = field_key if has_bounds or self.s.observed(field_key) else f"val:{path}[]"
            if key == field_key and not has_bounds:
                key = f"val:{path}[]" if self.s.bounds(f"val:{path}[]") != ([], []) else field_key
            self._columns[memo] = key
        return self._columns[memo]

    def _fixed(self, key: str) -> bool:
        if key in self.s.rectangular:
            return True
        lo, hi = self.s.range(key, self.env)
        if lo is not None and lo == hi:
            return True
        seen = self.s.observed(key)
        return bool(self.s.groups.members(key, self.s.all_keys()) != [key]) or (len(set(seen)) == 1 and len(seen) > 2)


def _put(box: Any, item: Any, rng: random.Random) -> Any:
    """`box` with `item` in it (a substring over a random place, a list item replaced), unless it
    is there already or cannot hold it."""
    if isinstance(box, str) and isinstance(item, str) and item not in box and 0 < len(item) <= len(box):
        i = rng.randrange(len(box) - len(item) + 1)
        return box[:i] + item + box[i + len(item):]
    if isinstance(box, list) and box and item is not None and not isinstance(item, list) and item not in box:
        box[rng.randrange(len(box))] = item
    return box


def _put_deep(box: Any, value: Any, rng: random.Random) -> Any:
    """`box` with one of its leaves (a character of a string, an item of a list) at a random place
    replaced by `value`, in a random non-empty row at each depth; unchanged where it has none."""
    if isinstance(box, str) and isinstance(value, str) and 0 < len(value) <= len(box):
        i = rng.randrange(len(box) - len(value) + 1)
        return box[:i] + value + box[i + len(value):]
    if isinstance(box, list) and box:
        rows = [i for i, x in enumerate(box) if not isinstance(x, (list, str)) or x]
        if rows:
            i = rng.choice(rows)
            box[i] = _put_deep(box[i], value, rng) if isinstance(box[i], (list, str)) else value
    return box


def _replace_leaves(box: Any, depth: int, value: Any, other: Any) -> Any:
    """`box` with every item `depth` lists down that equals `value` replaced by `other`."""
    if depth == 0:
        return other if type(box) is type(value) and box == value else box
    return [_replace_leaves(x, depth - 1, value, other) for x in box] if isinstance(box, list) else box


def _set_at(box: Any, path: tuple[int, ...], change: Any) -> Any:
    """`box` with the item or character at `path` (-1: the last) replaced by `change(it)`; unchanged
    where it has no such place (the check then rejects the input)."""
    if not path:
        return change(box)
    i = path[0]
    if isinstance(box, list) and -len(box) <= i < len(box):
        box[i] = _set_at(box[i], path[1:], change)
    elif isinstance(box, str) and len(path) == 1 and -len(box) <= i < len(box):
        j = i % len(box)
        box = box[:j] + change(box[j]) + box[j + 1:]
    return box


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
    return _level_order(values, left, right, bst)


def path_tree(rng: random.Random, values: list, bst: bool = False) -> list:
    """A chain: every node has one child, on a side drawn per node (all left, all right or
    zigzag), as deep as the tree can be."""
    n = len(values)
    if n == 0:
        return []
    left = [-1] * n
    right = [-1] * n
    style = rng.choice(["left", "right", "zigzag"])
    for i in range(1, n):
        side = style if style != "zigzag" else rng.choice(["left", "right"])
        (left if side == "left" else right)[i - 1] = i
    return _level_order(values, left, right, bst)


def _level_order(values: list, left: list[int], right: list[int], bst: bool) -> list:
    n = len(values)
    if bst:
        vals = sorted(set(values))
        lo = vals[0] if vals else 0
        vals = list(range(lo - (n - len(vals)), lo)) + vals  # repeated values: distinct ones below
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


# primes and hash keys ------------------------------------------------------------------------------
_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)  # deterministic below 3.3 * 10^24
SIEVE_LIMIT = 10**12  # above this, Miller-Rabin on a bounded number of candidates


def largest_primes(lo: int, hi: int, count: int) -> list[int]:
    """Up to `count` of the largest primes in [lo, hi], largest first: a sieve over windows just
    below `hi` (up to 10^12), Miller-Rabin beyond (fewer where they are too many to test)."""
    lo = max(lo, 2)
    if hi < lo or count <= 0:
        return []
    if hi > SIEVE_LIMIT:
        out = []
        for n in range(hi, max(lo, hi - 200 * max(count, 1) * 45) - 1, -1):
            if is_prime(n):
                out.append(n)
                if len(out) == count:
                    break
        return out
    base = _small_primes(math.isqrt(hi))
    out: list[int] = []
    top = hi
    while len(out) < count and top >= lo:
        width = min(top - lo + 1, max(1 << 16, int((count - len(out)) * math.log(top + 2) * 1.3)))
        start = top - width + 1
        seg = bytearray([1]) * width
        for p in base:
            if p * p > top:
                break
            first = max(p * p, -(-start // p) * p) - start
            if first < width:
                seg[first::p] = bytes(len(range(first, width, p)))
        found = list(itertools.compress(range(start, top + 1), seg))
        out += found[::-1][:count - len(out)]
        top = start - 1
    return out


@functools.lru_cache(maxsize=8)
def _small_primes(limit: int) -> list[int]:
    sieve = bytearray([1]) * (limit + 1)
    sieve[:2] = b"\0\0"[:limit + 1]
    for p in range(2, math.isqrt(limit) + 1):
        if sieve[p]:
            sieve[p * p::p] = bytes(len(range(p * p, limit + 1, p)))
    return list(itertools.compress(range(limit + 1), sieve))


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in _MR_BASES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _multiples(lo: int, hi: int, step: int) -> int:
    """How many multiples of `step` lie in [lo, hi]."""
    return max(0, hi // step - (-(-lo // step)) + 1)


def _distinct_draws(draw, k: int) -> list:
    """`k` distinct values from `draw` where a few tries find them (fewer where the range is small)."""
    out: list = []
    for _ in range(4 * k):
        v = draw()
        if v not in out:
            out.append(v)
            if len(out) == k:
                break
    return out


def _redraw_duplicates(items: list, draw, tries: int = 8) -> list:
    """Items made distinct (a flag says so): a repeated one is drawn again a few times; where that
    fails the draw fails (ValueError), rather than give an input the statement rules out."""
    seen: set[str] = set()
    out = []
    for item in items:
        for _ in range(tries):
            key = repr(item)
            if key not in seen:
                break
            item = draw()
        else:
            raise ValueError("could not draw distinct items")
        seen.add(repr(item))
        out.append(item)
    return out


def edge_key(row: Any) -> str:
    """An undirected edge's identity: `[2, 4]` and `[4, 2]` are one edge."""
    return repr(undirected(row))


# generation -------------------------------------------------------------------------------------------


def generate_inputs(space: Space, problem_id: str, count: int, *, seed: int, max_elements: int,
                    max_input_bytes: int, existing: set[str], attempts: int = 4,
                    max_problem_bytes: int | None = None, tiers: tuple[str, ...] = TIERS,
                    skipped: Counter | None = None) -> list[Candidate]:
    """Up to `count` distinct inputs not in `existing`, tier by tier in the order of TIERS (only the
    tiers named in `tiers`). Edge and random inputs hold at most `max_elements` per parameter; max
    and hack inputs are limited by bytes only: `max_input_bytes` each, `max_problem_bytes`
    (default 8 * max_input_bytes) for all of them together. A plan that yields no input is
    counted in `skipped` by reason."""
    unknown = set(tiers) - set(TIERS)
    if unknown:
        raise ValueError(f"unknown tiers {sorted(unknown)} (known: {', '.join(TIERS)})")
    skipped = skipped if skipped is not None else Counter()
    if space.blocked():  # one answer promised, or a promise about the input no rule models
        skipped[space.blocked()] += 1
        return []
    full_left = 8 * max_input_bytes if max_problem_bytes is None else max_problem_bytes
    plans = _plans(space, count, tiers)
    out: list[Candidate] = []
    seen = set(existing)
    for i, (label, plan, plan_seed) in enumerate(plans):
        if len(out) >= count:
            break
        s = case_seed(seed, problem_id, plan_seed)
        if plan.tier in FULL_SIZE:
            planned = min(count - len(out), sum(1 for _, p, _ in plans[i:] if p.tier in FULL_SIZE))
            limit = min(max_input_bytes, full_left // max(planned, 1))
            if limit <= 0:
                skipped[f"{plan.tier}: problem byte budget spent"] += 1
                continue
            got, why = _draw_full(space, plan, label, s, limit, attempts)
        else:
            budget = max(1, min(max_elements, max_input_bytes // 8))  # ~8 bytes per JSON number
            got, why = _draw_capped(space, plan, label, s, budget, max_input_bytes, attempts)
        if got is None:
            skipped[why] += 1
        elif got.input in seen:
            skipped[f"{plan.tier}: duplicate input"] += 1
        else:
            seen.add(got.input)
            out.append(got)
            if plan.tier in FULL_SIZE:
                full_left -= len(got.input.encode())
    return out


def _plans(space: Space, count: int, tiers: tuple[str, ...]) -> list[tuple[str, Plan, int | str]]:
    """(label, plan, seed index) in tier order. Edge and random plans keep their historical seed
    indexes (0..7, 8..); max and hack plans are seeded by their label."""
    kinds = _leaf_kinds(space)
    by_tier: dict[str, list] = {t: [] for t in TIERS}
    for i, (label, size, values) in enumerate(EDGE_PLANS):
        by_tier["edge"].append((label, Plan(size, values, tier="edge"), i))
    for label, values, shape in MAX_PLANS:
        if shape == "path" and not ({"tree"} & kinds or space.tree_edges):
            continue
        by_tier["max"].append((label, Plan("max", values, shape=shape, tier="max"), label))
    for label, values, order in HACK_PLANS:
        if values in INT_ONLY and "int" not in kinds:
            continue
        by_tier["hack"].append((label, Plan("max", values, order=order, tier="hack"), label))
    n_random = max(count * 2, 8)
    for i in range(n_random):
        scale = ((i + 1) / n_random) ** 2
        by_tier["random"].append((f"random:scale={scale:.3f}", Plan("grow", "random", scale, tier="random"),
                                  len(EDGE_PLANS) + i))
    return [p for t in TIERS if t in tiers for p in by_tier[t]]


def _leaf_kinds(space: Space) -> set[str]:
    out = set()
    for t in space.sig.types:
        out.add(t.leaf().kind)
        if t.kind in ("tree", "linked"):
            out.add("int")  # node values
    return out


def _draw_capped(space: Space, plan: Plan, label: str, s: int, budget: int, max_input_bytes: int,
                 attempts: int) -> tuple[Candidate | None, str]:
    """An edge or random input: on too big a draw, a quarter of the budget; on a violation, a redraw."""
    why = f"{plan.tier}: no valid draw in {attempts} attempts"
    for attempt in range(attempts):
        rng = random.Random(s + attempt)
        try:
            values = Drawer(space, rng, plan, budget).draw()
        except TooBig:
            budget = max(1, budget // 4)
            continue
        except (ValueError, OverflowError, MemoryError, RecursionError) as e:
            return None, f"{plan.tier}: draw failed ({type(e).__name__})"
        text = format_input(values)
        if len(text.encode()) > max_input_bytes:
            budget = max(1, budget // 4)
            why = f"{plan.tier}: over max_input_bytes"
            continue
        if space.violations(values):
            why = f"{plan.tier}: violates constraints"
            continue
        return Candidate(text, plan.tier, label, s + attempt, tier=plan.tier), ""
    return None, why


def _draw_full(space: Space, plan: Plan, label: str, s: int, limit: int,
               attempts: int) -> tuple[Candidate | None, str]:
    """A max or hack input of at most `limit` bytes with every size as large as that allows. The
    first draw is a probe of PROBE_ELEMENTS per parameter (or the statement's own total, `m * n <=
    10^5`, where smaller); if the probe's sizes were cut, the element budget is rescaled by the bytes
    it took (up to the limit; down again when a draw is over it), so a full-size draw is made about once."""
    cap = space.element_cap()
    budget = min(cap or PROBE_ELEMENTS, PROBE_ELEMENTS)
    why = f"{plan.tier}: no valid draw in {attempts} attempts"
    grows = 0
    for attempt in range(attempts + 2):
        rng = random.Random(s + attempt)
        drawer = Drawer(space, rng, plan, budget)
        try:
            values = drawer.draw()
        except TooBig:
            budget = max(1, budget // 4)
            continue
        except (ValueError, OverflowError, MemoryError, RecursionError) as e:
            return None, f"{label}: draw failed ({type(e).__name__})"
        if not drawer.applied:
            return None, f"{label}: not applicable"
        text = format_input(values)
        size = len(text.encode())
        cut = bool(drawer.clipped) and (cap is None or budget < cap)  # the budget, not the statement, cut sizes
        if size > limit or (cut and size < 0.8 * limit and grows < 2):
            grows += size <= limit
            budget = _rescaled(budget, _elements(values), size, limit, cap)
            why = f"{label}: over {limit} bytes"
            continue
        bad = space.violations(values)
        if bad:
            why = f"{plan.tier}: violates constraints"
            if any(v.startswith(("len:", "aggregate")) for v in bad):
                budget = max(1, budget // 2)  # a total the statement bounds: smaller sizes may fit
            continue
        if cut:
            sizes = ", ".join(f"{key} {stated}->{n}" for key, stated, n in drawer.clipped[:3])
            label = f"{label} (shrunk to fit {limit} bytes: {sizes})"
        return Candidate(text, plan.tier, label, s + attempt, tier=plan.tier), ""
    return None, why


def _rescaled(budget: int, elements: int, size: int, limit: int, cap: int | None) -> int:
    """The element budget that fills `limit` bytes, judging by a draw of `elements` in `size` bytes."""
    scaled = int(min(budget, max(elements, 1)) * limit / max(size, 1) * 0.95)
    return max(1, min(cap, scaled) if cap else scaled)


def _elements(values: Any) -> int:
    """Numbers and characters in a value (what the element budget counts)."""
    if isinstance(values, str):
        return len(values)
    if isinstance(values, list):
        if all(not isinstance(x, (list, str)) for x in values):
            return len(values)
        return sum(_elements(v) for v in values)
    return 1


# local mutation ----------------------------------------------------------------------------------------
MUTATION_TRIES = 8


def mutate_input(space: Space, text: str, rng: random.Random, max_input_bytes: int) -> str | None:
    """A small local change of one valid input (one value +-1 or to a bound, two items swapped, one
    item duplicated or removed, a segment reversed, one character changed), formatted, within
    `max_input_bytes` and passing `space.violations`; None after MUTATION_TRIES failed tries."""
    values = parse_input(text, len(space.sig.names))
    if values is None or space.blocked():
        return None
    bounds = Drawer(space, rng, Plan("max", "random"), 1)  # values stay where the generator draws them
    bounds.env, _ = space.env_of(values)  # `k <= nums.length` evaluates against this input
    for _ in range(MUTATION_TRIES):
        k = rng.randrange(len(values))
        changed = _mutate(bounds, space.sig.types[k], values[k], space.sig.names[k], rng)
        if changed is None:
            continue
        new = values[:k] + [changed] + values[k + 1:]
        out = format_input(new)
        if out != text and len(out.encode()) <= max_input_bytes and not space.violations(new):
            return out
    return None


def _mutate(bounds: Drawer, typ: Type, value: Any, path: str, rng: random.Random, keep_length: bool = False) -> Any:
    """`value` with one local change (a copy; the containers it does not touch are shared).
    `keep_length`: an item of a list (a grid's row, a word) keeps its length."""
    kind = typ.kind
    ops = ["value", "swap", "reverse"] + ([] if keep_length else ["dup", "remove"])
    if kind == "bool":
        return not value
    if kind in ("int", "float"):
        return _nudge(bounds, f"val:{path}", value, rng)
    if kind == "str" and isinstance(value, str):
        alphabet = bounds.s.c.alphabets.get(f"val:{path}") or "".join(sorted(set(value))) or string.ascii_lowercase
        out = _mutate_items(list(value), rng, rng.choice(ops), lambda c: rng.choice(alphabet))
        return None if out is None else "".join(out)
    if kind in ("tree", "linked") and isinstance(value, list):
        spots = [i for i, v in enumerate(value) if v is not None]
        if not spots:
            return None
        i = rng.choice(spots)
        out = list(value)
        out[i] = _nudge(bounds, "val:node", value[i], rng)
        return None if out[i] is None else out
    if kind == "list" and isinstance(value, list):
        inner, item_path = typ.inner, f"{path}[]"
        if inner.kind == "list" and value and rng.random() < 0.7:  # inside one row
            i = rng.randrange(len(value))
            row = _mutate(bounds, inner, value[i], item_path, rng, keep_length=True)
            return None if row is None else value[:i] + [row] + value[i + 1:]
        return _mutate_items(list(value), rng, rng.choice(ops),
                             lambda x: _mutate(bounds, inner, x, item_path, rng, keep_length=True))
    return None


def _mutate_items(items: list, rng: random.Random, op: str, change) -> list | None:
    if op in ("value", "char"):
        if not items:
            return None
        i = rng.randrange(len(items))
        new = change(items[i])
        if new is None:
            return None
        items[i] = new
    elif op == "swap":
        if len(items) < 2:
            return None
        i, j = rng.sample(range(len(items)), 2)
        items[i], items[j] = items[j], items[i]
    elif op == "dup":
        if not items:
            return None
        i = rng.randrange(len(items))
        items.insert(i, items[i])
    elif op == "remove":
        if not items:
            return None
        del items[rng.randrange(len(items))]
    else:  # reverse a segment
        if len(items) < 2:
            return None
        i, j = sorted(rng.sample(range(len(items) + 1), 2))
        items[i:j] = items[i:j][::-1]
    return items


def _nudge(bounds: Drawer, key: str, value: Any, rng: random.Random) -> Any:
    """One number +-1 or moved to an end of its range (the stated one, else the examples')."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    integral = isinstance(value, int)
    lo, hi = bounds._bounds(key, INT_FALLBACK, integral)
    choices = [v for v in (value + 1, value - 1, lo, hi) if lo <= v <= hi and v != value]
    if not choices:
        return None
    v = rng.choice(choices)
    return int(v) if integral else float(v)


def example_values(space_sig: Signature, inputs: list[str]) -> list[list[Any]]:
    out = []
    for text in inputs:
        values = parse_input(text, len(space_sig.names))
        if values is not None:
            out.append(values)
    return out
