"""Testgen's full-size tiers on LeetCode-style statements (the superscripts lost as in
LeetCodeDataset: `105` is 10^5): max-tier inputs at the stated maxima beyond `max_elements`, hack
inputs (sorted, all equal, alternating, primes, colliding hash keys...) that honour the statement's
flags, byte budgets per input and per problem, determinism, and local mutation. No sandbox here."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from microcoder.pipeline.sources.leetcode_types import _build_tree
from microcoder.pipeline.testgen.functional import (
    Candidate,
    generate_inputs,
    is_prime,
    largest_primes,
    mutate_input,
)
from microcoder.pipeline.testgen.space import Space, format_input, parse_input
from microcoder.pipeline.testgen.types import Signature, Type

INT, STR = Type("int"), Type("str")
LIST_INT = Type("list", INT)
GRID = Type("list", LIST_INT)
BYTES = 4_000_000  # testgen's per-input byte limit

# contains-duplicate-ii
NEARBY = """Given an integer array nums and an integer k, return true if there are two distinct indices i
and j in the array such that nums[i] == nums[j] and abs(i - j) <= k.

Example 1:
Input: nums = [1,2,3,1], k = 3
Output: true

Constraints:

1 <= nums.length <= 105
-109 <= nums[i] <= 109
0 <= k <= 105
"""


def _space(names, types, statement, examples=()):
    return Space(Signature(list(names), list(types)), statement, [list(e) for e in examples])


def _nearby():
    return _space(["nums", "k"], [LIST_INT, INT], NEARBY, [[[1, 2, 3, 1], 3]])


def _generate(sp, count=40, **kw):
    base = {"seed": 0, "max_elements": 10_000, "max_input_bytes": BYTES, "existing": set()}
    return generate_inputs(sp, "p", count, **{**base, **kw})


def _values(sp, cands):
    return [parse_input(c.input, len(sp.sig.names)) for c in cands]


def test_max_tier_reaches_the_stated_maximum_beyond_max_elements():
    sp = _nearby()
    cands = _generate(sp)
    values = _values(sp, cands)
    assert all(sp.violations(v) == [] for v in values)
    tiers = [c.tier for c in cands]
    assert set(tiers) == {"edge", "max", "hack", "random"}
    order = {"edge": 0, "max": 1, "hack": 2, "random": 3}
    assert [order[t] for t in tiers] == sorted(order[t] for t in tiers)  # edge, max, hack, random
    sizes = {t: [len(v[0]) for c, v in zip(cands, values, strict=True) if c.tier == t] for t in order}
    assert max(sizes["edge"] + sizes["random"]) == 10_000  # still capped by max_elements
    assert sizes["max"] and all(n == 10**5 for n in sizes["max"])  # exactly the stated maximum
    assert all(n == 10**5 for n in sizes["hack"])
    assert all(c.method == c.tier for c in cands)
    assert not any("shrunk" in c.generator for c in cands)


def test_hack_tier_worst_cases():
    sp = _nearby()
    cands = _generate(sp, tiers=("hack",))
    by_label = {c.generator: parse_input(c.input, 2)[0] for c in cands}
    assert all(c.tier == "hack" for c in cands) and all(len(v) == 10**5 for v in by_label.values())
    assert by_label["hack:sorted"] == sorted(by_label["hack:sorted"])
    assert by_label["hack:reverse-sorted"] == sorted(by_label["hack:reverse-sorted"], reverse=True)
    assert len(set(by_label["hack:all-equal"])) == 1
    alternating = by_label["hack:alternating"]
    assert alternating[:4] == [-(10**9), 10**9, -(10**9), 10**9] and len(set(alternating)) == 2
    assert len(set(by_label["hack:few-distinct"])) <= 3
    primes = by_label["hack:large-primes"]
    assert max(primes) == 999_999_937 and all(is_prime(x) for x in set(primes))  # the largest primes <= 10^9
    assert all(x % 2**14 == 0 for x in by_label["hack:hash-pow2"]) and len(set(by_label["hack:hash-pow2"])) > 1000
    bucket = by_label["hack:hash-bucket-prime"]
    assert any(all(x % p == 0 for x in bucket) for p in (107897, 126271))
    assert all(sp.violations(parse_input(c.input, 2)) == [] for c in cands)


BINARY_SEARCH = """Given an array of integers nums which is sorted in ascending order, and an integer target,
return its index or -1.

Constraints:

