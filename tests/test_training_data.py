"""Training input: curated Hub-layout shards or Problem shards, the fallback, rejects, prompts."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from microcoder.pipeline.io import problems_to_table, write_problems
from microcoder.pipeline.schema import Problem, TestCase
from microcoder.training.data import load_training_problems, prompt_dataset, resolve_input


def problem(pid: str, **kw) -> Problem:
    return Problem(**{"id": pid, "source": "t", "statement": f"Statement {pid}.", "style": "stdio",
                      "tests": [TestCase("1\n", "2\n")], **kw})


def test_curated_layout_with_its_own_prompts(tmp_path):
    curated = tmp_path / "curated"
    (curated / "data").mkdir(parents=True)
    rows = [problem("a"), problem("b")]
    rows[0].extra["prompt"] = [{"role": "user", "content": "the curated prompt"}]
    rows[1].extra["prompt"] = None
    pq.write_table(problems_to_table(rows), curated / "data" / "train-00000-of-00001.parquet")
    pq.write_table(problems_to_table([problem("other")]), curated / "stray.parquet")  # not a train shard
    assert resolve_input(curated, tmp_path / "missing") == curated
    loaded = load_training_problems(curated)
    assert [p.id for p in loaded.problems] == ["a", "b"]
    ds = prompt_dataset(loaded.problems)
    assert ds[0]["prompt"] == [{"role": "user", "content": "the curated prompt"}]
    assert ds[1]["prompt"][-1]["role"] == "user" and "Statement b." in ds[1]["prompt"][-1]["content"]
    assert ds["problem_id"] == ["a", "b"]
    rebuilt = prompt_dataset(loaded.problems, use_dataset_prompts=False)
    assert "Statement a." in rebuilt[0]["prompt"][-1]["content"]


def test_fallback_only_when_the_input_does_not_exist(tmp_path):
    from microcoder.pipeline.inputs import InputError

    validated = tmp_path / "validated.parquet"
    write_problems(validated, [problem("a")])
    assert resolve_input(tmp_path / "absent", validated) == validated
    # An input that exists but is empty means the filter/build kept nothing: never train on the
    # unfiltered fallback instead.
    empty = tmp_path / "curated"
    (empty / "data").mkdir(parents=True)
    with pytest.raises(InputError, match="holds no training problems"):
        resolve_input(empty, validated)
    with pytest.raises(InputError, match="neither does the fallback"):
        resolve_input(tmp_path / "absent", tmp_path / "also-absent")
    write_problems(tmp_path / "empty.parquet", [])
    with pytest.raises(InputError, match="fallback .* is empty"):
        resolve_input(tmp_path / "absent", tmp_path / "empty.parquet")


def test_rejects_are_accounted_for(tmp_path):
    path = tmp_path / "p.parquet"
    items = [problem("a"), problem("a"), problem("none", tests=[]), problem("fn", style="functional"),
             problem("b"), problem("c"), problem("add", style="functional", entry_point="add",
                                                 tests=[TestCase("1\n2", "3")])]
    write_problems(path, items)
    loaded = load_training_problems(path, max_problems=2)
    assert [p.id for p in loaded.problems] == ["a", "b"]
    assert loaded.read == 7
    assert [(r["id"], r["reason"]) for r in loaded.rejects] == [
        ("a", "duplicate id: an earlier record with this id is kept"),
        ("none", "invalid record: tests: empty (at least one test case is needed)"),
        ("fn", "invalid record: entry_point: required for functional problems"), ("c", "over max_problems=2"),
        ("add", "over max_problems=2")]
    cpp = load_training_problems(path, language="cpp")
    assert ("add", "functional problem cannot be answered in cpp") in [(r["id"], r["reason"]) for r in cpp.rejects]


def test_json_string_columns_are_parsed(tmp_path):
    row = problem("a").to_row()
    row["tests"] = json.dumps(row["tests"])
    row["tags"] = json.dumps(["dp"])
    path = tmp_path / "flat.parquet"
    pq.write_table(pa.Table.from_pylist([row, {**row, "id": "bad", "tests": "not json"}]), path)
    loaded = load_training_problems(path)
    assert [p.id for p in loaded.problems] == ["a"] and loaded.problems[0].tags == ["dp"]
    assert loaded.rejects[0]["id"] == "bad" and loaded.rejects[0]["reason"].startswith("not a Problem record")
