from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from microcoder.pipeline.difficulty.filter import Filter, FilterConfig, histogram
from microcoder.pipeline.generation.backends import Sample
from microcoder.pipeline.io import read_jsonl, read_problems, write_problems
from microcoder.pipeline.rollout.runner import write_shard
from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.stage import build_config


def problem(i: int) -> Problem:
    return Problem(id=f"p{i:02d}", source="seed", statement=f"statement-{i:02d}", style="stdio",
                   tests=[TestCase("1\n", "1\n")], extra={"validation": {"verified": True}})


def rollout_rows(pid: str, correct: int, n: int = 4, se: int = 0):
    statuses = ["AC"] * correct + ["WA"] * (n - correct) + ["SE"] * se
    return [{"problem_id": pid, "sample_index": j, "completion": "", "tokens": 3, "finish_reason": "stop",
             "truncated": False, "status": s, "passed": int(s == "AC"), "total": 1, "reason": None}
            for j, s in enumerate(statuses)]


class ScoreBackend:
    """A rater whose score tracks the problem's hidden difficulty (higher = harder)."""

    def __init__(self, difficulty: dict[str, int], broken: set[str] = frozenset()):
        self.difficulty, self.broken = difficulty, broken

    def generate(self, prompts, n, sampling):
        out = []
        for messages in prompts:
            key = next(k for k in self.difficulty if k in messages[1]["content"])
            d = self.difficulty[key]
            text = "no idea" if key in self.broken else json.dumps(
                {"algorithmic_thinking": d, "implementation_complexity": d, "mathematical_reasoning": d,
                 "edge_cases": d, "problem_comprehension": d})
            out.append([Sample(text, 5, "stop", False)])
        return out


