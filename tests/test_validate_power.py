"""Validate keeps the tests' power (issue 12): slow references do not throw tests away, limits a
source did not state come from the references, known-wrong solutions measure and steer the caps.

Authored packages: a + b with a reference that never finishes large inputs, a wrong solution that
only the largest test catches (and one only a small edge case catches), a problem without a stated
time limit whose reference needs more than the source's default."""

from __future__ import annotations

import pytest

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase, WrongSolution
from microcoder.pipeline.validate import (
    ValidateConfig,
    choose_tests,
    derive_time_limit,
    greedy_cover,
    validate_problems,
)

SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
# Correct, but hopeless on large inputs (it never finishes them): a reference too slow there.
SLOW_SUM = "a, b = map(int, input().split())\nwhile a > 1000:\n    pass\nprint(a + b)\n"
# Wrong only on the largest input; wrong only on the edge case a == 0; right everywhere.
WRONG_LARGE = "a, b = map(int, input().split())\nprint(a + b + (a > 10**8))\n"
WRONG_ZERO = "a, b = map(int, input().split())\nprint(a + b if a else -1)\n"
NOT_WRONG = "a, b = map(int, input().split())\nprint(b + a)\n"
# Correct, ~0.1-0.5 s of CPU per test: over a 0.05 s default, far under the probe.
BUSY_SUM = "a, b = map(int, input().split())\nx = 0\nfor i in range(3_000_000):\n    x += i\nprint(a + b)\n"

EV = EvaluatorConfig(workers=2)  # the params' evaluator section, as the stage reads it


def case(a: int, b: int, kind: str = "private") -> TestCase:
    return TestCase(f"{a} {b}\n", f"{a + b}\n", kind)


def problem(pid: str, tests, refs, wrong=(), **kw) -> Problem:
    return Problem(id=pid, source="t", statement="Print a + b.", style="stdio", tests=list(tests),
                   reference_solutions=[ReferenceSolution("python", r) for r in refs],
                   wrong_solutions=[WrongSolution("python", w, label) for w, label in wrong], **kw)


@pytest.fixture
def cfg(tmp_path):
    return ValidateConfig(min_tests=2, cache_path=str(tmp_path / "cache.sqlite"))


def rows(res, pid, role="reference", index=None):
    return [r for r in res.report if r["problem_id"] == pid and r["role"] == role
            and (index is None or r["reference_index"] == index)]


# --- (1) a slow reference does not vote -------------------------------------------------------------------------
def test_slow_correct_reference_keeps_the_large_tests(cfg):
    small = [case(1, 2, "public"), case(3, 4), case(5, 6)]
    large = [case(10**4 + i, i) for i in range(4)]  # the slow reference never finishes these
    p = problem("t/slow", small + large, [SUM, SLOW_SUM], time_limit_s=0.5)
    res = validate_problems([p], cfg, evaluator=EV, progress=False)
    (out,) = res.kept
    v = out.extra["validation"]
    # the fast reference alone votes on the large tests: all 7 valid (the old rule made 4 ambiguous)
    assert (v["tests_valid"], v["tests_ambiguous"], v["tests_kept"]) == (7, 0, 7)
    assert v["references_too_slow"] == [0, 4]
    slow_rows = rows(res, "t/slow", index=1)
    assert {r["test_index"]: r["status"] for r in slow_rows if r["test_index"] >= 3} == dict.fromkeys(range(3, 7), "TLE")
    # tests run smallest first: after 2 TLEs in a row the two larger ones are presumed, never run
    assert sum(r["presumed"] for r in slow_rows) == 2
    assert res.stats.as_dict()["this_run"]["runs_presumed_too_slow"] == 2
    assert res.stats.as_dict()["references"]["references_too_slow_runs"] == 4


