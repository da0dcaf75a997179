"""open-r1/codeforces problems joined to open-r1/codeforces-submissions rows (tiny files in the real layouts)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from microcoder.pipeline.schema import Problem, validate_problem
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import Reject, SourceContext, SourceError
from microcoder.pipeline.sources.cf_submissions import evaluator_language

# The dataset card's feature list (config `default`): every column a string except the float64 counters.
SUBMISSION_SCHEMA = pa.schema([
    ("submission_id", pa.string()), ("source", pa.string()), ("contestId", pa.string()),
    ("problem_index", pa.string()), ("programmingLanguage", pa.string()), ("verdict", pa.string()),
    ("testset", pa.string()), ("passedTestCount", pa.float64()), ("timeConsumedMillis", pa.float64()),
    ("memoryConsumedBytes", pa.float64()), ("creationTimeSeconds", pa.float64()), ("problem_id", pa.string()),
])


def problem_row(index: str, **kw) -> dict:
    row = {"id": f"2000{index}", "aliases": None, "contest_id": "2000", "contest_name": "Codeforces Round 966 (Div. 3)",
           "contest_type": "ICPC", "contest_start": 1723732500, "contest_start_year": 2024, "index": index,
           "time_limit": 1.0, "memory_limit": 256.0, "title": f"Task {index}", "description": "Read t, print t.",
           "input_format": "One integer.", "output_format": "One integer.", "interaction_format": None, "note": None,
           "examples": [{"input": "1\n", "output": "1\n"}], "editorial": None, "rating": 800.0, "tags": [],
           "testset_size": 1, "official_tests": [{"input": "2\n", "output": "2\n"}], "official_tests_complete": True,
           "input_mode": "stdio", "generated_checker": None, "executable": True, "generated_tests": 0}
    row.update(kw)
    return row


def submission(n: int, problem: str, verdict: str | None, language: str, code: str | None = "print(input())",
               testset: str = "TESTS") -> dict:
    contest, index = problem.split("/")
    return {"submission_id": str(100 + n), "source": code, "contestId": contest, "problem_index": index,
            "programmingLanguage": language, "verdict": verdict, "testset": testset, "passedTestCount": 10.0,
            "timeConsumedMillis": 15.0, "memoryConsumedBytes": 1e6, "creationTimeSeconds": 1.7e9,
            "problem_id": problem}


SUBMISSIONS = [
    submission(1, "2000/A", "OK", "GNU C++17", "int main(){}"),
    submission(2, "2000/A", "OK", "PyPy 3-64", "print(1)"),
    submission(3, "2000/A", "OK", "Python 3", "print(2)"),  # over the accepted cap of 2
    submission(4, "2000/A", "OK", "Python 2", "print 1"),  # the evaluator runs no Python 2
    submission(5, "2000/A", "OK", "Java 8", "class A {}"),
    submission(6, "2000/A", "OK", "MS C++ 2017", "int main(){__int64 x;}"),
    submission(7, "2000/A", "OK", "GNU C++20 (64)", "int main(){return 0;}", testset="PRETESTS"),
    submission(8, "2000/A", "WRONG_ANSWER", "Python 3", "print(0)"),
    submission(9, "2000/A", "TIME_LIMIT_EXCEEDED", "C++20 (GCC 13-64)", "int main(){for(;;);}"),
    submission(10, "2000/A", "RUNTIME_ERROR", "Python 3", "1/0"),  # over the wrong cap of 2
    submission(11, "2000/A", "COMPILATION_ERROR", "GNU C++17", "int main("),
    submission(12, "2000/B", "MEMORY_LIMIT_EXCEEDED", "Clang++20 Diagnostics", "int main(){}"),
    submission(13, "2000/B", "CHALLENGED", "PyPy 3", "print(3)"),
    submission(14, "2000/B", "RUNTIME_ERROR", "Python 3", "raise SystemExit(1)"),  # over the wrong cap
    submission(15, "1999/Z", "OK", "Python 3", "print(9)"),  # a problem the source does not hold
    submission(16, "2000/B", None, "Python 3", "print(4)"),  # malformed: no verdict
    submission(17, "2000/B", "OK", "Python 3", None),  # malformed: no code
]


def run(tmp_path, problems_file: str = "parquet", **options) -> tuple[list[Problem], list[Reject], SourceContext]:
    rows = [problem_row("A"), problem_row("B"), problem_row("C", interaction_format="Ask ? x.")]
    if problems_file == "parquet":
        problems_path = tmp_path / "train-00000-of-00001.parquet"
        pq.write_table(pa.Table.from_pylist(rows), problems_path)
    else:
        problems_path = tmp_path / "problems.jsonl"
        problems_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    subs = tmp_path / "submissions"
    subs.mkdir()
    pq.write_table(pa.Table.from_pylist(SUBMISSIONS, schema=SUBMISSION_SCHEMA), subs / "train-00000-of-00001.parquet")
    ctx = SourceContext("cf")
    opts = {"adapter": "open-r1-codeforces", "path": str(problems_path), "submissions": str(subs),
            "max_accepted_submissions": 2, "max_wrong_submissions": 2, **options}
    items = list(read_source("hub", build_options("hub", opts), ctx))
    problems = [i for i in items if isinstance(i, Problem)]
    for p in problems:
        assert validate_problem(p) == [], p.id
    return problems, [i for i in items if isinstance(i, Reject)], ctx


EXPECTED_SKIPS = {
    "submission: over the per-problem cap": 3, "submission: language not run by the evaluator": 3,
    "submission: accepted on pretests only": 1, "submission: verdict COMPILATION_ERROR": 1,
    "submission: problem not in source": 1, "submission: malformed row (no problem id or verdict)": 1,
    "submission: malformed row (no source code)": 1,
}


@pytest.mark.parametrize("problems_file", ["parquet", "jsonl"])
def test_submissions_become_references_and_labelled_wrong_solutions(tmp_path, problems_file):
    problems, rejects, ctx = run(tmp_path, problems_file)
    a, b = problems
    assert [(r.language, r.code) for r in a.reference_solutions] == [("cpp", "int main(){}"), ("python", "print(1)")]
    assert [(w.language, w.label) for w in a.wrong_solutions] == [("python", "wrong_answer"),
                                                                   ("cpp", "time_limit_exceeded")]
    assert a.meta["submissions"] == {"from": str(tmp_path / "submissions"), "accepted": 2, "wrong": 2,
                                     "verdicts": {"OK": 2, "TIME_LIMIT_EXCEEDED": 1, "WRONG_ANSWER": 1}}
    assert b.reference_solutions == []
    assert [(w.language, w.label) for w in b.wrong_solutions] == [("cpp", "memory_limit_exceeded"),
                                                                   ("python", "incorrect")]
    assert b.meta["submissions"]["verdicts"] == {"CHALLENGED": 1, "MEMORY_LIMIT_EXCEEDED": 1}
    assert [r.code for r in rejects] == ["interactive"]
    # every submission row is attached or counted once, with its reason
    attached = sum(len(p.reference_solutions) + len(p.wrong_solutions) for p in problems)
    assert dict(ctx.skipped) == EXPECTED_SKIPS and attached + sum(ctx.skipped.values()) == len(SUBMISSIONS)


def test_a_cap_of_zero_attaches_nothing_and_counts_everything(tmp_path):
    problems, _, ctx = run(tmp_path, max_accepted_submissions=0, max_wrong_submissions=0)
    assert all(not p.reference_solutions and not p.wrong_solutions for p in problems)
    assert ctx.skipped["submission: over the per-problem cap"] == 10  # the code-less row too: caps come first
    assert sum(ctx.skipped.values()) == len(SUBMISSIONS)


def test_without_submissions_nothing_is_attached(tmp_path):
    problems, _, ctx = run(tmp_path, submissions=None)
    assert all("submissions" not in p.meta and not p.reference_solutions for p in problems) and not ctx.skipped


def test_submissions_need_the_codeforces_adapter_and_its_layout(tmp_path):
    with pytest.raises(SourceError, match="open-r1-codeforces adapter"):
        list(read_source("hub", build_options("hub", {"adapter": "taco", "path": "x", "submissions": "y"}),
                         SourceContext("t")))
    wrong = tmp_path / "other.parquet"
    pq.write_table(pa.Table.from_pylist([{"code": "print(1)", "status": "OK"}]), wrong)
    with pytest.raises(SourceError, match="layout"):
        run(tmp_path, submissions=str(wrong))


@pytest.mark.parametrize(("name", "language"), [
    ("GNU C++17", "cpp"), ("GNU C++20 (64)", "cpp"), ("C++23 (GCC 14-64, msys2)", "cpp"), ("Clang++17 Diagnostics", "cpp"),
    ("C++", "cpp"), ("Python 3", "python"), ("PyPy 3-64", "python"), ("Python 2", None), ("PyPy 2", None),
    ("MS C++", None), ("GNU C11", None), ("C# 8", None), ("Java 21", None), (None, None),
])
def test_evaluator_language(name, language):
    assert evaluator_language(name) == language


def test_code_of_problems_outside_the_source_is_never_kept(tmp_path):
    """With the problems' keys known up front (local parquet), rows of other problems are counted
    while streaming and their code never reaches the index."""
    from microcoder.pipeline.sources.cf_submissions import build_index

    path = tmp_path / "subs.parquet"
    pq.write_table(pa.Table.from_pylist(SUBMISSIONS, schema=SUBMISSION_SCHEMA), path)
    ctx = SourceContext("cf")
    index = build_index(path, ctx, max_accepted=9, max_wrong=9, wanted={"2000/B"})
    assert set(index.by_problem) == {"2000/B"}
    assert ctx.skipped["submission: problem not in source"] == 12  # 2000/A's 11 rows and 1999/Z's one