1 <= nums.length <= 104
-104 < nums[i], target < 104
All the integers in nums are unique.
nums is sorted in ascending order.
"""


def test_hack_plans_respect_sorted_and_distinct_flags():
    sp = _space(["nums", "target"], [LIST_INT, INT], BINARY_SEARCH, [[[-1, 0, 3, 5, 9, 12], 9]])
    skipped = Counter()
    cands = _generate(sp, tiers=("max", "hack"), skipped=skipped)
    for c in cands:
        nums, target = parse_input(c.input, 2)
        assert nums == sorted(set(nums)) and -(10**4) < target < 10**4, c.generator
    labels = {c.generator for c in cands}
    assert "max:random" in labels and "hack:large-primes" in labels  # distinct primes, sorted
    # repeated values break `unique`, and a reversed order breaks `sorted`: never drawn
    assert skipped["hack:all-equal: not applicable"] == 1 and skipped["hack:reverse-sorted: not applicable"] == 1
    assert sp.violations([[3, 1], 0]) == ["val:nums flag sorted"]
    assert sp.violations([[1, 1], 0]) == ["val:nums flag distinct"]


def test_permutations_stay_permutations():
    sp = _space(["perm"], [LIST_INT], "Constraints:\n1 <= perm.length <= 105\nperm is a permutation of [1, ..., n].",
                [[[2, 1, 3]]])
    cands = _generate(sp, tiers=("max", "hack"))
    assert {c.generator for c in cands} >= {"max:random", "hack:sorted", "hack:reverse-sorted"}
    for c in cands:
        (p,) = parse_input(c.input, 1)
        assert sorted(p) == list(range(1, 10**5 + 1))


LONGEST_SUBSTRING = """Given a string s, find the length of the longest substring without repeating characters.

Constraints:

0 <= s.length <= 5 * 104
s consists of lowercase English letters.
"""


def test_strings_at_full_length_and_their_patterns():
    sp = _space(["s"], [STR], LONGEST_SUBSTRING, [["abcabcbb"]])
    cands = _generate(sp, tiers=("max", "hack"))
    by_label = {c.generator: parse_input(c.input, 1)[0] for c in cands}
    assert all(len(s) == 5 * 10**4 and set(s) <= set("abcdefghijklmnopqrstuvwxyz") for s in by_label.values())
    assert len(set(by_label["hack:all-equal"])) == 1
    alternating = by_label["hack:alternating"]
    assert len(set(alternating)) == 2 and alternating[0] != alternating[1] and alternating[::2] == alternating[0] * 25_000
    periodic = by_label["hack:periodic"]
    period = next(p for p in range(2, 8) if periodic[p:] == periodic[:-p])
    assert len(set(periodic[:period])) == period
    assert by_label["hack:sorted"] == "".join(sorted(by_label["hack:sorted"]))
    assert "hack:large-primes" not in by_label  # no integers to draw primes for


MAX_DEPTH = """Given the root of a binary tree, return its maximum depth.

Constraints:

The number of nodes in the tree is in the range [0, 104].
-100 <= Node.val <= 100
"""

MIN_HEIGHT_TREES = """Given an array of n - 1 edges where edges[i] = [ai, bi] indicates an undirected edge between
the two nodes ai and bi in the tree. Return a list of all the roots of minimum height trees.

Constraints:

1 <= n <= 2 * 104
edges.length == n - 1
0 <= ai, bi < n
ai != bi
All the pairs (ai, bi) are distinct.
The given input is guaranteed to be a tree and there will be no repeated edges.
"""


def test_trees_as_long_paths_and_path_graphs():
    sp = _space(["root"], [Type("tree")], MAX_DEPTH, [[[3, 9, 20, None, None, 15, 7]]])
    cands = {c.generator: parse_input(c.input, 1)[0] for c in _generate(sp, tiers=("max",))}
    assert _depth(cands["max:random"]) < 10**4 == _nodes(cands["max:random"])
    assert _depth(cands["max:path"]) == 10**4 == _nodes(cands["max:path"])  # a chain: as deep as it gets
    sp = _space(["n", "edges"], [INT, GRID], MIN_HEIGHT_TREES, [[4, [[1, 0], [1, 2], [1, 3]]]])
    cands = {c.generator: parse_input(c.input, 2) for c in _generate(sp, tiers=("max",))}
    n, edges = cands["max:path"]
    assert n == 2 * 10**4 and edges == [[i, i + 1] for i in range(n - 1)]
    n, edges = cands["max:random"]
    assert n == 2 * 10**4 and len(edges) == n - 1 and sp.violations([n, edges]) == []


VALIDATE_BST = """Given the root of a binary tree, determine if it is a valid binary search tree (BST).

Constraints:

The number of nodes in the tree is in the range [1, 104].
-231 <= Node.val <= 231 - 1
"""


def test_binary_search_trees_stay_within_their_values_and_ordered():
    # values drawn at the bounds once collided, and the BST layout filled the gap below -2^31
    sp = _space(["root"], [Type("tree")], VALIDATE_BST, [[[2, 1, 3]]])
    cands = _generate(sp, count=30)
    assert all(sp.violations(parse_input(c.input, 1)) == [] for c in cands)
    (chain,) = next(parse_input(c.input, 1) for c in cands if c.generator == "max:path")
    assert _depth(chain) == 10**4 and _inorder(chain) == sorted(_inorder(chain))


def _inorder(level_order):
    root, _ = _build_tree(level_order)
    out, stack, node = [], [], root
    while stack or node:
        while node:
            stack.append(node)
            node = node.left
        node = stack.pop()
        out.append(node.val)
        node = node.right
    return out


def _nodes(level_order):
    return sum(v is not None for v in level_order)


def _depth(level_order):
    root, _ = _build_tree(level_order)
    depth, layer = 0, [root] if root else []
    while layer:
        depth += 1
        layer = [c for node in layer for c in (node.left, node.right) if c]
    return depth


ISLANDS = """Given an m x n grid, return the number of islands.

Constraints:

m == grid.length
n == grid[i].length
1 <= m, n <= 105
1 <= m * n <= 105
grid[i][j] is 0 or 1.
"""


def test_grids_fill_the_stated_total_and_no_more():
    sp = _space(["grid"], [GRID], ISLANDS, [[[[1, 1, 0], [0, 0, 1]]]])
    assert sp.element_cap() == 10**5
    assert sp.violations([[[0] * 400] * 400]) == ["aggregate: 1 <= m * n <= 105"]
    assert sp.violations([[[0, 1], [1]]])[0].startswith("len:grid[] equal")  # rows of one width
    for c in _generate(sp, tiers=("max", "hack")):
        (grid,) = parse_input(c.input, 1)
        cells = len(grid) * len(grid[0])
        assert 10**4 < cells <= 10**5 and len({len(r) for r in grid}) == 1, c.generator
        assert {x for r in grid for x in r} <= {0, 1}


def test_a_maximum_over_the_byte_limit_is_shrunk_not_dropped():
    sp = _space(["nums"], [LIST_INT], "Constraints:\n1 <= nums.length <= 106\n1 <= nums[i] <= 109\n", [[[5, 6]]])
    cands = _generate(sp, tiers=("max",), max_input_bytes=200_000)
    assert len(cands) == 2
    for c in cands:
        assert 100_000 < len(c.input.encode()) <= 200_000  # as large as fits, not far below
        assert "shrunk to fit 200000 bytes: len:nums 1000000->" in c.generator
    total = 600_000
    cands = _generate(sp, count=40, tiers=("max", "hack"), max_input_bytes=200_000, max_problem_bytes=total)
    assert len(cands) == 11  # every plan still drawn, smaller
    assert sum(len(c.input.encode()) for c in cands) <= total
    old_default = _generate(sp, count=40, tiers=("max", "hack"), max_input_bytes=20_000)
    assert sum(len(c.input.encode()) for c in old_default) <= 8 * 20_000  # max_problem_bytes=None


def test_determinism_tier_subsets_and_existing():
    sp = _nearby()
    first = _generate(sp, count=24)
    assert [c.input for c in _generate(sp, count=24)] == [c.input for c in first]
    assert [c.input for c in _generate(sp, count=24, seed=1)] != [c.input for c in first]
    some = _generate(sp, count=24, tiers=("random", "hack"))
    assert [c.tier for c in some] == sorted((c.tier for c in some), key=("hack", "random").index)
    assert {c.tier for c in some} == {"hack", "random"}
    taken = {c.input for c in first if c.tier == "max"}
    again = _generate(sp, count=24, existing=taken)
    assert not taken & {c.input for c in again}
    with pytest.raises(ValueError, match="unknown tiers"):
        _generate(sp, tiers=("huge",))
    with pytest.raises(ValueError, match="unknown test tier"):
        Candidate("1", "edge", "x", 0, tier="huge")
    assert Candidate("1", "random", "x", 0).tier == "random"


def test_largest_primes_by_sieve_and_by_miller_rabin():
    assert largest_primes(1, 30, 5) == [29, 23, 19, 17, 13]
    assert largest_primes(24, 28, 3) == []
    many = largest_primes(1, 10**9, 10_000)
    assert len(many) == 10_000 and many == sorted(many, reverse=True) and many[0] == 999_999_937
    assert all(is_prime(p) for p in many[::97])
    assert largest_primes(1, 2**61, 2) == [2**61 - 1, 2**61 - 31]  # a Mersenne prime, then Miller-Rabin below it
    assert not is_prime(561) and not is_prime(3_215_031_751)  # a Carmichael number, a strong pseudoprime to 2, 3, 5, 7


def test_mutate_input_is_local_valid_and_new():
    sp = _nearby()
    rng = random.Random(0)
    text = format_input([[5, 1, 5, 3, 9], 2])
    outs = [mutate_input(sp, text, rng, BYTES) for _ in range(60)]
    assert all(o is not None and o != text and sp.violations(parse_input(o, 2)) == [] for o in outs)
    lengths = Counter(len(parse_input(o, 2)[0]) for o in outs)
    assert set(lengths) == {4, 5, 6}  # items removed, changed in place, duplicated
    sp = _space(["nums", "target"], [LIST_INT, INT], BINARY_SEARCH, [[[-1, 0, 3, 5, 9, 12], 9]])
    text = format_input([[-1, 0, 3, 5, 9, 12], 9])
    outs = [o for o in (mutate_input(sp, text, rng, BYTES) for _ in range(60)) if o]
    assert outs and all(parse_input(o, 2)[0] == sorted(set(parse_input(o, 2)[0])) for o in outs)
    sp = _space(["grid"], [GRID], ISLANDS, [[[[1, 1, 0], [0, 0, 1]]]])
    text = format_input([[[1, 1, 0], [0, 0, 1]]])
    for o in filter(None, (mutate_input(sp, text, rng, BYTES) for _ in range(60))):
        (grid,) = parse_input(o, 1)
        assert len({len(r) for r in grid}) == 1 and {x for r in grid for x in r} <= {0, 1}
    assert mutate_input(sp, "not json", rng, BYTES) is None
    assert mutate_input(_nearby(), format_input([[1], 0]), rng, 3) is None  # no room in 3 bytes


RESTORE_ARRAY = """There is an integer array nums of n unique elements, but you have forgotten it. You are given
a 2D integer array adjacentPairs of size n - 1 where each adjacentPairs[i] = [ui, vi].

