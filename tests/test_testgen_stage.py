"""The testgen stage end to end through the sandboxed evaluator: expected outputs from references,
dropped inputs (crash, disagreement, timeout), pass-through accounting, provenance, mutants, the
cache, the stdio path with an authored generator and validator, and the CLI. The search, TPR / TNR,
agreement and Kattis validators: tests/test_testgen_search.py."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase
from microcoder.pipeline.testgen import stage as stage_mod
from microcoder.pipeline.testgen.config import GeneratorModelConfig, TestgenConfig
from microcoder.pipeline.testgen.space import parse_input
from microcoder.pipeline.testgen.stage import testgen_problems
from microcoder.pipeline.testgen.stdio import Generator

STATEMENT = """Return the largest element of nums that is at most k, or -1.

Example 1:
Input: nums = [1,5,3], k = 4
Output: 3

Constraints:

1 <= nums.length <= 20
-50 <= nums[i] <= 50
-50 <= k <= 50
"""
STARTER = "class Solution:\n    def best(self, nums: List[int], k: int) -> int:\n"
REFERENCE = """from typing import *

class Solution:
    def best(self, nums: List[int], k: int) -> int:
        ans = -1
        for x in nums:
            if x <= k and x > ans:
                ans = x
        return ans
"""
# Crashes whenever nums holds a negative number: those inputs must be dropped.
CRASHY = REFERENCE.replace("        ans = -1\n", "        ans = -1\n        assert min(nums) >= 0\n")
# Agrees with REFERENCE only on short arrays.
SHORT_ONLY = REFERENCE.replace("        return ans\n", "        return ans if len(nums) <= 3 else 999\n")


def _best(nums, k):
    return max([x for x in nums if x <= k] + [-1])


def functional(pid: str, *refs: str, tests=None) -> Problem:
    return Problem(id=pid, source="t", statement=STATEMENT, style="functional", starter_code=STARTER,
                   entry_point="Solution().best",
                   tests=tests if tests is not None else [TestCase("[1,5,3]\n4", "3")],
                   reference_solutions=[ReferenceSolution("python", r) for r in refs], time_limit_s=1.0)


def cfg(tmp_path, **kw) -> TestgenConfig:
    # every reference votes (test_testgen_heldout.py holds some out): these check the agreement itself
    base = {"target_tests": 12, "mutants": 4, "batch_size": 8, "held_out_folds": 0,
            "cache_path": str(tmp_path / "cache.sqlite")}
    return TestgenConfig(**{**base, **kw})


EV = EvaluatorConfig(workers=1)  # the params' evaluator section, as the stage reads it


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("testgen")
    problems = [
        functional("good", REFERENCE),
        functional("crashy", CRASHY),
        functional("disagree", REFERENCE, SHORT_ONLY),
        functional("no-ref"),
        functional("enough", REFERENCE, tests=[TestCase(f"[{i}]\n{i}", str(i)) for i in range(12)]),
    ]
    return problems, testgen_problems(problems, cfg(tmp), evaluator=EV, progress=False), tmp


def test_generated_tests_carry_reference_outputs_and_provenance(run):
    _, result, _ = run
    good = next(p for p in result.kept if p.id == "good")
    searched = sum("search_round" in x for x in good.meta["testgen"]["tests"])
    assert len(good.tests) == 12 + searched and good.tests[0] == TestCase("[1,5,3]\n4", "3")
    gen = good.tests[1:]
    assert all(t.kind == "generated" for t in gen)
    for t in gen:
        nums, k = parse_input(t.input, 2)
        assert 1 <= len(nums) <= 20 and all(-50 <= x <= 50 for x in nums) and -50 <= k <= 50
        assert json.loads(t.output) == _best(nums, k)
    prov = good.meta["testgen"]["tests"]
    assert len(prov) == 11 + searched and {p["tier"] for p in prov} <= {"edge", "random", "max", "hack"}
    assert all(p["method"] == p["tier"] for p in prov[:11])  # functional draws: the method is the tier
    assert prov[0]["generator"].startswith("edge:") and prov[0]["tier"] == "edge"
    assert all(isinstance(p["seed"], int) for p in prov)
    assert [p["input_sha"] for p in prov] == [stage_mod.content_hash(t.input)[:16] for t in gen]


def test_inputs_the_references_crash_on_or_disagree_on_are_dropped(run):
    _, result, _ = run
    by_id = {r["id"]: r for r in result.report}
    crashy = next(p for p in result.kept if p.id == "crashy")
    assert by_id["crashy"]["dropped"].get("reference RE", 0) > 0
    assert all(min(parse_input(t.input, 2)[0]) >= 0 for t in crashy.tests[1:])
    disagree = next(p for p in result.kept if p.id == "disagree")
    assert by_id["disagree"]["dropped"].get("references disagree", 0) > 0
    assert all(len(parse_input(t.input, 2)[0]) <= 3 for t in disagree.tests[1:])


def test_every_record_accounted_for_and_stats(run):
    problems, result, _ = run
    assert [p.id for p in result.kept] == [p.id for p in problems]
    by_id = {p.id: p for p in result.kept}
    assert by_id["no-ref"] == problems[3] and by_id["enough"] == problems[4]  # passed through unchanged
    s = result.stats.as_dict()
    assert s["unit"] == "problems" and s["read"] == s["kept"] == 5 and s["rejected"] == 0
    assert s["passed_through_by_reason"] == {"enough tests already": 1, "no reference solution": 1}
    assert s["tests_added"] == sum(len(p.tests) - len(q.tests) for p, q in zip(result.kept, problems, strict=True))
    assert s["tests_added"] == sum(s["tests_added_by_method"].values())
    m = s["mutants"]
    assert m["mutants"] > 0 and m["killed_by_examples"] <= m["killed_with_generated"] <= m["mutants"]
    good = next(r for r in result.report if r["id"] == "good")["mutants"]
    # one example cannot tell `x <= k` from `x < k`; generated edge cases can
    assert good["killed_with_generated"] > good["killed_by_examples"]


def test_a_reference_that_times_out_drops_the_input(tmp_path):
    slow = REFERENCE.replace("        ans = -1\n", "        ans = -1\n        while k == 50:\n            pass\n")
    result = testgen_problems([functional("slow", slow)], cfg(tmp_path, mutants=0, target_tests=10), evaluator=EV,
                              progress=False)
    rep = result.report[0]
    assert rep["dropped"].get("reference TLE", 0) > 0
    assert all(parse_input(t.input, 2)[1] != 50 for t in result.kept[0].tests[1:])


def test_cached_rerun_executes_nothing(run, monkeypatch):
    problems, result, tmp = run

    def boom(*a, **k):
        raise AssertionError("a cached problem was regenerated")

    monkeypatch.setattr(stage_mod, "_process_batch", boom)
    again = testgen_problems(problems, cfg(tmp), evaluator=EV, progress=False)
    assert [p.tests for p in again.kept] == [p.tests for p in result.kept]
    assert [p.meta for p in again.kept] == [p.meta for p in result.kept]


STDIO_STATEMENT = "Read n, then n integers; print their sum.\n\nConstraints: 1 <= n <= 100, |a_i| <= 1000."
GENERATOR = """import random
tier, seed = input().split()
rng = random.Random(int(seed))
n = {"small": rng.randint(1, 5), "large": rng.randint(50, 100), "edge": rng.choice([0, 1, 100])}[tier]
print(n)
print(*[rng.randint(-1000, 1000) for _ in range(n)])
"""
VALIDATOR = """import sys
data = sys.stdin.read().split()
n = int(data[0])
sys.exit(0 if 1 <= n <= 100 and len(data) == n + 1 else 1)
"""
SUM_PY = "input()\nprint(sum(map(int, input().split())))\n"
SUM_CPP = "#include <cstdio>\nint main(){int n;long long s=0,x;scanf(\"%d\",&n);while(n--){scanf(\"%lld\",&x);s+=x;}printf(\"%lld\\n\",s);}\n"


def test_stdio_authored_generator_validator_and_references(tmp_path):
    p = Problem(id="sum", source="t", statement=STDIO_STATEMENT, style="stdio",
                tests=[TestCase("2\n1 2\n", "3\n")],
                reference_solutions=[ReferenceSolution("python", SUM_PY), ReferenceSolution("cpp", SUM_CPP)])
    gens = tmp_path / "generators.jsonl"
    gens.write_text(json.dumps({"id": "sum", "generator": GENERATOR, "validator": VALIDATOR}) + "\n")
    no_gen = replace(p, id="sum-without-generator")
    result = testgen_problems([p, no_gen], cfg(tmp_path, target_tests=10, mutants=2, stdio_generators=str(gens)),
                              evaluator=EV, progress=False)
    out = result.kept[0]
    gen = out.tests[1:]
    assert len(gen) == 9 and all(t.kind == "generated" for t in gen)
    for t in gen:
        n, *rest = t.input.split()
        assert int(n) == len(rest) and int(t.output) == sum(map(int, rest))
    prov = out.meta["testgen"]["tests"]
    assert {x["method"] for x in prov} == {"generator"}
    assert {x["generator"].rsplit(":", 1)[1] for x in prov} == {"small", "large", "edge"}
    # the generator's tiers in testgen's terms; its own label stays
    assert all(x["tier"] == {"small": "random", "large": "max", "edge": "edge"}[x["generator"].rsplit(":", 1)[1]]
               for x in prov)
    assert all(x["generator"].startswith("authored:generators.jsonl") for x in prov)
    # two references agree on every kept output
    assert all(x["references_agreeing"] == 2 and not x["single_reference"] for x in prov)
    assert result.report[0]["dropped"].get("input validator rejected the input", 0) > 0  # edge n = 0
    assert result.kept[1] == no_gen
    assert result.stats.figures["passed_through_by_reason"] == {"stdio without a generator program": 1}


def test_stdio_generator_from_a_backend_answer(tmp_path, monkeypatch):
    """The real path asks a rollout backend; here the backend's answer is an authored program."""
    from microcoder.pipeline.generation import backends
    from microcoder.pipeline.generation.backends import Sample

    class Authored:
        def __init__(self, **kw):
            self.kw = kw

        def generate(self, prompts, n, sampling):
            assert "Read n, then n integers" in prompts[0][0]["content"]
            text = f"```python\n{GENERATOR}```\n\n```python\n{VALIDATOR}```\n"
            return [[Sample(text, 10, "stop", False)] for _ in prompts]

    monkeypatch.setattr(backends, "get_backend", lambda name, **kw: Authored(**kw))
    p = Problem(id="sum", source="t", statement=STDIO_STATEMENT, style="stdio", tests=[TestCase("2\n1 2\n", "3\n")],
                reference_solutions=[ReferenceSolution("python", SUM_PY)])
    result = testgen_problems([p], cfg(tmp_path, target_tests=6, mutants=0,
                                           generator_model=GeneratorModelConfig(backend="hf")), evaluator=EV, progress=False)
    assert len(result.kept[0].tests) == 6
    assert result.kept[0].meta["testgen"]["tests"][0]["generator"].startswith("model:hf/models/tiny:")
    assert isinstance(Generator("x", None, "s").source, str)


