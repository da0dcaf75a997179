"""Validate (and testgen) on interactive problems and on grouped tests (issue 26, items 1 and 5).

An interactive problem with its interactor is validated like a problem with a checker program (its
references and known-wrong solutions run through the evaluator); one marked interactive without an
interactor is set aside with that reason. Tests keep their group through the votes and the caps, and
a grouped problem's validation record says what each group kept.

Most tests here judge through a stand-in evaluator (`FakeJudge`: a verdict per (code, test) from a
table), so that they test validate's rules, not the sandbox; the last one runs a real interactor
and skips while the evaluator refuses interactive problems."""

from __future__ import annotations

import shutil

import pytest

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.schema import (
    Checker,
    Problem,
    ReferenceSolution,
    TestCase,
    TestResult,
    Verdict,
    WrongSolution,
)
from microcoder.pipeline.validate import ValidateConfig, choose_tests, set_aside, validate_problems

EV = EvaluatorConfig(workers=1)
# testlib protocol: argv [prog, input, tout, answer]; stdin: the submission's stdout; stdout: its stdin
DOUBLE_INTERACTOR = (
    "import sys\n"
    "n = int(open(sys.argv[1]).read())\n"
    "print(n, flush=True)\n"
    "got = sys.stdin.readline().split()\n"
    "sys.exit(0 if got == [str(2 * n)] else 1)\n"
)
INTERACTOR = Checker(kind="interactor", language="python", protocol="testlib", program=DOUBLE_INTERACTOR)
DOUBLE = "print(2 * int(input()), flush=True)\n"


class FakeJudge:
    """Stands in for the evaluator: `table(code, test)` gives a test's status; stops at the first
    failure as mode first-failure does; an interactive run has no stdout (output None)."""

    workers = 1

    def __init__(self, table):
        self.table = table
        self.problems: list[Problem] = []

    def evaluate_batch(self, problems, subs, mode="first-failure", keep_outputs=False):
        (sub,) = subs
        p = problems[sub.problem_id]
        self.problems.append(p)
        results = []
        for t in p.tests:
            results.append(TestResult(self.table(sub.code, t), time_s=0.01, output=None))
            if results[-1].status != "AC" and mode == "first-failure":
                break
        passed = sum(r.status == "AC" for r in results)
        status = "AC" if passed == len(p.tests) else next(r.status for r in results if r.status != "AC")
        return [Verdict(sub.problem_id, sub.submission_id, status, passed, len(p.tests), tests=results)]

    def interrupt(self):
        pass

    def close(self):
        pass


@pytest.fixture
def judge(monkeypatch):
    """Install a FakeJudge built from a table; returns it."""
    import microcoder.pipeline.evaluator.factory as factory

    def install(table):
        fake = FakeJudge(table)
        monkeypatch.setattr(factory, "make_evaluator", lambda *a, **k: fake)
        return fake
    return install


@pytest.fixture
def cfg(tmp_path):
    return ValidateConfig(min_tests=2, cache_path=str(tmp_path / "cache.sqlite"))


def interactive(pid: str, tests: list[TestCase], **kw) -> Problem:
    kw.setdefault("checker", INTERACTOR)
    kw.setdefault("reference_solutions", [ReferenceSolution("python", DOUBLE)])
    kw.setdefault("statement", "This is an interactive problem.")
    return Problem(id=pid, source="t", style="stdio", tests=tests, meta={"interactive": True}, tags=["interactive"],
                   **kw)


def test_marked_interactive_without_an_interactor_is_set_aside_with_that_reason():
    tests = [TestCase("3\n", "")] * 3
    bare = interactive("t/bare", tests, checker=None)
    empty = interactive("t/empty", tests, checker=Checker(kind="interactor", language="python", program=" "))
    judged = interactive("t/judged", tests)
    run, aside = set_aside([bare, empty, judged], ValidateConfig())
    assert [p.id for p in run] == ["t/judged"]
    assert [(p.id, key) for p, _reason, key in aside] == [("t/bare", "interactive"), ("t/empty", "interactive")]
    assert all("has no interactor program" in reason for _p, reason, _k in aside)


def test_an_interactor_judges_any_of_several_answers():
    """The statement accepts several answers: with an interactor it is no multiple_answers reject."""
    p = interactive("t/any", [TestCase("3\n", "")], statement="If there are multiple answers, print any of them.")
    run, aside = set_aside([p], ValidateConfig(multiple_answers="reject"))
    assert [q.id for q in run] == ["t/any"] and not aside


