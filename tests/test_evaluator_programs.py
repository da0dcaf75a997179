"""The evaluator's program runs (pipeline/evaluator/programs.py): one result cache keyed on the
evaluator's code and settings, the problem as judged, the program, the test and the run index;
the streams that validate drives through it; the run mode (program + inputs -> outputs) testgen
collects with."""

from __future__ import annotations

from dataclasses import replace

import pytest

from microcoder.pipeline.evaluator import verdict_key as vk
from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.evaluator.programs import ResultCache, Runner, run_outputs
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase

SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
EV = EvaluatorConfig(workers=2)


def sum_problem(time_limit_s: float = 2.0) -> Problem:
    tests = [TestCase(f"{i} {i}\n", f"{2 * i}\n") for i in range(3)]
    return Problem(id="t/sum", source="t", style="stdio", statement="a + b", tests=tests,
                   reference_solutions=[ReferenceSolution("python", SUM)], time_limit_s=time_limit_s)


def runs(cache: ResultCache, evaluator: EvaluatorConfig = EV, problem: Problem | None = None,
         code: str = SUM, run: int = 0) -> tuple[int, int, dict]:
    """(runs executed, runs found in the cache, results) of SUM on the problem's tests."""
    p = problem or sum_problem()
    runner = Runner(evaluator, cache, progress=False)
    try:
        s = runner.stream("s", p, "python", code, list(range(len(p.tests))), run)
        runner.run([s], "test")
    finally:
        runner.close()
    return runner.executed, runner.cached, s.results


def test_a_second_run_is_a_cache_hit_and_what_decides_a_result_misses(tmp_path, monkeypatch):
    cache = ResultCache(tmp_path / "runs.sqlite")
    executed, cached, first = runs(cache)
    assert (executed, cached) == (3, 0) and {r["status"] for r in first.values()} == {"AC"}
    executed, cached, again = runs(cache)
    assert (executed, cached) == (0, 3) and again == first  # the same program on the same inputs: hits
    assert runs(cache, replace(EV, workers=1))[:2] == (0, 3)  # speed only: not in the key
    assert runs(cache, replace(EV, timeout_scale=2.0))[:2] == (3, 0)  # a verdict setting: misses
    assert runs(cache, problem=sum_problem(time_limit_s=3.0))[:2] == (3, 0)  # the problem as judged
    assert runs(cache, code=SUM + "# another program\n")[:2] == (3, 0)
    assert runs(cache, run=1)[:2] == (3, 0)  # a second run of one program is its own result
    # what the judge reads besides the problem's fields: a validator's flags, the test's group
    assert runs(cache, problem=replace(sum_problem(), meta={"validator_flags": "float_tolerance 1e-9"}))[:2] == (3, 0)
    grouped = replace(sum_problem(), tests=[replace(t, group="secret/g1") for t in sum_problem().tests])
    assert runs(cache, problem=grouped)[:2] == (3, 0)
    monkeypatch.setattr(vk, "code_digest", lambda: "a-fixed-evaluator")
    assert runs(cache)[:2] == (3, 0)  # the evaluator's code: misses
    assert runs(cache)[:2] == (0, 3)
    cache.close()


def test_no_two_kinds_of_result_share_a_key_and_a_stream_only_judges(tmp_path):
    from microcoder.pipeline.evaluator.programs import KINDS, run_key

    assert len({run_key(kind, "problem", "code", "test", 0) for kind in KINDS}) == len(KINDS)
    with pytest.raises(ValueError, match="kind must be one of"):
        run_key("other", "problem", "code", "test", 0)
    runner = Runner(EV, ResultCache(tmp_path / "c.sqlite"), progress=False)
    with pytest.raises(ValueError, match="a stream judges"):  # run mode's AC is no verdict to cache as one
        runner.stream("s", sum_problem(), "python", SUM, [0], 0, mode="run")


def test_tables_of_one_file_are_apart(tmp_path):
    path = tmp_path / "c.sqlite"
    a, b = ResultCache(path), ResultCache(path, table="problems")
    a.put_many([("k", {"v": 1})])
    assert a.get("k") == {"v": 1} and b.get("k") is None
    with pytest.raises(ValueError, match="table"):
        ResultCache(path, table="x; DROP TABLE runs")
    a.close()
    b.close()


def test_run_mode_reads_what_a_program_printed():
    """Status AC = ran to completion (whatever the output), with the output; a crash and a program
    that does not build keep their status; every input has its result."""
    from microcoder.pipeline.evaluator.factory import make_evaluator

    p = sum_problem()
    crash = "import sys\nx = input()\nsys.exit(3) if x.startswith('1') else print(x)\n"
    jobs = [("sum", p, "python", SUM, ["1 2\n", "5 5\n"]), ("crash", p, "python", crash, ["0\n", "1\n"]),
            ("cpp", p, "cpp", "int main( {", ["1 1\n"]), ("none", p, "python", SUM, [])]
    with make_evaluator(EV, executor="local") as ev:
        out = run_outputs(ev, jobs)
    assert [(o.status, o.output) for o in out["sum"]] == [("AC", "3\n"), ("AC", "10\n")]
    assert [o.status for o in out["crash"]] == ["AC", "RE"] and out["crash"][0].output == "0\n"
    assert [(o.status, o.output) for o in out["cpp"]] == [("CE", None)]
    assert out["none"] == []


