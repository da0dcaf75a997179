"""Validate's held-out strength (issue 36): each fold of a problem's references and known-wrong
solutions is measured on the tests chosen without it (votes, time limit, caps), beside the in-sample
figures, in the real evaluator."""

from __future__ import annotations

import pytest
from test_validate_power import EV, NOT_WRONG, SUM, WRONG_LARGE, WRONG_ZERO, case, problem

from microcoder.pipeline import strength
from microcoder.pipeline.validate import ValidateConfig, validate_problems

# Right for a < 3 only: a "reference" that disagrees with SUM on the larger tests.
SMALL_ONLY = "a, b = map(int, input().split())\nprint(a + b if a < 3 else 0)\n"


@pytest.fixture
def cache(tmp_path):
    return str(tmp_path / "cache.sqlite")


def validation(res, pid):
    return next(p for p in res.kept if p.id == pid).extra["validation"]


def test_a_reference_that_voted_passes_in_sample_but_not_held_out(cache):
    """SUM and SMALL_ONLY disagree on a >= 3: those tests are ambiguous and dropped, both pass what is
    kept (in-sample TPR 2/2). Held out, each is measured on the other's tests: SMALL_ONLY fails SUM's,
    and SMALL_ONLY alone makes the larger tests broken (dropped), so SUM passes: held-out TPR 1/2."""
    p = problem("t/amb", [case(i, 1, "public" if i == 0 else "private") for i in range(6)], [SUM, SMALL_ONLY])
    res = validate_problems([p], ValidateConfig(min_tests=2, cache_path=cache), evaluator=EV, progress=False)
    v = validation(res, "t/amb")
    assert v["strength"] == strength.record(correct=2, correct_passing=2)
    assert v["strength_held_out"] == strength.record(correct=2, correct_passing=1)
    assert v["held_out"] == {"folds": 2, "seed": 0, "no_tpr": None}
    s = res.stats.as_dict()["strength"]
    assert s["held_out"] == v["strength_held_out"] and s["problems_without_held_out_tpr"] == {}
    assert strength.describe_pair(s["kept"], s["held_out"]).startswith("held out: TPR 50.0% (1/2)")


def cover_problem():
    """WRONG_LARGE is caught by the largest test only, WRONG_ZERO by "0 5" only, NOT_WRONG by none."""
    tests = [case(1, 1, "public"), case(0, 5)] + [case(10**k, 7) for k in (3, 4, 5, 6)] + [case(10**9, 3)]
    return problem("t/cover", tests, [SUM], wrong=[(WRONG_LARGE, "wrong_answer"), (WRONG_ZERO, "wrong_answer"),
                                                   (NOT_WRONG, "wrong_answer"), (WRONG_ZERO.replace("-1", "-2"),
                                                                                 "wrong_answer")])


def test_the_caps_fitted_to_the_wrong_solutions_at_hand_are_measured_on_the_others(cache):
    """max_tests=2: in-sample, the cover keeps "0 5" and the largest test, catching all three catchable
    wrong solutions. A fold chooses without its held-out ones: a held-out wrong solution is caught
    only if its fold's choice happens to keep a test it fails. Before the caps (every candidate) each
    catchable one is caught wherever it is held out. One reference: no held-out TPR, counted."""
    capped = ValidateConfig(min_tests=1, max_tests=2, cache_path=cache)
    res = validate_problems([cover_problem()], capped, evaluator=EV, progress=False)
    v = validation(res, "t/cover")
    assert v["strength"] == strength.record(correct=1, correct_passing=1, incorrect=4, incorrect_failing=3)
    held, before = v["strength_held_out"], v["strength_held_out_before_caps"]
    assert (held["correct"], held["tpr"], held["incorrect"]) == (0, None, 4)
    assert before["incorrect_failing"] == 3 and held["incorrect_failing"] == 2  # this seed: one lost to the caps
    assert v["held_out"]["no_tpr"].startswith("one reference")
    s = res.stats.as_dict()["strength"]
    assert s["problems_without_held_out_tpr"] == {v["held_out"]["no_tpr"]: 1}
    # no held-out folds: the same in-sample figures, nothing held out
    off = ValidateConfig(min_tests=1, max_tests=2, held_out_folds=0, cache_path=cache)
    w = validation(validate_problems([cover_problem()], off, evaluator=EV, progress=False), "t/cover")
    assert w["strength"] == v["strength"] and w["strength_held_out"] == strength.record()
    assert w["held_out"]["no_tpr"] == "held_out_folds < 2"


def test_held_out_folds_are_checked():
    with pytest.raises(ValueError, match="held_out_folds"):
        ValidateConfig(held_out_folds=-1)
    with pytest.raises(ValueError, match="cap_choice"):
        ValidateConfig(cap_choice="random")
