"""Generated inputs keep the constraints LeetCode states across values (issue 36): orders and
arithmetic between the fields of one row (`starti <= endi`, `durationi <= endi - starti + 1`), fields
that differ (`ui != vi`), distinct rows and fields, parity, `c occurs in s`, no leading zeros,
character ranges, distinct items named in the prose, and "exactly one solution" (no generated
inputs at all); and, with a Constraints section too, the relations the examples show beyond chance
(a row's `[start, end]` order, a sorted or repeat-free list). No sandbox: only inputs are generated
and checked."""

from __future__ import annotations

import json
import random
from collections import Counter

from microcoder.pipeline.testgen.functional import generate_inputs, mutate_input
from microcoder.pipeline.testgen.space import UNIQUE_ANSWER, UNMODELLED, Space, format_input, parse_input
from microcoder.pipeline.testgen.types import Signature, Type

INT, STR = Type("int"), Type("str")
LIST_INT, LIST_STR = Type("list", INT), Type("list", STR)
GRID = Type("list", LIST_INT)


def _space(names, types, statement, examples) -> Space:
    return Space(Signature(list(names), list(types)), statement, [list(e) for e in examples])


def _inputs(sp: Space, count: int = 40, **kw) -> list[list]:
    base = {"seed": 0, "max_elements": 2_000, "max_input_bytes": 200_000, "existing": set(),
            "tiers": ("edge", "random", "hack")}
    cands = generate_inputs(sp, "p", count, **{**base, **kw})
    assert len(cands) >= count // 2  # the narrower space still yields inputs
    return [parse_input(c.input, len(sp.sig.names)) for c in cands]


def _mutations(sp: Space, values: list, n: int = 200) -> list[list]:
    rng, text, out = random.Random(0), format_input(values), []
    for _ in range(n):
        got = mutate_input(sp, text, rng, 200_000)
        if got is not None:
            out.append(parse_input(got, len(sp.sig.names)))
            text = got
    return out


EVENTS = ("Constraints:\n\n1 <= events.length <= 10^5\nevents[i].length == 2\nevents[i] = [startDayi, endDayi]\n"
          "1 <= startDayi <= endDayi <= 10^5\n")


# --- stated relations, parsed -------------------------------------------------------------------------------
def test_a_stated_order_between_fields_of_a_row_is_checked_and_kept():
    sp = _space(["events"], [GRID], EVENTS, [[[[1, 2], [2, 3], [3, 4]]], [[[1, 2], [2, 3]]]])
    assert sp.violations([[[3, 2]]]) and not sp.violations([[[2, 2], [1, 5]]])
    inputs = _inputs(sp)
    assert all(a <= b for (events,) in inputs for a, b in events)
    assert any(a == b for (events,) in inputs for a, b in events)  # equal ends are still drawn
    assert max(len(e) for (e,) in inputs) > 100


def test_a_strict_order_and_arithmetic_between_fields():
    statement = ("Constraints:\n\n1 <= tasks.length <= 2000\ntasks[i].length == 3\ntasks[i] = [starti, endi, durationi]\n"
                 "1 <= starti < endi <= 2000\n1 <= durationi <= endi - starti + 1\n")
    sp = _space(["tasks"], [GRID], statement, [[[[2, 3, 1], [4, 5, 1], [1, 5, 2]]], [[[1, 3, 2], [2, 5, 3]]]])
    assert sp.violations([[[2, 2, 1]]]) and sp.violations([[[1, 3, 4]]]) and not sp.violations([[[1, 3, 3]]])
    for (tasks,) in _inputs(sp):
        assert all(s < e and 1 <= d <= e - s + 1 for s, e, d in tasks)


def test_fields_that_differ_and_rows_without_repeats():
    statement = ("Constraints:\n\n2 <= n <= 50\nedges[i].length == 2\nedges[i] = [ui, vi]\n1 <= ui, vi <= n\n"
                 "ui != vi\nThere are no repeated edges.\n")
    sp = _space(["n", "edges"], [INT, GRID], statement, [[6, [[1, 2], [1, 3], [3, 2]]], [7, [[1, 3], [4, 1]]]])
    assert sp.violations([5, [[2, 2]]]) and sp.violations([5, [[1, 2], [1, 2]]])
    assert sp.violations([5, [[1, 2], [2, 1]]])  # one undirected edge twice
    assert not sp.violations([5, [[1, 2], [2, 3]]])
    for _n, edges in _inputs(sp):
        assert all(u != v for u, v in edges) and len({tuple(sorted(e)) for e in edges}) == len(edges)
    points = "Constraints:\n\n1 <= points.length <= 100\npoints[i] = [xi, yi]\nAll the pairs (xi, yi) are distinct.\n"
    sp = _space(["points"], [GRID], points, [[[[1, 2], [3, 4]]], [[[0, 5], [6, 1]]]])
    assert sp.violations([[[1, 2], [1, 2]]]) and not sp.violations([[[1, 2], [2, 1]]])  # points: ordered


def test_no_self_loops_or_repeated_edges_in_one_line():
    statement = "Constraints:\n\n1 <= n <= 100\nedges[i] = [ai, bi]\nThere are no self-loops or repeated edges.\n"
    sp = _space(["n", "edges"], [INT, GRID], statement, [[3, [[1, 2]]], [4, [[1, 3], [2, 3]]]])
    assert sp.violations([3, [[2, 2]]]) and sp.violations([3, [[1, 2], [1, 2]]])


