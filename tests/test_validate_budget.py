"""Validate spends reference runs only where the measurement needs them (issue 39): at most
`vote_references` references vote on every test; the others run on the tests the voters did not
settle, on the largest tests while a derived limit is still open, and on the kept tests (their
fold's, held out) to their first failure. Also: problems without references are rejected by default,
and a checker program that does not compile is its own reject reason. Real problems, judged by the
real sandboxed evaluator; no assertion depends on machine speed."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_validate_power import EV, SUM, case, problem

from microcoder.pipeline import strength
from microcoder.pipeline.schema import Checker, ReferenceSolution
from microcoder.pipeline.validate import ValidateConfig, validate_problems, voter_order

# Right for a < 3 only: a reference that disagrees with SUM on the larger tests.
SMALL_ONLY = "a, b = map(int, input().split())\nprint(a + b if a < 3 else 0)\n"


def sums(n: int) -> list[str]:
    """n correct references with different code (so their content, and their place in the order, differ)."""
    return [SUM + f"# variant {k}\n" for k in range(n)]


def runs_of(res) -> dict:
    return res.stats.as_dict()["this_run"]


def only(res):
    (p,) = res.kept
    return p, p.extra["validation"]


@pytest.fixture
def cfg(tmp_path):
    return ValidateConfig(min_tests=2, held_out_folds=0, cache_path=str(tmp_path / "cache.sqlite"))


def broken_problem(pid: str = "t/six", n_tests: int = 10):
    """Six correct references; test 4's expected output is wrong (the voters do not settle it)."""
    tests = [case(i, 1, "public" if i == 0 else "private") for i in range(n_tests)]
    tests[4] = replace(tests[4], output="999\n")
    return problem(pid, tests, sums(6))


def test_three_references_vote_and_the_others_skip_the_settled_tests(cfg):
    """vote_references 3 of 6: the three others run only on the test the voters did not settle (the
    broken one) and, for strength, on the kept tests (max_tests 3); the kept tests, the votes and the
    strength are those of every reference voting."""
    capped = replace(cfg, max_tests=3)
    budget = validate_problems([broken_problem()], replace(capped, vote_references=3), evaluator=EV, progress=False)
    full = validate_problems([broken_problem()], replace(capped, vote_references=0), evaluator=EV, progress=False)
    (pb, vb), (pf, vf) = only(budget), only(full)
    assert [t.input for t in pb.tests] == [t.input for t in pf.tests]
    for key in ("tests_valid", "tests_broken", "tests_kept", "strength", "strength_before_caps", "references_ok"):
        assert vb[key] == vf[key], key
    assert vb["strength"] == strength.record(correct=6, correct_passing=6)
    assert (vb["references_voting"], vb["references_not_run"]) == (3, 0) and "references_voting" not in vf
    figures = budget.stats.as_dict()["reference_runs"]
    assert (figures["problems_with_non_voters"], figures["references_voting"], figures["references_not_voting"]) == \
        (1, 3, 3)
    # each non-voter: the broken test and the 3 kept tests; the other 6 tests were settled by the voters
    assert figures["non_voters_runs"] == 3 * 4
    skipped = figures["non_voters_skipped"]
    assert sum(skipped.values()) == 3 * 6 and skipped["after_first_failure"] == 0
    assert runs_of(budget)["voters_runs_executed"] == 3 * 10 and runs_of(budget)["non_voters_runs_executed"] == 12
    full_runs = runs_of(full)  # the budget run's runs are in the cache: executed or cached, every one is there
    assert full_runs["voters_runs_executed"] + full_runs["voters_runs_cached"] == 6 * 10
    assert full_runs["non_voters_runs_executed"] + full_runs["non_voters_runs_cached"] == 0


def test_a_limit_at_its_ceiling_from_the_voters_times_no_non_voter(cfg):
    """A derived limit whose ceiling is the minimum (1 s): the voters' runs alone put it there, so no
    non-voter is timed on the largest tests (skipped: limit_known). Under a 15 s ceiling the same
    problem times them."""
    tests = [case(10**k, 1) for k in range(8)]
    p = problem("t/derived", tests, sums(5), meta={"time_limit_stated": False})
    base = replace(cfg, max_tests=2, vote_references=2)
    at_ceiling = validate_problems([p], replace(base, max_time_limit_s=1.0), evaluator=EV, progress=False)
    open_limit = validate_problems([p], replace(base, max_time_limit_s=15.0), evaluator=EV, progress=False)
    _, v = only(at_ceiling)
    assert v["time_limit"]["derived"] and v["time_limit"]["final_s"] == 1.0
    closed = at_ceiling.stats.as_dict()["reference_runs"]["non_voters_skipped"]["limit_known"]
    assert closed > 0 and open_limit.stats.as_dict()["reference_runs"]["non_voters_skipped"]["limit_known"] == 0
    assert at_ceiling.stats.as_dict()["reference_runs"]["non_voters_runs"] + closed == \
        open_limit.stats.as_dict()["reference_runs"]["non_voters_runs"]


def last_in_order(pid: str, voters: list[str], cfg: ValidateConfig) -> list[str]:
    """`voters` and a SMALL_ONLY variant that comes after all of them in the voters' order (so it does not vote)."""
    for k in range(100):
        refs = [*voters, SMALL_ONLY + f"# {k}\n"]
        p = problem(pid, [case(0, 1)], refs)
        if voter_order(p, cfg)[-1] == len(voters):
            return refs
    raise AssertionError("no variant ranks last")


