"""Validate's test strength in the field's terms (issue 25, items 1 and 6): TPR = share of correct
solutions (references that ran) passing every kept test, TNR = share of known-wrong solutions that
ran failing at least one; per problem, per source, per difficulty, before and after the caps.

The programs run in the real evaluator: a + b with a correct reference, a correct one that never
finishes a large input (TLE there under the stated limit), and known-wrong solutions that only the
largest input, only the edge case a == 0, or nothing catches."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_validate_power import NOT_WRONG, SLOW_SUM, SUM, WRONG_LARGE, WRONG_ZERO, case, problem

from microcoder.pipeline import strength
from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.validate import ValidateConfig, choose_tests, greedy_cover, validate_problems

EV = EvaluatorConfig(workers=2)
WRONG = [(WRONG_LARGE, "wrong_answer"), (WRONG_ZERO, "wrong_answer"), (NOT_WRONG, "wrong_answer")]


def two_refs_three_wrong(pid: str = "t/strength", **kw) -> Problem:
    """4 tests; the big one (a = 10**9) is valid (the fast reference alone votes) and kept, and the
    slow reference is TLE on it; WRONG_LARGE is caught by it, WRONG_ZERO by "0 5", NOT_WRONG by none."""
    tests = [case(1, 2, "public"), case(0, 5), case(3, 4), case(10**9, 3)]
    return problem(pid, tests, [SUM, SLOW_SUM], wrong=WRONG, time_limit_s=0.5, **kw)


@pytest.fixture
def cache(tmp_path):
    return str(tmp_path / "cache.sqlite")


def test_a_slow_reference_lowers_tpr_and_an_uncaught_wrong_solution_tnr(cache):
    res = validate_problems([two_refs_three_wrong()], ValidateConfig(min_tests=2, cache_path=cache),
                            evaluator=EV, progress=False)
    (out,) = res.kept
    v = out.extra["validation"]
    assert (v["tests_kept"], v["references_too_slow"]) == (4, [0, 1])
    expected = {"correct": 2, "correct_passing": 1, "tpr": 0.5, "incorrect": 3, "incorrect_failing": 2, "tnr": 0.6667}
    assert v["strength"] == expected
    assert v["strength_before_caps"] == expected  # no cap applied: nothing cost
    s = res.stats.as_dict()["strength"]
    assert s["kept"] == s["before_caps"] == expected and s["problems_measured"] == 1
    assert strength.describe(s["kept"]) == "TPR 50.0% (1/2), TNR 66.7% (2/3)"
    # the figures other code reads stay as they were
    assert res.stats.as_dict()["wrong_solutions"]["caught"] == 2


def test_caps_cost_tnr_and_the_cover_prefers_a_test_every_reference_passes(cache):
    """max_tests=1: "0 5" and the big test each catch one wrong solution; the slow reference fails the
    big one, so the cover takes "0 5" (the old tie-break, larger input first, took the big one and kept
    TPR 1/2). The cap's cost is the difference between before_caps and kept."""
    one = ValidateConfig(min_tests=1, max_tests=1, cache_path=cache)
    res = validate_problems([two_refs_three_wrong()], one, evaluator=EV, progress=False)
    (out,) = res.kept
    assert [t.input for t in out.tests] == ["0 5\n"]
    v = out.extra["validation"]
    assert v["strength"] == strength.record(correct=2, correct_passing=2, incorrect=3, incorrect_failing=1)
    assert v["strength_before_caps"] == strength.record(correct=2, correct_passing=1, incorrect=3, incorrect_failing=2)
    assert (v["wrong_caught"], v["wrong_lost_to_caps"]) == (1, 1)
    s = res.stats.as_dict()["strength"]
    assert (s["kept"]["tnr"], s["before_caps"]["tnr"], s["kept"]["tpr"], s["before_caps"]["tpr"]) == \
        (0.3333, 0.6667, 1.0, 0.5)


def test_by_source_and_by_difficulty_add_up_to_the_kept_figure(cache):
    probs = [two_refs_three_wrong("a/1", difficulty="easy"),
             problem("a/2", [case(i, 1) for i in range(3)], [SUM], wrong=WRONG[1:], difficulty="hard"),
             replace(problem("b/1", [case(0, 1), case(2, 3)], [SUM], wrong=WRONG[:1]), source="b"),  # nothing catches it
             replace(problem("b/2", [case(i, 1) for i in range(3)], []), source="b")]  # unverified, nothing to measure
    res = validate_problems(probs, ValidateConfig(min_tests=2, unverified="keep", cache_path=cache), evaluator=EV,
                            progress=False)
    assert sorted(p.id for p in res.kept) == ["a/1", "a/2", "b/1", "b/2"]
    s = res.stats.as_dict()["strength"]
    assert s["kept"] == strength.record(correct=4, correct_passing=3, incorrect=6, incorrect_failing=3)
    assert s["problems_measured"] == 3
    assert set(s["by_source"]) == {"t", "b"} and set(s["by_difficulty"]) == {"easy", "hard", "unknown"}
    for groups in (s["by_source"], s["by_difficulty"]):
        assert strength.add(groups.values()) == s["kept"]
    assert s["by_source"]["b"] == strength.record(correct=1, correct_passing=1, incorrect=1, incorrect_failing=0)
    # a rejected problem is not in the kept figures
    strict = ValidateConfig(min_tests=3, unverified="keep", cache_path=cache)
    fewer = validate_problems(probs, strict, evaluator=EV, progress=False).stats.as_dict()["strength"]
    assert fewer["kept"] == strength.record(correct=3, correct_passing=2, incorrect=5, incorrect_failing=3)


# --- the choice itself, with made-up catches and reference failures ------------------------------------------------
def test_cover_and_ranking_put_tests_a_reference_fails_last():
    tests = [TestCase("p", "1", "public")] + [TestCase("x" * n, "y", "private") for n in (1, 2, 3, 4)]
    # equal gain (1 and 4 both catch wrong 0): the test no reference fails wins, larger input notwithstanding
    catches = {0: {1, 4}}
    assert greedy_cover([0, 1, 2, 3, 4], catches, tests, 10) == [4]
    assert greedy_cover([0, 1, 2, 3, 4], catches, tests, 10, {4: {1}}) == [1]
    # after the cover and the public test, the private tests every reference passes come before the larger one
    choice = choose_tests(tests, [0, 1, 2, 3, 4], ValidateConfig(max_tests=4), {0: {1}}, {4: {1}})
    assert choice.kept == [0, 1, 2, 3] and choice.dropped == {4: "count_cap"}
    # the byte cap drops a failing private test outside the cover before a larger passing one
    tight = choose_tests(tests, [0, 2, 3, 4], ValidateConfig(max_tests=5, max_total_bytes=11), {}, {3: {0}})
    assert tight.kept == [0, 2, 4] and tight.dropped == {3: "byte_cap"}
    # a reference already failing a chosen test costs nothing more: gain decides again
    assert greedy_cover([1, 2, 3, 4], {0: {4}, 1: {4}, 2: {3, 1}}, tests, 10, {4: {0}, 3: {0}}) == [4, 3]