def test_a_value_no_output_can_carry_is_re_in_run_mode_and_wa_when_judged():
    """A functional call returning a value JSON cannot carry (a list holding itself) ran, but gave
    no output to use: RE
    when run for its output (a reference's vote is void), WA when judged (it equals no answer)."""
    from microcoder.pipeline.evaluator.config import Submission
    from microcoder.pipeline.evaluator.factory import make_evaluator

    p = Problem(id="t/odd", source="t", style="functional", entry_point="f", statement="f",
                tests=[TestCase("1", "1")])
    code = "def f(x):\n    a = [x]\n    a.append(a)\n    return a\n"
    with make_evaluator(EV, executor="local") as ev:
        (ran,) = run_outputs(ev, [("odd", p, "python", code, ["1"])])["odd"]
        judged = ev.evaluate_batch({p.id: p}, [Submission(p.id, "s", "python", code)], mode="all")[0]
    assert ran.status == "RE" and judged.status == "WA", (ran, judged)


def test_the_evaluators_run_mode_compares_nothing_and_runs_no_checker():
    """mode="run": every test runs (no stop at a "failure"), each keeps its output as AC, and the
    expected outputs and the checker program (here one that rejects everything) are never used."""
    from microcoder.pipeline.evaluator.config import Submission
    from microcoder.pipeline.evaluator.factory import make_evaluator
    from microcoder.pipeline.schema import Checker

    rejects_all = "import sys\nsys.exit(1)\n"
    p = replace(sum_problem(), checker=Checker(kind="program", language="python", program=rejects_all))
    p = replace(p, tests=[TestCase("1 1\n", "999\n"), TestCase("2 2\n", "-1\n")])
    sub = Submission(problem_id=p.id, submission_id="s", language="python", code=SUM)
    with make_evaluator(EV, executor="local") as ev:
        ran = ev.evaluate_batch({p.id: p}, [sub], mode="run")[0]
        judged = ev.evaluate_batch({p.id: p}, [sub], mode="all")[0]
    assert ran.status == "AC" and [(t.status, t.output) for t in ran.tests] == [("AC", "2\n"), ("AC", "4\n")]
    assert judged.status != "AC"  # judged, the same run fails: the checker and the answers were skipped above


def test_run_mode_through_the_cache_runs_only_what_it_has_not_seen(tmp_path):
    """testgen's runs (CachedEvaluator): a second run of a program on an input is a hit with the same
    output; a new input runs alone; judging goes straight to the evaluator."""
    from microcoder.pipeline.evaluator.factory import make_evaluator
    from microcoder.pipeline.evaluator.programs import CachedEvaluator

    p = sum_problem()
    cache = ResultCache(tmp_path / "runs.sqlite")
    with make_evaluator(EV, executor="local") as judge:
        ev = CachedEvaluator(judge, cache, vk.verdict_key(EV))
        first = run_outputs(ev, [("a", p, "python", SUM, ["1 2\n", "2 2\n"])])
        assert (ev.executed, ev.cached) == (2, 0)
        again = run_outputs(ev, [("b", p, "python", SUM, ["2 2\n", "3 3\n", "1 2\n"])])
        assert (ev.executed, ev.cached) == (3, 2)
        assert [o.output for o in again["b"]] == ["4\n", "6\n", "3\n"] and again["b"][2] == first["a"][0]
        other = CachedEvaluator(judge, cache, vk.verdict_key(replace(EV, timeout_scale=2.0)))
        run_outputs(other, [("a", p, "python", SUM, ["1 2\n"])])
        assert (other.executed, other.cached) == (1, 0)  # another evaluator setting: another run
        assert ev.timeout_scale == judge.timeout_scale  # the rest is the evaluator's
    cache.close()


def test_judging_through_the_cache_gives_the_same_verdicts(tmp_path):
    """judge_runs (testgen's known solutions and mutants): the statuses per test and the verdict are
    the same from the cache; first-failure stops at a cached failure; a result kept with outputs
    (validate's) is not one kept without."""
    from microcoder.pipeline.evaluator.factory import make_evaluator
    from microcoder.pipeline.evaluator.programs import CachedEvaluator, judge_runs

    p = sum_problem()
    wrong = "a, b = map(int, input().split())\nprint(a + b + (a == 1))\n"  # fails test 1 of 0..2
    items = [("ok", p, "python", SUM), ("wrong", p, "python", wrong)]
    cache = ResultCache(tmp_path / "runs.sqlite")
    with make_evaluator(EV, executor="local") as judge:
        ev = CachedEvaluator(judge, cache, vk.verdict_key(EV))
        # first-failure: `ok` on 3 tests, `wrong` on 2; then all: only test 2 of `wrong` was never judged
        for mode, executed in (("first-failure", 3 + 2), ("all", 3 + 2 + 1)):
            fresh = judge_runs(ev, items, mode)
            assert ev.executed == executed
            assert judge_runs(ev, items, mode) == fresh and ev.executed == executed  # all from the cache
            assert {k: v[0] for k, v in fresh.items()} == {"ok": "AC", "wrong": "WA"}
        assert [r["status"] for r in fresh["wrong"][2]] == ["AC", "WA", "AC"]
    _, cached, _ = runs(cache)  # validate's runs of SUM on the same tests: kept with outputs, apart
    assert cached == 0
    cache.close()
