from __future__ import annotations

import json
from dataclasses import replace

import pyarrow.parquet as pq
import pytest

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.schema import Checker, Problem, ReferenceSolution, TestCase
from microcoder.pipeline.validate import ValidateConfig, cap_tests, classify_test, validate_problems

SUM = "a, b = map(int, input().split())\nprint(a + b)\n"

EV = EvaluatorConfig(workers=2)  # the params' evaluator section, as the stage reads it


def stdio_problem(pid: str, tests, refs, **kw) -> Problem:
    kw.setdefault("statement", "Print a + b.")
    return Problem(id=pid, source="t", style="stdio", tests=tests, reference_solutions=refs, **kw)


def sum_tests(n: int, wrong: int | None = None) -> list[TestCase]:
    tests = []
    for i in range(n):
        out = str(i + 2 * i + 1)
        if i == wrong:
            out = "999"
        tests.append(TestCase(f"{i} {2 * i + 1}\n", out + "\n", "public" if i == 0 else "private"))
    return tests


@pytest.mark.parametrize("statuses,policy,expected", [
    (["AC", "AC"], "all", "valid"),
    (["WA", "TLE"], "all", "broken"),
    (["AC", "WA"], "all", "ambiguous"),
    (["AC", "AC", "WA"], "majority", "valid"),
    (["AC", "WA"], "majority", "ambiguous"),
])
def test_classify(statuses, policy, expected):
    assert classify_test(statuses, policy) == expected


def test_caps_keep_public_then_largest_private():
    tests = [TestCase("1", "1", "public")] + [TestCase("x" * n, "y", "private") for n in (5, 50, 20, 10)]
    cfg = ValidateConfig(max_tests=3, max_test_bytes=40, max_total_bytes=10_000)
    kept, oversize, capped = cap_tests(tests, list(range(5)), cfg)
    assert oversize == 1  # the 50-byte input
    assert kept == [0, 3, 4]  # public + the two largest remaining private inputs
    assert capped == 1
    kept, _, capped = cap_tests(tests, [0, 1, 3, 4], ValidateConfig(max_tests=10, max_total_bytes=20))
    assert kept == [0, 1, 4] and capped == 1  # dropping the 21-byte test fits 19 <= 20


def test_invalid_policy_is_a_clear_error():
    with pytest.raises(ValueError, match="policy"):
        ValidateConfig(policy="some")


@pytest.fixture
def cfg(tmp_path):
    return ValidateConfig(min_tests=3, cache_path=str(tmp_path / "cache.sqlite"))


def test_wrong_expected_output_is_dropped_and_reported(cfg):
    p = stdio_problem("t/sum", sum_tests(6, wrong=3), [ReferenceSolution("python", SUM)])
    res = validate_problems([p], cfg, evaluator=EV, progress=False)
    assert [q.id for q in res.kept] == ["t/sum"]
    v = res.kept[0].extra["validation"]
    assert (v["tests_in"], v["tests_valid"], v["tests_broken"], v["tests_kept"]) == (6, 5, 1, 5)
    assert "999" not in {t.output.strip() for t in res.kept[0].tests}
    broken = [r for r in res.report if r["test_class"] == "broken"]
    assert len(broken) == 1 and broken[0]["test_index"] == 3 and broken[0]["actual"].strip() == "10"


def test_disagreeing_references_make_tests_ambiguous(cfg):
    wrong_ref = "a, b = map(int, input().split())\nprint(a + b if a < 3 else 0)\n"
    p = stdio_problem("t/amb", sum_tests(6), [ReferenceSolution("python", SUM), ReferenceSolution("python", wrong_ref)])
    res = validate_problems([p], cfg, evaluator=EV, progress=False)
    v = res.kept[0].extra["validation"]
    assert v["tests_ambiguous"] == 3 and v["tests_valid"] == 3
    maj = validate_problems([p], ValidateConfig(policy="majority", min_tests=3, cache_path=cfg.cache_path), evaluator=EV, progress=False)
    assert maj.kept[0].extra["validation"]["tests_ambiguous"] == 3  # 1 of 2 is not a majority


