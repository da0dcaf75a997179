"""Hub adapters on rows in the real layouts: stated limits (DeepCoder tails, CodeContests bytes and
letter difficulties, TACO strings, open-r1 fields), TACO's GeeksforGeeks rows, open-r1's
generated_checker as a checker program. Rows are written here from the dataset cards' field lists;
the bench-data checks read the real rows in ../shared/bench-data."""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_sources_hub import CC_SCHEMA, cc_row

from microcoder.pipeline.schema import Problem, validate_problem
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import Reject, SourceContext
from microcoder.pipeline.sources.hub_rows import bytes_to_mb, stated_limits


def run(name: str, **options) -> tuple[list[Problem], list[Reject]]:
    items = list(read_source("hub", build_options("hub", options), SourceContext(name)))
    problems = [i for i in items if isinstance(i, Problem)]
    for p in problems:
        assert validate_problem(p) == [], p.id
    return problems, [i for i in items if isinstance(i, Reject)]


def unstated(p: Problem) -> tuple[bool, bool]:
    return p.meta.get("time_limit_stated") is False, p.meta.get("memory_limit_stated") is False


# --- stated limits ----------------------------------------------------------------------------
@pytest.mark.parametrize(("tail", "expected"), [
    ("Tags:\n['math']\n\nTime Limit: 3000 ms\nMemory Limit: 512 MB\n", (3.0, 512)),
    ("Time Limit: 1500 ms\nMemory Limit: 256 MB", (1.5, 256)),
    ("Note\n\n<image>\n\nTime Limit: {'seconds': 2, 'nanos': 500000000}\nMemory Limit: 256000000 Bytes\n", (2.5, 256)),
    ("Time Limit: {'seconds': 4, 'nanos': 0}\nMemory Limit: 1024000000 Bytes\n", (4.0, 1024)),
    ("Time Limit: 2 seconds\nMemory Limit: 64 megabytes\n", (2.0, 64)),
    ("Print the answer.\n", (None, None)),
    ("Time Limit: {'seconds': 0, 'nanos': 0}\nMemory Limit: 0 Bytes\n", (None, None)),  # unset proto fields
])
def test_stated_limits_tails(tail, expected):
    assert stated_limits("A long statement.\n\n" + tail) == expected


def test_a_limit_mentioned_early_in_the_statement_is_not_the_tail():
    text = "Time Limit: 9000 ms is what the story says.\n" + "x" * 1000 + "\nPrint it.\n"
    assert stated_limits(text) == (None, None)


def test_bytes_to_mb():
    assert bytes_to_mb(256_000_000) == 256 and bytes_to_mb(512_000_000) == 512  # the platform's "256 megabytes"
    assert bytes_to_mb(256 * 2**20) == 256 and bytes_to_mb(0) is None and bytes_to_mb(None) is None


def test_deepcoder_rows_keep_their_stated_limits(tmp_path):
    rows = [{"problem": "Sum two numbers.\n\nTime Limit: 4000 ms\nMemory Limit: 1024 MB\n",
             "tests": json.dumps([{"type": "stdin_stdout", "input": "1 2\n", "output": "3\n"}]), "metadata": "{}"},
            {"problem": "No limits here.", "tests": json.dumps([{"type": "stdin_stdout", "input": "1\n", "output": "1\n"}]),
             "metadata": "{}"}]
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    (stated, silent), _ = run("deepcoder", adapter="deepcoder", path=str(path))
    assert (stated.time_limit_s, stated.memory_limit_mb, unstated(stated)) == (4.0, 1024, (False, False))
    assert (silent.time_limit_s, silent.memory_limit_mb, unstated(silent)) == (2.0, 256, (True, True))


