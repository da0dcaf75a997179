"""The rollout stage (pipeline/rollout/runner.py): k samples per problem judged in the sandbox,
shards, resume, manifest, rejects."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from microcoder.pipeline.generation.backends import Sample
from microcoder.pipeline.io import read_jsonl, write_problems
from microcoder.pipeline.rollout.runner import Rollout, RolloutConfig, read_rollouts, shard_paths
from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.stage import build_config


def problems(n: int = 4) -> list[Problem]:
    return [Problem(id=f"p{i}", source="seed", statement=f"Print the number {i}.", style="stdio",
                    tests=[TestCase("\n", f"{i}\n")]) for i in range(n)]


class CountingBackend:
    """Answers without code (so nothing reaches the evaluator); records what it was asked; can die."""

    def __init__(self, die_after_calls: int | None = None):
        self.asked: list[str] = []
        self.calls = 0
        self.die_after_calls = die_after_calls

    def generate(self, prompts, n, sampling):
        if self.die_after_calls is not None and self.calls >= self.die_after_calls:
            raise KeyboardInterrupt("killed")
        self.calls += 1
        self.asked += [m[-1]["content"].split(".")[0] for m in prompts]
        return [[Sample(f"no code here {j}", 4, "length", True) for j in range(n)] for _ in prompts]


class NoEvaluator:
    def evaluate_batch(self, *a, **kw):
        raise AssertionError("nothing with code should be judged")

    def close(self):
        pass


def run(tmp_path, probs, backend, **params):
    path = tmp_path / "validated.parquet"
    write_problems(path, probs)
    cfg = build_config(RolloutConfig, {"k": 2, "shard_size": 1, **params})
    return Rollout().run(cfg, path, tmp_path / "rollouts", backend=backend, judge=NoEvaluator(),
                         progress=False)


def test_rows_shards_and_stats(tmp_path):
    stats = run(tmp_path, problems(3), CountingBackend())
    out = tmp_path / "rollouts"
    assert [p.name for p in shard_paths(out)] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    t = read_rollouts(out)
    assert t.num_rows == 6 and t.column_names[:3] == ["problem_id", "sample_index", "completion"]
    row = t.to_pylist()[0]
    hashes = {k: row.pop(k) for k in ("prompt_hash", "judge_hash")}
    assert row == {"problem_id": "p0", "sample_index": 0, "completion": "no code here 0", "tokens": 4,
                   "finish_reason": "length", "truncated": True, "status": "no_code", "passed": 0, "total": 1,
                   "reason": None}
    assert all(len(h) == 16 for h in hashes.values())
    assert stats["samples"] == 6 and stats["status"] == {"no_code": 6} and stats["truncated"] == 6
    assert stats["kept"] == 3 and stats["this_run"]["problems_generated"] == 3
    assert json.loads((out / "stats.json").read_text())["tokens_total"] == 24
    fingerprint = json.loads((out / "shards" / "manifest.json").read_text())["fingerprint"]
    assert fingerprint["generation"]["k"] == 2 and len(fingerprint["judge"]["evaluator"]) == 16


def test_resume_after_a_kill_generates_only_missing_problems(tmp_path):
    probs = problems(4)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, probs, CountingBackend(die_after_calls=2))
    out = tmp_path / "rollouts"
    assert len(shard_paths(out)) == 2  # the two finished shards survived the kill
    assert not list(out.glob(".*"))  # and no half-written temp file
    backend = CountingBackend()
    stats = run(tmp_path, probs, backend)
    assert backend.asked == ["Print the number 2", "Print the number 3"]
    assert stats["this_run"]["problems_resumed"] == 2 and stats["kept"] == 4
    t = read_rollouts(out)
    assert sorted(zip(t["problem_id"].to_pylist(), t["sample_index"].to_pylist(), strict=True)) == [
        (f"p{i}", j) for i in range(4) for j in range(2)]
    # A rerun of a finished stage generates nothing.
    again = CountingBackend()
    run(tmp_path, probs, again)
    assert again.asked == [] and read_rollouts(out).num_rows == 8


def test_changed_settings_or_inputs(tmp_path):
    probs = problems(3)
    run(tmp_path, probs, CountingBackend())
    # Problem p2 left the input: its rows go; nothing new is generated.
    backend = CountingBackend()
    stats = run(tmp_path, probs[:2], backend)
    assert backend.asked == [] and stats["kept"] == 2 and read_rollouts(tmp_path / "rollouts").num_rows == 4
    # New sampling settings invalidate every earlier sample.
    backend = CountingBackend()
    run(tmp_path, probs[:2], backend, temperature=1.2)
    assert len(backend.asked) == 2


class FixedVerdictEvaluator:
    """Gives every submission the same status (stands in for an older / newer judge)."""

    def __init__(self, status: str):
        self.status, self.judged = status, 0

    def evaluate_batch(self, problems, submissions, mode):
        from microcoder.pipeline.schema import Verdict

        assert mode == "first-failure"
        self.judged += len(submissions)
        return [Verdict(s.problem_id, s.submission_id, self.status, passed=int(self.status == "AC"), total=1)
                for s in submissions]

    def close(self):
        pass


class CodeBackend(CountingBackend):
    def generate(self, prompts, n, sampling):
        self.calls += 1
        return [[Sample("```python\nprint(0)\n```", 5, "stop", False) for _ in range(n)] for _ in prompts]


def test_changed_judging_rejudges_stored_samples_without_generating(tmp_path, monkeypatch):
    import microcoder.pipeline.rollout.runner as runner

    path = tmp_path / "validated.parquet"
    write_problems(path, problems(3))
    cfg = RolloutConfig(k=2, shard_size=2)
    old = FixedVerdictEvaluator("WA")
    Rollout().run(cfg, path, tmp_path / "out", backend=CodeBackend(), judge=old, progress=False)
    assert old.judged == 6 and set(read_rollouts(tmp_path / "out")["status"].to_pylist()) == {"WA"}
    monkeypatch.setattr(runner, "evaluator_digest", lambda: "a-newer-evaluator")
    backend, new = CodeBackend(), FixedVerdictEvaluator("AC")
    stats = Rollout().run(cfg, path, tmp_path / "out", backend=backend, judge=new, progress=False)
    assert backend.calls == 0 and new.judged == 6 and stats["this_run"]["samples_rejudged"] == 6
    t = read_rollouts(tmp_path / "out")
    assert set(t["status"].to_pylist()) == {"AC"} and t.num_rows == 6
    assert t["completion"].to_pylist()[0] == "```python\nprint(0)\n```"
    # Judged with the current evaluator now: a rerun does nothing.
    again = FixedVerdictEvaluator("RE")
    Rollout().run(cfg, path, tmp_path / "out", backend=backend, judge=again, progress=False)
    assert again.judged == 0


def test_changed_problem_content_is_not_served_from_stale_samples(tmp_path):
    probs = problems(3)
    run(tmp_path, probs, CountingBackend())
    # p0's statement changed (its prompt): sampled again. p1's tests changed: judged again, same samples.
    probs[0].statement = "Print the number 0, twice."
    probs[1].tests = [TestCase("\n", "1\n"), TestCase("x\n", "1\n")]
    backend = CountingBackend()
    stats = run(tmp_path, probs, backend)
    assert backend.asked == ["Print the number 0, twice"]
    assert stats["this_run"]["problems_resumed"] == 2 and stats["this_run"]["samples_rejudged"] == 2
    rows = {(r["problem_id"], r["sample_index"]): r for r in read_rollouts(tmp_path / "rollouts").to_pylist()}
    assert len(rows) == 6 and rows[("p1", 0)]["total"] == 2  # the verdicts count the new tests
    # Now everything matches: nothing is generated or judged again.
    again = CountingBackend()
    stats = run(tmp_path, probs, again)
    assert again.asked == [] and stats["this_run"]["samples_rejudged"] == 0


def test_killed_write_leftovers_and_old_format_shards_are_not_reused(tmp_path):
    probs = problems(2)
    run(tmp_path, probs, CountingBackend())
    shards = tmp_path / "rollouts" / "shards"
    (shards / ".part-00009.parquet.abc.parquet").write_bytes(b"half a file")  # a write killed mid-way
    manifest = json.loads((shards / "manifest.json").read_text())
    (shards / "manifest.json").write_text(json.dumps({**manifest, "format": 1}))
    backend = CountingBackend()
    run(tmp_path, probs, backend)
    assert len(backend.asked) == 2 and not list(shards.glob(".*"))


def test_bad_records_are_rejected_with_reasons_and_stats_add_up(tmp_path):
    good = problems(2)
    bad = [
        Problem(id="no-tests", source="seed", statement="S.", style="stdio", tests=[]),
        Problem(id="bad-test", source="seed", statement="S.", style="functional", entry_point="f",
                tests=[TestCase("not json [", "{oops")]),
        Problem(id="odd-style", source="seed", statement="S.", style="interactive", tests=[TestCase("1", "1")]),
        Problem(id="no-entry", source="seed", statement="S.", style="functional", tests=[TestCase("1", "1")]),
        Problem(id="p0", source="seed", statement="A second p0.", style="stdio", tests=[TestCase("1", "1")]),
    ]
    stats = run(tmp_path, good + bad, CountingBackend())
    rejects = {r["id"]: r["reason"] for _, r, _ in read_jsonl(tmp_path / "rollouts" / "rejects.jsonl")}
    assert set(rejects) == {"no-tests", "bad-test", "odd-style", "no-entry", "p0"}
    assert "tests: empty" in rejects["no-tests"] and "not JSON" in rejects["bad-test"]
    assert "style" in rejects["odd-style"] and "entry_point" in rejects["no-entry"]
    assert rejects["p0"].startswith("duplicate id")
    assert stats["read"] == 7 == stats["kept"] + stats["rejected"] and stats["unit"] == "problems"
    t = read_rollouts(tmp_path / "rollouts")
    assert sorted(set(t["problem_id"].to_pylist())) == ["p0", "p1"]
    assert "A second p0" not in " ".join(t["completion"].to_pylist())


def test_missing_input_and_missing_model_are_clear_errors(tmp_path):
    from microcoder.pipeline.inputs import InputError

    with pytest.raises(InputError, match="does not exist"):
        Rollout().run(RolloutConfig(), tmp_path / "absent.parquet", tmp_path / "out", progress=False)
    path = tmp_path / "p.parquet"
    write_problems(path, problems(1))
    with pytest.raises(InputError, match="rollout model .* does not exist"):
        Rollout().run(RolloutConfig(model=str(tmp_path / "no-model")), path, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_empty_input_gives_empty_outputs(tmp_path):
    stats = run(tmp_path, [], CountingBackend())
    assert stats["read"] == 0 and stats["samples"] == 0
    assert (tmp_path / "rollouts" / "rejects.jsonl").read_text() == ""


def test_unpromptable_problems_are_rejected_not_dropped(tmp_path):
    probs = problems(2) + [Problem(id="f", source="seed", statement="Add.", style="functional", entry_point="add",
                                   tests=[TestCase("1\n2", "3")])]
    stats = run(tmp_path, probs, CountingBackend(), language="cpp")
    (reject,) = [r for _, r, _ in read_jsonl(tmp_path / "rollouts" / "rejects.jsonl")]
    assert reject["id"] == "f" and "Python only" in reject["reason"] and reject["stage"] == "rollout"
    assert stats["rejected"] == 1 and stats["kept"] == 2


def test_config_validation():
    with pytest.raises(ValueError, match="backend"):
        RolloutConfig(backend="tgi")
    with pytest.raises(ValueError, match="temperature"):
        RolloutConfig(temperature=-1)
    with pytest.raises(ValueError, match=r"temperature must be in \[0, 2\]"):  # vLLM refuses above 2
        RolloutConfig(temperature=2.5)
    with pytest.raises(ValueError, match="exceed max_model_len"):
        RolloutConfig(max_tokens=64, max_prompt_tokens=100, backend_options={"max_model_len": 128})
    with pytest.raises(ValueError, match="leaves no room"):
        RolloutConfig(max_tokens=128, backend="vllm", backend_options={"max_model_len": 128})
    with pytest.raises(ValueError, match="unknown RolloutConfig"):
        build_config(RolloutConfig, {"samples": 3})


# --- with the real evaluator --------------------------------------------------------------------
class ScriptedBackend:
    def __init__(self, answers: dict[str, list[str]]):
        self.answers = answers

    def generate(self, prompts, n, sampling):
        out = []
        for m in prompts:
            key = next(k for k in self.answers if k in m[-1]["content"])
            out.append([Sample(t, 9, "stop", False) for t in self.answers[key][:n]])
        return out


def test_samples_are_judged_by_the_evaluator(tmp_path):
    from microcoder.pipeline.evaluator import Evaluator

    probs = [
        Problem(id="sum", source="seed", statement="Read two integers and print their sum.", style="stdio",
                tests=[TestCase("1 2\n", "3\n"), TestCase("5 7\n", "12\n")]),
        Problem(id="add", source="seed", statement="Return a + b.", style="functional", entry_point="add",
                tests=[TestCase("1\n2", "3"), TestCase("2\n2", "4")]),
    ]
    answers = {
        "their sum": ["```python\na, b = map(int, input().split())\nprint(a + b)\n```",
                      "```python\nprint(3)\n```", "Let me think", "<think>```python\nprint(1)\n```"],
        "Return a + b": ["```python\ndef add(a, b):\n    return a + b\n```",
                         "```python\ndef add(a, b):\n    return a - b\n```", "```python\ndef add(a, b):\n", "nope"],
    }
    path = tmp_path / "validated.parquet"
    write_problems(path, probs)
    ev = Evaluator(workers=2)
    try:
        stats = Rollout().run(RolloutConfig(k=4, shard_size=1), path, tmp_path / "out",
                              backend=ScriptedBackend(answers), judge=ev, progress=False)
    finally:
        ev.close()
    rows = {(r["problem_id"], r["sample_index"]): r for r in read_rollouts(tmp_path / "out").to_pylist()}
    assert rows[("sum", 0)]["status"] == "AC" and rows[("sum", 0)]["passed"] == 2 == rows[("sum", 0)]["total"]
    assert rows[("sum", 1)]["status"] == "WA" and rows[("sum", 1)]["passed"] == 1  # first-failure: test 2 fails
    assert rows[("sum", 2)]["status"] == "no_code" and rows[("sum", 3)]["status"] == "no_code"
    assert rows[("add", 0)]["status"] == "AC" and rows[("add", 1)]["status"] == "WA"
    assert rows[("add", 2)]["status"] == "no_code"
    assert stats["status"] == {"AC": 2, "WA": 2, "no_code": 4} and stats["problems_solved_any"] == 2
    assert pq.read_schema(tmp_path / "out" / "shards" / "part-00000.parquet").field("passed").type.bit_width == 32


def test_tiny_model_end_to_end(tmp_path, tiny_model_dir):
    path = tmp_path / "validated.parquet"
    write_problems(path, problems(2))
    cfg = build_config(RolloutConfig, {"model": str(tiny_model_dir), "k": 2, "max_tokens": 16})
    stats = Rollout().run(cfg, path, tmp_path / "out", progress=False)
    assert stats["samples"] == 4 and stats["kept"] == 2
    assert stats["this_run"]["tokens_generated"] > 0 and stats["this_run"]["tokens_per_s"] > 0


# --- prompt budgets, engine failures, the vLLM path through the stand-in -------------------------
def long_problem(pid: str = "long") -> Problem:
    return Problem(id=pid, source="seed", statement="Print the number 9. " + "Some context. " * 150, style="stdio",
                   tests=[TestCase("\n", "9\n")])


def test_prompts_over_the_token_budget_are_rejected_with_the_reason(tmp_path, tiny_model_dir):
    backend = CountingBackend()
    stats = run(tmp_path, problems(2) + [long_problem()], backend, model=str(tiny_model_dir), max_tokens=64,
                backend_options={"max_model_len": 400})
    (reject,) = [r for _, r, _ in read_jsonl(tmp_path / "rollouts" / "rejects.jsonl")]
    assert reject["id"] == "long" and reject["reason"].startswith("prompt over the token budget: ")
    assert "at most 336 (max_model_len 400 - max_tokens 64)" in reject["reason"]
    assert backend.asked == ["Print the number 0", "Print the number 1"]  # never sent
    assert stats["rejected"] == 1 and stats["kept"] == 2 and stats["read"] == 3
    # An explicit budget; without max_model_len the model's context length (4096) bounds the default.
    stats = run(tmp_path, problems(2), CountingBackend(), model=str(tiny_model_dir), max_prompt_tokens=20)
    assert stats["rejected"] == 2 and stats["kept"] == 0


def test_engine_failures_are_never_stored_as_answers(tmp_path):
    class FailingBackend(CountingBackend):
        def generate(self, prompts, n, sampling):
            return [[Sample("partial", 1, "abort", False)] + [Sample("x", 1, "stop", False)] * (n - 1)
                    for _ in prompts]

    with pytest.raises(RuntimeError, match=r"engine failures \(finish_reason \['abort'\]\)"):
        run(tmp_path, problems(1), FailingBackend())
    assert not shard_paths(tmp_path / "rollouts")


class StubVerdicts:
    """Judging is not under test here: every submission gets WA."""

    def evaluate_batch(self, problems, submissions, **kw):
        from types import SimpleNamespace

        return [SimpleNamespace(status="WA", passed=0, total=1, reason="stub") for _ in submissions]

    def close(self):
        pass


@pytest.fixture
def stand_in_vllm(monkeypatch):
    from stand_in import use_stand_in_vllm

    yield from use_stand_in_vllm(monkeypatch)


def test_vllm_rollout_rejects_a_long_prompt_instead_of_losing_its_shard(tmp_path, tiny_model_dir, stand_in_vllm):
    path = tmp_path / "validated.parquet"
    write_problems(path, [*problems(2), long_problem()])
    cfg = build_config(RolloutConfig, {"backend": "vllm", "model": str(tiny_model_dir), "k": 3, "max_tokens": 16,
                                             "temperature": 0, "shard_size": 8,
                                             "backend_options": {"max_model_len": 600}})
    stats = Rollout().run(cfg, path, tmp_path / "out", judge=StubVerdicts(), progress=False)
    assert stats["kept"] == 2 and stats["rejected"] == 1 and stats["samples"] == 6
    (gen,) = stand_in_vllm.CALLS["generate"]
    assert len(gen["prompts"]) == 2 and all(p["n"] == 1 for p in gen["params"])  # greedy: one sample, reused
    assert stand_in_vllm.CALLS["shutdown"] == 1  # the backend was closed
    rows = read_rollouts(tmp_path / "out").to_pylist()
    assert len({r["completion"] for r in rows if r["problem_id"] == "p0"}) == 1


# --- the stage contract: evaluator section, stats vocabulary, CLI errors -------------------------
def test_a_changed_evaluator_section_rejudges_and_stats_use_the_shared_vocabulary(tmp_path):
    from microcoder.pipeline.evaluator.config import EvaluatorConfig

    path = tmp_path / "validated.parquet"
    write_problems(path, problems(2))
    cfg = RolloutConfig(k=2, shard_size=2)
    first = FixedVerdictEvaluator("WA")
    stats = Rollout().run(cfg, path, tmp_path / "out", evaluator=EvaluatorConfig(workers=2),
                          backend=CodeBackend(), judge=first, progress=False)
    on_disk = json.loads((tmp_path / "out" / "stats.json").read_text())
    timing = json.loads((tmp_path / "out" / "timing.json").read_text())  # measured: apart from stats.json
    assert on_disk | timing == stats and on_disk["unit"] == "problems" and on_disk["read"] == 2 == on_disk["kept"]
    assert on_disk["rejected"] == 0 and on_disk["rejected_by_reason"] == {} and "config" not in on_disk
    assert json.loads((tmp_path / "out" / "settings.json").read_text())["k"] == 2
    # More judges change no verdict: nothing is judged again.
    same = FixedVerdictEvaluator("AC")
    Rollout().run(cfg, path, tmp_path / "out", evaluator=EvaluatorConfig(workers=8), backend=CodeBackend(),
                  judge=same, progress=False)
    assert same.judged == 0
    # A longer time limit can: the stored completions are judged again, none generated.
    backend, longer = CodeBackend(), FixedVerdictEvaluator("AC")
    stats = Rollout().run(cfg, path, tmp_path / "out", evaluator=EvaluatorConfig(timeout_scale=2.0),
                          backend=backend, judge=longer, progress=False)
    assert backend.calls == 0 and longer.judged == 4 and stats["status"] == {"AC": 4}


def test_reject_reasons_are_counted_by_kind(tmp_path):
    bad = [Problem(id="no-tests", source="seed", statement="S.", style="stdio", tests=[]),
           Problem(id="p0", source="seed", statement="A second p0.", style="stdio", tests=[TestCase("1", "1")])]
    stats = run(tmp_path, problems(1) + bad, CountingBackend())
    assert stats["rejected_by_reason"] == {"duplicate id": 1, "invalid record": 1}


def test_cli_errors_are_one_line_exit_2_and_help_lists_the_fields(tmp_path):
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["rollout", "--problems", str(tmp_path / "absent.parquet"), "--out-dir",
                                 str(tmp_path / "out"), "--params", str(tmp_path / "none.yaml")])
    assert result.exit_code == 2 and "rollout: error:" in result.output and "Traceback" not in result.output
    assert "absent.parquet" in result.output
    result = runner.invoke(app, ["rollout", "--params", str(tmp_path / "none.yaml"), "--set", "workers=4"])
    assert result.exit_code == 2 and "unknown rollout params ['workers']" in result.output
    result = runner.invoke(app, ["rollout", "--params", str(tmp_path / "none.yaml"), "--set", "evaluator.bogus=1"])
    assert result.exit_code == 2 and "bogus" in result.output
    result = runner.invoke(app, ["rollout", "--help"], terminal_width=200)
    assert result.exit_code == 0
    for name in ("k (int)", "backend_options", "executor", "ray_address", "evaluator"):
        assert name in result.output, name


def test_the_evaluator_section_reaches_the_judge(tmp_path):
    # The judge is built from the params' `evaluator:` section: its C++ flags decide whether this
    # answer compiles (CE without -DANSWER) - and a changed section re-judges the stored samples.
    from microcoder.pipeline.evaluator.config import EvaluatorConfig

    class CppBackend(CountingBackend):
        def generate(self, prompts, n, sampling):
            code = "```cpp\n#include <cstdio>\nint main() { std::printf(\"%d\\n\", ANSWER); }\n```"
            return [[Sample(code, 9, "stop", False) for _ in range(n)] for _ in prompts]

    path = tmp_path / "validated.parquet"
    write_problems(path, problems(1))  # p0: print 0
    cfg = RolloutConfig(k=1, language="cpp")
    plain = Rollout().run(cfg, path, tmp_path / "out", evaluator=EvaluatorConfig(workers=1),
                          backend=CppBackend(), progress=False)
    assert plain["status"] == {"CE": 1}
    flags = EvaluatorConfig(workers=1, cpp_flags=["-O0", "-DANSWER=0"])
    backend = CppBackend()
    defined = Rollout().run(cfg, path, tmp_path / "out", evaluator=flags, backend=backend, progress=False)
    assert defined["status"] == {"AC": 1} and backend.calls == 0 and defined["this_run"]["samples_rejudged"] == 1


def test_the_executor_reaches_the_backend(tmp_path, monkeypatch):
    # executor=ray: the backend factory gets the executor and the cluster address (it runs hf/vllm as
    # Ray replicas; tests/test_rollout_ray.py runs them), with the backend options as they are.
    import microcoder.pipeline.rollout.runner as runner

    asked = {}

    def factory(name, **kwargs):
        asked.update(kwargs, name=name)
        return CountingBackend()

    monkeypatch.setattr(runner, "get_backend", factory)
    path = tmp_path / "validated.parquet"
    write_problems(path, problems(1))
    cfg = build_config(RolloutConfig, {"k": 1, "executor": "ray", "ray_address": "auto", "model": "org/model",
                                             "backend_options": {"replicas": 2}})
    Rollout().run(cfg, path, tmp_path / "out", judge=NoEvaluator(), progress=False)
    assert (asked["executor"], asked["ray_address"], asked["replicas"], asked["model"]) == ("ray", "auto", 2, "org/model")
    with pytest.raises(ValueError, match="ray_address"):
        RolloutConfig(executor="ray", ray_address="not an address")