@pytest.fixture
def stage_inputs(tmp_path):
    problems = [problem(i) for i in range(14)]
    write_problems(tmp_path / "validated.parquet", problems)
    rollouts = tmp_path / "rollouts"
    rows = []
    # p00..p09 rolled out: correct = 4 - i // 2 -> pass rates 1, 1, .75, .75, .5, .5, .25, .25, 0, 0
    for i in range(10):
        rows += rollout_rows(f"p{i:02d}", 4 - i // 2, se=1 if i == 3 else 0)
    rows += rollout_rows("ghost", 2)  # not in the problems: ignored, counted
    write_shard(rollouts / "shards" / "part-00000.parquet", rows)
    return tmp_path, problems


def test_band_only(stage_inputs):
    tmp, problems = stage_inputs
    report = Filter().run(FilterConfig(), tmp / "validated.parquet", tmp / "out", rollouts=tmp / "rollouts")
    kept = {p.id: p for p in read_problems(tmp / "out" / "problems.parquet")}
    assert sorted(kept) == [f"p{i:02d}" for i in range(2, 10)]
    assert kept["p03"].extra["n_samples"] == 4 and kept["p03"].extra["pass_rate"] == 0.75  # SE left out
    assert kept["p08"].extra["unsolved"] is True and kept["p08"].extra["selection_reason"] == "unsolved"
    assert kept["p04"].extra["unsolved"] is False and kept["p04"].extra["pass_at_k"] == pytest.approx(1.0)
    assert kept["p04"].extra["validation"] == {"verified": True}  # upstream columns ride along
    assert kept["p04"].extra["predicted_pass_rate"] is None
    rejects = {r["id"]: r for _, r, _ in read_jsonl(tmp / "out" / "rejects.jsonl")}
    assert sorted(rejects) == ["p00", "p01", "p10", "p11", "p12", "p13"]
    assert rejects["p00"]["reason"].startswith("too_easy: pass rate 1.000 (4/4 samples)")
    assert rejects["p10"]["reason"].startswith("unmeasured: no rollouts and no calibrated prediction")
    assert report["by_reason"] == {"in_band": 6, "too_easy": 2, "unmeasured": 4, "unsolved": 2}
    assert report["kept"] + report["rejected"] == report["read"] == 14
    assert report["rollouts_not_in_problems"] == 1 and report["system_errors"] == 1
    assert report["calibration"] == {"fitted": False, "reason": "predictor disabled"}
    # stats.json: the shared vocabulary and the filter's figures; the settings apart.
    stats = json.loads((tmp / "out" / "stats.json").read_text())
    assert stats == {"unit": "problems", "read": 14, "kept": 8, "rejected": 6,
                     "rejected_by_reason": {"too_easy": 2, "unmeasured": 4},
                     "kept_by_reason": {"in_band": 6, "unsolved": 2}, "measured": 10, "system_errors": 1,
                     "rollouts_not_in_problems": 1, "out_of_band": 2}
    settings = json.loads((tmp / "out" / "settings.json").read_text())
    assert settings["max_pass_rate"] == 0.75 and settings["predict"]["calibration"] == "isotonic"
    schema = pq.read_schema(tmp / "out" / "problems.parquet")
    assert str(schema.field("predicted_pass_rate").type) == "double"
    assert str(schema.field("unsolved").type) == "bool"


def test_predict_calibrate_select(stage_inputs):
    tmp, _ = stage_inputs
    # Rater difficulty rises as the pass rate falls; p10 rated easy, p11 hard, p12 medium, p13 unparseable.
    difficulty = {f"statement-{i:02d}": 1 + i // 2 for i in range(10)}
    difficulty |= {"statement-10": 1, "statement-11": 5, "statement-12": 3, "statement-13": 3}
    cfg = build_config(FilterConfig, {"predict": {"enabled": True, "min_calibration_problems": 5,
                                                        "cv_folds": 2, "retries": 1}})
    backend = ScoreBackend(difficulty, broken={"statement-13"})
    report = Filter().run(cfg, tmp / "validated.parquet", tmp / "out", rollouts=tmp / "rollouts",
                          predict_backend=backend)
    cal = report["calibration"]
    assert cal["fitted"] and cal["method"] == "isotonic" and cal["n_problems"] == 10
    assert cal["spearman"] < -0.9 and cal["cv_mae"] is not None
    kept = {p.id: p.extra for p in read_problems(tmp / "out" / "problems.parquet")}
    rejects = {r["id"]: r["reason"] for _, r, _ in read_jsonl(tmp / "out" / "rejects.jsonl")}
    assert kept["p11"]["selection_reason"] == "predicted_in_band"
    assert kept["p11"]["predicted_pass_rate"] == pytest.approx(0.0)
    assert kept["p11"]["unsolved"] is None and kept["p11"]["n_samples"] == 0
    assert kept["p12"]["predicted_pass_rate"] == pytest.approx(0.5)
    assert rejects["p10"].startswith("predicted_too_easy: calibrated predicted pass rate 1.000")
    assert rejects["p13"].startswith("unmeasured") and "prediction missing: not valid JSON" in rejects["p13"]
    assert kept["p04"]["difficulty_scores"]["algorithmic_thinking"] == 3
    assert kept["p04"]["predicted_difficulty"] == pytest.approx(3.0)
    assert report["prediction"]["missing"] == 1 and report["prediction"]["missing_ids"] == ["p13"]
    assert report["prediction"]["attempts"] == {1: 13, 2: 1}


def test_histogram_bins():
    assert histogram([0.0, 0.05, 0.1, 0.99, 1.0])["0.0-0.1"] == 2
    assert histogram([1.0])["0.9-1.0"] == 1


def test_bad_and_duplicate_records_are_rejected_and_counted(stage_inputs):
    tmp, problems = stage_inputs
    bad = [Problem(id="no-tests", source="seed", statement="s", style="stdio", tests=[]),
           Problem(id="odd", source="seed", statement="s", style="interactive", tests=[TestCase("1", "1")]),
           Problem(id="p04", source="seed", statement="a second p04", style="stdio", tests=[TestCase("1", "1")])]
    write_problems(tmp / "mixed.parquet", problems + bad)
    report = Filter().run(FilterConfig(), tmp / "mixed.parquet", tmp / "out", rollouts=tmp / "rollouts")
    kept = [p.id for p in read_problems(tmp / "out" / "problems.parquet")]
    assert len(kept) == len(set(kept)) == 8
    rejects = [(r["id"], r["reason"]) for _, r, _ in read_jsonl(tmp / "out" / "rejects.jsonl")]
    assert ("p04", "duplicate id: an earlier record with this id is kept") in rejects
    assert any(i == "no-tests" and "tests: empty" in why for i, why in rejects)
    assert any(i == "odd" and "style" in why for i, why in rejects)
    assert report["read"] == 17 == report["kept"] + report["rejected"] == sum(report["by_reason"].values())
    # the reader's rejects counted by the one rule (microcoder.pipeline.stage.reason_key), as in every stage
    assert report["rejected_by_reason"]["duplicate id"] == 1 and report["rejected_by_reason"]["invalid record"] == 2


def test_only_system_errors_is_unmeasured_with_the_reason(tmp_path):
    write_problems(tmp_path / "p.parquet", [problem(0)])
    rows = rollout_rows("p00", 0, n=0, se=3)
    write_shard(tmp_path / "rollouts" / "shards" / "part-00000.parquet", rows)
    Filter().run(FilterConfig(), tmp_path / "p.parquet", tmp_path / "out", rollouts=tmp_path / "rollouts")
    (reject,) = [r for _, r, _ in read_jsonl(tmp_path / "out" / "rejects.jsonl")]
    assert reject["reason"].startswith("unmeasured: all 3 samples were system errors (SE)")


def test_missing_or_stale_rollouts_are_errors(stage_inputs):
    from microcoder.pipeline.inputs import InputError
    from microcoder.pipeline.rollout.runner import judge_hash

    tmp, problems = stage_inputs
    with pytest.raises(InputError, match="rollouts folder .* does not exist"):
        Filter().run(FilterConfig(), tmp / "validated.parquet", tmp / "out", rollouts=tmp / "no-rollouts")
    with pytest.raises(InputError, match="filter input .* does not exist"):
        Filter().run(FilterConfig(), tmp / "absent.parquet", tmp / "out", rollouts=tmp / "rollouts")
    # Samples judged against p00's old tests: the rollout stage was not rerun after validate.
    old = problem(0)
    old.tests = [TestCase("2\n", "2\n")]
    rows = [{**r, "judge_hash": judge_hash(old)} for r in rollout_rows("p00", 2)]
    write_shard(tmp / "rollouts" / "shards" / "part-00000.parquet", rows)
    with pytest.raises(InputError, match="rerun `microcoder rollout`"):
        Filter().run(FilterConfig(), tmp / "validated.parquet", tmp / "out", rollouts=tmp / "rollouts")
    rows = [{**r, "judge_hash": judge_hash(problems[0])} for r in rows]
    write_shard(tmp / "rollouts" / "shards" / "part-00000.parquet", rows)
    report = Filter().run(FilterConfig(), tmp / "validated.parquet", tmp / "out", rollouts=tmp / "rollouts")
    assert report["measured"] == 1 and report["kept"] == 1 and report["by_reason"]["unmeasured"] == 13


def test_predict_section_is_typed(tmp_path):
    """`filter.predict` is a typed section: a wrong type or an unknown key is a one-line params error."""
    from microcoder.pipeline.difficulty.predict import PredictConfig
    from microcoder.pipeline.stage import ConfigError

    cfg = build_config(FilterConfig, {"predict": {"enabled": True, "temperature": 1}})
    assert isinstance(cfg.predict, PredictConfig) and cfg.predict.temperature == 1.0 and cfg.predict.enabled
    with pytest.raises(ConfigError, match=r"unknown FilterConfig.predict params \['temprature'\]; valid: \["):
        build_config(FilterConfig, {"predict": {"temprature": 0.5}})
    with pytest.raises(ConfigError, match="FilterConfig.predict.retries`: expected int, got 'two'"):
        build_config(FilterConfig, {"predict": {"retries": "two"}})
    with pytest.raises(ConfigError, match="predict.weights must have exactly the keys"):
        build_config(FilterConfig, {"predict": {"weights": {"edge_cases": 1.0}}})


def test_filter_command_contract(stage_inputs):
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    tmp, _ = stage_inputs
    runner = CliRunner()
    args = ["filter", "--problems", str(tmp / "validated.parquet"), "--rollouts", str(tmp / "rollouts"),
            "--out-dir", str(tmp / "out"), "--params", str(tmp / "none.yaml")]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "filter: read 14, kept 8 {'in_band': 6, 'unsolved': 2}, rejected 6 {'too_easy': 2, 'unmeasured': 4}" in r.output
    r = runner.invoke(app, [*args, "--set", "predict.retries=two"])
    assert r.exit_code == 2 and "filter: error: params `filter.predict.retries`: expected int" in r.output
    r = runner.invoke(app, ["filter", "--help"])
    assert r.exit_code == 0 and "predict.calibration" in r.output and "max_pass_rate" in r.output