@pytest.mark.parametrize("name", ["codeforces_test", "code_contests_test"])
def test_deepcoder_real_rows_use_the_limit_each_states(bench_data, name):
    path = bench_data / "stdio" / f"{name}.json"
    problems, rejects = run("deepcoder", adapter="deepcoder", path=str(path))
    assert not rejects and len(problems) > 100
    rows = {r["problem"]: r for r in json.loads(path.read_text())}
    for p in problems:
        m = re.search(r"Time Limit: (?:(\d+) ms|\{'seconds': (\d+), 'nanos': (\d+)\})", p.statement[-300:])
        seconds = int(m.group(1)) / 1000 if m.group(1) else int(m.group(2)) + int(m.group(3)) / 1e9
        assert p.time_limit_s == pytest.approx(seconds) and not any(unstated(p)), p.id
    assert len({p.time_limit_s for p in problems}) > 3  # not one default for all
    assert {p.memory_limit_mb for p in problems} >= {256, 512}
    assert len(rows) == len(problems)


def test_code_contests_memory_difficulty_and_incorrect_solutions(tmp_path):
    rows = [cc_row(memory_limit_bytes=256_000_000, difficulty=11),
            cc_row(name="1600_V. Late letter", cf_index="V", cf_contest_id=1600, difficulty=28,
                   memory_limit_bytes=268_435_456),
            cc_row(name="aizu", source=6, cf_contest_id=0, cf_index="", difficulty=0, time_limit=None,
                   memory_limit_bytes=0, incorrect_solutions={"language": [2, 1, 4, 3], "solution": [
                       "int main(){return 1;}", "print 0", "class A {}", "print(0)"]})]
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=CC_SCHEMA), path)
    (e, v, aizu), _ = run("codecontests", adapter="codecontests", path=str(path))
    assert e.memory_limit_mb == 256 and e.difficulty == "E" and e.time_limit_s == 1.5 and not any(unstated(e))
    assert v.memory_limit_mb == 256 and v.difficulty == "V"
    assert [(w.language, w.code, w.label) for w in e.wrong_solutions] == [("python", "print(0)", "incorrect")]
    assert [(w.language, w.label) for w in aizu.wrong_solutions] == [("cpp", "incorrect"), ("python", "incorrect")]
    assert aizu.difficulty == "unknown" and unstated(aizu) == (True, True)
    assert (aizu.time_limit_s, aizu.memory_limit_mb) == (2.0, 256)


def _taco_row(**kw):
    row = {"question": "Print n doubled.", "solutions": json.dumps(["print(int(input())*2)"]), "starter_code": "",
           "input_output": json.dumps({"inputs": ["1\n"], "outputs": ["2\n"]}), "difficulty": "EASY",
           "raw_tags": "[]", "name": None, "source": "codechef", "tags": "[]", "skill_types": "[]",
           "url": "https://www.codechef.com/problems/DOUBLE", "Expected Auxiliary Space": None,
           "time_limit": "0.5 seconds", "date": None, "picture_num": "0", "memory_limit": "50000 bytes",
           "Expected Time Complexity": None}
    row.update(kw)
    return row


def test_taco_and_apps_limits(tmp_path):
    path = tmp_path / "train.jsonl"
    rows = [_taco_row(), _taco_row(question="Other", time_limit=None, memory_limit="256.0 megabytes")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (half, other), _ = run("taco", adapter="taco", path=str(path))
    assert half.time_limit_s == 0.5 and unstated(half) == (False, True)  # "50000 bytes" is no megabyte figure
    assert other.memory_limit_mb == 256 and unstated(other) == (True, False)
    apps_path = tmp_path / "apps.jsonl"
    apps_path.write_text(json.dumps({"problem_id": 3, "question": "q", "solutions": "[]", "starter_code": "",
                                     "input_output": json.dumps({"inputs": ["1\n"], "outputs": ["1\n"]}),
                                     "difficulty": "interview", "url": ""}) + "\n")
    (apps,), _ = run("apps", adapter="apps", path=str(apps_path))
    assert unstated(apps) == (True, True)


def test_sources_without_limits_say_so():
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures" / "sources"
    problems, _ = run("lcb", adapter="livecodebench", path=str(fixtures / "livecodebench.jsonl"))
    assert problems and all(unstated(p) == (True, True) for p in problems)
    items = list(read_source("humaneval", build_options("humaneval", {"path": str(fixtures / "humaneval_mini.jsonl")}),
                             SourceContext("he")))
    assert any(isinstance(i, Problem) for i in items)
    assert all(unstated(i) == (True, True) for i in items if isinstance(i, Problem))


# --- TACO GeeksforGeeks rows ------------------------------------------------------------------
GFG_STARTER = "#User function Template for python3\n\nclass Solution:\n    def maxSum(self, arr, n, k):\n        # code here\n"


def test_taco_geeksforgeeks_rows_are_rejected_with_a_reason(tmp_path):
    gfg = _taco_row(question="Given an array arr[] of size n, find the maximum sum of k consecutive elements.",
                    source="geeksforgeeks", url="https://practice.geeksforgeeks.org/problems/max-sum-subarray/1",
                    starter_code=GFG_STARTER, time_limit=None, memory_limit=None,
                    input_output=json.dumps({"inputs": ["n = 5\nk = 3\narr[] = {5,10,30,20,15}"], "outputs": ["65"]}))
    no_url = dict(gfg, question="Same layout, no url", url=None, source=None)
    only_inputs = _taco_row(question="Assignments only", url=None, source=None,
                            input_output=json.dumps({"inputs": ["N = 2\nA[] = {1, 2}"], "outputs": ["3"]}))
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [gfg, no_url, only_inputs, _taco_row()]))
    problems, rejects = run("taco", adapter="taco", path=str(path))
    assert [p.statement for p in problems] == ["Print n doubled."]
    assert [r.code for r in rejects] == ["no_driver"] * 3
    assert "GeeksforGeeks" in rejects[0].detail and "starter code declares" in rejects[1].detail
    assert "name = value" in rejects[2].detail


