"""What a program hands back cannot make the judge fail or pass it wrongly, judged by the real
sandbox (bubblewrap): forged frames on the judge's result channel are the program's fault (RE or
WA, never SE), the comparison stays linear and total on hostile output, and a returned set is
never re-ordered to match an ordered list."""

from __future__ import annotations

import pytest
from sandbox_fixtures import FAST, SLOW_OK, evaluator_fixture, judge, needs_bwrap, sub

from microcoder.pipeline.evaluator import (
    Submission,
    compare_functional,
    compare_stdio,
)
from microcoder.pipeline.schema import Checker, Problem, TestCase

ADD = Problem(id="add", source="test", statement="", style="functional", entry_point="add", time_limit_s=1.0,
              tests=[TestCase("1\n2", "3"), TestCase("5\n6", "11")])


ev = evaluator_fixture("ev", 2, **FAST)
solo = evaluator_fixture("solo", 1, **SLOW_OK)


# --- the result channel ----------------------------------------------------------------------------------
FRAME = """
import os, time
def frame(payload, head=b""):
    return b'{"event": "result", "ok": true, ' + head + b'"n": %d}\\n' % len(payload) + payload
def add(a, b):
    os.write(3, {forged})  # the judge's result channel
    time.sleep(5)
"""
DEEP = "b'[' * 100000 + b']' * 100000"


CORRUPT = "corrupted the judge's result channel"


@needs_bwrap
@pytest.mark.parametrize(("forged", "status", "diff"), [
    (DEEP + " + b'\\n'", "RE", CORRUPT),  # a nested header: the judge process recursed and failed (was SE)
    ("frame(b'3', b'\"x\": ' + b'[' * 990 + b']' * 990 + b', ')", "RE", CORRUPT),  # nested value in a header (was SE)
    ("frame(b'3', b'\"cpu_s\": NaN, ')", "RE", CORRUPT),  # a NaN CPU time (was AC with time NaN)
    (f"frame({DEEP})", "WA", "nested too deeply"),  # a nested result: the parent's json.loads recursed (was SE)
    ("frame(b'{\"__repr__\": 5, \"__type__\": [1]}')", "WA", "unsupported return type"),  # a TypeError in the parent (was SE)
])
def test_forged_result_frames_are_the_programs_fault(ev, forged, status, diff):
    v = judge(ev, ADD, Submission("add", "frame", "python", FRAME.replace("{forged}", forged)))
    assert v.status == status and diff in v.tests[0].diff, v


# --- the comparison --------------------------------------------------------------------------------------
@pytest.mark.timeout(60)
def test_comparison_is_linear_and_total_on_hostile_output():
    # a digit run that does not end as a number: quadratic backtracking took hours here
    assert not compare_stdio("5\n", "1" * 1_000_000 + "x\n").ok
    assert compare_stdio("0.5\n", "0.5" + "0" * 1_000_000 + "\n").ok
    deep = "[" * 100_000 + "]" * 100_000
    assert compare_functional("[[1]]", deep).message == "return value nested too deeply"
    assert compare_functional("[1]", "[" * 900 + "1" + "]" * 900).ok is False
    assert not compare_functional("1", '{"__repr__": 5, "__type__": [1]}').ok


SORT_DESC = Problem(id="sort-desc", source="test", statement="Return nums sorted in descending order.",
                    style="functional", entry_point="Solution().sortDesc", time_limit_s=2.0,
                    tests=[TestCase("[3,1,2]", "[3, 2, 1]"), TestCase("[10,30,20,40]", "[40, 30, 20, 10]")])
DISTINCT_ANY_ORDER = Problem(id="distinct-any", source="test", statement="Return the distinct values in any order.",
                             style="functional", entry_point="Solution().sortDesc", time_limit_s=2.0,
                             tests=SORT_DESC.tests, checker=Checker(kind="tokens", unordered=True))
RETURNS_A_SET = """
    from typing import List
    class Solution:
        def sortDesc(self, nums: List[int]) -> List[int]:
            return set(nums)
"""


@needs_bwrap
def test_a_returned_set_is_wa_for_an_ordered_list_and_ac_only_under_an_unordered_checker(solo):
    right = RETURNS_A_SET.replace("set(nums)", "sorted(nums, reverse=True)")
    verdicts = solo.evaluate_batch(
        [SORT_DESC, DISTINCT_ANY_ORDER],
        [sub(SORT_DESC, RETURNS_A_SET, sid="set"), sub(SORT_DESC, right, sid="sorted"),
         sub(DISTINCT_ANY_ORDER, RETURNS_A_SET, sid="set-any")])
    as_set, as_sorted, any_order = verdicts
    assert as_set.status == "WA", as_set
    assert as_sorted.status == "AC", as_sorted
    assert any_order.status == "AC", any_order
