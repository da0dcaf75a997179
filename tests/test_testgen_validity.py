"""Generated inputs stay valid where the statement states no constraints (issue 25 item 3): the
space keeps to what the examples show (sign, a few repeated choices, least lengths, shapes) and,
without a Constraints section, to the relations every example shows (equal lengths, a scalar at
most a length, sorted lists, rectangular grids), and reads the few constraints HumanEval and MBPP
write in prose. LeetCode statements keep their stated maxima. No sandbox here: problems are built
as the HumanEval adapter builds them, and only their inputs are generated and checked."""

from __future__ import annotations

import json
import random

from microcoder.pipeline.sources.humaneval import convert
from microcoder.pipeline.testgen.constraints import KeyMap, prose_constraints
from microcoder.pipeline.testgen.functional import example_values, generate_inputs, mutate_input
from microcoder.pipeline.testgen.space import Space, format_input, parse_input
from microcoder.pipeline.testgen.types import Signature, Type, signature_of

INT, STR = Type("int"), Type("str")
LIST_INT = Type("list", INT)
GRID = Type("list", LIST_INT)

# The three HumanEval problems whose generated tests failed labelled-correct CodeGen samples
# (bench/test_strength.py): prompts and `check` as HumanEval ships them (MIT).
STRING_XOR = ("from typing import List\n\n\ndef string_xor(a: str, b: str) -> str:\n"
              '    """ Input are two strings a and b consisting only of 1s and 0s.\n'
              "    Perform binary XOR on these inputs and return result also as a string.\n"
              "    >>> string_xor('010', '110')\n    '100'\n    \"\"\"\n",
              "def check(candidate):\n    assert candidate('111000', '101010') == '010010'\n"
              "    assert candidate('1', '1') == '0'\n    assert candidate('0101', '0000') == '0101'\n",
              "    return ''.join('0' if x == y else '1' for x, y in zip(a, b))\n")
CHANGE_BASE = ('\n\ndef change_base(x: int, base: int):\n    """Change numerical base of input number x to base.\n'
               "    return string representation after the conversion.\n    base numbers are less than 10.\n"
               "    >>> change_base(8, 3)\n    '22'\n    >>> change_base(8, 2)\n    '1000'\n"
               "    >>> change_base(7, 2)\n    '111'\n    \"\"\"\n",
               'def check(candidate):\n    assert candidate(8, 3) == "22"\n    assert candidate(9, 3) == "100"\n'
               '    assert candidate(234, 2) == "11101010"\n    assert candidate(16, 2) == "10000"\n'
               '    assert candidate(8, 2) == "1000"\n    assert candidate(7, 2) == "111"\n'
               "    for x in range(2, 8):\n        assert candidate(x, x + 1) == str(x)\n",
               '    ret = ""\n    while x > 0:\n        ret = str(x % base) + ret\n        x //= base\n    return ret\n')
SEARCH = ("\ndef search(lst):\n    '''\n    You are given a non-empty list of positive integers. Return the greatest integer"
          " that is greater than \n    zero, and has a frequency greater than or equal to the value of the integer itself.\n"
          "    If no such a value exist, return -1.\n    Examples:\n        search([4, 1, 2, 2, 3, 1]) == 2\n"
          "        search([5, 5, 4, 4, 4]) == -1\n    '''\n",
          "def check(candidate):\n    assert candidate([5, 5, 5, 5, 1]) == 1\n    assert candidate([4, 1, 4, 1, 4, 4]) == 4\n"
          "    assert candidate([3, 3]) == -1\n    assert candidate([8, 8, 8, 8, 8, 8, 8, 8]) == 8\n"
          "    assert candidate([2, 3, 3, 2, 2]) == 2\n    assert candidate([3, 2, 8, 2]) == 2\n"
          "    assert candidate([8, 8, 3, 6, 5, 6, 4]) == -1\n    assert candidate([1]) == 1\n"
          "    assert candidate([10]) == -1\n    assert candidate([3, 10, 10, 9, 2]) == -1\n",
          "    frq = [0] * (max(lst) + 1)\n    for i in lst:\n        frq[i] += 1\n    ans = -1\n"
          "    for i in range(1, len(frq)):\n        if frq[i] >= i:\n            ans = i\n    return ans\n")


def _humaneval_space(prompt: str, test: str, solution: str, entry: str) -> Space:
    """The space testgen builds for a HumanEval problem (`testgen.stage._functional_candidates`)."""
    p = convert({"task_id": f"HumanEval/{entry}", "prompt": prompt, "canonical_solution": solution,
                 "test": test, "entry_point": entry}, "humaneval")
    raw = [[json.loads(x) for x in t.input.split("\n") if x.strip()] for t in p.tests]
    sig = signature_of(p.entry_point, p.starter_code, p.reference_solutions[0].code, raw)
    return Space(sig, p.statement, example_values(sig, [t.input for t in p.tests]))