def test_a_test_no_reference_finishes_is_unverified_slow_and_kept_or_dropped(cfg):
    tests = [case(1, 2, "public"), case(3, 4), case(5, 6), case(10**4, 1)]
    p = problem("t/allslow", tests, [SLOW_SUM], time_limit_s=0.5)
    keep = validate_problems([p], cfg, evaluator=EV, progress=False)
    v = keep.kept[0].extra["validation"]
    assert (v["tests_valid"], v["tests_unverified_slow"], v["tests_broken"], v["tests_kept"]) == (3, 1, 0, 4)
    t = keep.stats.as_dict()["tests"]
    assert t["tests_in"] == t["tests_valid"] + t["tests_broken"] + t["tests_ambiguous"] + t["tests_nondeterministic"] \
        + t["tests_unverified"] + t["tests_unverified_slow"]
    assert t["tests_valid"] + t["tests_unverified"] + t["tests_unverified_slow"] == \
        t["tests_kept"] + t["tests_oversize"] + t["tests_capped"]
    drop = ValidateConfig(min_tests=2, cache_path=cfg.cache_path, unverified_slow="drop")
    dropped = validate_problems([p], drop, evaluator=EV, progress=False)
    v = dropped.kept[0].extra["validation"]
    assert v["tests_kept"] == 3
    assert v["tests_dropped"] == [{"index": 3, "reason": "unverified_slow",
                                   "why": "too slow for every reference (unverified_slow: drop)"}]
    assert dropped.stats.as_dict()["this_run"]["runs_executed"] == 0  # same limit: every run came from the cache
    # results are keyed by the limit too: another limit runs again (the small tests, and the large one)
    other = validate_problems([problem("t/allslow", tests, [SLOW_SUM], time_limit_s=0.6)], drop, evaluator=EV, progress=False)
    assert other.stats.as_dict()["this_run"]["runs_executed"] == 4
    with pytest.raises(ValueError, match="unverified_slow"):
        ValidateConfig(unverified_slow="maybe")


# --- (2) limits the source did not state --------------------------------------------------------------------------
def test_derive_time_limit_follows_problemtools():
    cfg = ValidateConfig()
    # exact = 0.31 x 5 = 1.55 -> timelim = max(1, int(0.5 + 1.55)) = 2; margin = max(3, int(0.5 + 3.1)) = 3
    assert derive_time_limit(0.31, cfg) == {"exact_s": 1.55, "derived_s": 2.0, "tle_margin_s": 3.0}
    assert derive_time_limit(0.01, cfg)["derived_s"] == 1.0  # never below 1 s
    assert derive_time_limit(0.9, cfg)["derived_s"] == 5.0  # int(0.5 + 4.5)
    # 2023-07 defaults: ac_to_time_limit 2.0, time_limit_to_tle 1.5
    new = ValidateConfig(time_multiplier=2.0, time_safety_margin=1.5)
    assert derive_time_limit(1.3, new) == {"exact_s": 2.6, "derived_s": 3.0, "tle_margin_s": 4.0}
    # a machine timeout_scale x slower than the judge: its times are scaled back before the rule
    assert derive_time_limit(0.62, ValidateConfig(), timeout_scale=2.0)["derived_s"] == 2.0


def test_problem_without_a_stated_limit_gets_one_from_its_references(cfg):
    tests = [case(i, i + 1, "public" if i == 0 else "private") for i in range(3)]
    # the source's default (0.05 s) is far too tight for this reference, but it was not stated
    unstated = problem("t/nolimit", tests, [BUSY_SUM], time_limit_s=0.05, meta={"time_limit_stated": False})
    stated = problem("t/stated", tests, [BUSY_SUM], time_limit_s=0.05)
    res = validate_problems([unstated, stated], cfg, evaluator=EV, progress=False)
    kept = {p.id: p for p in res.kept}
    # a stated limit stays, however tight: the reference finishes nothing -> unverified_slow (kept)
    v = kept["t/stated"].extra["validation"]
    assert (v["tests_unverified_slow"], v["references_too_slow"], kept["t/stated"].time_limit_s) == (3, [3], 0.05)
    assert v["time_limit"]["rule"] == "stated by the source"
    out = kept["t/nolimit"]
    lim = out.extra["validation"]["time_limit"]
    assert lim["stated"] is False and lim["run_s"] == cfg.probe_time_limit_s and "problemtools" in lim["rule"]
    (timing,) = res.time_limits  # measured: beside the problems, never in them
    assert lim["derived"] is True and "slowest_reference_s" not in lim and "derived_s" not in lim
    assert timing["slowest_reference_s"] > 0.05  # measured under the generous probe limit
    assert lim["final_s"] == timing["derived_s"] == max(1.0, float(int(0.5 + 5 * timing["slowest_reference_s"])))
    assert out.time_limit_s == lim["final_s"]
    assert out.extra["validation"]["tests_valid"] == 3