Constraints:

nums.length == n
adjacentPairs.length == n - 1
adjacentPairs[i].length == 2
2 <= n <= 105
-105 <= nums[i], ui, vi <= 105
"""


def test_a_size_named_by_no_parameter_is_drawn_first():
    # `n` sizes adjacentPairs but is no parameter: once, sizes fell back to twice the examples'
    # (`-10^5 <= nums[i], ui, vi` bounds the hidden nums, which no rule models: drawn all the same here)
    sp = Space(Signature(["adjacentPairs"], [GRID]), RESTORE_ARRAY, [[[[2, 1], [3, 4], [3, 2]]]], draw_unmodelled=True)
    assert sp.unmodelled == ["-105 <= nums[i], ui, vi <= 105"]
    cands = _generate(sp, tiers=("edge", "max"))
    by_label = {c.generator: parse_input(c.input, 1)[0] for c in cands}
    assert len(by_label["max:random"]) == 10**5 - 1 and {len(p) for p in by_label["max:random"]} == {2}
    assert len(by_label["edge:min-size-random"]) == 1  # n = 2


SUBTREE_QUERIES = """You are given the root of a binary tree with n nodes and an array queries of size m.

Constraints:

The number of nodes in the tree is n.
2 <= n <= 105
1 <= Node.val <= n
All the values in the tree are unique.
m == queries.length
1 <= m <= min(n, 104)
1 <= queries[i] <= n
"""


def test_a_node_count_named_in_words_sizes_the_tree():
    sp = _space(["root", "queries"], [Type("tree"), LIST_INT], SUBTREE_QUERIES, [[[1, 3, 4, 2, None, 6, 5], [4]]])
    root, queries = next(parse_input(c.input, 2) for c in _generate(sp, tiers=("max",)) if c.generator == "max:random")
    values = [v for v in root if v is not None]
    assert sorted(values) == list(range(1, 10**5 + 1))  # n = 10^5 unique values in [1, n]
    assert len(queries) == 10**4 and max(queries) <= 10**5


WORD_SUBSETS = """You are given two string arrays words1 and words2. Return all the universal strings in words1.

Constraints:

1 <= words1.length, words2.length <= 104
1 <= words1[i].length, words2[i].length <= 10
words1[i] and words2[i] consist only of lowercase English letters.
All the strings of words1 are unique.
"""


def test_unique_strings_stay_unique_at_full_size():
    # 10^4 words of 1..10 letters: short ones run out, so repeats are drawn again longer
    sp = _space(["words1", "words2"], [Type("list", STR), Type("list", STR)], WORD_SUBSETS,
                [[["amazon", "apple", "facebook"], ["e", "o"]]])
    skipped = Counter()
    cands = _generate(sp, count=30, skipped=skipped)
    assert len(cands) == 30 and not [k for k in skipped if "failed" in k]
    for c in cands:
        words1, words2 = parse_input(c.input, 2)
        assert len(set(words1)) == len(words1) and sp.violations([words1, words2]) == []
    full = [parse_input(c.input, 2)[0] for c in cands if c.tier == "max"]
    assert full and all(len(w) == 10**4 for w in full)