def _space(names, types, statement, examples):
    return Space(Signature(list(names), list(types)), statement, [list(e) for e in examples])


def _inputs(sp: Space, count: int = 40, **kw) -> list[list]:
    base = {"seed": 0, "max_elements": 10_000, "max_input_bytes": 1_000_000, "existing": set()}
    cands = generate_inputs(sp, "p", count, **{**base, **kw})
    assert len(cands) >= count // 2  # the narrower space still yields inputs
    return [parse_input(c.input, len(sp.sig.names)) for c in cands]


def _mutations(sp: Space, values: list, n: int = 300) -> list[list]:
    rng = random.Random(0)
    text = format_input(values)
    out = []
    for _ in range(n):
        got = mutate_input(sp, text, rng, 1_000_000)
        if got is not None:
            out.append(parse_input(got, len(sp.sig.names)))
            text = got
    return out


def test_string_xor_keeps_equal_lengths_and_its_characters():
    sp = _humaneval_space(*STRING_XOR, "string_xor")
    inputs = _inputs(sp)
    assert all(len(a) == len(b) and set(a + b) <= {"0", "1"} for a, b in inputs)
    assert len({len(a) for a, _ in inputs}) > 3  # lengths still vary
    assert sp.violations(["01", "1"]) and sp.violations(["01", "12"]) and not sp.violations(["01", "11"])
    walk = _mutations(sp, ["0110", "1010"])
    assert walk and all(len(a) == len(b) for a, b in walk)


def test_change_base_keeps_bases_below_ten_and_numbers_positive():
    sp = _humaneval_space(*CHANGE_BASE, "change_base")
    inputs = _inputs(sp)
    assert all(2 <= base <= 9 and x >= 1 for x, base in inputs)
    assert {base for _, base in inputs} > {2, 3}  # "less than 10" widens the two bases the examples show
    assert sp.violations([468, 10]) and sp.violations([0, 0]) and sp.violations([5, 1])
    # without the phrase, the bases stay among the examples' repeated choices
    bare = _humaneval_space(CHANGE_BASE[0].replace("    base numbers are less than 10.\n", ""), *CHANGE_BASE[1:],
                            "change_base")
    assert {base for _, base in _inputs(bare)} <= {2, 3}


def test_search_never_gets_zero_negative_or_empty_lists():
    sp = _humaneval_space(*SEARCH, "search")
    inputs = _inputs(sp)
    assert all(lst and min(lst) >= 1 for (lst,) in inputs)
    assert sp.violations([[0]]) and sp.violations([[]]) and sp.violations([[3, -1]])
    assert all(lst and min(lst) >= 1 for (lst,) in _mutations(sp, [[2, 2, 5]]))
    # the examples alone say so too (no phrase): every one is a non-empty list of positive integers
    bare = _humaneval_space(SEARCH[0].replace("non-empty list of positive integers", "list"), *SEARCH[1:], "search")
    assert all(lst and min(lst) >= 1 for (lst,) in _inputs(bare))


def test_values_keep_the_examples_sign():
    sp = _space(["a", "b", "c", "d"], [INT, INT, INT, Type("float")], "Compute something.",
                [[3, 0, -4, 0.5], [7, 5, -1, 0.25], [12, 2, -9, 0.75]])
    for a, b, c, d in _inputs(sp):
        assert a >= 1 and b >= 0 and c <= -1 and 0.25 <= d <= 1
    flags = _space(["bits", "once"], [LIST_INT, INT], "Compute something.", [[[0, 1, 1], 1], [[1, 0], 1], [[1], 1]])
    inputs = _inputs(flags, count=20)
    assert {x for bits, _ in inputs for x in bits} == {0, 1}  # 0/1 items stay 0/1
    assert max(once for _, once in inputs) > 1  # a 1 seen alone is no flag
    mixed = _space(["a"], [INT], "Compute something.", [[-3], [4], [0]])
    assert mixed.bounds("val:a") == ([], [])  # both signs seen: nothing inferred
    assert min(a for (a,) in _inputs(mixed, count=10)) < 0


def test_a_float_parameter_gets_floats_at_its_ends_too():
    # truncate_number(number: float): `10` for 10.0 broke samples that split str(number) on "."
    sp = _space(["number"], [Type("float")], "Given a positive floating point number.", [[3.5], [1.33], [123.456]])
    cands = generate_inputs(sp, "p", 30, seed=0, max_elements=100, max_input_bytes=10_000, existing=set())
    assert cands and all(isinstance(json.loads(c.input), float) for c in cands)
    walk = _mutations(sp, [3.5], n=50)
    assert walk and all(isinstance(x, float) for (x,) in walk)