def test_a_derived_limit_never_falls_below_a_stated_one(cfg):
    tests = [case(i, 1) for i in range(3)]
    p = problem("t/stated3", tests, [SUM], time_limit_s=3.0)
    every = ValidateConfig(min_tests=2, cache_path=cfg.cache_path, derive_time_limit="all")
    res = validate_problems([p], every, evaluator=EV, progress=False)
    (out,) = res.kept
    lim = out.extra["validation"]["time_limit"]
    assert res.time_limits[0]["derived_s"] == 1.0 and lim["final_s"] == 3.0 and out.time_limit_s == 3.0
    assert "never below the stated limit" in lim["rule"]


# --- (3) wrong solutions ----------------------------------------------------------------------------------------
def cover_problem() -> Problem:
    tests = [case(1, 1, "public"), case(0, 5)] + [case(10**k, 7) for k in (3, 4, 5, 6)] + [case(10**9, 3)]
    return problem("t/cover", tests, [SUM], wrong=[(WRONG_LARGE, "wrong_answer"), (WRONG_ZERO, "wrong_answer"),
                                                   (NOT_WRONG, "wrong_answer")])


def test_cap_keeps_a_cover_of_the_caught_wrong_solutions(cfg):
    p = cover_problem()
    capped = ValidateConfig(min_tests=2, cache_path=cfg.cache_path, max_tests=3)
    res = validate_problems([p], capped, evaluator=EV, progress=False)
    (out,) = res.kept
    v = out.extra["validation"]
    # the largest input (10**9) catches WRONG_LARGE, only the small edge case a == 0 catches WRONG_ZERO;
    # the public test comes next: without the cover, public + the two largest would lose WRONG_ZERO
    assert sorted(t.input for t in out.tests) == sorted(["1 1\n", "0 5\n", f"{10**9} 3\n"])
    assert (v["wrong_total"], v["wrong_ran"], v["wrong_caught_by_candidates"], v["wrong_caught"]) == (3, 3, 2, 2)
    assert v["wrong_lost_to_caps"] == 0 and v["wrong_uncaught_labels"] == ["wrong_answer"]
    assert [d["reason"] for d in v["tests_dropped"]] == ["count_cap"] * 4
    # each wrong solution stops at its first catch (smallest input first): WRONG_LARGE at the largest
    # test, WRONG_ZERO at "0 5" (the 2nd), NOT_WRONG never caught (every candidate)
    assert [len(rows(res, "t/cover", "wrong", i)) for i in range(3)] == [7, 2, 7]
    w = res.stats.as_dict()["wrong_solutions"]
    assert (w["total"], w["ran"], w["caught"], w["share_caught"]) == (3, 3, 2, round(2 / 3, 4))
    # a cap too small for the cover: what it cost is reported
    one = ValidateConfig(min_tests=1, cache_path=cfg.cache_path, max_tests=1)
    v1 = validate_problems([p], one, evaluator=EV, progress=False).kept[0].extra["validation"]
    assert (v1["wrong_caught"], v1["wrong_lost_to_caps"]) == (1, 1)


def test_without_a_cap_wrong_solutions_stop_at_their_first_catch(cfg):
    p = cover_problem()
    res = validate_problems([p], cfg, evaluator=EV, progress=False)
    v = res.kept[0].extra["validation"]
    assert (v["tests_kept"], v["wrong_caught"], v["wrong_lost_to_caps"]) == (7, 2, 0)
    # smallest input first: WRONG_ZERO is caught by "0 5" (the 2nd smallest) and stops there
    assert len(rows(res, "t/cover", "wrong", 1)) == 2
    assert len(rows(res, "t/cover", "wrong", 2)) == 7  # never caught: ran everywhere


