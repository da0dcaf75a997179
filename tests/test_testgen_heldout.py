"""Testgen's held-out share (issue 36): a seeded share of the references, known-wrong solutions and
mutants has no part in the tests (no vote on outputs, not hunted by the search) and is measured
apart, in the real evaluator."""

from __future__ import annotations

from test_testgen_search import (
    ALWAYS_MINUS_ONE,
    EV,
    REFERENCE,
    SHORT_ONLY,
    WRONG_ON_LONG,
    cfg,
    functional,
    report_of,
)

from microcoder.pipeline import strength
from microcoder.pipeline.testgen import search as hunt
from microcoder.pipeline.testgen.stage import testgen_problems


def test_the_held_out_share_is_seeded_by_content_and_never_a_lone_reference():
    p = functional("p", REFERENCE, SHORT_ONLY, wrong=[WRONG_ON_LONG, ALWAYS_MINUS_ONE, SHORT_ONLY])
    sols = hunt.solutions_of(p, 4, 0, folds=2, held_seed=0)
    by_role = {role: [s.held_out for s in sols if s.role == role] for role in ("reference", "known_wrong", "mutant")}
    assert sum(by_role["reference"]) == 1 and sum(by_role["known_wrong"]) == 1  # floor(n / 2)
    # the same code in another order: the same solutions held out (mutants are of the first reference)
    q = functional("p", SHORT_ONLY, REFERENCE, wrong=[SHORT_ONLY, ALWAYS_MINUS_ONE, WRONG_ON_LONG])
    flags = {(s.role, s.code): s.held_out for s in hunt.solutions_of(q, 0, 0, folds=2, held_seed=0)}
    assert all(flags[(s.role, s.code)] == s.held_out for s in sols if s.role != "mutant")
    lone = hunt.solutions_of(functional("p", REFERENCE), 0, 0, folds=2, held_seed=0)
    assert [s.held_out for s in lone] == [False]  # someone must vote
    assert not any(s.held_out for s in hunt.solutions_of(p, 4, 0, folds=0))


def test_a_held_out_reference_does_not_vote_and_is_measured_apart(tmp_path):
    """REFERENCE and SHORT_ONLY (999 on arrays longer than 3) as references: together they disagree on
    long arrays, so those inputs are dropped and both pass (in-sample TPR 2/2, nothing held out). With
    one held out, the other alone decides the outputs, and the held-out one fails them: held-out TPR
    0/1 beside in-sample 1/1 (whichever of the two the seed holds out)."""
    p = functional("two", REFERENCE, SHORT_ONLY, wrong=[WRONG_ON_LONG, ALWAYS_MINUS_ONE, SHORT_ONLY])
    none = report_of(testgen_problems([p], cfg(tmp_path, target_tests=8, search_rounds=0),
                                      evaluator=EV, progress=False), "two")
    assert none["strength"]["after"]["known_wrong"]["correct_passing"] == 2
    assert none["strength"]["held_out"]["after"]["known_wrong"] == strength.record()

    result = testgen_problems([p], cfg(tmp_path, target_tests=8, search_rounds=1, held_out_folds=2),
                              evaluator=EV, progress=False)
    rep = report_of(result, "two")
    inside, held = rep["strength"]["after"]["known_wrong"], rep["strength"]["held_out"]["after"]["known_wrong"]
    assert (inside["correct"], inside["correct_passing"], inside["incorrect"]) == (1, 1, 2)
    assert (held["correct"], held["correct_passing"], held["incorrect"]) == (1, 0, 1)
    figures = result.stats.figures["strength"]
    assert figures["held_out"]["after"]["known_wrong"] == held and figures["problems_without_held_out_tpr"] == 0
    search = rep["search"]
    assert search["held_out_survivors_at_start"] == search["held_out_killed_by_search"] + search["held_out_survivors_left"]
    assert result.stats.figures["search"]["held_out_survivors_at_start"] == search["held_out_survivors_at_start"]


def test_a_lone_reference_has_no_held_out_tpr(tmp_path):
    result = testgen_problems([functional("one", REFERENCE, wrong=[WRONG_ON_LONG, ALWAYS_MINUS_ONE])],
                              cfg(tmp_path, target_tests=4, search_rounds=0, held_out_folds=2),
                              evaluator=EV, progress=False)
    held = report_of(result, "one")["strength"]["held_out"]["after"]["known_wrong"]
    assert held["correct"] == 0 and held["tpr"] is None and held["incorrect"] == 1
    assert result.stats.figures["strength"]["problems_without_held_out_tpr"] == 1