def test_a_distinct_field_across_rows():
    statement = ("Constraints:\n\n1 <= segments.length <= 2 * 10^4\nsegments[i].length == 3\nsegments[i] = [starti, endi, colori]\n"
                 "1 <= starti < endi <= 10^5\n1 <= colori <= 10^9\nEach colori is distinct.\n")
    sp = _space(["segments"], [GRID], statement, [[[[1, 4, 5], [4, 7, 7], [1, 7, 9]]], [[[1, 7, 9], [6, 8, 15]]]])
    assert sp.violations([[[1, 2, 5], [3, 4, 5]]]) and not sp.violations([[[1, 2, 5], [3, 4, 6]]])
    assert "distinct" not in sp.c.flags.get("val:segments", set())  # the field, not the rows or another list
    for (segments,) in _inputs(sp):
        assert len({c for _, _, c in segments}) == len(segments) and all(s < e for s, e, _ in segments)


def test_each_rows_order_and_distinct_items_are_kept():
    # LeetCode's maximum-spending-after-buying-items and minimum-number-of-people-to-teach
    spending = ("Constraints:\n\n1 <= m == values.length <= 10\n1 <= n == values[i].length <= 10^4\n"
                "1 <= values[i][j] <= 10^6\nvalues[i] are sorted in non-increasing order.\n")
    sp = _space(["values"], [GRID], spending, [[[[8, 5, 2], [6, 4, 1], [9, 7, 3]]], [[[10, 8, 6, 4, 2], [9, 7, 5, 3, 1]]]])
    assert sp.c.flags["val:values[]"] == {"desc"} and not sp.c.flags.get("val:values")
    assert sp.violations([[[1, 2], [2, 1]]]) and not sp.violations([[[2, 1], [5, 5]]])
    inputs = _inputs(sp)
    assert all(row == sorted(row, reverse=True) for (values,) in inputs for row in values)
    assert any(len(values) > 1 and values != sorted(values, reverse=True) for (values,) in inputs)  # not the rows
    teach = ("Constraints:\n\n2 <= n <= 500\nlanguages.length == m\n1 <= m <= 500\n1 <= languages[i].length <= n\n"
             "1 <= languages[i][j] <= n\nlanguages[i] contains only unique values\n")
    sp = _space(["n", "languages"], [INT, GRID], teach, [[2, [[1], [2], [1, 2]]], [3, [[2], [1, 3], [1, 2], [3]]]])
    assert sp.c.flags["val:languages[]"] == {"distinct"}
    assert sp.violations([3, [[2, 2]]]) and not sp.violations([3, [[1, 2], [1, 2]]])  # rows may repeat
    for _n, languages in _inputs(sp):
        assert all(len(set(row)) == len(row) for row in languages)
    strict = "Constraints:\n\n1 <= mat.length <= 500\n1 <= mat[i][j] <= 10^4\nmat[i] is sorted in strictly increasing order.\n"
    sp = _space(["mat"], [GRID], strict, [[[[1, 2, 3], [2, 4, 5]]], [[[1, 2, 3], [2, 3, 4]]]])
    assert sp.c.flags["val:mat[]"] == {"sorted", "distinct"} and sp.violations([[[1, 1, 2]]])
    for (mat,) in _inputs(sp):
        assert all(a < b for row in mat for a, b in zip(row, row[1:]))
    # the rows apart from each other, as before: `All points[i] are distinct`
    apart = "Constraints:\n\n1 <= points.length <= 50\npoints[i].length == 2\n0 <= points[i][j] <= 50\nAll points[i] are distinct.\n"
    sp = _space(["points"], [GRID], apart, [[[[1, 1], [2, 2]]], [[[3, 1], [1, 3]]]])
    assert not sp.c.flags.get("val:points[]") and sp.violations([[[1, 1], [1, 1]]])


def test_parity_of_a_length_and_of_a_number():
    sp = _space(["s"], [STR], "Constraints:\n\n2 <= s.length <= 1000\ns.length is even.\ns consists of lowercase letters.\n",
                [["book"], ["textbook"]])
    assert sp.violations(["abc"]) and not sp.violations(["ab"])
    assert all(len(s) % 2 == 0 for (s,) in _inputs(sp))
    sp = _space(["n"], [INT], "Constraints:\n\n2 <= n <= 500\nn is even.\n", [[4], [10]])
    assert sp.violations([7]) and all(n % 2 == 0 for (n,) in _inputs(sp, count=20))


def test_an_item_that_occurs_in_a_string():
    statement = ("Constraints:\n\n1 <= s.length <= 10^4\ns[i] and c are lowercase English letters.\n"
                 "It is guaranteed that c occurs at least once in s.\n")
    sp = _space(["s", "c"], [STR, STR], statement, [["loveleetcode", "e"], ["aaab", "b"]])
    assert sp.violations(["x", "a"]) and not sp.violations(["xa", "a"])
    assert all(c in s for s, c in _inputs(sp))


