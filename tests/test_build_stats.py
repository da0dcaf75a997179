from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from microcoder.pipeline.io import write_problems
from microcoder.pipeline.rollout.runner import write_shard
from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.stats import format_table, query, stage_files, summary


@pytest.fixture
def data_dir(tmp_path):
    data = tmp_path / "data"
    probs = [Problem(id=f"p{i}", source="cf" if i < 3 else "lc", statement="s", style="stdio",
                     tests=[TestCase("1\n", "1\n")]) for i in range(5)]
    write_problems(data / "validated" / "problems.parquet", probs)
    pq.write_table(pa.table({"id": ["p0"], "ok": [True]}), data / "validated" / "report.parquet")
    rows = [{"problem_id": "p0", "sample_index": j, "completion": "", "tokens": 2, "finish_reason": "stop",
             "truncated": False, "status": "AC" if j else "WA", "passed": 1, "total": 1, "reason": None}
            for j in range(4)]
    write_shard(data / "rollouts" / "shards" / "part-00000.parquet", rows[:2])
    write_shard(data / "rollouts" / "shards" / "part-00001.parquet", rows[2:])
    write_problems(data / "curated" / "data" / "train-00000-of-00002.parquet", probs[:2])
    write_problems(data / "curated" / "data" / "train-00001-of-00002.parquet", probs[2:])
    return data


def test_views_per_stage(data_dir):
    assert set(stage_files(data_dir, "validated")) == {"validated", "validated_report"}
    assert len(stage_files(data_dir, "rollouts")["rollouts"]) == 2
    assert stage_files(data_dir, "raw") == {}
    cols, rows = query("SELECT source, count(*) AS n FROM curated GROUP BY 1 ORDER BY 1", data_dir)
    assert cols == ["source", "n"] and rows == [("cf", 3), ("lc", 2)]
    _, rows = query("SELECT status, count(*) FROM rollouts GROUP BY 1 ORDER BY 1", data_dir)
    assert rows == [("AC", 3), ("WA", 1)]
    _, rows = query("SELECT count(*) FROM validated v JOIN validated_report r USING (id)", data_dir)
    assert rows == [(1,)]
    assert [v["view"] for v in summary(data_dir, ["curated"])] == ["curated"]
    with pytest.raises(ValueError, match="unknown stage"):
        query("SELECT 1", data_dir, ["nope"])
    lines = format_table(["a"], [(None,), ("x" * 80,)]).splitlines()
    assert lines[2].rstrip() == "NULL" and lines[3] == "x" * 57 + "..."