def test_interactive_problem_runs_references_and_wrong_solutions_through_the_evaluator(cfg, judge):
    tests = [TestCase(f"{n}\n", "", "public" if n == 1 else "private") for n in range(1, 6)]
    wrong = WrongSolution("python", "print(0)\n", "wrong_answer")
    fake = judge(lambda code, t: "AC" if code == DOUBLE or t.input != "4\n" else "WA")
    res = validate_problems([interactive("t/double", tests, wrong_solutions=[wrong])], cfg, evaluator=EV,
                            progress=False)
    (kept,) = res.kept
    v = kept.extra["validation"]
    assert (v["tests_valid"], v["tests_kept"], v["wrong_ran"], v["wrong_caught"]) == (5, 5, 1, 1)
    assert {p.checker.kind for p in fake.problems} == {"interactor"}  # judged with the interactor
    assert [t.output for t in kept.tests] == [""] * 5  # the answer files as given: no run's stdout written in
    assert res.stats.as_dict()["rejected"] == 0


def test_check_determinism_compares_no_outputs_of_interactive_runs(cfg, judge):
    """An interactive run has no stdout to compare: one run per reference, no test nondeterministic."""
    fake = judge(lambda code, t: "AC")
    tests = [TestCase(f"{n}\n", "") for n in range(3)]
    res = validate_problems([interactive("t/det", tests)], ValidateConfig(min_tests=2, check_determinism=True,
                            cache_path=cfg.cache_path), evaluator=EV, progress=False)
    v = res.kept[0].extra["validation"]
    assert v["tests_nondeterministic"] == 0 and v["tests_kept"] == 3
    assert sum(len(p.tests) for p in fake.problems) == 3  # not run twice


def grouped_tests() -> list[TestCase]:
    tests = [TestCase("1\n", "2\n", "public", "sample")]
    tests += [TestCase(f"{n}\n", f"{2 * n}\n", "private", "secret/small") for n in (2, 3)]
    tests += [TestCase(f"{n}\n" + "x" * n, f"{2 * n}\n", "private", "secret/large") for n in (50, 60, 70)]
    return tests


def test_groups_survive_the_votes_and_the_caps_and_the_record_says_what_each_kept(cfg, judge):
    judge(lambda code, t: "WA" if t.input.startswith("3\n") else "AC")  # the reference fails one small test
    p = Problem(id="t/grouped", source="t", statement="Double n.", style="stdio", tests=grouped_tests(),
                reference_solutions=[ReferenceSolution("python", DOUBLE)])
    capped = ValidateConfig(min_tests=2, max_tests=3, cache_path=cfg.cache_path)
    (kept,) = validate_problems([p], capped, evaluator=EV, progress=False).kept
    v = kept.extra["validation"]
    # the public sample, one test of each secret group (the largest-first rule alone keeps no small test)
    assert [(t.input.split()[0], t.group) for t in kept.tests] == [
        ("1", "sample"), ("2", "secret/small"), ("70", "secret/large")]
    assert v["test_groups"] == {"sample": {"tests_in": 1, "tests_kept": 1},
                                "secret/large": {"tests_in": 3, "tests_kept": 1},
                                "secret/small": {"tests_in": 2, "tests_kept": 1}}
    assert v["groups_emptied"] == []


def test_a_group_left_without_a_test_is_visible(cfg, judge):
    judge(lambda code, t: "WA" if t.group == "secret/small" else "AC")  # every small test is broken
    p = Problem(id="t/emptied", source="t", statement="Double n.", style="stdio", tests=grouped_tests(),
                reference_solutions=[ReferenceSolution("python", DOUBLE)])
    res = validate_problems([p], cfg, evaluator=EV, progress=False)
    v = res.kept[0].extra["validation"]
    assert v["groups_emptied"] == ["secret/small"] and v["test_groups"]["secret/small"]["tests_kept"] == 0
    assert res.stats.figures["test_groups"] == {"problems_grouped": 1, "groups": 3, "groups_emptied": 1,
                                                "problems_with_a_group_emptied": 1}
    assert {r["test_group"] for r in res.report} == {"sample", "secret/small", "secret/large"}


