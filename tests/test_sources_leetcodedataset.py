"""LeetCodeDataset outputs in both releases' conventions: v0.1/v0.2 quote string answers, v0.3
writes `str(value)` (bare strings). The fixture `leetcodedataset_v03.jsonl` holds made-up rows in
the v0.3 layout (top-level starter_code / problem_description / difficulty), written for these tests."""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

import pytest

from microcoder.pipeline.schema import Problem, validate_problem
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import Reject, SourceContext
from microcoder.pipeline.sources.leetcode_outputs import (
    AmbiguousOutput,
    ResultType,
    expected_output,
    old_string_convention,
)

FIX = Path(__file__).parent / "fixtures" / "sources"


def run(path: Path, name: str = "lcd"):
    items = list(read_source("leetcodedataset", build_options("leetcodedataset", {"path": str(path)}),
                             SourceContext(name)))
    problems = {i.id: i for i in items if isinstance(i, Problem)}
    rejects = {i.id: i for i in items if isinstance(i, Reject)}
    for p in problems.values():
        assert validate_problem(p) == [], p.id
    return problems, rejects


def outputs(problem: Problem) -> list:
    return [json.loads(t.output) for t in problem.tests]


def test_v03_bare_strings_keep_their_type_from_the_return_annotation():
    problems, rejects = run(FIX / "leetcodedataset_v03.jsonl")
    digits = problems["lcd/digits-as-text"]
    assert outputs(digits) == ["8", "-1", "abcdef", "007"]  # never the ints 8 / -1 / 7
    assert digits.meta["string_outputs"] == "bare"
    assert digits.starter_code.startswith("class Solution") and digits.difficulty == "easy"
    assert digits.statement.startswith("Made-up problem") and digits.meta["question_id"] == 9001
    assert digits.meta["time_limit_stated"] is False and digits.meta["memory_limit_stated"] is False
    assert outputs(problems["lcd/first-negative"]) == [-1, 1]  # an int answer stays an int
    assert outputs(problems["lcd/split-words"]) == [["a", "b"], []]
    assert outputs(problems["lcd/is-even"]) == [True, False]
    old = problems["lcd/quoted-strings"]  # the v0.2 convention in the same file
    assert outputs(old) == ["001", "042"] and old.meta["string_outputs"] == "quoted"


def test_asserts_settle_what_the_annotation_cannot():
    problems, rejects = run(FIX / "leetcodedataset_v03.jsonl")
    maybe = problems["lcd/maybe-word"]  # Optional[str]: `is None` vs `== "null"`
    assert outputs(maybe) == [None, "null"] and maybe.meta["outputs_from_asserts"] == 2
    assert outputs(problems["lcd/untyped-settled"]) == ["8"]
    assert {k: r.code for k, r in rejects.items()} == {
        "lcd/maybe-word-unsettled": "ambiguous_output",
        "lcd/untyped-unsettled": "ambiguous_output",
        "lcd/int-but-string": "ambiguous_output",
    }
    assert "no assert settles it" in rejects["lcd/untyped-unsettled"].detail
    assert "does not fit the return annotation int" in rejects["lcd/int-but-string"].detail


@pytest.mark.parametrize(("text", "annotation", "old", "asserted", "expected"), [
    ("8", "str", False, None, "8"),
    ("-1", "str", False, None, "-1"),
    ("null", "str", False, None, "null"),
    ('"001"', "str", True, None, "001"),
    ("-1", "int", None, None, -1),
    ("None", "Optional[int]", None, None, None),
    ("[1, 2]", "List[int]", None, None, [1, 2]),
    ("2", "float", None, None, 2),
    ("7", "str", False, '"07"', "07"),  # the assert wins where it disagrees with the reading
    ("[1, 2]", "", None, None, [1, 2]),  # no annotation: a container is not a string
])
def test_expected_output_readings(text, annotation, old, asserted, expected):
    value, _ = expected_output(text, ResultType.parse(annotation), old, asserted)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(("text", "annotation", "old"), [
    ("8", "", None),  # int 8 or str "8"
    ("True", "", None),
    ("None", "Optional[str]", None),
    ('"2"', "int", None),  # a string where an int is declared
    ("1.5", "int", None),
])
def test_expected_output_rejects_what_stays_ambiguous(text, annotation, old):
    with pytest.raises(AmbiguousOutput):
        expected_output(text, ResultType.parse(annotation), old, None)


def test_assert_that_contradicts_the_annotation_is_ambiguous():
    with pytest.raises(AmbiguousOutput, match="annotation says int"):
        expected_output("3", ResultType.parse("int"), None, '"3"')


def test_row_convention():
    s = ResultType.parse("str")
    assert old_string_convention(['"a"', "null"], s) is True
    assert old_string_convention(['"a"', "b"], s) is False
    assert old_string_convention(["8"], s) is False
    assert old_string_convention(["None"], ResultType.parse("Optional[str]")) is None
    assert old_string_convention(["1"], ResultType.parse("int")) is None


def _as_v03(line: str) -> str:
    """A real v0.2 row rewritten with v0.3's outputs (`str(value)`), inputs and asserts untouched."""
    row = json.loads(line)
    for item in row["input_output"]:
        text = item["output"].strip()
        try:
            value = json.loads(text)
        except ValueError:
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                continue
        item["output"] = str(value)
    return json.dumps(row)


def test_real_v02_rows_read_the_same_in_the_v03_convention(bench_data, tmp_path):
    src = bench_data / "leetcodedataset" / "LeetCodeDataset-v0.2.0-test.jsonl.gz"
    with gzip.open(src, "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    (tmp_path / "v03.jsonl").write_text("\n".join(_as_v03(x) for x in lines) + "\n")
    as_v02, rejects02 = run(src)
    as_v03, rejects03 = run(tmp_path / "v03.jsonl")
    assert not rejects02 and not rejects03
    assert {k: outputs(p) for k, p in as_v03.items()} == {k: outputs(p) for k, p in as_v02.items()}
    strings = [p for p in as_v03.values() if p.meta["string_outputs"] == "bare"]
    assert len(strings) >= 5  # str-returning problems are there, read as strings


def test_v03_dates_and_tags_reach_the_problem(tmp_path):
    """v0.3 ships `estimated_date` and `tags`: the date is the problem's contest_date (so `since`
    keeps fresh problems) in each form it can take (ISO text, epoch ms as pandas writes jsonl)."""
    rows = [json.loads(x) for x in (FIX / "leetcodedataset_v03.jsonl").read_text().splitlines()]
    problems, rejects = run(FIX / "leetcodedataset_v03.jsonl")
    assert problems and {r.code for r in rejects.values()} == {"ambiguous_output"}  # the fixture's own traps
    assert {p.contest_date for p in problems.values()} == {rows[0]["estimated_date"][:10]}
    assert all(p.tags == rows[0]["tags"] for p in problems.values())
    rows = [r for r in rows if f"lcd/{r['task_id']}" in problems]
    rows[0]["estimated_date"] = 1719792000000  # 2024-07-01 in epoch milliseconds
    rows[1]["estimated_date"] = "sometime"
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    problems, rejects = run(tmp_path / "rows.jsonl")
    assert problems[f"lcd/{rows[0]['task_id']}"].contest_date == "2024-07-01"
    assert "estimated_date" in rejects[f"lcd/{rows[1]['task_id']}"].detail


def test_v02_rows_have_no_date_and_no_tags(bench_data):
    problems, _ = run(bench_data / "leetcodedataset" / "LeetCodeDataset-v0.2.0-test.jsonl.gz")
    assert problems and all(p.contest_date is None and p.tags == [] for p in problems.values())