def test_a_value_promised_present_is_put_in_and_checked():
    # LeetCodeDataset's maximum-odd-binary-number and 01-matrix: a draw of one character or a small
    # sparse grid breaks the promise, and the answer then has no meaning (no odd number, no 0 to reach)
    statement = "Constraints:\n\n1 <= s.length <= 100\ns consists only of '0' and '1'.\ns contains at least one '1'.\n"
    sp = _space(["s"], [STR], statement, [["010"], ["0101"]])
    assert sp.c.present == [("1", "s")] and sp.c.alphabets["val:s"] == "01" and sp.unmodelled == []
    assert sp.violations(["000"]) and not sp.violations(["001"])
    assert all("1" in s for (s,) in _inputs(sp))
    statement = ("Constraints:\n\nm == mat.length\nn == mat[i].length\n1 <= m, n <= 10^4\nmat[i][j] is either 0 or 1.\n"
                 "There is at least one 0 in mat.\n")
    sp = _space(["mat"], [GRID], statement, [[[[0, 0, 0], [0, 1, 0]]], [[[1, 1], [0, 1]]]])
    assert sp.c.present == [(0, "mat")] and sp.unmodelled == [] and sp.blocked() is None
    assert sp.violations([[[1, 1], [1, 1]]]) and not sp.violations([[[1, 1], [1, 0]]])
    assert all(any(0 in row for row in g) for (g,) in _inputs(sp, count=16, max_elements=4))
    # an example without it: the line was misread, dropped like a broken bound
    sp = _space(["s"], [STR], statement.replace("mat", "s"), [["111"]])
    assert sp.c.present == []


def test_an_adjacent_order_is_a_sorted_flag():
    statement = "Constraints:\n\n2 <= n <= 1000\n1 <= releaseTimes[i] <= 10^9\nreleaseTimes[i] < releaseTimes[i+1]\n"
    sp = _space(["releaseTimes"], [LIST_INT], statement, [[[9, 29, 49, 50]], [[12, 23, 36, 46, 62]]])
    assert sp.c.flags["val:releaseTimes"] == {"sorted", "distinct"} and sp.unmodelled == []
    assert all(r == sorted(set(r)) for (r,) in _inputs(sp))
    sp = _space(["nums"], [LIST_INT], "Constraints:\n\n2 <= nums.length <= 10^5\n1 <= nums[i] <= nums[i + 1] <= 10^4\n",
                [[[2, 3, 5]], [[1, 4, 6, 8, 10]]])
    assert sp.c.flags["val:nums"] == {"sorted"}


def test_values_at_fixed_places():
    # cherry-pickup, escape-the-spreading-fire, faulty-keyboard, ambiguous-coordinates, latest-time
    grid = ("Constraints:\n\nm == grid.length\nn == grid[i].length\n2 <= m, n <= 300\n0 <= grid[i][j] <= 2\n"
            "grid[0][0] == grid[m - 1][n - 1] == 0\n")
    sp = _space(["grid"], [GRID], grid, [[[[0, 2, 0], [0, 1, 0]]], [[[0, 0], [2, 0]]]])
    assert sp.c.positions == [("grid", (0, 0), "==", 0), ("grid", (-1, -1), "==", 0)] and sp.unmodelled == []
    assert sp.violations([[[0, 1], [1, 2]]]) and not sp.violations([[[0, 1], [1, 0]]])
    assert all(g[0][0] == 0 and g[-1][-1] == 0 for (g,) in _inputs(sp))
    keyboard = "Constraints:\n\n1 <= s.length <= 100\ns consists of lowercase English letters.\ns[0] != 'i'\n"
    sp = _space(["s"], [STR], keyboard, [["string"], ["poiinter"]])
    assert sp.c.positions == [("s", (0,), "!=", "i")] and sp.violations(["is"]) and sp.violations([""])
    assert all(s and s[0] != "i" for (s,) in _inputs(sp))
    brackets = ("Constraints:\n\n4 <= s.length <= 12\ns[0] == '(' and s[s.length - 1] == ')'.\n"
                "The rest of s are digits.\n")
    sp = _space(["s"], [STR], brackets, [["(123)"], ["(0123)"]])
    assert sp.c.positions == [("s", (0,), "==", "("), ("s", (-1,), "==", ")")]
    colon = _space(["s"], [STR], 'Constraints:\n\ns.length == 5\ns[2] is equal to the character ":".\n', [["1?:?4"]])
    assert colon.c.positions == [("s", (2,), "==", ":")] and all(s[2] == ":" for (s,) in _inputs(colon, count=10))
    # one place's character range is no alphabet of the whole string: unread, so unmodelled
    chess = "Constraints:\n\ncoordinates.length == 2\n'a' <= coordinates[0] <= 'h'\n'1' <= coordinates[1] <= '8'\n"
    assert len(_space(["coordinates"], [STR], chess, [["a1"], ["h3"]]).unmodelled) == 2