def test_the_evaluator_section_keys_the_cache(run, monkeypatch):
    """A judge setting that can change a verdict regenerates; the number of workers does not."""
    problems, result, tmp = run
    calls = []
    real = stage_mod._process_batch

    def counted(batch, cfg_, ev):
        calls.append(len(batch))
        return real(batch, cfg_, ev)

    monkeypatch.setattr(stage_mod, "_process_batch", counted)
    testgen_problems(problems, cfg(tmp), evaluator=EvaluatorConfig(workers=2), progress=False)
    assert calls == []
    again = testgen_problems(problems[:1], cfg(tmp), evaluator=EvaluatorConfig(workers=1, timeout_scale=2.0),
                             progress=False)
    assert calls == [1] and len(again.kept[0].tests) == len(result.kept[0].tests)



def test_a_change_of_evaluator_code_regenerates(run, monkeypatch):
    """Issue 24, item 10: the cache key holds the evaluator's code, so after a fix to the evaluator
    a problem is generated and judged again instead of replaying the broken code's results."""
    from microcoder.pipeline.evaluator import verdict_key as vk

    problems, result, tmp = run
    calls = []
    real = stage_mod._process_batch

    def counted(batch, cfg_, ev):
        calls.append(len(batch))
        return real(batch, cfg_, ev)

    monkeypatch.setattr(stage_mod, "_process_batch", counted)
    testgen_problems(problems[:1], cfg(tmp), evaluator=EV, progress=False)
    assert calls == []  # cached under today's code
    # raising=False: on code without a code digest, the assert below shows the stale replay
    monkeypatch.setattr(vk, "code_digest", lambda: "a-fixed-evaluator", raising=False)
    again = testgen_problems(problems[:1], cfg(tmp), evaluator=EV, progress=False)
    assert calls == [1] and len(again.kept[0].tests) == len(result.kept[0].tests)

