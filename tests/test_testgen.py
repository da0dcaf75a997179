"""Testgen units: constraint parsing (lost superscripts, chains, aliases, alphabets, flags), the
input space checked against examples, edge cases first, determinism, mutants. No sandbox here."""

from __future__ import annotations

import ast
import json
import random

import pytest

from microcoder.pipeline.testgen.constraints import (
    KeyMap,
    Unresolved,
    constraint_lines,
    evaluate,
    parse_constraints,
    to_python,
)
from microcoder.pipeline.testgen.functional import generate_inputs, random_tree
from microcoder.pipeline.testgen.mutants import make_mutants
from microcoder.pipeline.testgen.space import Space, format_input, parse_input
from microcoder.pipeline.testgen.types import Signature, Type, Unsupported, parse_annotation, signature_of

INT, STR = Type("int"), Type("str")
LIST_INT = Type("list", INT)
GRID = Type("list", LIST_INT)


def _space(names, types, statement, examples=()):
    return Space(Signature(list(names), list(types)), statement, [list(e) for e in examples])


def _ev(expr, env=None):
    env = env or {}

    def lookup(ref):
        if ref in env:
            return env[ref]
        raise Unresolved(ref)

    return evaluate(expr, lookup)


def test_lost_superscripts_are_restored_and_literals_kept():
    assert _ev(to_python("105")) == 10**5
    assert _ev(to_python("2 * 104")) == 2 * 10**4
    assert _ev(to_python("1.5 * 105")) == 150000
    assert _ev(to_python("231 - 1")) == 2**31 - 1
    assert _ev(to_python("10^9 + 7")) == 10**9 + 7
    assert _ev(to_python("100")) == 100 and _ev(to_python("1000")) == 1000 and _ev(to_python("50")) == 50
    assert _ev(to_python("n - 1"), {"n": 7}) == 6
    with pytest.raises(Unresolved):
        _ev("n - 1")


def test_constraint_section_lines_stop_at_follow_up_and_keep_minus_signs():
    st = "Do it.\n\nConstraints:\n\n-231 <= x <= 231 - 1\n- 1 <= k\n\nFollow up: O(1)?\nmore"
    assert constraint_lines(st) == ["-231 <= x <= 231 - 1", "1 <= k"]
    assert constraint_lines("no section here") == []


def test_chains_lists_aliases_fields_and_ranges():
    types = {"n": INT, "edges": GRID, "nums": LIST_INT, "grid": GRID, "k": INT}
    statement = ("edges[i] = [fromi, toi, wi]\nConstraints:\n"
                 "1 <= n <= 105\nm == grid.length\nn == grid[i].length\n1 <= m, n <= 50\n"
                 "0 <= fromi, toi < n\n1 <= k <= nums.length\nnums.length = grid.length\n"
                 "-104 <= nums[i] <= 104\nThe number of nodes in the tree is in the range [1, 1000].\n")
    c = parse_constraints(statement, KeyMap(types, statement))
    assert [b.expr for b in c.upper["val:edges[][0]"]] == ["n"] and c.upper["val:edges[][0]"][0].strict
    assert ("var:m", "len:grid") in c.equal and ("val:n", "len:grid[]") in c.equal
    assert ("len:nums", "len:grid") in c.equal  # a single `=` reads as equality
    assert [b.expr for b in c.upper["val:k"]] == ["nums.length"]
    assert _ev(c.lower["val:nums[]"][0].expr) == -(10**4)
    assert _ev(c.upper["len:nodes"][0].expr) == 1000
    assert {b.expr for b in c.upper["var:m"]} == {"50"}


def test_alphabets_and_flags():
    types = {"s": STR, "t": STR, "nums": LIST_INT, "words": Type("list", STR)}
    statement = ("Constraints:\ns[i] is either '0' or '1'.\nt consists of lowercase English letters.\n"
                 "nums is sorted in non-decreasing order.\nAll the integers of nums are unique.\n"
                 "words[i] consists of lowercase and uppercase English letters and digits.\n")
    c = parse_constraints(statement, KeyMap(types, statement))
    assert c.alphabets["val:s"] == "01"
    assert c.alphabets["val:t"] == "abcdefghijklmnopqrstuvwxyz"
    assert set(c.alphabets["val:words[]"]) == set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    assert c.flags["val:nums"] == {"sorted", "distinct"}


def test_a_bound_the_examples_break_is_dropped():
    # "101" was really 101 here, not 10^1: the example with 50 shows the misreading
    sp = _space(["nums"], [LIST_INT], "Constraints:\n1 <= nums[i] <= 101\n1 <= nums.length <= 10",
                [[[50, 3]]])
    assert sp.dropped == ["upper bound (10**1) of val:nums[]"]
    assert sp.violations([[0]]) == ["val:nums[] lower 1"]
    assert sp.violations([[5, 7]]) == []