def test_a_non_voter_that_fails_a_kept_test_is_a_tpr_miss_in_sample_and_held_out(cfg):
    """Three SUMs vote and settle every test; SMALL_ONLY does not vote, so it cannot make the tests
    with a >= 3 ambiguous: it runs on the kept tests and fails one, which both the in-sample TPR and
    the held-out TPR (in its fold, it is measured on its fold's kept tests) count as a miss."""
    folds = replace(cfg, held_out_folds=2, vote_references=3)
    refs = last_in_order("t/miss", sums(3), folds)
    p = problem("t/miss", [case(i, 1, "public" if i == 0 else "private") for i in range(6)], refs)
    res = validate_problems([p], folds, evaluator=EV, progress=False)
    _, v = only(res)
    assert (v["tests_valid"], v["tests_ambiguous"], v["tests_kept"]) == (6, 0, 6)
    assert v["strength"] == strength.record(correct=4, correct_passing=3)
    assert v["strength_held_out"] == strength.record(correct=4, correct_passing=3)
    # it ran until its first failure on the kept tests, never on the others
    rows = [r for r in res.report if r["role"] == "reference" and r["reference_index"] == 3]
    assert [r["status"] for r in rows][-1] == "WA" and all(r["status"] == "AC" for r in rows[:-1])
    assert res.stats.as_dict()["reference_runs"]["non_voters_skipped"]["after_first_failure"] == 6 - len(rows)


def test_vote_references_0_runs_every_reference_on_every_test_as_before(cfg):
    """0: every reference votes on every test (the counts before issue 39): SMALL_ONLY makes the tests
    with a >= 3 ambiguous, the records have no voting fields, and nothing is skipped."""
    refs = [*sums(3), SMALL_ONLY]
    p = problem("t/all", [case(i, 1, "public" if i == 0 else "private") for i in range(6)], refs)
    res = validate_problems([p], replace(cfg, vote_references=0), evaluator=EV, progress=False)
    _, v = only(res)
    assert (v["tests_valid"], v["tests_ambiguous"], v["tests_kept"]) == (3, 3, 3)
    assert v["strength"] == strength.record(correct=4, correct_passing=4)
    assert "references_voting" not in v and "references_not_run" not in v
    assert runs_of(res)["runs_executed"] == runs_of(res)["voters_runs_executed"] == 4 * 6
    figures = res.stats.as_dict()["reference_runs"]
    assert (figures["problems_with_non_voters"], figures["non_voters_runs"], sum(figures["non_voters_skipped"].values())) \
        == (0, 0, 0)
    # as many references as voters: the same
    few = validate_problems([p], replace(cfg, vote_references=4), evaluator=EV, progress=False)
    assert only(few)[1] == v


def test_vote_references_is_checked():
    with pytest.raises(ValueError, match="vote_references"):
        ValidateConfig(vote_references=-1)


def test_a_checker_that_does_not_compile_is_its_own_reject(cfg):
    """Not "no reference solution compiled and ran (statuses: SE)": the checker's compiler speaks."""
    p = problem("t/checker", [case(i, 1) for i in range(3)], [SUM])
    p = replace(p, checker=Checker(kind="program", language="cpp", program="int main( {"))
    res = validate_problems([p], cfg, evaluator=EV, progress=False)
    (reason,) = [r for _p, r in res.rejects]
    assert reason.startswith("the checker program did not compile: ")
    assert len(reason) > len("the checker program did not compile: ") and "\n" not in reason
    assert res.stats.as_dict()["rejected_by_reason"] == {"the checker program did not compile": 1}
    # a reference that does not compile (CE) is not a checker failure: its reason stays
    ce = replace(p, id="t/ce", checker=None, reference_solutions=[ReferenceSolution("cpp", "int main( {")])
    res = validate_problems([ce], cfg, evaluator=EV, progress=False)
    assert res.rejects[0][1] == "no reference solution compiled and ran (statuses: CE)"


def test_unverified_problems_are_rejected_by_default(cfg):
    noref = problem("t/noref", [case(i, 1) for i in range(4)], [])
    res = validate_problems([noref], ValidateConfig(cache_path=cfg.cache_path), evaluator=EV, progress=False)
    assert not res.kept and "--set validate.unverified=keep" in res.rejects[0][1]
    kept = validate_problems([noref], replace(cfg, unverified="keep"), evaluator=EV, progress=False)
    assert only(kept)[1]["status"] == "unverified"



def test_an_interactor_that_does_not_compile_is_named_so():
    """The judge's SE diff for an interactor that did not build (no compiler needed to check the wording)."""
    from microcoder.pipeline.validate import Case, checker_build_failure

    p = replace(problem("t/inter", [case(0, 1)], [SUM]), checker=Checker(kind="interactor", language="cpp"))
    diff = "the interactor failed: checker does not compile: src.cpp:3:11: error: expected ';'\n  3 | x\n"
    c = Case(p, ref_runs={(0, 0): {0: {"status": "SE", "time_s": 0.0, "diff": diff}}}, ref_status={0: "SE"})
    assert checker_build_failure(c) == "the interactor program did not compile: src.cpp:3:11: error: expected ';'"
    c.ref_status[0] = "CE"  # a reference that did not build: not the interactor's doing
    assert checker_build_failure(c) is None
