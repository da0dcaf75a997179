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


# --- input validators (issue 25 item 3; run by pipeline.testgen.validators) ----------------------
VALIDATE_PY = "import sys\nsys.stdin.read()\nsys.exit(42)\n"


def only_problem(pkg: Path) -> Problem:
    problems, rejects = run(pkg)
    assert not rejects and len(problems) == 1, rejects
    return next(iter(problems.values()))


def test_input_validators_each_kind_supported_or_unsupported_with_the_reason(tmp_path):
    """A problem is never rejected for its input validators; each one the evaluator cannot run
    is recorded with why."""
    pkg = tmp_path / "sumpair"
    package(pkg)
    iv = pkg / "input_validators"
    write(iv / "validate.py", VALIDATE_PY)
    write(iv / "check.cpp", '#include "validation.h"\nint main() { ok(); }\n')
    write(iv / "validation.h", "#include <cstdlib>\ninline void ok() { std::exit(42); }\n")
    write(iv / "README.md", "how the validators work\n")
    write(iv / "format.ctd", "INT(1,100) SPACE INT(1,100) NEWLINE\n")
    write(iv / "format.viva", "<int> a, b;\n")
    write(iv / "old.py", "#!/usr/bin/env python2\nprint 'hi'\n")
    write(iv / "Validate.java", "class Validate {}\n")
    write(iv / "lonely.cpp", '#include "missing.h"\nint main() {}\n')
    write(iv / "multi" / "a.cpp", "int main() {}\n")
    write(iv / "multi" / "b.cpp", "int f() { return 1; }\n")
    write(iv / "scripted" / "build", "#!/bin/sh\n")
    write(iv / "scripted" / "run", "#!/bin/sh\nexit 42\n")
    meta = only_problem(pkg).meta
    assert [(e["name"], e["language"], e["flags"], e["valid_exit"]) for e in meta["input_validators"]] == [
        ("kattis:check.cpp", "cpp", [], 42), ("kattis:validate.py", "python", [], 42)]
    assert "inline void ok()" in meta["input_validators"][0]["code"]
    unsupported = {e["name"]: e["reason"] for e in meta["input_validators_unsupported"]}
    assert sorted(unsupported) == ["kattis:Validate.java", "kattis:format.ctd", "kattis:format.viva",
                                   "kattis:lonely.cpp", "kattis:multi", "kattis:old.py", "kattis:scripted"]
    assert "checktestdata" in unsupported["kattis:format.ctd"] and "VIVA" in unsupported["kattis:format.viva"]
    assert "missing.h" in unsupported["kattis:lonely.cpp"] and "Python 2" in unsupported["kattis:old.py"]
    assert "2 files" in unsupported["kattis:multi"] and "build/run" in unsupported["kattis:scripted"]


def test_a_package_without_input_validators_records_none(archive):
    problems, _ = run(archive)
    assert not any(k.startswith("input_validator") for p in problems.values() for k in p.meta)


def test_validator_arguments_of_the_secret_data_and_the_groups_that_differ(tmp_path):
    """Legacy: the closest testdata.yaml above data/secret, a flags string; a subtask's own flags
    are not applied to generated inputs, and the record says which groups have them."""
    pkg = tmp_path / "sumpair"
    package(pkg)
    write(pkg / "input_format_validators" / "validate.py", VALIDATE_PY)
    write(pkg / "data" / "testdata.yaml", "on_reject: continue\ninput_validator_flags: --n 100000 --connected\n")
    write(pkg / "data" / "secret" / "group1" / "testdata.yaml", "input_validator_flags: --n 10\n")
    write(pkg / "data" / "secret" / "group2" / "testdata.yaml", "input_validator_flags: --n 100000 --connected\n")
    meta = only_problem(pkg).meta
    assert meta["input_validators"][0]["flags"] == ["--n", "100000", "--connected"]
    assert meta["input_validator_group_args_ignored"] == ["secret/group1"]


def test_validator_arguments_that_do_not_parse_make_the_validators_unsupported(tmp_path):
    pkg = tmp_path / "sumpair"
    package(pkg)
    write(pkg / "input_validators" / "validate.py", VALIDATE_PY)
    write(pkg / "data" / "secret" / "testdata.yaml", "input_validator_flags: [unclosed\n")
    meta = only_problem(pkg).meta
    assert "input_validators" not in meta
    (entry,) = meta["input_validators_unsupported"]
    assert entry["name"] == "kattis:validate.py" and "does not parse" in entry["reason"]


def test_testlib_h_is_left_to_the_evaluator_when_the_package_has_no_copy(tmp_path):
    """The evaluator provides testlib.h (checkers: an include path; input validators: inlined by
    pipeline.testgen.validators), so a validator including it is not rejected for its absence."""
    pkg = tmp_path / "sumpair"
    package(pkg, "validation: custom\nlicense: cc by\n")
    write(pkg / "output_validators" / "check" / "check.cpp", '#include "testlib.h"\nint main() { return 0; }\n')
    write(pkg / "input_validators" / "validate.cpp", '#include "testlib.h"\nint main() { return 42; }\n')
    p = only_problem(pkg)
    assert p.checker.kind == "program" and '#include "testlib.h"' in p.checker.program
    assert '#include "testlib.h"' in p.meta["input_validators"][0]["code"]