def test_types_from_annotations_and_signature():
    assert parse_annotation("List[List[int]]") == GRID
    assert parse_annotation("Optional[TreeNode]") == Type("tree")
    with pytest.raises(Unsupported):
        parse_annotation("List[Node]")
    with pytest.raises(Unsupported):
        parse_annotation("")
    sig = signature_of("Solution().f", "class Solution:\n    def f(self, a: List[int], s: str) -> int:", None)
    assert sig.names == ["a", "s"] and sig.types == [LIST_INT, STR]


STATEMENT = ("Return the sum.\n\nConstraints:\n\n1 <= nums.length <= 50\n-100 <= nums[i] <= 100\n"
             "1 <= k <= nums.length\n")


def test_edge_cases_first_then_growing_random_within_constraints():
    # the max and hack tiers (drawn between these two) have their own tests: tests/test_testgen_tiers.py
    sp = _space(["nums", "k"], [LIST_INT, INT], STATEMENT, [[[1, 2, 3], 2]])
    cands = generate_inputs(sp, "p", 20, seed=0, max_elements=10_000, max_input_bytes=100_000, existing=set(),
                            tiers=("edge", "random"))
    assert len(cands) == 20
    values = [parse_input(c.input, 2) for c in cands]
    assert all(sp.violations(v) == [] for v in values)
    assert all(1 <= len(v[0]) <= 50 and 1 <= v[1] <= len(v[0]) and all(-100 <= x <= 100 for x in v[0]) for v in values)
    assert cands[0].method == "edge" and values[0] == [[-100], 1]  # minimum size, minimum values
    assert values[1] == [[100], 1]
    assert [c.method for c in cands[:8]].count("edge") >= 6
    assert any(len(v[0]) == 50 for v in values[:8])  # the maximum size is an edge case
    assert all(v[0] == [100] * 50 for v in values if v[0] and len(v[0]) == 50 and set(v[0]) == {100})
    randoms = [len(v[0]) for c, v in zip(cands, values, strict=True) if c.method == "random"]
    assert randoms and max(randoms) > min(randoms)
    again = generate_inputs(sp, "p", 20, seed=0, max_elements=10_000, max_input_bytes=100_000, existing=set(),
                            tiers=("edge", "random"))
    assert [c.input for c in again] == [c.input for c in cands]  # deterministic for a seed
    other = generate_inputs(sp, "p", 20, seed=1, max_elements=10_000, max_input_bytes=100_000, existing=set(),
                            tiers=("edge", "random"))
    assert [c.input for c in other] != [c.input for c in cands]


def test_caps_existing_inputs_and_duplicates():
    sp = _space(["nums"], [LIST_INT], "Constraints:\n1 <= nums.length <= 105\n1 <= nums[i] <= 109\n", [[[5, 6]]])
    existing = {format_input([[1]])}
    cands = generate_inputs(sp, "p", 12, seed=0, max_elements=300, max_input_bytes=100_000, existing=existing)
    lengths = [len(parse_input(c.input, 1)[0]) for c in cands]
    capped = [n for c, n in zip(cands, lengths, strict=True) if c.tier in ("edge", "random")]
    assert max(capped) == 300 and min(capped) == 1  # max_elements caps the edge and random tiers only
    full = [n for c, n in zip(cands, lengths, strict=True) if c.tier in ("max", "hack")]
    assert full and min(full) > 300 and all(len(c.input) <= 100_000 for c in cands)
    assert len({c.input for c in cands}) == len(cands) and not existing & {c.input for c in cands}
    small = generate_inputs(sp, "p", 12, seed=0, max_elements=10**5, max_input_bytes=2000, existing=set())
    assert all(len(c.input) <= 2000 for c in small)


def test_strings_grids_trees_permutations_and_tree_edges():
    sp = _space(["s"], [STR], "Constraints:\n1 <= s.length <= 8\ns consists of only 'a' and 'b'.", [["ab"]])
    for c in generate_inputs(sp, "p", 10, seed=0, max_elements=100, max_input_bytes=10_000, existing=set()):
        (s,) = parse_input(c.input, 1)
        assert 1 <= len(s) <= 8 and set(s) <= {"a", "b"}
    sp = _space(["grid"], [GRID], "Constraints:\nm == grid.length\nn == grid[i].length\n1 <= m, n <= 6\n"
                "grid[i][j] is 0 or 1.\n0 <= grid[i][j] <= 1", [[[[0, 1], [1, 1]]]])
    for c in generate_inputs(sp, "p", 10, seed=0, max_elements=100, max_input_bytes=10_000, existing=set()):
        (g,) = parse_input(c.input, 1)
        assert 1 <= len(g) <= 6 and len({len(r) for r in g}) == 1 and {x for r in g for x in r} <= {0, 1}
    sp = _space(["perm"], [LIST_INT], "Constraints:\n1 <= perm.length <= 9\nperm is a permutation of [0, ..., n - 1].",
                [[[1, 0, 2]]])
    for c in generate_inputs(sp, "p", 6, seed=0, max_elements=100, max_input_bytes=10_000, existing=set()):
        (p,) = parse_input(c.input, 1)
        assert sorted(p) == list(range(len(p)))
    sp = _space(["n", "edges"], [INT, GRID], "Constraints:\n1 <= n <= 30\nedges.length == n - 1\n"
                "0 <= ai, bi < n\nThe given input represents a valid tree.", [[3, [[0, 1], [1, 2]]]])
    for c in generate_inputs(sp, "p", 8, seed=0, max_elements=100, max_input_bytes=10_000, existing=set()):
        n, edges = parse_input(c.input, 2)
        assert len(edges) == n - 1 and _connected(n, edges)


