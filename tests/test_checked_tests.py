"""Functional tests are checked as JSON once: the file a stage writes lists the digests of the
tests it checked, and a reader takes them as checked (pipeline/checked_tests.py)."""

from __future__ import annotations

import dataclasses

import pyarrow.parquet as pq
import pytest

from microcoder.pipeline import checked_tests, schema
from microcoder.pipeline.inputs import load_problems
from microcoder.pipeline.io import write_problems
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase
from microcoder.pipeline.stage import Stage


def _problem(i: int, tests: list[TestCase] | None = None) -> Problem:
    return Problem(id=f"f/{i}", source="t", statement="Add two numbers.", style="functional", entry_point="add",
                   tests=tests or [TestCase(f"{i}\n2", str(i + 2)), TestCase(f"[{i}, 2]\n[3]", f"[{i}, 2, 3]")],
                   reference_solutions=[ReferenceSolution("python", "def add(a, b):\n    return a + b\n")])


@pytest.fixture
def fresh(monkeypatch):
    """An empty registry (as in a new process) and a count of the JSON checks made."""
    monkeypatch.setattr(checked_tests, "_checked", set())
    calls = []
    real = schema.is_json
    monkeypatch.setattr(schema, "is_json", lambda text: calls.append(text) or real(text))
    return calls


def test_a_reader_takes_the_writers_checks(tmp_path, fresh):
    problems = [_problem(i) for i in range(3)]
    assert all(schema.validate_problem(p) == [] for p in problems)
    assert len(fresh) == 2 * 3 * 3  # the first check: every line and output (2 lines + output, 2 tests, 3 rows)
    write_problems(tmp_path / "p.parquet", problems)
    checked_tests._checked.clear()  # the next stage: a new process
    fresh.clear()
    loaded = load_problems(tmp_path / "p.parquet")
    assert loaded.problems == problems and not loaded.rejects
    assert fresh == []


def test_an_edited_test_is_checked_again(tmp_path, fresh):
    p = _problem(0)
    assert schema.validate_problem(p) == []
    write_problems(tmp_path / "p.parquet", [p])
    table = pq.read_table(tmp_path / "p.parquet")
    rows = table.to_pylist()
    rows[0]["tests"][1]["output"] = "[1, 2, 3"  # no longer JSON; the file keeps the old digests
    pq.write_table(table.from_pylist(rows, schema=table.schema), tmp_path / "p.parquet")
    assert checked_tests.METADATA_KEY in pq.read_schema(tmp_path / "p.parquet").metadata
    checked_tests._checked.clear()
    loaded = load_problems(tmp_path / "p.parquet")
    assert not loaded.problems and "tests[1].output: not JSON" in loaded.rejects[0].reason


def test_unchecked_tests_are_not_listed_and_the_list_is_content_only(tmp_path, fresh):
    a, b = _problem(1), _problem(2)
    assert schema.validate_problem(a) == []  # b never checked here
    assert checked_tests.metadata_of([b.to_row()]) == {}
    schema.validate_problem(b)
    one = checked_tests.metadata_of([a.to_row(), b.to_row()])
    checked_tests._checked.clear()
    schema.validate_problem(b)  # the other order
    schema.validate_problem(a)
    assert checked_tests.metadata_of([a.to_row(), b.to_row()]) == one  # the same bytes for the same rows


@pytest.mark.parametrize("value", [b"not base64!", b"QUJD", b""])
def test_a_malformed_list_leaves_every_test_to_be_checked(value, fresh):
    assert checked_tests.take_metadata({checked_tests.METADATA_KEY: value}) == 0
    assert checked_tests._checked == set()


def test_the_digest_tells_input_from_output():
    assert checked_tests.digest({"input": "1\n2", "output": "3"}) != checked_tests.digest({"input": "1\n23", "output": ""})
    assert checked_tests.digest({"input": "\ud800", "output": "1"}) != checked_tests.digest({"input": "", "output": "1"})


@dataclasses.dataclass
class _Config:
    """The stage below has no settings."""


class _Breaks(Stage):
    """A stage with a bug: it writes a functional test that is not JSON."""

    name = "breaks"
    config = _Config

    def process(self, problems, ctx):
        return [dataclasses.replace(problems[0], tests=[TestCase("1\n2", "3"), TestCase("1\n2", "three")]), problems[1]]


def test_a_stage_writes_no_row_its_reader_would_reject(tmp_path, fresh):
    write_problems(tmp_path / "in.parquet", [_problem(0), _problem(1)])
    stats = _Breaks().run(_Config(), tmp_path / "in.parquet", tmp_path / "out")
    assert stats["read"] == 2 and stats["kept"] == 1 and stats["rejected"] == 1
    assert [p.id for p in load_problems(tmp_path / "out" / "problems.parquet").problems] == ["f/1"]
    assert "a bug in this stage" in (tmp_path / "out" / "rejects.jsonl").read_text()