def test_weak_tests_are_rejected_by_min_wrong_caught(cfg):
    p = cover_problem()
    strict = ValidateConfig(min_tests=2, cache_path=cfg.cache_path, min_wrong_caught=0.75)
    res = validate_problems([p], strict, evaluator=EV, progress=False)
    assert res.kept == []
    (_, reason), = res.rejects
    assert reason.startswith("weak tests: the kept tests catch 2 of 3 known-wrong solutions")
    assert res.stats.as_dict()["rejected_by_reason"] == {"weak tests": 1}
    lenient = ValidateConfig(min_tests=2, cache_path=cfg.cache_path, min_wrong_caught=0.6)
    assert len(validate_problems([p], lenient, evaluator=EV, progress=False).kept) == 1
    with pytest.raises(ValueError, match="min_wrong_caught"):
        ValidateConfig(min_wrong_caught=1.5)


# --- the choice itself ---------------------------------------------------------------------------------------------
def test_greedy_cover_and_choice_order():
    tests = [TestCase("p", "1", "public")] + [TestCase("x" * n, "y", "private") for n in (1, 2, 3, 4)]
    catches = {0: {1, 2}, 1: {2}, 2: {4}, 3: set()}
    assert greedy_cover([0, 1, 2, 3, 4], catches, tests, 10) == [2, 4]
    assert greedy_cover([0, 1, 2, 3, 4], catches, tests, 1) == [2]
    choice = choose_tests(tests, [0, 1, 2, 3, 4], ValidateConfig(max_tests=3), catches)
    assert choice.kept == [0, 2, 4] and choice.dropped == {3: "count_cap", 1: "count_cap"}
    # the byte cap drops private tests outside the cover first
    tight = choose_tests(tests, [0, 1, 2, 3, 4], ValidateConfig(max_tests=5, max_total_bytes=11), catches)
    assert tight.kept == [0, 2, 4] and tight.dropped == {3: "byte_cap", 1: "byte_cap"}