def test_cli_writes_outputs(tmp_path):
    from typer.testing import CliRunner

    from microcoder.pipeline import io
    from microcoder.pipeline.cli import app

    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(functional("good", REFERENCE).to_dict()) + "\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["testgen", "--problems", str(src), "--out-dir", str(out), "--no-progress",
                                   "--params", str(tmp_path / "none.yaml"), "--set", "target_tests=6",
                                   "--set", "evaluator.workers=1", "--set", "mutants=0",
                                   "--set", f"cache_path={tmp_path / 'c.sqlite'}"])
    assert res.exit_code == 0, res.output
    assert "read 1, kept 1 (1 augmented), rejected 0 {}; 5 tests added" in res.output
    assert len(io.read_problems(out / "problems.parquet")[0].tests) == 6
    stats = json.loads((out / "stats.json").read_text())
    assert stats["read"] == stats["kept"] == 1 and "config" not in stats
    assert json.loads((out / "settings.json").read_text())["evaluator"]["workers"] == 1
    assert (out / "rejects.jsonl").read_text() == ""
    assert json.loads((out / "report.jsonl").read_text().splitlines()[0])["tests_added"] == 5


def _cli(tmp_path, *args: str):
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    return CliRunner().invoke(app, ["testgen", *args, "--out-dir", str(tmp_path / "out"), "--no-progress",
                                    "--params", str(tmp_path / "none.yaml"), "--set", "mutants=0",
                                    "--set", f"cache_path={tmp_path / 'c.sqlite'}"])