def test_problem_below_min_tests_is_rejected_and_unverified_is_kept_on_request(cfg):
    few = stdio_problem("t/few", sum_tests(3, wrong=0), [ReferenceSolution("python", SUM)])
    noref = stdio_problem("t/noref", sum_tests(4), [])
    cerr = stdio_problem("t/ce", sum_tests(4), [ReferenceSolution("cpp", "int main( {")])
    res = validate_problems([few, noref, cerr], replace(cfg, unverified="keep"), evaluator=EV, progress=False)
    assert [p.id for p in res.kept] == ["t/noref"]
    assert res.kept[0].extra["validation"]["status"] == "unverified"
    reasons = {p.id: r for p, r in res.rejects}
    assert reasons["t/few"].startswith("only 2 valid tests")
    assert "CE" in reasons["t/ce"]
    # counted by category, without the problem's particulars
    assert res.stats.as_dict()["rejected_by_reason"] == {"no reference solution compiled and ran": 1,
                                                         "too few valid tests after validation and caps": 1}
    # the default fails closed: nobody verified those tests; the reason says how to keep them
    rej = validate_problems([noref], ValidateConfig(cache_path=cfg.cache_path), evaluator=EV, progress=False)
    assert rej.rejects[0][1].startswith("no reference solution")
    assert "--set validate.unverified=keep" in rej.rejects[0][1]
    assert rej.stats.as_dict()["rejected_by_reason"] == {"no reference solution to verify the tests": 1}


def test_float_checker_and_functional(cfg):
    flt = stdio_problem("t/half", [TestCase(f"{i}\n", f"{i / 3:.3f}\n") for i in range(1, 5)],
                        [ReferenceSolution("python", "print(int(input()) / 3)")],
                        checker=Checker(kind="float", rel_tol=1e-3, abs_tol=1e-3))
    fn = Problem(id="t/fn", source="t", statement="add", style="functional", entry_point="add",
                 tests=[TestCase(f"{i}\n{i}", json.dumps(2 * i)) for i in range(4)],
                 reference_solutions=[ReferenceSolution("python", "def add(a, b):\n    return a + b\n")])
    res = validate_problems([flt, fn], cfg, evaluator=EV, progress=False)
    assert sorted(p.id for p in res.kept) == ["t/fn", "t/half"], res.rejects


def test_cache_makes_rerun_skip_execution(cfg, monkeypatch):
    p = stdio_problem("t/sum", sum_tests(5), [ReferenceSolution("python", SUM)])
    first = validate_problems([p], cfg, evaluator=EV, progress=False)
    import microcoder.pipeline.evaluator as ev

    def boom(*a, **k):
        raise AssertionError("the evaluator must not run on a fully cached problem")

    monkeypatch.setattr(ev, "Evaluator", boom)
    again = validate_problems([p], cfg, evaluator=EV, progress=False)
    # stats.json now records the run itself (this_run: wall time, runs executed / cached): the rest is equal
    assert again.kept == first.kept
    assert {k: v for k, v in again.stats.as_dict().items() if k != "this_run"} == {k: v for k, v in first.stats.as_dict().items() if k != "this_run"}
    assert again.stats.as_dict()["this_run"]["runs_executed"] == 0 and again.stats.as_dict()["this_run"]["runs_cached"] == 5



def test_a_change_of_evaluator_code_rejudges_instead_of_replaying_the_cache(cfg, monkeypatch):
    """Issue 24, item 10: the cache key holds the evaluator's code, so a fix to the evaluator re-runs
    what it judged before the fix (the same settings and problem notwithstanding)."""
    from microcoder.pipeline.evaluator import verdict_key as vk

    def runs(res) -> tuple[int, int]:
        this_run = res.stats.as_dict()["this_run"]
        return this_run["runs_executed"], this_run["runs_cached"]

    p = stdio_problem("t/sum", sum_tests(5), [ReferenceSolution("python", SUM)])
    assert runs(validate_problems([p], cfg, evaluator=EV, progress=False)) == (5, 0)
    assert runs(validate_problems([p], cfg, evaluator=EV, progress=False)) == (0, 5)
    # raising=False: on code without a code digest, the assert below shows the stale replay
    monkeypatch.setattr(vk, "code_digest", lambda: "a-fixed-evaluator", raising=False)
    fixed = validate_problems([p], cfg, evaluator=EV, progress=False)
    assert runs(fixed) == (5, 0) and [q.id for q in fixed.kept] == ["t/sum"]
    assert runs(validate_problems([p], cfg, evaluator=EV, progress=False)) == (0, 5)  # the fixed code's rows