def test_an_excluded_value_a_parity_of_length_and_choices():
    sp = _space(["asteroids"], [LIST_INT], "Constraints:\n\n2 <= asteroids.length <= 10^4\n-1000 <= asteroids[i] <= 1000\n"
                "asteroids[i] != 0\n", [[[5, 10, -5]], [[8, -8]]])
    assert sp.c.excluded == [("val:asteroids[]", 0)] and sp.violations([[1, 0]]) and not sp.violations([[1, -1]])
    assert all(0 not in a for (a,) in _inputs(sp))
    sp = _space(["nums"], [LIST_INT], "Constraints:\n\n2 <= nums.length <= 100\nnums.length % 2 == 0\n1 <= nums[i] <= 100\n",
                [[[5, 4, 2, 3]], [[2, 5]]])
    assert sp.c.flags["len:nums"] == {"even"} and all(len(n) % 2 == 0 for (n,) in _inputs(sp))
    sp = _space(["s"], [STR], "Constraints:\n\n2 <= s.length <= 10^5\ns has an even length.\ns[i] is either '0' or '1'.\n",
                [["1001"], ["10"]])
    assert sp.c.flags["len:s"] == {"even"} and sp.c.alphabets["val:s"] == "01" and sp.unmodelled == []
    sp = _space(["matrix"], [Type("list", LIST_STR)], "Constraints:\n\n1 <= rows, cols <= 200\nmatrix[i][j] is '0' or '1'.\n",
                [[[["1", "0"], ["1", "1"]]]])
    assert sp.c.alphabets["val:matrix[][]"] == "01" and sp.unmodelled == []
    sp = _space(["s"], [STR], "Constraints:\n\n1 <= s.length <= 50\n'0' <= s[i] <= '9'\n", [["52233"]])
    assert sp.c.alphabets["val:s"] == "0123456789" and sp.unmodelled == []
    sp = _space(["grid1", "grid2"], [GRID, GRID], "Constraints:\n\n1 <= m, n <= 500\n"
                "grid1[i][j] and grid2[i][j] are either 0 or 1.\n", [[[[1, 0]], [[1, 1]]]])
    assert [b.expr for b in sp.c.upper["val:grid2[][]"]] == ["1"] and sp.unmodelled == []
    sp = _space(["rungs"], [LIST_INT], "Constraints:\n\n1 <= rungs.length <= 10^5\nrungs is strictly increasing.\n",
                [[[1, 3, 5, 10]], [[3, 6, 8, 10]]])
    assert sp.c.flags["val:rungs"] == {"sorted", "distinct"}


def test_a_promise_is_unmodelled_even_naming_no_parameter():
    # most-frequent-ids: the promise names no parameter, and a drawn negative count breaks it
    statement = ("Constraints:\n\n1 <= nums.length == freq.length <= 10^5\n-10^5 <= freq[i] <= 10^5\nfreq[i] != 0\n"
                 "The input is generated such that the occurrences of an ID will not be negative in any step.\n")
    sp = _space(["nums", "freq"], [LIST_INT, LIST_INT], statement, [[[2, 3], [3, 2]]])
    assert sp.unmodelled == ["The input is generated such that the occurrences of an ID will not be negative in any step."]
    # the answer's size is no promise about the input (Python's integers are exact)
    sp = _space(["n"], [INT], "Constraints:\n\n1 <= n <= 10^5\nThe test cases are generated so that the answer fits "
                "in a 32-bit integer.\n", [[3]])
    assert sp.unmodelled == []
    # an alphabet of some places only is no alphabet: "except s[2]", "for i > 0"
    sp = _space(["color"], [STR], "Constraints:\n\ncolor.length == 7\ncolor[0] == '#'\ncolor[i] is either digit or "
                "character in the range ['a', 'f'] for i > 0.\n", [["#09f166"], ["#4e3fe1"]])
    assert sp.c.positions == [("color", (0,), "==", "#")] and len(sp.unmodelled) == 1


def test_a_promise_in_the_prose_a_neighbour_order_and_a_valid_format_are_unmodelled():
    # held-out LeetCodeDataset problems whose correct responses generated inputs failed (spread-quarter)
    swaps = ("We make nums1 and nums2 strictly increasing.\nThe test cases are generated so that the given input "
             "always makes it possible.\n\nExample 1:\n\nInput: nums1 = [1,3], nums2 = [1,2]\n\n"
             "Constraints:\n\n2 <= nums1.length <= 10^5\nnums2.length == nums1.length\n0 <= nums1[i], nums2[i] <= 2 * 10^5\n")
    sp = _space(["nums1", "nums2"], [LIST_INT, LIST_INT], swaps, [[[1, 3], [1, 2]]])
    assert sp.unmodelled == ["The test cases are generated so that the given input always makes it possible."]
    fuel = "Constraints:\n\n1 <= target <= 10^9\n0 <= stations.length <= 500\n1 <= positioni < positioni+1 < target\n"
    sp = _space(["target", "stations"], [INT, GRID], fuel, [[100, [[10, 60], [20, 30]]]])
    assert sp.unmodelled == ["1 <= positioni < positioni+1 < target"]
    expression = ("Constraints:\n\n3 <= s.length <= 31\n"
                  "s represents a valid expression that contains only digits 0-9, '+', and '*' only.\n")
    sp = _space(["s"], [STR], expression, [["7+3*1*2"], ["3+5*2"]])
    assert sp.unmodelled == ["s represents a valid expression that contains only digits 0-9, '+', and '*' only."]
    # the answer's size in the prose, and an order of neighbours read as one, stay modelled
    sized = "The test cases are generated so that the answer fits in a 32-bit integer.\n\n" + \
            "Constraints:\n\n1 <= nums.length <= 10\n1 <= nums[i] <= nums[i + 1] <= 10^4\n"
    assert _space(["nums"], [LIST_INT], sized, [[[1, 2]]]).unmodelled == []


def test_no_leading_zeros_and_a_range_of_digits():
    sp = _space(["n"], [STR], "Constraints:\n\n1 <= n.length <= 18\nn consists of only digits.\nn does not have leading zeros.\n",
                [["123"], ["1"]])
    assert sp.violations(["012"]) and not sp.violations(["0"]) and not sp.violations(["102"])
    assert all(len(n) == 1 or n[0] != "0" for (n,) in _inputs(sp))
    sp = _space(["keys"], [STR], "Constraints:\n\n1 <= keys.length <= 10^5\nkeys only consists of digits from '2' - '9'.\n",
                [["22233"], ["2222"]])
    assert sp.c.alphabets["val:keys"] == "23456789"