def test_cli_reads_tolerantly(tmp_path):
    """A record that is not a usable problem is a reject with its reason (counted), the rest passes."""
    src = tmp_path / "in.jsonl"
    rec = functional("enough", REFERENCE, tests=[TestCase(f"[{i}]\n{i}", str(i)) for i in range(12)]).to_dict()
    src.write_text(json.dumps(rec) + "\n" + json.dumps({"id": "bad"}) + "\n{oops\n")
    res = _cli(tmp_path, "--problems", str(src))
    assert res.exit_code == 0, res.output
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert (stats["read"], stats["kept"], stats["rejected"]) == (3, 1, 2)
    assert stats["rejected_by_reason"] == {"invalid record": 1, "unreadable record": 1}
    rejects = [json.loads(line) for line in (tmp_path / "out" / "rejects.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rejects] == ["bad", None]


def test_cli_user_errors_are_one_line_exit_2(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("")
    for args, needle in (
        (["--problems", str(tmp_path / "missing.jsonl")], "does not exist"),
        (["--problems", str(src), "--set", "workers=1"], "unknown testgen params ['workers']"),
        (["--problems", str(src), "--set", "stdio_backend=hf"], "stdio_backend"),
        (["--problems", str(src), "--set", "generator_model.backend=gpt"], "backend must be one of"),
        (["--problems", str(src), "--set", "generator_model.max_tokens=many"], "generator_model.max_tokens"),
    ):
        res = _cli(tmp_path, *args)
        assert res.exit_code == 2, (args, res.output)
        assert needle in res.output and "Traceback" not in res.output, res.output
        assert len(res.output.strip().splitlines()) == 1, res.output


def test_help_lists_the_nested_generator_model():
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    out = CliRunner().invoke(app, ["testgen", "--help"]).output
    for name in ("target_tests", "generator_model.backend", "generator_model.temperature", "evaluator"):
        assert name in out


def test_a_regenerated_problem_takes_its_runs_from_the_run_cache(run, monkeypatch, tmp_path):
    """Issue 28: testgen's program runs (references, mutants, the search's judging) go through the
    evaluator's run cache, in the file of its per-problem cache: with the problems' rows gone, they
    are generated again from cached runs alone, to the same tests."""
    import shutil
    import sqlite3

    problems, result, tmp = run
    copy = tmp_path / "runs-only.sqlite"
    shutil.copy(cfg(tmp).cache_path, copy)
    with sqlite3.connect(copy) as db:
        db.execute("DELETE FROM problems")
    seen = []
    real = stage_mod._process_batch

    def counted(batch, cfg_, ev):
        out = real(batch, cfg_, ev)
        seen.append((ev.executed, ev.cached))
        return out

    monkeypatch.setattr(stage_mod, "_process_batch", counted)
    again = testgen_problems(problems, cfg(tmp, cache_path=str(copy)), evaluator=EV, progress=False)
    assert [p.tests for p in again.kept] == [p.tests for p in result.kept]
    assert [p.meta for p in again.kept] == [p.meta for p in result.kept]
    assert len(seen) == 1 and seen[0][0] == 0 and seen[0][1] > 0, seen


def test_every_setting_that_shapes_the_tests_keys_the_cache():
    """A setting missing from KNOBS would let a rerun reuse tests generated under another value."""
    import dataclasses

    not_shaping = {"executor", "ray_address", "cache_max_mb", "batch_size", "limit", "cache_path",
                   "stdio_generators", "generator_model"}  # where, how much, which problems; generators key apart
    fields = {f.name for f in dataclasses.fields(TestgenConfig)}
    assert fields - not_shaping == set(stage_mod.KNOBS)


def test_an_unmodelled_constraint_passes_the_problem_through_and_says_why(tmp_path):
    statement = STATEMENT + "nums is guaranteed to be a mountain array.\n"
    p = replace(functional("mountain", REFERENCE), statement=statement)
    skip = testgen_problems([p], cfg(tmp_path, mutants=0, search_rounds=0), evaluator=EV, progress=False)
    assert skip.kept[0].tests == p.tests  # the examples only
    s = skip.stats.as_dict()
    assert s["passed_through_by_reason"] == {stage_mod.UNMODELLED: 1}
    assert skip.report[0]["info"]["unmodelled_constraints"] == ["nums is guaranteed to be a mountain array."]
    drawn = testgen_problems([p], cfg(tmp_path, mutants=0, search_rounds=0, unmodelled_constraints="draw"),
                             evaluator=EV, progress=False)
    assert len(drawn.kept[0].tests) == 12
    with pytest.raises(ValueError, match="unmodelled_constraints"):
        cfg(tmp_path, unmodelled_constraints="maybe")