def test_stats_account_for_every_test(cfg):
    probs = [stdio_problem(f"t/{i}", sum_tests(6, wrong=i), [ReferenceSolution("python", SUM)]) for i in range(3)]
    probs.append(stdio_problem("t/none", sum_tests(4), []))
    s = validate_problems(probs, replace(cfg, unverified="keep"), evaluator=EV, progress=False).stats.as_dict()
    t = s["tests"]
    assert t["tests_in"] == t["tests_valid"] + t["tests_broken"] + t["tests_ambiguous"] + t["tests_nondeterministic"] + t["tests_unverified"]
    assert t["tests_valid"] + t["tests_unverified"] == t["tests_kept"] + t["tests_oversize"] + t["tests_capped"]
    assert s["read"] == s["kept"] + s["rejected"]


def test_stage_command_writes_all_outputs(tmp_path, cfg):
    from typer.testing import CliRunner

    from microcoder.pipeline import io
    from microcoder.pipeline.cli import app

    src = tmp_path / "in.parquet"
    io.write_problems(src, [stdio_problem("t/sum", sum_tests(6, wrong=2), [ReferenceSolution("python", SUM)])])
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["validate", "--problems", str(src), "--out-dir", str(out), "--params",
                                   str(tmp_path / "none.yaml"), "--set", f"cache_path={cfg.cache_path}",
                                   "--set", "min_tests=3", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert len(io.read_problems(out / "problems.parquet")) == 1
    assert pq.read_table(out / "report.parquet").num_rows == 6
    assert json.loads((out / "stats.json").read_text())["tests"]["tests_broken"] == 1
    assert (out / "rejects.jsonl").read_text() == ""


def _cli(*args: str):
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    return CliRunner().invoke(app, ["validate", *args, "--no-progress"])


def test_stage_reads_tolerantly_and_writes_the_shared_vocabulary(tmp_path, cfg):
    """A record that is not a usable problem is a reject with its reason (counted), not a crash;
    stats.json holds the shared vocabulary and figures only, settings.json the settings."""
    from microcoder.pipeline import io

    src, out = tmp_path / "in.jsonl", tmp_path / "out"
    good = stdio_problem("t/sum", sum_tests(4), [ReferenceSolution("python", SUM)]).to_dict()
    io.write_jsonl(src, [good, {"id": "t/bad", "style": "stdio"}, good])
    with src.open("a") as f:
        f.write("not json\n")
    res = _cli("--problems", str(src), "--out-dir", str(out), "--params", str(tmp_path / "none.yaml"),
               "--set", f"cache_path={cfg.cache_path}", "--set", "min_tests=3", "--set", "evaluator.workers=2")
    assert res.exit_code == 0, res.output
    assert "validate: read 4, kept 1 (0 unverified), rejected 3" in res.output
    stats = json.loads((out / "stats.json").read_text())
    assert (stats["unit"], stats["read"], stats["kept"], stats["rejected"]) == ("problems", 4, 1, 3)
    assert stats["rejected_by_reason"] == {"duplicate id": 1, "invalid record": 1, "unreadable record": 1}
    assert "config" not in stats and "settings" not in stats and stats["tests"]["tests_valid"] == 4
    settings = json.loads((out / "settings.json").read_text())
    assert settings["min_tests"] == 3 and settings["executor"] == "local" and settings["evaluator"]["workers"] == 2
    rejects = [json.loads(line) for line in (out / "rejects.jsonl").read_text().splitlines()]
    assert [(r["id"], r["reason"].split(":")[0]) for r in rejects] == [
        ("t/bad", "invalid record"), ("t/sum", "duplicate id"), (None, "unreadable record")]


def test_stage_user_errors_are_one_line_exit_2(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("")
    for args, needle in (
        (["--problems", str(tmp_path / "missing.parquet")], "does not exist"),
        (["--problems", str(src), "--set", "bogus_key=1"], "bogus_key"),
        (["--problems", str(src), "--set", "workers=2"], "unknown validate params ['workers']"),
        (["--problems", str(src), "--set", "evaluator.nope=1"], "nope"),
        (["--problems", str(src), "--set", "executor=spark"], "executor"),
    ):
        res = _cli(*args, "--out-dir", str(tmp_path / "out"), "--params", str(tmp_path / "none.yaml"))
        assert res.exit_code == 2, (args, res.output)
        assert needle in res.output and "Traceback" not in res.output, res.output
        assert len(res.output.strip().splitlines()) == 1, res.output
    assert not (tmp_path / "out").exists()


def test_help_lists_the_config_fields():
    res = _cli("--help")
    assert res.exit_code == 0
    for name in ("policy", "min_tests", "max_tests", "executor", "ray_address", "evaluator"):
        assert name in res.output
    assert "workers" not in res.output.split("Params:")[1].split("Judging")[0]


# Correct, ~0.1-0.5 s of CPU per test: far over a 0.05 s limit, far under it x 100.
BUSY_SUM = "a, b = map(int, input().split())\nx = 0\nfor i in range(3_000_000):\n    x += i\nprint(a + b)\n"


def test_the_evaluator_section_judges_and_keys_the_cache(tmp_path):
    """The evaluator's timeout_scale decides verdicts (a 0.05 s limit x 100 lets a busy reference
    finish): its settings are in the cache key, its worker count is not."""
    p = stdio_problem("t/busy", sum_tests(3), [ReferenceSolution("python", BUSY_SUM)], time_limit_s=0.05)
    cfg = ValidateConfig(min_tests=3, cache_path=str(tmp_path / "c.sqlite"))
    tight = validate_problems([p], cfg, evaluator=EV, progress=False)
    assert tight.kept[0].extra["validation"]["tests_unverified_slow"] == 3
    loose = validate_problems([p], cfg, evaluator=EvaluatorConfig(workers=2, timeout_scale=100.0), progress=False)
    v = loose.kept[0].extra["validation"]
    assert (v["tests_valid"], loose.stats.as_dict()["this_run"]["runs_executed"]) == (3, 3)
    again = validate_problems([p], cfg, evaluator=EvaluatorConfig(workers=1, timeout_scale=100.0), progress=False)
    assert again.stats.as_dict()["this_run"]["runs_executed"] == 0  # workers changes no verdict
    flags = EvaluatorConfig(workers=2, timeout_scale=100.0, wall_factor=3.0)
    assert validate_problems([p], cfg, evaluator=flags, progress=False).stats.as_dict()["this_run"]["runs_executed"] == 3


def test_seed_corpus_validates_as_planted(tmp_path):
    """The seed's planted wrong outputs are the only broken tests; float and checker problems pass;
    the any-answer problem without a checker is rejected."""
    from pathlib import Path

    from microcoder.pipeline.io import read_jsonl
    from microcoder.pipeline.schema import validate_problem

    seed = Path(__file__).resolve().parents[1] / "data" / "seed" / "problems.jsonl"

    problems = [Problem.from_dict(r) for _, r, _ in read_jsonl(seed) if r and not validate_problem(r)]
    res = validate_problems(problems, ValidateConfig(cache_path=str(tmp_path / "c.sqlite")), evaluator=EV, progress=False)
    planted = {p.id: p.meta["test_index"] for p in problems if p.meta.get("planted") == "wrong_output"}
    broken = {(r["problem_id"], r["test_index"]) for r in res.report if r["test_class"] == "broken"}
    assert broken == set(planted.items())
    # the one planted rejection: several answers accepted, no checker program, so never run
    assert [(p.id, "no checker program" in reason) for p, reason in res.rejects] == [("seed/any-proper-divisor", True)]
    assert not any(r["problem_id"] == "seed/any-proper-divisor" for r in res.report)
    kept = {p.id: p for p in res.kept}
    for pid in ("seed/closest-pair-distance", "seed/average-speed", "seed/pair-with-sum"):
        v = kept[pid].extra["validation"]
        assert v["tests_valid"] == v["tests_in"] and v["references_ok"] >= 1
    assert {r["status"] for r in res.report if r["problem_id"] == "seed/pair-with-sum"} == {"AC"}


def test_interactive_problems_are_rejected_without_running(cfg):
    p = stdio_problem("t/inter", sum_tests(6), [ReferenceSolution("python", SUM)], tags=["interactive"])
    res = validate_problems([p], cfg, evaluator=EV, progress=False)
    assert res.kept == [] and res.rejects[0][1].startswith("interactive problem")
    assert res.stats.as_dict()["read"] == 1 and res.stats.as_dict()["rejected"] == 1
    assert res.stats.as_dict()["rejected_by_reason"] == {"interactive problem without an interactor program": 1}


def test_the_stage_counts_its_rejects_by_category_and_keeps_their_full_reasons(tmp_path, cfg):
    """stats.json counts validate's own rejects under their categories (not the reasons' heads),
    rejects.jsonl keeps each whole reason, after the reader's rejects."""
    from dataclasses import replace

    from microcoder.pipeline import io
    from microcoder.pipeline.validate import Validate

    inter = stdio_problem("t/inter", sum_tests(6), [ReferenceSolution("python", SUM)], tags=["interactive"])
    noref = stdio_problem("t/noref", sum_tests(6), [])
    src = tmp_path / "in.jsonl"
    io.write_jsonl(src, [inter.to_dict(), {"id": "t/bad", "style": "stdio"}, noref.to_dict()])
    stats = Validate().run(replace(cfg, unverified="reject"), src, tmp_path / "out", evaluator=EV, progress=False)
    assert (stats["read"], stats["kept"], stats["rejected"]) == (3, 0, 3)
    assert stats["rejected_by_reason"] == {"interactive problem without an interactor program": 1, "invalid record": 1,
                                           "no reference solution to verify the tests": 1}
    rejects = [json.loads(line) for line in (tmp_path / "out" / "rejects.jsonl").read_text().splitlines()]
    assert [(r["id"], r["stage"]) for r in rejects] == [("t/bad", "validate"), ("t/noref", "validate"),
                                                        ("t/inter", "validate")]
    assert rejects[1]["reason"] == ("no reference solution to verify the tests (unverified: reject; --set "
                                    "validate.unverified=keep keeps them, marked unverified)")
    assert rejects[2]["reason"].startswith("interactive problem: it has no interactor program")
    assert pq.read_table(tmp_path / "out" / "report.parquet").num_rows == 0


ANY_PAIR = "Print a + b. If there are multiple answers, print any of them."


def test_multiple_answer_problems_without_a_checker_program_are_rejected_unrun(cfg, monkeypatch):
    bare = stdio_problem("t/any", sum_tests(6), [ReferenceSolution("python", SUM)], statement=ANY_PAIR)
    checked = stdio_problem("t/any-checked", sum_tests(6), [ReferenceSolution("python", SUM)], statement=ANY_PAIR,
                            checker=Checker(kind="program", language="python", protocol="testlib", program=(
                                "import sys\ninp, out, ans = sys.argv[1:4]\n"
                                "sys.exit(0 if open(out).read().split() == open(ans).read().split() else 1)\n")))
    res = validate_problems([bare, checked], cfg, evaluator=EV, progress=False)
    assert [p.id for p in res.kept] == ["t/any-checked"]
    assert res.kept[0].extra["validation"]["tests_valid"] == 6
    (rejected, reason), = res.rejects
    assert rejected.id == "t/any" and "no checker program" in reason and "multiple_answers: reject" in reason
    s = res.stats.as_dict()
    assert s["read"] == 2 and s["rejected_by_reason"] == {"multiple answers without a checker program": 1}
    assert s["tests"]["tests_in"] == 12 and s["tests"]["tests_multiple_answers"] == 6
    import microcoder.pipeline.evaluator as ev

    def boom(*a, **k):
        raise AssertionError("a rejected multiple-answer problem must not be run")

    with monkeypatch.context() as m:
        m.setattr(ev, "Evaluator", boom)
        assert validate_problems([bare], cfg, evaluator=EV, progress=False).kept == []
    # kept as before when asked to
    keep = ValidateConfig(min_tests=3, cache_path=cfg.cache_path, multiple_answers="keep")
    assert [p.id for p in validate_problems([bare], keep, evaluator=EV, progress=False).kept] == ["t/any"]
    with pytest.raises(ValueError, match="multiple_answers"):
        ValidateConfig(multiple_answers="sometimes")


def test_the_cache_key_takes_every_verdict_setting_once():
    """params.yaml's `output_limit_mb: 64` (built as 64.0) and the default are one setting; the
    workers are not a verdict setting; compiler flags are."""
    from dataclasses import replace

    from microcoder.pipeline.evaluator.verdict_key import verdict_key
    from microcoder.pipeline.stage import build_config

    default = EvaluatorConfig()
    assert verdict_key(build_config(EvaluatorConfig, {"output_limit_mb": 64, "workers": 3}, "evaluator")) == \
        verdict_key(default)
    assert verdict_key(replace(default, cpp_flags=["-O0"])) != verdict_key(default)
    assert verdict_key(replace(default, syscall_filter=False)) != verdict_key(default)