def test_a_few_repeated_choices_bound_scalars_only():
    sp = _space(["p", "nums"], [INT, LIST_INT], "Compute something.",
                [[5, [1, 2]], [11, [2, 1, 1]], [5, [1]], [101, [2, 2]], [11, [1, 2, 1]]])
    for p, nums in _inputs(sp):
        assert 5 <= p <= 101
        assert min(nums) >= 1  # items: the sign, not the span
    assert max(x for _, nums in _inputs(sp) for x in nums) > 2


def test_relations_every_example_shows_without_a_constraints_section():
    sp = _space(["ops", "nums", "n", "k", "xs"], [Type("list", STR), LIST_INT, INT, INT, LIST_INT], "Evaluate it.",
                [[["+"], [1, 2], 2, 1, [1, 4, 9]], [["*", "-"], [3, 4, 5], 3, 2, [2, 3, 7, 8]],
                 [["+", "+", "*"], [1, 1, 2, 3], 4, 0, [0, 5]]])
    assert "len:ops >= nums.length - 1: -1 in every example" in sp.inferred
    for ops, nums, n, k, xs in _inputs(sp):
        assert len(ops) == len(nums) - 1 and n == len(nums) and 0 <= k < len(nums)
        assert xs == sorted(xs)
    assert sp.violations([["+"], [1, 2], 3, 0, [1]])  # n is the list's length
    assert sp.violations([["+"], [1, 2], 2, 0, [3, 1]])  # xs is sorted


def test_grids_every_example_shows_rectangular_stay_so():
    sp = _space(["m"], [GRID], "Sum the matrix.", [[[[1, 2, 3], [4, 5, 6]]], [[[1], [2], [3]]], [[[7, 8], [9, 1]]]])
    assert all(len({len(r) for r in m}) == 1 for (m,) in _inputs(sp))
    assert sp.violations([[[1, 2], [3]]])
    square = _space(["g"], [GRID], "Walk the grid.", [[[[1, 2], [3, 4]]], [[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]])
    assert all(len(g) == len(g[0]) and len({len(r) for r in g}) == 1 for (g,) in _inputs(square))


def test_shapes_the_examples_share_are_kept():
    sp = _space(["pair", "ch", "s"], [LIST_INT, STR, STR], "Check it.",
                [[[1, 5], "a", "banana"], [[2, 3], "n", "an"], [[4, 4], "b", "nab"], [[0, 9], "a", "bb"]])
    for pair, ch, s in _inputs(sp):
        assert len(pair) == 2 and pair == sorted(pair) and len(ch) == 1 and len(s) >= 2 and set(s) <= set("abn")


def test_prose_constraints_chains_phrases_and_misreadings_dropped():
    types = {"n": INT, "k": INT, "arr": LIST_INT, "x": INT}
    keys = KeyMap(types, "")
    text = ("Restrictions: 1 <= n <= 1000\n    3. 0 <= k <= len(arr)\nAssume x > 1 and is not a prime.\n"
            "Return i < j < k triples.\n    >>> f(3) == 5\nGiven an array of non-negative integers and a positive integer k.")
    assert prose_constraints(text, keys) == ["1 <= n <= 1000", "0 <= k <= arr.length", "x > 1", "1 <= k", "0 <= arr[i]"]
    # int_to_mini_roman(number): "Restrictions: 1 <= num <= 1000"
    assert prose_constraints("Restrictions: 1 <= num <= 1000", KeyMap({"number": INT, "s": STR}, "")) == [
        "1 <= number <= 1000"]
    assert prose_constraints("Restrictions: 1 <= num <= 1000", KeyMap({"number": INT, "numbers": INT}, "")) == []
    sp = _space(["n"], [INT], "Given a positive integer n, return 1 if n > 5.", [[3, ], [9], [1]])
    assert sp.dropped == ["lower bound 5 of val:n"]  # `n > 5` describes a branch: the examples break it
    assert sp.range("val:n", {}) == (1, None)


def test_a_constraints_section_keeps_its_maxima_and_gets_no_inferred_relations():
    statement = ("Constraints:\n\n1 <= nums1.length, nums2.length <= 105\n0 <= nums1[i], nums2[i] <= 109\n")
    sp = _space(["nums1", "nums2"], [LIST_INT, LIST_INT], statement, [[[1, 2, 3], [4, 5, 6]], [[1, 9], [2, 7]]])
    assert not any(x.startswith(("len:nums1 ==", "val:nums1 flag")) for x in sp.inferred)
    inputs = _inputs(sp, tiers=("max", "random"), max_input_bytes=4_000_000)
    assert max(len(a) for a, _ in inputs) == 10**5  # the stated maximum, beyond max_elements
    assert any(len(a) != len(b) for a, b in inputs) and any(a != sorted(a) for a, _ in inputs)
    assert max(x for a, _ in inputs for x in a) > 10**6  # stated values, not the examples' span
