"""Kattis problem packages in contest archives: packages found at any depth, the package format's
defaults where a package is silent (memory 1024 MiB, time limit not stated), known-wrong submissions
as wrong_solutions, and jury C++20 (std::ssize) compiled by the evaluator's default flags. The
packages are built here in the problem package format's layout (problemtools' legacy format)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.schema import Problem, validate_problem
from pipeline.sources import build_options, read_source
from pipeline.sources.base import Reject, SourceContext, SourceError

FIX = Path(__file__).parent / "fixtures" / "sources"

JURY_CPP20 = """#include <bits/stdc++.h>
int main() {
    std::vector<long long> v(2);
    for (auto& x : v) std::cin >> x;
    long long s = 0;
    for (std::ptrdiff_t i = 0; i < std::ssize(v); ++i) s += v[i];  // std::ssize: C++20
    std::cout << s << "\\n";
}
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def package(folder: Path, yaml: str = "source: Made-up Contest\nlicense: cc by\n", *, timelimit: str | None = None):
    write(folder / "problem.yaml", yaml)
    write(folder / "problem_statement" / "problem.en.md", "Read two integers and print their sum.\n")
    write(folder / "data" / "sample" / "1.in", "1 2\n")
    write(folder / "data" / "sample" / "1.ans", "3\n")
    write(folder / "data" / "secret" / "group1" / "1.in", "10 20\n")
    write(folder / "data" / "secret" / "group1" / "1.ans", "30\n")
    write(folder / "submissions" / "accepted" / "jury.cpp", JURY_CPP20)
    write(folder / "submissions" / "accepted" / "sol.py", "print(sum(map(int, input().split())))\n")
    write(folder / "submissions" / "wrong_answer" / "wa.py", "print(0)\n")
    write(folder / "submissions" / "time_limit_exceeded" / "slow.py", "while True: pass\n")
    write(folder / "submissions" / "run_time_error" / "crash.cpp", "int main() { return 1; }\n")
    write(folder / "submissions" / "run_time_error" / "multi" / "main.py", "raise SystemExit(1)\n")  # a folder: skipped
    if timelimit is not None:
        write(folder / ".timelimit", timelimit)


def run(path: Path, name: str = "kattis") -> tuple[dict[str, Problem], dict[str, Reject]]:
    items = list(read_source("kattis", build_options("kattis", {"path": str(path)}), SourceContext(name)))
    problems = {i.id: i for i in items if isinstance(i, Problem)}
    for p in problems.values():
        assert validate_problem(p) == [], p.id
    return problems, {i.id: i for i in items if isinstance(i, Reject)}


@pytest.fixture
def archive(tmp_path) -> Path:
    root = tmp_path / "archive"
    package(root / "nwerc2023" / "problems" / "sumpair")
    package(root / "nwerc2024" / "problems" / "sumpair", "name: Sum Pair\nlimits:\n  memory: 512\n", timelimit="1.5\n")
    package(root / "nwerc2024" / "problems" / "other")
    write(root / "nwerc2024" / "README.md", "contest notes\n")
    (root / "nwerc2024" / "problems" / ".git").mkdir()
    return root


def test_contest_archive_packages_are_found_at_any_depth(archive):
    problems, rejects = run(archive)
    assert sorted(problems) == ["kattis/nwerc2023-problems-sumpair", "kattis/nwerc2024-problems-sumpair", "kattis/other"]
    assert not rejects
    assert [t.kind for t in problems["kattis/other"].tests] == ["public", "private"]


def test_package_format_defaults_where_a_package_is_silent(archive):
    problems, _ = run(archive)
    silent, stated = problems["kattis/other"], problems["kattis/nwerc2024-problems-sumpair"]
    assert silent.memory_limit_mb == 1024 and silent.meta["memory_limit_stated"] is False
    assert silent.meta["time_limit_stated"] is False and silent.meta["time_limit_from"] == "default"
    assert (stated.memory_limit_mb, stated.time_limit_s) == (512, 1.5)
    assert "time_limit_stated" not in stated.meta and "memory_limit_stated" not in stated.meta


def test_known_wrong_submissions_become_wrong_solutions(archive):
    problems, _ = run(archive)
    p = problems["kattis/other"]
    assert sorted((r.language, r.code == JURY_CPP20) for r in p.reference_solutions) == [("cpp", True), ("python", False)]
    assert [(w.label, w.language) for w in p.wrong_solutions] == [
        ("wrong_answer", "python"), ("time_limit_exceeded", "python"), ("run_time_error", "cpp")]


def test_a_folder_without_packages_is_a_source_error(tmp_path):
    write(tmp_path / "notes" / "x.txt", "nothing here\n")
    with pytest.raises(SourceError, match="no problem package"):
        run(tmp_path)


def test_package_layout_without_problem_yaml_is_rejected_not_lost(tmp_path):
    package(tmp_path / "c" / "p")
    (tmp_path / "c" / "p" / "problem.yaml").unlink()
    problems, rejects = run(tmp_path)
    assert not problems and [r.code for r in rejects.values()] == ["bad_package"]


def test_one_level_folder_of_packages_still_reads():
    problems, rejects = run(FIX / "kattis")
    assert "kattis/hello" in problems and problems["kattis/hello"].memory_limit_mb == 512
    assert [w.label for w in problems["kattis/hello"].wrong_solutions] == ["wrong_answer"]
    assert set(rejects) == {"kattis/guess", "kattis/broken", "kattis/notests"}


def test_jury_cpp20_compiles_with_the_default_flags(archive):
    """Recent jury code uses C++20 library calls (std::ssize): the evaluator's default is gnu++20."""
    from pipeline.evaluator import Evaluator, EvaluatorConfig, Submission

    problems, _ = run(archive)
    p = problems["kattis/other"]
    with Evaluator(workers=1, config=EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)) as ev:
        (v,) = ev.evaluate_batch([p], [Submission(p.id, "jury", "cpp", JURY_CPP20)])
    assert v.status == "AC", v