def test_exactly_one_solution_gets_no_generated_inputs():
    statement = ("Constraints:\n\n2 <= nums.length <= 10^4\n-10^9 <= nums[i] <= 10^9\n-10^9 <= target <= 10^9\n"
                 "Only one valid answer exists.\n")
    sp = _space(["nums", "target"], [LIST_INT, INT], statement, [[[2, 7, 11, 15], 9], [[3, 2, 4], 6]])
    assert sp.c.unique_answer and "distinct" not in sp.c.flags.get("val:nums", set())
    skipped: Counter = Counter()
    assert generate_inputs(sp, "p", 10, seed=0, max_elements=100, max_input_bytes=10_000, existing=set(),
                           skipped=skipped) == []
    assert skipped == {UNIQUE_ANSWER: 1}
    assert mutate_input(sp, "[2,7,11,15]\n9", random.Random(0), 10_000) is None
    for phrase in ("It is guaranteed that the answer is unique.", "The tests are generated such that there is exactly one solution."):
        assert _space(["nums"], [LIST_INT], f"Constraints:\n\n1 <= nums.length <= 10\n{phrase}\n", [[[1, 2]]]).c.unique_answer


MOUNTAIN = ("Constraints:\n\n3 <= arr.length <= 10^5\n0 <= arr[i] <= 10^6\narr is guaranteed to be a mountain array.\n")


def test_a_constraint_no_rule_models_gets_no_generated_inputs_unless_asked():
    sp = _space(["arr"], [LIST_INT], MOUNTAIN, [[[0, 1, 0]], [[0, 2, 1, 0]]])
    assert sp.unmodelled == ["arr is guaranteed to be a mountain array."]
    skipped: Counter = Counter()
    assert generate_inputs(sp, "p", 10, seed=0, max_elements=100, max_input_bytes=10_000, existing=set(),
                           skipped=skipped) == []
    assert skipped == {UNMODELLED: 1}
    assert mutate_input(sp, "[0,1,0]", random.Random(0), 10_000) is None
    drawn = Space(sp.sig, MOUNTAIN, [[[0, 1, 0]], [[0, 2, 1, 0]]], draw_unmodelled=True)  # testgen's `draw`
    assert drawn.unmodelled and len(_inputs(drawn)) >= 20


def test_a_line_the_examples_show_was_misread_is_unmodelled():
    # "sorted and rotated" reads as sorted; the examples are not, so it is dropped: nothing models it
    rotated = "Constraints:\n\n1 <= n <= 5000\n-5000 <= nums[i] <= 5000\nnums is sorted and rotated between 1 and n times.\n"
    sp = _space(["nums"], [LIST_INT], rotated, [[[3, 4, 5, 1, 2]], [[4, 5, 6, 7, 0, 1, 2]]])
    assert sp.unmodelled == ["nums is sorted and rotated between 1 and n times."] and sp.blocked() == UNMODELLED
    # a misread alphabet (`lower and upper case` read as upper case only) is read off the examples instead
    sp = _space(["s"], [STR], "Constraints:\n\n1 <= s.length <= 100\ns contains only lower and upper case English letters.\n",
                [["leEeetcode"], ["abBAcC"]])
    assert "alphabet of val:s" in sp.dropped and sp.unmodelled == []


def test_a_line_read_as_bounds_that_never_evaluate_is_unmodelled():
    # `triangle[i - 1]` is no key: the bound is kept but never evaluates, so nothing models the line
    statement = ("Constraints:\n\n1 <= triangle.length <= 200\ntriangle[0].length == 1\n"
                 "triangle[i].length == triangle[i - 1].length + 1\n-10^4 <= triangle[i][j] <= 10^4\n")
    sp = _space(["triangle"], [GRID], statement, [[[[2], [3, 4], [6, 5, 7]]], [[[-10]]]])
    assert sp.unmodelled == ["triangle[i].length == triangle[i - 1].length + 1"] and sp.blocked() == UNMODELLED
    # a bound naming only what is no input describes the input (`n == grid.length`, where n is it)
    sp = _space(["n"], [INT], "Constraints:\n\nn == grid.length\n1 <= n <= 5000\n", [[1], [5000]])
    assert sp.unmodelled == [] and sp.blocked() is None


def test_a_digit_range_in_brackets_and_an_alphabet_of_one_place():
    # held-out LeetCodeDataset problems whose correct responses generated inputs failed (spread-three-quarters)
    sp = _space(["digits"], [STR], "Constraints:\n\n0 <= digits.length <= 4\ndigits[i] is a digit in the range ['2', '9'].\n",
                [["23"], [""], ["2"]])
    assert sp.c.alphabets["val:digits"] == "23456789" and sp.unmodelled == []
    assert sp.violations(["20"]) and {ch for (d,) in _inputs(sp) for ch in d} <= set("23456789")
    # `board[clickr][clickc] is either 'M' or 'E'` is one place of the board, not its alphabet; and
    # `0 <= clickr < m` bounds click's parts only in the prose: nothing ties clickr to click[0]
    board = [["E", "E"], ["E", "M"]]
    sweeper = ("Constraints:\n\nm == board.length\nn == board[i].length\n1 <= m, n <= 50\n"
               "board[i][j] is either 'M', 'E', 'B', or a digit from '1' to '8'.\nclick.length == 2\n"
               "0 <= clickr < m\n0 <= clickc < n\nboard[clickr][clickc] is either 'M' or 'E'.\n")
    sp = _space(["board", "click"], [Type("list", LIST_STR), LIST_INT], sweeper, [[board, [1, 0]], [[["B", "1"]], [0, 1]]])
    assert sp.c.alphabets["val:board[][]"] == "12345678BEM"
    assert sorted(sp.unmodelled) == ["0 <= clickc < n", "0 <= clickr < m", "board[clickr][clickc] is either 'M' or 'E'."]
    assert sp.blocked() == UNMODELLED
    # a free name that is no parameter's part stays as it was (`n`, the length in the prose)
    sp = _space(["nums"], [LIST_INT], "Constraints:\n\n3 <= n <= 50\n1 <= nums[i] <= 50\n", [[[1, 2, 3]], [[5, 4, 3, 2]]])
    assert sp.unmodelled == [] and sp.blocked() is None