def test_stats_command(data_dir):
    from microcoder.pipeline.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["stats", "SELECT source, count(*) AS n FROM curated GROUP BY 1 ORDER BY 1",
                            "--data-dir", str(data_dir), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == [{"source": "cf", "n": 3}, {"source": "lc", "n": 2}]
    r = runner.invoke(app, ["stats", "--data-dir", str(data_dir), "--stage", "rollouts"])
    assert r.exit_code == 0 and r.output.startswith("rollouts: 4 rows; columns: problem_id, sample_index")
    r = runner.invoke(app, ["stats", "SELECT * FROM nowhere", "--data-dir", str(data_dir)])
    assert r.exit_code == 2 and "nowhere" in r.output


DVC_YAML = """stages:
  tiny-model:
    cmd: microcoder tiny-model
    outs: [models/tiny]
  scrape:
    cmd: microcoder scrape
    metrics:
      - data/raw/stats.json:
          cache: false
  filter:
    cmd: microcoder filter
    metrics:
      - data/filtered/stats.json
  build:
    cmd: microcoder build
    metrics:
      - data/curated/stats.json:
          cache: false
  train:
    cmd: microcoder train
    metrics:
      - data/train/metrics.json:
          cache: false
  eval-model:
    cmd: microcoder eval-model
    metrics:
      - data/eval/stats.json:
          cache: false
      - data/eval/metrics.json:
          cache: false
"""


@pytest.fixture
def pipeline_tree(tmp_path):
    from microcoder.pipeline.io import write_json

    (tmp_path / "dvc.yaml").write_text(DVC_YAML)
    write_json(tmp_path / "data" / "raw" / "stats.json", {
        "unit": "problems", "read": 12, "kept": 5, "rejected": 7,
        "rejected_by_reason": {"bad_json": 2, "invalid_problem": 2, "duplicate_id": 2, "before_since": 1},
        "sources": {"seed": {"read": 12}}})
    write_json(tmp_path / "data" / "filtered" / "stats.json", {
        "unit": "problems", "read": 5, "kept": 5, "rejected": 0, "rejected_by_reason": {}, "measured": 5})
    write_json(tmp_path / "data" / "train" / "metrics.json", {"reward_mean": 0.5})
    write_json(tmp_path / "data" / "eval" / "stats.json", {
        "unit": "problems", "read": 3, "kept": 3, "rejected": 0, "rejected_by_reason": {}})
    write_json(tmp_path / "data" / "eval" / "metrics.json", {"models": {}})
    return tmp_path


def test_pipeline_summary_is_one_row_per_stage_from_dvc_yaml(pipeline_tree):
    from microcoder.pipeline.summary import format_summary, pipeline_summary

    table = pipeline_summary(pipeline_tree / "dvc.yaml")
    # dvc.yaml order; a stage's extra metrics file adds no row once its stats.json has one
    assert table["stage"].to_list() == ["scrape", "filter", "build", "train", "eval-model"]
    assert table["status"].to_list() == ["ok", "ok", "not run", "figures only", "ok"]
    scrape = table.row(0, named=True)
    assert (scrape["unit"], scrape["read"], scrape["kept"], scrape["rejected"]) == ("problems", 12, 5, 7)
    assert scrape["top_reasons"] == "bad_json 2, duplicate_id 2, invalid_problem 2, +1 more"
    assert table.row(2, named=True)["read"] is None
    text = format_summary(table).splitlines()
    assert [c.strip() for c in text[0].split("|")[1:-1]] == ["stage", "unit", "read", "kept", "rejected",
                                                             "top_reasons", "status"]
    assert "| build " in text[4] and "not run" in text[4]


def test_stats_command_prints_the_summary(pipeline_tree, data_dir):
    from microcoder.pipeline.cli import app

    runner = CliRunner()
    dvc = str(pipeline_tree / "dvc.yaml")
    r = runner.invoke(app, ["stats", "--summary", "--dvc-file", dvc])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert len(lines) == 7 and lines[2].startswith("| scrape ") and "| 12 " in lines[2] and "not run" in lines[4]
    r = runner.invoke(app, ["stats", "--summary", "--dvc-file", dvc, "--format", "json"])
    assert [row["stage"] for row in json.loads(r.output)] == ["scrape", "filter", "build", "train", "eval-model"]
    # Without SQL: the table first, then the views.
    r = runner.invoke(app, ["stats", "--dvc-file", dvc, "--data-dir", str(data_dir)])
    assert r.exit_code == 0 and r.output.startswith("| stage ") and "\nrollouts: 4 rows; columns:" in r.output
    r = runner.invoke(app, ["stats", "--summary", "--dvc-file", str(pipeline_tree / "none.yaml")])
    assert r.exit_code == 2 and r.output.startswith("stats: error:") and "none.yaml does not exist" in r.output


def test_summary_has_a_test_strength_line_for_validate_and_testgen(tmp_path):
    """Issue 25: validate's TPR/TNR with counts and testgen's known-wrong / mutant TNR before -> after,
    one line each under the table, and in the rows (json / csv)."""
    from microcoder.pipeline.io import write_json
    from microcoder.pipeline.strength import record
    from microcoder.pipeline.summary import format_summary, pipeline_summary

    (tmp_path / "dvc.yaml").write_text(
        "stages:\n"
        "  testgen:\n    cmd: microcoder testgen\n    metrics: [data/testgen/stats.json]\n"
        "  validate:\n    cmd: microcoder validate\n    metrics: [data/validated/stats.json]\n"
        "  filter:\n    cmd: microcoder filter\n    metrics: [data/filtered/stats.json]\n")
    shared = {"unit": "problems", "read": 4, "kept": 4, "rejected": 0, "rejected_by_reason": {}}
    write_json(tmp_path / "data" / "testgen" / "stats.json", {**shared, "strength": {
        "before": {"known_wrong": record(2, 2, 5, 3), "mutants": record(0, 0, 40, 20)},
        "after": {"known_wrong": record(2, 2, 5, 5), "mutants": record(0, 0, 40, 35)}}})
    write_json(tmp_path / "data" / "validated" / "stats.json", {**shared, "strength": {
        "kept": record(12, 11, 10, 9), "before_caps": record(12, 11, 10, 10), "problems_measured": 4}})
    write_json(tmp_path / "data" / "filtered" / "stats.json", shared)
    table = pipeline_summary(tmp_path / "dvc.yaml")
    assert table["strength"].to_list() == [
        "known-wrong TNR 60.0% (3/5) -> 100.0% (5/5); mutant TNR 50.0% (20/40) -> 87.5% (35/40)",
        "TPR 91.7% (11/12), TNR 90.0% (9/10)", None]
    lines = format_summary(table).splitlines()
    assert lines[-2:] == [
        "test strength, testgen: known-wrong TNR 60.0% (3/5) -> 100.0% (5/5); mutant TNR 50.0% (20/40) -> 87.5% (35/40)",
        "test strength, validate: TPR 91.7% (11/12), TNR 90.0% (9/10)"]
    assert "strength" not in lines[0] and len(lines) == 5 + 2
    # a testgen of an older run (no `strength`) has no line
    write_json(tmp_path / "data" / "testgen" / "stats.json", {**shared, "mutants": {"mutants": 40}})
    assert pipeline_summary(tmp_path / "dvc.yaml")["strength"].to_list()[0] is None
