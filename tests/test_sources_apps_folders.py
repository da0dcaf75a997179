"""APPS in its original release layout (question.txt, input_output.json, solutions.json,
metadata.json, starter_code.py per problem folder), built here as the APPS README describes it."""

from __future__ import annotations

import json
from pathlib import Path

from microcoder.pipeline.schema import Problem, decode_functional_input, validate_problem
from microcoder.pipeline.scrape import convert
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.apps_folders import is_folder_layout
from microcoder.pipeline.sources.base import Reject, SourceContext


def problem_folder(folder: Path, question: str, io: dict | None, solutions: list[str], meta: dict,
                   starter: str | None = None) -> None:
    folder.mkdir(parents=True)
    (folder / "question.txt").write_text(question)
    if io is not None:
        (folder / "input_output.json").write_text(json.dumps(io))
    (folder / "solutions.json").write_text(json.dumps(solutions))
    (folder / "metadata.json").write_text(json.dumps(meta))
    if starter is not None:
        (folder / "starter_code.py").write_text(starter)


def apps_release(root: Path) -> Path:
    problem_folder(root / "test" / "0000", "Read n, print 2n.\n", {"inputs": ["3\n"], "outputs": ["6\n"]},
                   ["print(2 * int(input()))\n"], {"difficulty": "introductory", "url": "https://codeforces.com/problemset/problem/1/A"})
    problem_folder(root / "test" / "0001", "Return x + 1.\n", {"fn_name": "inc", "inputs": [[1], [5]], "outputs": [[2], [6]]},
                   ["def inc(x):\n    return x + 1\n"], {"difficulty": "interview", "url": "https://www.codewars.com/kata/x"},
                   starter="def inc(x):\n\t")
    problem_folder(root / "train" / "0005", "A problem whose tests were never released.\n", None, [],
                   {"difficulty": "competition", "url": ""})
    return root


def run(path: Path, **options):
    items = list(read_source("hub", build_options("hub", {"adapter": "apps", "path": str(path), **options}),
                             SourceContext("apps")))
    problems = {i.id: i for i in items if isinstance(i, Problem)}
    for p in problems.values():
        assert validate_problem(p) == [], p.id
    return problems, {i.id: i for i in items if isinstance(i, Reject)}


def test_release_root_reads_every_split(tmp_path):
    root = apps_release(tmp_path / "APPS")
    assert is_folder_layout(root) and is_folder_layout(root / "test") and not is_folder_layout(tmp_path / "none")
    problems, rejects = run(root)
    assert sorted(problems) == ["apps/test-0000", "apps/test-0001"]
    stdio, call = problems["apps/test-0000"], problems["apps/test-0001"]
    assert stdio.style == "stdio" and [(t.input, t.output) for t in stdio.tests] == [("3\n", "6\n")]
    assert stdio.platform == "codeforces" and stdio.difficulty == "introductory" and stdio.license == "MIT"
    assert stdio.reference_solutions[0].code == "print(2 * int(input()))\n"
    assert stdio.meta["time_limit_stated"] is False and stdio.meta["memory_limit_stated"] is False
    assert call.style == "functional" and call.entry_point == "inc" and call.starter_code == "def inc(x):\n\t"
    assert [(decode_functional_input(t.input), t.output) for t in call.tests] == [([1], "2"), ([5], "6")]
    assert {k: r.code for k, r in rejects.items()} == {"apps/train-0005": "no_tests"}


def test_one_split_folder_and_one_problem_folder(tmp_path):
    root = apps_release(tmp_path / "APPS")
    problems, _ = run(root / "test")
    assert sorted(problems) == ["apps/test-0000", "apps/test-0001"]
    problems, _ = run(root / "test" / "0001")
    assert list(problems) == ["apps/test-0001"]


def test_format_apps_on_the_folders(tmp_path):
    root = apps_release(tmp_path / "APPS")
    stats = convert("apps", root, tmp_path / "out.parquet", progress=False)
    s = stats["sources"]["apps"]
    assert (s["read"], s["kept"], s["rejected_by_reason"]) == (3, 2, {"no_tests": 1})