def test_ungrouped_records_and_caps_are_as_before():
    tests = [TestCase("1", "1", "public")] + [TestCase("x" * n, "y", "private") for n in (5, 50, 20, 10)]
    assert choose_tests(tests, list(range(5)), ValidateConfig(max_tests=3)).kept == [0, 2, 3]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_real_interactor_validates_its_problem(cfg):
    """End to end through the evaluator (in the sandbox)."""
    tests = [TestCase(f"{n}\n", "") for n in range(1, 4)]
    p = interactive("t/real", tests, wrong_solutions=[WrongSolution("python", "input()\nprint(1, flush=True)\n")])
    res = validate_problems([p], cfg, evaluator=EV, progress=False)
    assert [q.id for q in res.kept] == ["t/real"], res.rejects
    v = res.kept[0].extra["validation"]
    assert v["tests_valid"] == 3 and v["wrong_caught"] == 1


# --- testgen on the same problems ------------------------------------------------------------------
def test_testgen_passes_interactive_problems_through_however_marked():
    from microcoder.pipeline.testgen.stage import TestgenConfig, skip_reason

    cfg = TestgenConfig(target_tests=10)
    unmarked = interactive("t/unmarked", [TestCase("3\n", "")])
    unmarked.meta, unmarked.tags = {}, []  # judged by an interactor, not marked by its source
    for p in (interactive("t/marked", [TestCase("3\n", "")], checker=None), unmarked):
        assert skip_reason(p, cfg, {}) == "interactive", p.id


def test_generated_tests_of_a_grouped_problem_are_in_group_generated():
    from microcoder.pipeline.testgen.stage import TestgenConfig, _assemble

    grouped = Problem(id="t/g", source="t", statement="Double n.", style="stdio", tests=grouped_tests())
    plain = Problem(id="t/p", source="t", statement="Double n.", style="stdio", tests=[TestCase("1\n", "2\n")])
    result = {"tests": [("9\n", "18\n")], "provenance": [{"method": "random", "tier": "random",
                                                            "references_agreeing": 1, "single_reference": True}],
              "candidates": 1, "dropped": {}}
    out = _assemble([grouped, plain], {}, {0: result, 1: result}, TestgenConfig(), 0.0).kept
    assert [(t.kind, t.group) for t in out[0].tests[-1:]] == [("generated", "generated")]
    assert [t.group for t in out[0].tests[:-1]] == [t.group for t in grouped_tests()]  # the source's, kept
    assert out[1].tests[-1].group is None  # ungrouped problems stay ungrouped


def test_min_tests_counts_the_cases_of_multi_case_files():
    """A Code Jam test set is one file of many cases: min_tests counts its "Case #i:" lines, and a
    test an interactive judge makes its cases for counts `cases_per_judge_run`."""
    from microcoder.pipeline.schema import Problem, TestCase
    from microcoder.pipeline.validate import count_cases, describe_count

    answer = "".join(f"Case #{i}: {i}\n" for i in range(1, 4))
    p = Problem("cj", "t", "s", "stdio", tests=[TestCase("3\n1\n2\n3\n", answer), TestCase("1\n9\n", "Case #1: 9\n")],
                meta={"multi_case_tests": True})
    assert count_cases(p, [0, 1]) == 4 and describe_count(p, [0, 1]) == "2 valid tests (4 cases)"
    assert count_cases(Problem("x", "t", "s", "stdio", tests=p.tests), [0, 1]) == 2  # not marked: files
    judge_run = Problem("i", "t", "s", "stdio", tests=[TestCase("0\n", ""), TestCase("1\n", "")],
                        meta={"multi_case_tests": True, "cases_per_judge_run": 50})
    assert count_cases(judge_run, [0, 1]) == 100


def test_min_tests_counts_distinct_case_numbers():
    """An answer repeating "Case #1:" has one case, not as many as its lines (`Case #01:` is case 1)."""
    from microcoder.pipeline.schema import Problem, TestCase
    from microcoder.pipeline.validate import count_cases

    answer = "Case #1: 1\nCase #1: 1\nCase #01: 1\nCase #2: 2\n" + "Case #2: x\n" * 50
    p = Problem("cj", "t", "s", "stdio", tests=[TestCase("2\n1\n2\n", answer)], meta={"multi_case_tests": True})
    assert count_cases(p, [0]) == 2