def _is_tree(n: int, edges: list) -> bool:
    root = list(range(n))

    def find(x: int) -> int:
        while root[x] != x:
            x = root[x]
        return x
    for a, b in edges:
        if find(a) == find(b):
            return False
        root[find(a)] = find(b)
    return len(edges) == n - 1


def test_what_a_given_sentence_says_of_the_inputs():
    # held-out LeetCodeDataset problems whose correct responses generated inputs failed (spread-one-eighth)
    three = ("Given three integer arrays arr1, arr2 and arr3 sorted in strictly increasing order, return a sorted array "
             "of only the integers that appeared in all three arrays.\n\nConstraints:\n\n"
             "1 <= arr1.length, arr2.length, arr3.length <= 1000\n1 <= arr1[i], arr2[i], arr3[i] <= 2000\n")
    sp = _space(["arr1", "arr2", "arr3"], [LIST_INT] * 3, three, [[[1, 2, 3, 4, 5], [1, 2, 5, 7, 9], [1, 3, 4, 5, 8]]])
    assert all(sp.c.flags[f"val:{n}"] == {"sorted", "distinct"} for n in ("arr1", "arr2", "arr3"))
    assert all(a == sorted(set(a)) for row in _inputs(sp) for a in row)
    free = ("You are given an integer array nums, which contains distinct elements and an integer k.\n\n"
            "Constraints:\n\n1 <= nums.length <= 50\n1 <= nums[i] <= 1000\n1 <= k <= 1000\n")
    sp = _space(["nums", "k"], [LIST_INT, INT], free, [[[5, 4, 6], 1], [[2, 3, 5, 8], 5]])
    assert sp.c.flags["val:nums"] == {"distinct"} and all(len(set(a)) == len(a) for a, _ in _inputs(sp))
    # the only list, unnamed ("a sorted array"); what is asked is no fact ("choose four distinct indices");
    # a reading the examples break is dropped ("sort the array in increasing order")
    sp = _space(["nums"], [LIST_INT], "You are given a sorted array of integers.\n\nConstraints:\n\n1 <= nums.length <= 10\n",
                [[[1, 1, 2]]])
    assert sp.c.flags["val:nums"] == {"sorted"}
    sp = _space(["nums"], [LIST_INT], "Given an integer array nums, choose four distinct indices w, x, y, and z.\n\n"
                "Constraints:\n\n4 <= nums.length <= 10\n", [[[5, 6, 2, 7, 4]]])
    assert not sp.c.flags.get("val:nums")
    sp = _space(["nums"], [LIST_INT], "Given an array of integers nums, sort the array in increasing order based on the "
                "frequency of the values.\n\nConstraints:\n\n1 <= nums.length <= 100\n", [[[1, 1, 2, 2, 2, 3]], [[2, 3, 1, 3, 2]]])
    assert not sp.c.flags.get("val:nums") and "flag sorted of val:nums" in sp.dropped


def test_how_often_values_occur_is_unmodelled_and_a_given_tree_is_drawn_as_one():
    single = ("You are given a sorted array consisting of only integers where every element appears exactly twice, except "
              "for one element which appears exactly once.\nReturn the single element that appears only once.\n\n"
              "Constraints:\n\n1 <= nums.length <= 10^5\n0 <= nums[i] <= 10^5\n")
    sp = _space(["nums"], [LIST_INT], single, [[[1, 1, 2, 3, 3, 4, 4, 8, 8]], [[3, 3, 7, 7, 10, 11, 11]]])
    assert len(sp.unmodelled) == 1 and sp.unmodelled[0].startswith("You are given a sorted array") and sp.blocked() == UNMODELLED
    goal = "Given a string s, remove duplicate letters so that every letter appears once and only once.\n\n" + \
           "Constraints:\n\n1 <= s.length <= 10^4\ns consists of lowercase English letters.\n"
    assert _space(["s"], [STR], goal, [["bcabc"], ["cbacdcbc"]]).unmodelled == []
    tree = ("You are given a tree (i.e. a connected, undirected graph that has no cycles) consisting of n nodes numbered "
            "from 0 to n - 1 and exactly n - 1 edges. The edges array is given on the form edges[i] = [ai, bi].\n\nConstraints:\n\n1 <= n <= 10^5\nedges.length == n - 1\n"
            "edges[i].length == 2\n0 <= ai, bi < n\nai != bi\n")
    sp = _space(["n", "edges"], [INT, GRID], tree, [[7, [[0, 1], [0, 2], [1, 4], [1, 5], [2, 3], [2, 6]]], [4, [[0, 2], [0, 3], [1, 2]]]])
    assert sp.tree_edges and all(_is_tree(n, edges) for n, edges in _inputs(sp))