def test_stage_writes_the_new_columns_and_the_card_states_the_figure(tmp_path, cfg):
    import json

    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from microcoder.pipeline import io
    from microcoder.pipeline.card import strength_section
    from microcoder.pipeline.cli import app

    src, out = tmp_path / "in.parquet", tmp_path / "out"
    io.write_problems(src, [cover_problem(), problem("t/nolimit", [case(i, 1) for i in range(3)], [SUM],
                                                     meta={"time_limit_stated": False})])
    res = CliRunner().invoke(app, ["validate", "--problems", str(src), "--out-dir", str(out), "--params",
                                   str(tmp_path / "none.yaml"), "--set", f"cache_path={cfg.cache_path}",
                                   "--set", "min_tests=2", "--set", "max_tests=3", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "validate: test strength TPR 100.0% (2/2), TNR 66.7% (2/3)" in res.output, res.output
    report = pq.read_table(out / "report.parquet").to_pylist()
    assert {r["role"] for r in report} == {"reference", "wrong"}
    kept = {p.id: p for p in io.read_problems(out / "problems.parquet")}
    v = kept["t/cover"].extra["validation"]
    assert v["wrong_caught"] == 2 and [d["reason"] for d in v["tests_dropped"]] == ["count_cap"] * 4
    assert (v["strength"]["tpr"], v["strength"]["tnr"]) == (1.0, 0.6667)  # the column keeps the record
    assert kept["t/nolimit"].extra["validation"]["strength"]["tnr"] is None  # no wrong solution: no ratio
    assert kept["t/nolimit"].time_limit_s == 1.0 and kept["t/nolimit"].extra["validation"]["time_limit"]["derived"]
    (timing,) = [json.loads(line) for line in (out / "time_limits.jsonl").read_text().splitlines()]
    assert (timing["id"], timing["derived_s"], timing["pinned"]) == ("t/nolimit", 1.0, False)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["time_limits"] == {"capped": 0, "derived": 1, "derived_with_problem_multipliers": 0,
                                    "pinned": 0, "raised_above_stated": 0, "stated": 1}
    section = strength_section(stats, None)
    assert section.startswith("## Test strength") and "over its 2 kept problems" in section
    assert "Kept tests" in section and "TPR 100.0% (2/2), TNR 66.7% (2/3)" in section
    # per source and difficulty, held out first: one reference per problem, so no held-out TPR (issue 36)
    assert "| t | n/a (0) | 33.3% (1/3) | 100.0% (2/2) | 66.7% (2/3) |" in section
    assert "| unknown | n/a (0) | 33.3% (1/3) | 100.0% (2/2) | 66.7% (2/3) |" in section
    assert section.index("**Held out**") < section.index("Kept tests (validate stage, in-sample")
    assert "the caps cost 0 caught known-wrong solution(s)" in section
    # stats written before TPR/TNR: the known-wrong sentence they support; nothing measured: said so
    old = strength_section({"wrong_solutions": stats["wrong_solutions"]}, None)
    assert "the kept tests catch 2 of the 3 that ran (66.7%)" in old and "cost 0 of them" in old
    assert "No test-strength figures" in strength_section({"wrong_solutions": {"ran": 0}}, None)
    assert "No test-strength figures" in strength_section(None, None)


def test_under_a_probe_limit_one_timeout_is_enough(cfg):
    """Where the limit is to be derived, references run under the generous probe: being over it is far
    over any limit that could be derived, so one TLE presumes the larger tests too slow."""
    tests = [case(1, 2, "public"), case(3, 4)] + [case(10**4 + i, i) for i in range(4)]
    p = problem("t/probe", tests, [SUM, SLOW_SUM], meta={"time_limit_stated": False})
    probe = ValidateConfig(min_tests=2, cache_path=cfg.cache_path, probe_time_limit_s=0.5)
    res = validate_problems([p], probe, evaluator=EV, progress=False)
    v = res.kept[0].extra["validation"]
    assert (v["tests_valid"], v["references_too_slow"], v["time_limit"]["run_s"], v["time_limit"]["final_s"]) == \
        (6, [0, 4], 0.5, 1.0)
    assert sum(r["presumed"] for r in rows(res, "t/probe", index=1)) == 3


def test_stream_order_presumption_and_what_it_caches():
    """Unit test of the run bookkeeping, with verdicts made up (no evaluator): smallest input first,
    presumed after two TLEs in a row, a wall-clock TLE (busy machine) and an SE never cached."""
    from microcoder.pipeline.evaluator.programs import Stream
    from microcoder.pipeline.schema import TestResult, Verdict

    tests = [TestCase("x" * n, "1") for n in (5, 1, 4, 2, 3, 6)]
    s = Stream("s", problem("t/s", tests, [SUM]), "python", SUM, order=[1, 3, 4, 2, 0, 5],
               keys={i: f"k{i}" for i in range(6)}, chunk=3)
    chunk = s.next_chunk()
    assert chunk == [1, 3, 4]
    verdict = Verdict("t/s", "s", "TLE", tests=[
        TestResult("AC", 0.1), TestResult("SE", diff="judge failed"),
        TestResult("TLE", 0.4, diff="wall-clock limit exceeded (0.40 s CPU)")])
    assert [k for k, _ in s.record(chunk, verdict)] == ["k1"]
    assert s.next_chunk() == [2, 0, 5]
    fresh = s.record([2, 0, 5], Verdict("t/s", "s", "TLE", tests=[TestResult("TLE", 1.0, diff="CPU time 1.00 s > limit 0.50 s")]))
    assert [k for k, _ in fresh] == ["k2"]  # a CPU-limit TLE is the program's: cached
    assert s.next_chunk() is None  # two TLEs in a row (tests 4, 2): the larger 0 and 5 are presumed
    assert [i for i, r in s.results.items() if r.get("presumed")] == [0, 5]