def test_no_driver_rejects_are_counted_per_source(tmp_path):
    from microcoder.pipeline.io import RejectsWriter
    from microcoder.pipeline.scrape import ScrapeConfig, run_sources

    gfg = _taco_row(question="gfg", source="geeksforgeeks", starter_code=GFG_STARTER,
                    url="https://practice.geeksforgeeks.org/problems/x/1")
    path = tmp_path / "taco.jsonl"
    path.write_text(json.dumps(gfg) + "\n" + json.dumps(_taco_row()) + "\n")
    cfg = ScrapeConfig(sources=[{"name": "taco", "kind": "hub", "adapter": "taco", "path": str(path)}])
    _, stats = run_sources(cfg, RejectsWriter(tmp_path / "rejects.jsonl", "scrape"))
    assert stats.figures["sources"]["taco"]["rejected_by_reason"] == {"no_driver": 1}
    assert stats.figures["sources"]["taco"]["kept"] == 1


def test_functional_rows_with_a_starter_class_are_kept(tmp_path):
    leet = _taco_row(question="LeetCode style", starter_code="class Solution:\n    def f(self, x):\n        ",
                     input_output=json.dumps({"fn_name": "f", "inputs": [[1]], "outputs": [[2]]}))
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps(leet) + "\n")
    (p,), rejects = run("taco", adapter="taco", path=str(path))
    assert p.style == "functional" and p.entry_point == "Solution().f" and not rejects


# --- open-r1 generated_checker ----------------------------------------------------------------
# A checker in the shape open-r1's card describes: `checker.py input correct_output solution_output`,
# printing 1 (accepted) or 0. Written here; the problem: print two numbers that sum to n.
GENERATED_CHECKER = '''
import sys

def main():
    input_path, correct_path, solution_path = sys.argv[1:4]
    n = int(open(input_path).read().split()[0])
    a, b = map(int, open(solution_path).read().split())
    print(1 if a + b == n else 0)

if __name__ == "__main__":
    main()
'''
BY_NAME_CHECKER = '''
n = int(open("input.txt").read())
ok = open("solution_output.txt").read().split() == open("correct_output.txt").read().split()
print(int(ok))
'''


def _open_r1_row(**kw):
    row = {"id": "9999A", "aliases": None, "contest_id": "9999", "contest_name": "Made-up Round", "contest_type": "CF",
           "contest_start": 1723732500, "contest_start_year": 2024, "index": "A", "time_limit": 2.0,
           "memory_limit": 512.0, "title": "Any split", "description": "Print any two integers summing to $$$n$$$.",
           "input_format": "One integer.", "output_format": "Two integers.", "interaction_format": None, "note": None,
           "examples": [{"input": "5\n", "output": "2 3\n"}], "editorial": None, "rating": 800.0, "tags": ["math"],
           "testset_size": 1, "official_tests": [{"input": "7\n", "output": "3 4\n"}], "official_tests_complete": True,
           "input_mode": "stdio", "generated_checker": GENERATED_CHECKER, "executable": True, "generated_tests": 0}
    row.update(kw)
    return row