def test_bounds_on_an_index_or_an_unbound_field_are_unmodelled_and_fields_bind_more_ways():
    # held-out LeetCodeDataset problems whose correct responses generated inputs failed (spread-three-eighths)
    rooms = "Constraints:\n\nn == nextVisit.length\n2 <= n <= 10^5\n0 <= nextVisit[i] <= i\n"
    sp = _space(["nextVisit"], [LIST_INT], rooms, [[[0, 0]], [[0, 0, 2]], [[0, 1, 2, 0]]])
    assert sp.unmodelled == ["0 <= nextVisit[i] <= i"] and sp.blocked() == UNMODELLED
    circles = ("You are given an array points where points[i] = [xi, yi] and an array queries where queries[j] = "
               "[xj, yj, rj].\n\nConstraints:\n\n1 <= points.length <= 500\n0 <= xi, yi <= 500\n"
               "1 <= queries.length <= 500\n0 <= xj, yj <= 500\n1 <= rj <= 500\n")
    sp = _space(["points", "queries"], [GRID, GRID], circles, [[[[1, 3], [3, 3]], [[2, 3, 1], [4, 3, 1]]]])
    assert sp.unmodelled == ["0 <= xj, yj <= 500", "1 <= rj <= 500"]  # `queries[j]`: no binding reads it
    # "Each rectangle[i] = [...]" names the list `rectangles`; a relation of two fields is held as a row's
    area = ("Each rectangle[i] = [xi1, yi1, xi2, yi2] denotes the ith rectangle.\n\nConstraints:\n\n"
            "1 <= rectangles.length <= 200\nrectanges[i].length == 4\n0 <= xi1, yi1, xi2, yi2 <= 10^9\n"
            "xi1 <= xi2\nyi1 <= yi2\n")
    sp = _space(["rectangles"], [GRID], area, [[[[0, 0, 2, 2], [1, 0, 2, 3], [1, 0, 3, 1]]], [[[0, 0, 1000000000, 1000000000]]]])
    assert sp.unmodelled == [] and sp.blocked() is None
    assert all(0 <= x1 <= x2 <= 10**9 and 0 <= y1 <= y2 <= 10**9 for (rects,) in _inputs(sp) for x1, y1, x2, y2 in rects)
    delay = ("times[i] = (ui, vi, wi), where ui is the source node.\n\nConstraints:\n\n1 <= k <= n <= 100\n"
             "1 <= times.length <= 6000\ntimes[i].length == 3\n1 <= ui, vi <= n\nui != vi\n0 <= wi <= 100\n")
    sp = _space(["times", "n", "k"], [GRID, INT, INT], delay, [[[[2, 1, 1], [2, 3, 1], [3, 4, 1]], 4, 2], [[[1, 2, 1]], 2, 1]])
    assert sp.keys.fields == {"ui": "val:times[][0]", "vi": "val:times[][1]", "wi": "val:times[][2]"}
    assert all(1 <= u <= n and 1 <= v <= n and u != v and 0 <= w <= 100 for times, n, _ in _inputs(sp) for u, v, w in times)


def test_lines_that_other_rules_read_are_not_unmodelled():
    tree = ("Constraints:\n\nThe number of nodes in the tree is n.\n1 <= n <= 10^4\nedges.length == n - 1\n"
            "edges represents a valid tree.\n1 <= m * n <= 10^5\n")
    sp = _space(["n", "edges"], [INT, GRID], tree, [[3, [[0, 1], [1, 2]]], [2, [[0, 1]]]])
    assert sp.unmodelled == []
    grid = "Constraints:\n\n1 <= grid.length <= 50\ngrid[i][j] is either 0 or 1.\nThe answer fits in an int.\n"
    sp = _space(["grid"], [GRID], grid, [[[[0, 1], [1, 1]]], [[[0]]]])
    assert sp.unmodelled == [] and sp.c.lower["val:grid[][]"][0].expr == "0" and sp.c.upper["val:grid[][]"][0].expr == "1"
    for (g,) in _inputs(sp):
        assert {x for row in g for x in row} <= {0, 1}
    # prose without a Constraints section (HumanEval's docstrings) describes; it lists no promises
    prose = _space(["arr"], [LIST_INT], "Given a mountain array arr, return the peak's index.", [[[0, 1, 0]]])
    assert prose.unmodelled == [] and not prose.blocked()


def test_distinct_items_named_in_the_prose():
    statement = ("You are given a 0-indexed array of unique strings words.\n\nConstraints:\n\n1 <= words.length <= 5000\n"
                 "0 <= words[i].length <= 300\nwords[i] consists of lowercase English letters.\n")
    sp = _space(["words"], [LIST_STR], statement, [[["abcd", "dcba", "lls"]], [["bat", "tab", "cat"]]])
    assert sp.violations([["a", "a"]]) and not sp.violations([["a", ""]])
    assert all(len(set(w)) == len(w) for (w,) in _inputs(sp))


# --- relations the examples show, with a Constraints section -------------------------------------------------
def test_a_row_order_every_example_shows_is_inferred_for_named_fields_of_one_range():
    statement = ("Constraints:\n\n1 <= tasks.length <= 2000\ntasks[i].length == 3\ntasks[i] = [starti, endi, durationi]\n"
                 "1 <= starti, endi <= 2000\n1 <= durationi <= endi - starti + 1\n")
    sp = _space(["tasks"], [GRID], statement, [[[[2, 3, 1], [4, 5, 1], [1, 5, 2]]], [[[1, 3, 2], [2, 5, 3], [5, 6, 2]]]])
    assert "val:tasks[] field 0 <= field 1: every example's rows" in sp.inferred
    assert not any("field 2" in x for x in sp.inferred)  # a duration is not in a start's range
    assert sp.violations([[[5, 3, 1]]])
    for (tasks,) in _inputs(sp):
        assert all(s <= e and 1 <= d <= e - s + 1 for s, e, d in tasks)


