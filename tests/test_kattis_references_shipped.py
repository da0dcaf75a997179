"""meta `references_shipped` of a Kattis package (issue 39): whether it ships any accepted submission.

Google's coding competitions archive ships none, so nothing verifies its tests; validate's default
rejects such problems, and bench/codejam_archive.py counts them. A package whose accepted submissions
are all in languages not run here ships some, yet gets no reference solution: the two differ.
"""

from __future__ import annotations

from pathlib import Path

from microcoder.pipeline.schema import Problem
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import SourceContext


def package(folder: Path, accepted: dict[str, str]) -> Path:
    files = {"problem.yaml": "source: Made-up Contest\n",
             "problem_statement/problem.en.md": "Print the number you read.\n",
             "data/secret/1.in": "3\n", "data/secret/1.ans": "3\n",
             **{f"submissions/accepted/{name}": code for name, code in accepted.items()}}
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def read_one(pkg: Path) -> Problem:
    items = list(read_source("kattis", build_options("kattis", {"path": str(pkg)}), SourceContext("kattis")))
    assert len(items) == 1 and isinstance(items[0], Problem), items
    return items[0]


def test_a_package_with_an_accepted_submission_ships_references(tmp_path):
    p = read_one(package(tmp_path / "p", {"sol.py": "print(input())\n"}))
    assert p.meta["references_shipped"] is True and len(p.reference_solutions) == 1


def test_a_package_without_submissions_ships_none(tmp_path):
    p = read_one(package(tmp_path / "p", {}))
    assert p.meta["references_shipped"] is False and p.reference_solutions == []


def test_hidden_files_are_not_submissions(tmp_path):
    p = read_one(package(tmp_path / "p", {".gitkeep": ""}))
    assert p.meta["references_shipped"] is False


def test_accepted_submissions_in_other_languages_ship_references_without_a_reference_solution(tmp_path):
    p = read_one(package(tmp_path / "p", {"Sol.java": "class Sol {}\n"}))
    assert p.meta["references_shipped"] is True and p.reference_solutions == []