def test_open_r1_generated_checker_becomes_a_checker_program(tmp_path):
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist([_open_r1_row(), _open_r1_row(id="9999B", generated_checker=None,
                                                                      time_limit=None, memory_limit=None)]), path)
    (p, plain), rejects = run("open-r1-codeforces", adapter="open-r1-codeforces", path=str(path))
    assert not rejects
    assert p.checker.kind == "program" and p.checker.language == "python" and p.checker.protocol == "testlib"
    assert GENERATED_CHECKER in p.checker.program or repr(GENERATED_CHECKER) in p.checker.program
    assert p.meta["needs_checker"] is True and p.meta["checker_from"] == "generated_checker"
    assert (p.time_limit_s, p.memory_limit_mb) == (2.0, 512) and not any(unstated(p))
    assert plain.checker is None and unstated(plain) == (True, True)
    from microcoder.pipeline.sources.judging import needs_checker_program
    assert not needs_checker_program(p)  # validate keeps it: the checker program judges it


def test_generated_checker_judges_through_the_evaluator():
    from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
    from microcoder.pipeline.schema import TestCase
    from microcoder.pipeline.sources.openr1_checker import generated_checker

    def problem(pid, source):
        return Problem(id=pid, source="t", statement="", style="stdio", time_limit_s=2.0,
                       tests=[TestCase("5\n", "2 3\n"), TestCase("7\n", "3 4\n")], checker=generated_checker(source))

    sum_any, by_name = problem("any", GENERATED_CHECKER), problem("byname", BY_NAME_CHECKER)
    odd = problem("odd", "print('maybe')\n")
    subs = [Submission("any", "other", "python", "n = int(input())\nprint(1, n - 1)\n"),
            Submission("any", "wrong", "python", "n = int(input())\nprint(1, 1)\n"),
            Submission("any", "garbage", "python", "print('x')\n"),
            Submission("byname", "same", "python", "n = int(input())\nprint(n // 2, n - n // 2)\n"),
            Submission("odd", "odd", "python", "print(1)\n")]
    with Evaluator(workers=1, config=EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)) as ev:
        other, wrong, garbage, same, odd_v = ev.evaluate_batch([sum_any, by_name, odd], subs)
    assert other.status == "AC", other  # a different valid split: only a checker accepts it
    assert wrong.status == "WA" and "rejected by the generated checker" in wrong.tests[0].diff, wrong
    assert garbage.status == "WA" and "raised" in garbage.tests[0].diff, garbage  # open-r1 scores a crash 0
    assert same.status == "AC", same  # a checker that opens open-r1's file names itself
    assert odd_v.status == "SE", odd_v  # neither 1 nor 0: the checker is broken, not the submission


def test_open_r1_interactive_rows_are_rejected_for_want_of_an_interactor(tmp_path):
    """The card's columns carry no interactor program (generated_checker judges one output file), so
    an interactive row (interaction_format set, examples that are transcripts) cannot be judged."""
    row = _open_r1_row(id="9999C", title="Guess the number", description="Guess a hidden $$$x$$$ ($$$1 \\le x \\le n$$$).",
                       output_format=None, interaction_format="First read $$$n$$$. Print `? y` to ask; the reply is "
                       "`<` or `>=`. Print `! x` to answer. Flush after every line.",
                       examples=[{"input": "5\n>=\n<\n", "output": "? 3\n? 4\n! 3\n"}], official_tests=[],
                       generated_checker=None, executable=False, tags=["binary search", "interactive"])
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist([row, _open_r1_row()]), path)
    problems, rejects = run("open-r1-codeforces", adapter="open-r1-codeforces", path=str(path))
    assert [p.source_id for p in problems] == ["9999A"]
    (reject,) = rejects
    assert reject.code == "interactive" and reject.detail == "interactive problem: the row has no interactor program"