def test_no_row_order_for_unnamed_rows_grids_or_too_few_rows():
    grid = "Constraints:\n\n1 <= grid.length <= 100\n0 <= grid[i][j] <= 10\n"
    sp = _space(["grid"], [GRID], grid, [[[[0, 1], [2, 3]]], [[[1, 4], [0, 5]]]])
    assert not sp.row_relations  # a grid of cells names no fields
    few = "Constraints:\n\n1 <= pairs.length <= 100\npairs[i] = [ai, bi]\n0 <= ai, bi <= 10\n"
    assert not _space(["pairs"], [GRID], few, [[[[0, 1]]], [[[1, 4], [3, 3]]]]).row_relations  # 3 rows: chance
    assert _space(["pairs"], [GRID], few, [[[[0, 1], [2, 2]]], [[[1, 4], [3, 3]]]]).row_relations


def test_an_inferred_row_order_never_overrides_a_stated_relation():
    statement = "Constraints:\n\n2 <= n <= 50\nedges[i] = [ui, vi]\n1 <= ui, vi <= n\nui != vi\n"
    sp = _space(["n", "edges"], [INT, GRID], statement, [[6, [[1, 2], [1, 3], [3, 4]]], [7, [[1, 3], [4, 5]]]])
    assert [str(r) for r in sp.row_relations["edges"]] == ["field 0 != val:edges[][1]"]
    assert not sp.violations([5, [[3, 1], [4, 2]]])


def test_a_stated_relation_an_example_breaks_is_dropped():
    statement = "Constraints:\n\n1 <= events.length <= 100\nevents[i] = [startDayi, endDayi]\n1 <= endDayi <= startDayi <= 100\n"
    sp = _space(["events"], [GRID], statement, [[[[1, 2], [2, 3]]], [[[4, 5]]]])
    assert not sp.violations([[[1, 2]]]) and sp.dropped  # misread (or misstated): the examples win


def test_sorted_or_repeat_free_lists_beyond_chance_with_a_section():
    statement = "Constraints:\n\n1 <= nums.length <= 10^4\n1 <= nums[i] <= 10\n"
    sp = _space(["nums"], [LIST_INT], statement, [[[1, 2, 3, 5, 8, 9]], [[2, 4, 6, 7, 10]]])
    assert sp.c.flags["val:nums"] == {"sorted"}  # 1 in 86,400 by chance; repeats: 1 in 22 (too likely)
    assert all(n == sorted(n) for (n,) in _inputs(sp, count=20))
    sp = _space(["nums"], [LIST_INT], statement, [[[3, 1, 4, 10, 5, 9, 2, 6]], [[7, 2, 8, 1, 9, 4, 6]]])
    assert sp.c.flags["val:nums"] == {"distinct"}
    assert all(len(set(n)) == len(n) for (n,) in _inputs(sp, count=20))
    # short lists, or values from a wide range: what the examples show is chance
    assert not _space(["nums"], [LIST_INT], statement, [[[1, 2, 3]], [[1, 9]]]).c.flags.get("val:nums")
    wide = "Constraints:\n\n1 <= nums.length <= 10^4\n1 <= nums[i] <= 10^9\n"
    assert "distinct" not in _space(["nums"], [LIST_INT], wide, [[[5, 1, 9, 3]], [[7, 2, 8]]]).c.flags.get("val:nums", set())


# --- end to end: an intervals problem whose reference assumes start <= end ------------------------------------
MERGE = ("Given an array of intervals where intervals[i] = [starti, endi], merge all overlapping intervals.\n\n"
         "Constraints:\n\n1 <= intervals.length <= 10^4\nintervals[i].length == 2\n0 <= starti <= endi <= 10^4\n")


def _merge(intervals: list[list[int]]) -> list[list[int]]:
    """The reference: correct only where every start is at most its end."""
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        assert s <= e, "the reference assumes start <= end"
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def test_an_intervals_problem_gets_no_input_breaking_start_before_end():
    sp = _space(["intervals"], [GRID], MERGE, [[[[1, 3], [2, 6], [8, 10], [15, 18]]], [[[1, 4], [4, 5]]]])
    inputs = _inputs(sp, count=48, tiers=("edge", "random", "max", "hack"), max_input_bytes=1_000_000)
    for (intervals,) in inputs + _mutations(sp, [[[1, 3], [2, 6], [8, 10]]]):
        _merge(intervals)
    assert json.dumps(inputs).count("[") > 1000  # large inputs too, not only the trivial ones


def test_range_and_answer_size_readings_search_in_linear_time_with_the_same_reading():
    # both were one pattern with `.*` or `(.+?)` before a tail: quadratic on a long line (seconds per
    # 14 KB); now the tail is found first. The readings stay those of the old patterns.
    from microcoder.pipeline.testgen.constraints import _range
    from microcoder.pipeline.testgen.space import _answer_size

    assert _range("The number of nodes in the tree is in the range [1, 10^4].") == (
        "number of nodes in the tree", "1", "10^4")
    assert _range("a\nnums[i] will be in the range [0, n - 1]") == ("nums[i]", "0", "n - 1")
    assert _range(" is in the range [1, 2]") is None and _range("x is in the range [1, 2") is None
    assert _answer_size("The test cases are generated so that the answer fits in a 32-bit integer.")
    assert not _answer_size("It is guaranteed an answer exists.") and not _answer_size("integer answer")