def _connected(n, edges):
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in edges:
        parent[find(a)] = find(b)
    return len({find(x) for x in range(n)}) == 1


def test_random_tree_level_order_and_bst():
    rng = random.Random(3)
    tree = random_tree(rng, [5, 3, 8, 1, 4], bst=True)
    assert sorted(v for v in tree if v is not None) == [1, 3, 4, 5, 8] and tree[-1] is not None
    inorder = _inorder(tree)
    assert inorder == sorted(inorder)
    assert random_tree(rng, []) == []


def _inorder(values):
    from microcoder.pipeline.sources.leetcode_types import _build_tree

    root, _ = _build_tree(values)
    out = []

    def walk(node):
        if node:
            walk(node.left)
            out.append(node.val)
            walk(node.right)

    walk(root)
    return out


REFERENCE = """from typing import *

class Solution:
    def f(self, nums: List[int], k: int) -> int:
        best = 0
        for x in nums:
            if x > k:
                best = max(best, x + 1)
        return best
"""


def test_mutants_are_single_site_changes_deterministic_and_skip_the_prelude():
    ms = make_mutants(REFERENCE, 20, seed=0)
    labels = [m.label for m in ms]
    assert any(label.startswith("compare Gt->GtE") for label in labels)
    assert any(label.startswith("minmax max->min") for label in labels)
    assert any(label.startswith("constant 0->1") for label in labels)
    assert any(label.startswith("arith Add->Sub") for label in labels)
    original = ast.unparse(ast.parse(REFERENCE))
    assert all(m.code != original for m in ms) and len({m.code for m in ms}) == len(ms)
    for m in ms:
        ast.parse(m.code)
    assert [m.code for m in make_mutants(REFERENCE, 3, seed=0)] == [m.code for m in make_mutants(REFERENCE, 3, seed=0)]
    assert len(make_mutants(REFERENCE, 3, seed=0)) == 3
    assert make_mutants("def broken(:", 3, seed=0) == []


def test_inputs_round_trip():
    values = [[1, 2], "a\nb", None, 2.5]
    assert parse_input(format_input(values), 4) == values
    assert json.loads(format_input([[1, 2]])) == [1, 2]
    assert parse_input("1\n2", 3) is None


def test_unannotated_parameters_take_their_examples_types():
    code = "def f(xs, s, t: list, k):\n    return 0\n"
    sig = signature_of("f", None, code, [[[1, 2], "ab", [[1.5]], 3], [[], "c", [[2]], 4]])
    assert sig.types == [LIST_INT, STR, Type("list", Type("list", Type("float"))), INT]
    with pytest.raises(Unsupported):
        signature_of("f", None, code, [[[1], 1, [], 2], [[1], "a", [], 2]])  # examples disagree on s
    with pytest.raises(Unsupported):
        signature_of("f", None, code, [])


def test_sizes_fixed_by_a_product_of_scalars_stay_within_the_budget():
    # last-day-where-you-can-still-cross: drawing row and col near 2*10^4 each once asked for 10^8 rows
    sp = _space(["row", "col", "cells"], [INT, INT, GRID],
                "cells[i] = [ri, ci] is the cell flooded on day i.\n\n"
                "Constraints:\n2 <= row, col <= 2 * 104\n4 <= row * col <= 2 * 104\ncells.length == row * col\n"
                "1 <= ri <= row\n1 <= ci <= col", [[2, 2, [[1, 1], [2, 1], [1, 2], [2, 2]]]])
    cands = generate_inputs(sp, "p", 20, seed=0, max_elements=400, max_input_bytes=1_000_000, existing=set())
    assert len(cands) >= 10
    for c in cands:
        row, col, cells = parse_input(c.input, 3)
        # edge and random within max_elements; max and hack up to the statement's `row * col <= 2 * 10^4`
        assert len(cells) == row * col <= (400 if c.tier in ("edge", "random") else 2 * 10**4)
        assert sp.violations([row, col, cells]) == []
    assert max(len(parse_input(c.input, 3)[2]) for c in cands) > 10**4
