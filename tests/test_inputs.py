"""The later stages' input reader: clear errors for a bad input, per-record rejects for bad records."""

from __future__ import annotations

import json

import pytest

from microcoder.pipeline.inputs import (
    InputError,
    check_model_path,
    load_problems,
    parquet_files,
    row_count,
)
from microcoder.pipeline.io import write_problems
from microcoder.pipeline.rollout.runner import RolloutConfig
from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.stage import load_config


def problem(pid: str, **kw) -> Problem:
    return Problem(**{"id": pid, "source": "s", "statement": "S.", "style": "stdio", "tests": [TestCase("1", "1")], **kw})


def test_folders_skip_hidden_files_and_prefer_the_hub_layout(tmp_path):
    write_problems(tmp_path / "shards" / "part-0.parquet", [problem("a")])
    write_problems(tmp_path / "shards" / ".part-1.parquet.x.parquet", [problem("half-written")])
    write_problems(tmp_path / "shards" / ".staging" / "part-2.parquet", [problem("staged")])
    assert [f.name for f in parquet_files(tmp_path / "shards")] == ["part-0.parquet"]
    assert row_count(tmp_path / "shards") == 1 and row_count(tmp_path / "absent") == 0
    hub = tmp_path / "curated"
    write_problems(hub / "data" / "train-00000-of-00001.parquet", [problem("b"), problem("c")])
    write_problems(hub / "stray.parquet", [problem("stray")])
    assert [p.id for p in load_problems(hub).problems] == ["b", "c"]


def test_records_are_rejected_with_reasons(tmp_path):
    path = tmp_path / "p.jsonl"
    lines = [problem("a").to_dict(), problem("a").to_dict(), {**problem("b").to_dict(), "style": "odd"},
             {**problem("c").to_dict(), "meta": "{not json"}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n[1]\n{broken\n")
    loaded = load_problems(path)
    assert [p.id for p in loaded.problems] == ["a"] and loaded.read == 6
    assert [(r.id, r.reason.split(":")[0]) for r in loaded.rejects] == [
        ("a", "duplicate id"), ("b", "invalid record"), ("c", "not a Problem record"), (None, "unreadable record"),
        (None, "unreadable record")]
    assert loaded.rejects[0].record["id"] == "a"  # the whole record is kept with the reason


def test_whole_input_errors(tmp_path):
    with pytest.raises(InputError, match="problems .*absent.parquet does not exist"):
        load_problems(tmp_path / "absent.parquet")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match="not a readable parquet file"):
        load_problems(bad)
    with pytest.raises(InputError, match="not a readable parquet file"):
        row_count(bad)
    with pytest.raises(InputError, match="params `rollout`"):
        load_config(RolloutConfig, "rollout", tmp_path / "none.yaml", ["k=0"])  # a ConfigError is an InputError
    (tmp_path / "models").mkdir()
    with pytest.raises(InputError, match="model .*models/tiny does not exist"):
        check_model_path(str(tmp_path / "models" / "tiny"))
    check_model_path("Qwen/Qwen3-4B")  # a Hub id is left to the Hub
