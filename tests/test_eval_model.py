"""Model evaluation: unbiased pass@k, the date window, grouping, and the stage's outputs."""

from __future__ import annotations

import json
from math import comb

import pytest

from microcoder.pipeline.difficulty.passrate import pass_at_k
from microcoder.pipeline.generation.backends import Sample
from microcoder.pipeline.inputs import InputError
from microcoder.pipeline.schema import Problem, TestCase, Verdict
from microcoder.pipeline.stage import reason_key
from microcoder.training.eval_model import (
    EvalModel,
    EvalModelConfig,
    load_benchmark,
    model_metrics,
    render_table,
    select_problems,
)


def problem(pid, platform="atcoder", difficulty="easy", date="2025-03-01", tests=True):
    return Problem(id=pid, source="t", statement=f"Problem {pid}.", style="stdio", platform=platform,
                   difficulty=difficulty, contest_date=date, tests=[TestCase("1\n", "1\n")] if tests else [])


@pytest.mark.parametrize(("n", "c", "k"), [(4, 0, 1), (4, 4, 1), (4, 1, 1), (5, 2, 2), (10, 3, 5), (10, 7, 5)])
def test_pass_at_k_matches_the_combinatorial_definition(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_pass_at_k_rejects_bad_counts():
    with pytest.raises(ValueError):
        pass_at_k(4, 5, 1)
    assert pass_at_k(4, 1, 5) is None  # fewer samples than k: no score (the group leaves the problem out)


def test_date_window_and_exclusions():
    items = [problem("a", date="2024-12-31"), problem("b", date="2025-01-01"), problem("c", date="2025-06-30T10:00:00"),
             problem("d", date="2025-07-01"), problem("e", date=None), problem("f", tests=False)]
    kept, excluded = select_problems(items + [problem("b"), problem("g", date="someday")], "2025-01-01", "2025-06-30")
    assert [p.id for p in kept] == ["b", "c"]
    assert [(r.id, r.reason) for r in excluded] == [
        ("a", "before 2025-01-01"), ("d", "after 2025-06-30"), ("e", "no contest_date (a date window is set)"),
        ("f", "no test cases"), ("b", "duplicate id: an earlier record with this id is kept"),
        ("g", "bad contest_date 'someday' (a date window is set)")]
    assert [reason_key(r.reason) for r in excluded].count("duplicate id") == 1
    kept, excluded = select_problems(items[:4], None, None, max_problems=3)
    assert len(kept) == 3 and [reason_key(r.reason) for r in excluded] == ["over max_problems=3"]


def sample_rows(statuses: dict[str, list[str]]) -> list[dict[str, str]]:
    return [{"problem_id": pid, "status": s} for pid, items in statuses.items() for s in items]


def test_aggregate_by_platform_and_difficulty():
    problems = [problem("a"), problem("b", difficulty="hard"), problem("c", platform="leetcode")]
    rows = sample_rows({"a": ["pass"] * 4, "b": ["fail", "no_code", "fail", "fail"], "c": ["pass", "fail", "fail", "pass"]})
    agg = model_metrics(rows, problems, [1, 2])
    assert agg["overall"] == {"problems": 3, "pass@1": pytest.approx(0.5), "pass@1_problems": 3,
                              "pass@2": pytest.approx((1 + 0 + 5 / 6) / 3), "pass@2_problems": 3,
                              "unjudged_samples": 0}
    assert agg["by_platform"]["atcoder"]["pass@1"] == 0.5
    assert agg["by_platform"]["leetcode"]["pass@1"] == 0.5
    assert agg["by_difficulty"]["easy"]["pass@1"] == 0.75 and agg["by_difficulty"]["hard"]["pass@1"] == 0.0
    assert agg["by_platform_difficulty"]["atcoder/hard"]["problems"] == 1
    assert agg["samples"] == {"pass": 6, "fail": 5, "no_code": 1, "error": 0, "deadline": 0}
    table = render_table({"base": agg, "trained": agg}, [1])
    assert "| All | 3 | 50.0 | 50.0 | +0.0 |" in table
    assert "| atcoder | 2 |" in table and "| hard | 1 |" in table


def test_config_validation():
    with pytest.raises(ValueError, match="pass_at"):
        EvalModelConfig(n_samples=2, pass_at=[4])
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        EvalModelConfig(date_from="March 2025")
    assert EvalModelConfig(pass_at=[4]).pass_at == [1, 4]


def test_livecodebench_layout_is_read(tmp_path):
    row = {"question_id": "abc100_a", "question_title": "T", "question_content": "Print 1.", "platform": "atcoder",
           "difficulty": "easy", "contest_date": "2025-02-01T00:00:00", "starter_code": "", "metadata": "{}",
           "public_test_cases": json.dumps([{"input": "\n", "output": "1\n", "testtype": "stdin"}]),
           "private_test_cases": "[]"}
    path = tmp_path / "lcb.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "question_id": "bad", "public_test_cases": "[]"}) + "\n")
    problems, unreadable = load_benchmark(path)
    assert [p.platform for p in problems] == ["atcoder"] and problems[0].contest_date.startswith("2025-02-01")
    assert [reason_key(r.reason) for r in unreadable] == ["unreadable LiveCodeBench row (no_tests)"]
    assert unreadable[0].record["question_id"] == "bad"


class FakeBackend:
    """Model 'good' answers correctly on odd samples; 'bad' never writes code."""

    def __init__(self, name, model, thinking=False, **options):
        self.model = model

    def generate(self, prompts, n, sampling):
        out = []
        for _ in prompts:
            samples = []
            for i in range(n):
                text = f"```python\nprint({'1' if i % 2 else '2'})\n```" if self.model == "good" else "no idea"
                samples.append(Sample(text=text, token_count=5, finish_reason="stop", truncated=False))
            out.append(samples)
        return out


class FakeJudge:
    def evaluate_batch(self, problems, submissions, mode="first-failure", deadline_s=None):
        return [Verdict(s.problem_id, s.submission_id, "AC" if "print(1)" in s.code else "WA") for s in submissions]

    def close(self):
        pass


def test_run_evaluation_side_by_side(tmp_path):
    bench = tmp_path / "bench.jsonl"
    items = [problem("a"), problem("b", platform="leetcode", difficulty="hard"), problem("old", date="2020-01-01")]
    bench.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in items))
    cfg = EvalModelConfig(n_samples=4, pass_at=[2], date_from="2025-01-01", judge_batch_size=3)
    result = EvalModel().run(cfg, bench, tmp_path / "eval", models={"base": "bad", "trained": "good"},
                             judge=FakeJudge(), backend_factory=FakeBackend, progress=False)
    metrics = result.metrics
    assert result.stats["kept"] == 2 and result.stats["rejected_by_reason"] == {"before 2025-01-01": 1}
    assert json.loads((tmp_path / "eval" / "stats.json").read_text()) == result.stats
    base, trained = metrics["models"]["base"], metrics["models"]["trained"]
    assert base["overall"]["pass@1"] == 0.0 and base["samples"]["no_code"] == 8
    assert trained["overall"]["pass@1"] == 0.5 and trained["overall"]["pass@2"] == pytest.approx(1 - 1 / 6)
    assert trained["by_platform"]["leetcode"] == {"problems": 1, "pass@1": 0.5, "pass@2": pytest.approx(5 / 6),
                                                  "pass@1_problems": 1, "pass@2_problems": 1, "unjudged_samples": 0}
    table = (tmp_path / "eval" / "table.md").read_text()
    assert "| All | 2 | 0.0 | 50.0 | +50.0 |" in table
    rows = [json.loads(line) for line in (tmp_path / "eval" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 16 and {r["status"] for r in rows} == {"no_code", "pass", "fail"}
    assert json.loads((tmp_path / "eval" / "metrics.json").read_text()) == metrics  # figures only
    settings = json.loads((tmp_path / "eval" / "settings.json").read_text())
    assert settings["models"] == {"base": "bad", "trained": "good"} and settings["n_samples"] == 4


def test_missing_local_model_is_a_clear_error(tmp_path):
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps(problem("a").to_dict()) + "\n")
    with pytest.raises(InputError, match="does not exist"):
        EvalModel().run(EvalModelConfig(), bench, tmp_path / "eval",
                        models={"trained": str(tmp_path / "nope")}, judge=FakeJudge(),
                        backend_factory=FakeBackend)


def test_bad_benchmark_records_are_rejected_and_accounted(tmp_path):
    bench = tmp_path / "bench.jsonl"
    items = [problem("a"), problem("b", platform="leetcode"), problem("old", date="2020-01-01")]
    lines = [json.dumps(p.to_dict()) for p in items]
    lines += [json.dumps({**problem("odd").to_dict(), "style": "interactive"}),
              json.dumps(problem("a").to_dict()), "{not json", json.dumps(problem("none", tests=False).to_dict())]
    bench.write_text("\n".join(lines) + "\n")
    cfg = EvalModelConfig(n_samples=2, date_from="2025-01-01")
    b = EvalModel().run(cfg, bench, tmp_path / "eval", models={"trained": "good"}, judge=FakeJudge(),
                        backend_factory=FakeBackend).stats
    assert b["unit"] == "problems" and b["read"] == 7 == b["kept"] + b["rejected"] and b["kept"] == 2
    assert b["rejected_by_reason"] == {"before 2025-01-01": 1, "duplicate id": 1, "invalid record": 2,
                                       "unreadable record": 1}
    assert b["samples"] == 4 and b["unjudged_samples"] == {"trained": 0}
    rejects = [json.loads(line) for line in (tmp_path / "eval" / "rejects.jsonl").read_text().splitlines()]
    assert len(rejects) == 5 and all(r["stage"] == "eval-model" and r["reason"] for r in rejects)
    # Nothing left to evaluate is a clear error, and the reasons are still written.
    with pytest.raises(InputError, match="no problems left to evaluate"):
        EvalModel().run(EvalModelConfig(date_from="2030-01-01"), bench, tmp_path / "eval2",
                        models={"trained": "good"}, judge=FakeJudge(), backend_factory=FakeBackend)
    assert len((tmp_path / "eval2" / "rejects.jsonl").read_text().splitlines()) == 7
    with pytest.raises(InputError, match="benchmark .* does not exist"):
        EvalModel().run(EvalModelConfig(), tmp_path / "absent.jsonl", tmp_path / "eval3",
                        models={"trained": "good"}, judge=FakeJudge(), backend_factory=FakeBackend)


class SlowJudge:
    """Judges every submission AC except those it 'did not reach' before the deadline (every other one)."""

    def __init__(self):
        self.count = 0

    def evaluate_batch(self, problems, submissions, mode="first-failure", deadline_s=None):
        from microcoder.pipeline.schema import Verdict

        out = []
        for s in submissions:
            self.count += 1
            late = self.count % 2 == 0 or s.problem_id == "q1"
            out.append(Verdict(s.problem_id, s.submission_id, "TLE" if late else "AC",
                               reason="batch deadline" if late else None))
        return out

    def close(self):
        pass


def test_unjudged_samples_never_count_as_failures_in_pass_at_k():
    from types import SimpleNamespace

    from microcoder.pipeline.schema import Problem, TestCase
    from microcoder.pipeline.scoring import Scorer
    from microcoder.training.eval_model import score_samples

    problems = [Problem(id=f"q{i}", source="t", statement="Echo.", style="stdio", tests=[TestCase("1\n", "1\n")],
                        platform="atcoder", difficulty="easy") for i in range(2)]
    sample = SimpleNamespace(text="```python\nprint(input())\n```", token_count=5, truncated=False)
    samples = [[sample] * 4, [sample] * 1]  # q1 has one sample, unjudged: no pass@1 for it
    with Scorer(problems, judge=SlowJudge(), deadline_s=60.0) as scorer:
        rows = score_samples(problems, samples, scorer, batch_size=8, model_name="m", progress=False)
    agg = model_metrics(rows, problems, [1, 2])
    assert agg["by_platform"]["atcoder"]["pass@1_problems"] == 1  # q1: its one sample unjudged, no pass@1
    # every judged sample was correct: the slow judge must not drag pass@k below 100%
    assert agg["overall"]["pass@1"] == 1.0 and agg["overall"]["pass@2"] == 1.0
    assert agg["overall"]["pass@1_problems"] == 1 and agg["overall"]["unjudged_samples"] == 3
    assert agg["samples"]["deadline"] == 3
    assert [r["status"] for r in rows] == ["pass", "deadline", "pass", "deadline", "deadline"]
    table = render_table({"m": agg}, [1])
    assert "did not finish" in table and "m 3" in table


def test_cli_errors_are_one_line_exit_2_and_help_lists_the_fields(tmp_path):
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    runner = CliRunner()
    none = str(tmp_path / "none.yaml")
    cases = [
        (["--benchmark", str(tmp_path / "absent.jsonl"), "--model", "base=x"], "benchmark"),
        (["--model", "just-a-name"], "--model expects name=path"),
        (["--set", "workers=4"], "unknown eval_model params ['workers']"),
        (["--set", "output_dir=x"], "unknown eval_model params ['output_dir']"),
        (["--set", "evaluator.timeout_scale=fast"], "evaluator.timeout_scale"),
    ]
    for args, message in cases:
        result = runner.invoke(app, ["eval-model", *args, "--out-dir", str(tmp_path / "out"), "--params", none])
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "eval-model: error:" in result.output, (args, result.output)
        assert "Traceback" not in result.output
    result = runner.invoke(app, ["eval-model", "--help"], terminal_width=200)
    assert result.exit_code == 0
    for name in ("n_samples (int)", "pass_at", "deadline_s", "executor", "--benchmark", "--model", "evaluator"):
        assert name in result.output, name
