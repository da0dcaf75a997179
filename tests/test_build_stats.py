from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.io import write_problems
from pipeline.rollout.runner import write_shard
from pipeline.schema import Problem, TestCase
from pipeline.stats import format_table, query, stage_files, summary


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
    from pipeline.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["stats", "SELECT source, count(*) AS n FROM curated GROUP BY 1 ORDER BY 1",
                            "--data-dir", str(data_dir), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == [{"source": "cf", "n": 3}, {"source": "lc", "n": 2}]
    r = runner.invoke(app, ["stats", "--data-dir", str(data_dir), "--stage", "rollouts"])
    assert r.exit_code == 0 and r.output.startswith("rollouts: 4 rows; columns: problem_id, sample_index")
    r = runner.invoke(app, ["stats", "SELECT * FROM nowhere", "--data-dir", str(data_dir)])
    assert r.exit_code == 2 and "nowhere" in r.output
