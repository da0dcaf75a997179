"""Kattis problem packages in contest archives: packages found at any depth, the package format's
defaults where a package is silent (memory 1024 MiB, time limit not stated), known-wrong submissions
as wrong_solutions, and jury C++20 (std::ssize) compiled by the evaluator's default flags. The
packages are built here in the problem package format's layout (problemtools' legacy format)."""

from __future__ import annotations

from pathlib import Path

import pytest

from microcoder.pipeline.schema import Problem, TestCase, validate_problem
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import Reject, SourceContext, SourceError

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
    from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission

    problems, _ = run(archive)
    p = problems["kattis/other"]
    with Evaluator(workers=1, config=EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)) as ev:
        (v,) = ev.evaluate_batch([p], [Submission(p.id, "jury", "cpp", JURY_CPP20)])
    assert v.status == "AC", v


# --- input validators (issue 25 item 3; run by microcoder.pipeline.testgen.validators) ----------------------
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
    microcoder.pipeline.testgen.validators), so a validator including it is not rejected for its absence."""
    pkg = tmp_path / "sumpair"
    package(pkg, "validation: custom\nlicense: cc by\n")
    write(pkg / "output_validators" / "check" / "check.cpp", '#include "testlib.h"\nint main() { return 0; }\n')
    write(pkg / "input_validators" / "validate.cpp", '#include "testlib.h"\nint main() { return 42; }\n')
    p = only_problem(pkg)
    assert p.checker.kind == "program" and '#include "testlib.h"' in p.checker.program
    assert '#include "testlib.h"' in p.meta["input_validators"][0]["code"]


# --- scoring, interactive, program-directory validators, Code Jam judges (issue 26) ---------------
KINDS = FIX / "kattis_kinds"


def test_a_scoring_package_is_kept_as_a_full_solve_problem_with_its_groups():
    p = only_problem(KINDS / "subtasks")
    assert [(t.kind, t.group) for t in p.tests] == [
        ("public", "sample"), ("private", "secret/group1"), ("private", "secret/group1"), ("private", "secret/group2")]
    assert p.meta["scoring"] is True and p.meta["problem_type"] == ["scoring"]
    groups = {g["group"]: g for g in p.meta["test_groups"]}
    assert list(groups) == ["sample", "secret", "secret/group1", "secret/group2"]
    assert (groups["secret/group1"]["accept_score"], groups["secret/group1"]["range"]) == (30, "0 30")
    assert groups["secret"]["grader_flags"] == "first_error" and groups["secret"]["tests"] == 0
    assert groups["secret/group2"]["settings_from"] == ["data/secret/group2/testdata.yaml"]
    assert (p.checker.kind, p.checker.rel_tol) == ("float", 1e-6)


def test_group_settings_inherit_whole_from_testdata_yaml_and_key_by_key_from_test_group_yaml(tmp_path):
    """Legacy testdata.yaml: the closest file is used whole; 2025-09 test_group.yaml: merged down."""
    legacy, modern = tmp_path / "legacy", tmp_path / "modern"
    for pkg, name in ((legacy, "testdata.yaml"), (modern, "test_group.yaml")):
        package(pkg, "type: scoring\n")
        write(pkg / "data" / "secret" / name, "max_score: 100\nscore_aggregation: sum\n")
        write(pkg / "data" / "secret" / "group1" / name, "max_score: 40\n")
    old = {g["group"]: g for g in only_problem(legacy).meta["test_groups"]}["secret/group1"]
    new = {g["group"]: g for g in only_problem(modern).meta["test_groups"]}["secret/group1"]
    assert "score_aggregation" not in old and old["max_score"] == 40
    assert (new["max_score"], new["score_aggregation"]) == (40, "sum")
    assert new["settings_from"] == ["data/secret/test_group.yaml", "data/secret/group1/test_group.yaml"]


def test_an_interactive_package_gets_its_interactor_and_keeps_every_test():
    p = only_problem(KINDS / "guessing")
    assert (p.checker.kind, p.checker.protocol, p.checker.language) == ("interactor", "kattis", "python")
    assert "MAX_GUESSES" in p.checker.program
    assert [t.group for t in p.tests] == ["sample"] + ["secret"] * 4
    assert p.meta["interactive"] is True and p.meta["problem_type"] == ["pass-fail", "interactive"]
    (transcript,) = p.meta["sample_interactions"]
    assert transcript["group"] == "sample" and transcript["text"].startswith("<10\n>5\n")
    assert {(w.label, w.language) for w in p.wrong_solutions} == {
        (label, lang) for label in ("wrong_answer", "time_limit_exceeded", "run_time_error") for lang in ("python", "cpp")}


def test_2023_07_interactive_type_with_an_output_validator_folder(tmp_path):
    pkg = tmp_path / "guess"
    package(pkg, "problem_format_version: 2023-07-draft\ntype: [pass-fail, interactive]\n")
    write(pkg / "output_validator" / "interact.cpp", "int main() { return 42; }\n")
    p = only_problem(pkg)
    assert (p.checker.kind, p.checker.language) == ("interactor", "cpp")


def test_an_interactive_package_without_an_interactor_is_rejected(tmp_path):
    package(tmp_path / "guess", "validation: custom interactive\n")
    _, rejects = run(tmp_path / "guess")
    (reject,) = rejects.values()
    assert reject.code == "bad_validator" and "interactor" in reject.detail
    assert reject.record["problem_type"] == ["pass-fail", "interactive"]


def test_multi_pass_and_submit_answer_problems_are_rejected_by_type(tmp_path):
    package(tmp_path / "mp", "problem_format_version: 2023-07-draft\ntype: multi-pass\n")
    _, rejects = run(tmp_path / "mp")
    assert [r.code for r in rejects.values()] == ["unsupported_type"]


def test_a_validator_program_directory_is_packed_as_a_bundle():
    from microcoder.pipeline.program_bundle import pack_program_dir

    p = only_problem(KINDS / "bundled")
    assert (p.checker.kind, p.checker.language, p.checker.protocol) == ("program", "bundle", "kattis")
    assert p.checker.program == pack_program_dir(KINDS / "bundled" / "output_validators" / "checker")


def test_problem_yaml_with_a_colon_in_a_plain_title_is_read(tmp_path):
    """The Code Jam archive writes `name: Game Sort: Part 1`, which is not YAML."""
    package(tmp_path / "p", "# converted\nname: Game Sort: Part 1\ntype: scoring\n")
    assert only_problem(tmp_path / "p").title == "Game Sort: Part 1"


def test_output_validator_flags_is_read_as_well_as_validator_flags(tmp_path):
    package(tmp_path / "p", "output_validator_flags: float_tolerance 1e-4\n")
    p = only_problem(tmp_path / "p")
    assert (p.checker.kind, p.checker.rel_tol, p.checker.abs_tol) == ("float", 1e-4, 1e-4)


# A Code Jam package as the archive converts it: Google's judge in output_validators/validator/.
CODEJAM_YAML = """# This is a best-effort conversion to problemtools format.
author: Google
source: Code Jam to I/O for Women 2019 - Code Jam to I/O for Women
{type}name: Some Problem

# Note that the custom{interactive} judge does not follow problemtools specifications.
validation: custom{interactive}
"""
# Google's protocol: `judge.py input attempt expected`, exit 0 accepted (interactive: `judge.py <test set>`).
GOOGLE_JUDGE = "import sys\nsys.exit(0 if open(sys.argv[2]).read().split() == open(sys.argv[3]).read().split() else 1)\n"
CODEJAM_STATEMENT = """<h3>Problem</h3><p>Guess it.</p><h3>Limits</h3>
<h4>Test Set 1 (Visible Verdict)</h4><p>N = 10.</p><h4>Test Set 2 (Hidden Verdict)</h4><p>N = 10^9.</p>"""


def codejam_package(folder: Path, interactive: bool) -> Path:
    write(folder / "problem.yaml", CODEJAM_YAML.format(type="" if interactive else "type: scoring\n",
                                                       interactive=" interactive" if interactive else ""))
    write(folder / "problem_statement" / "problem.html", CODEJAM_STATEMENT)
    write(folder / "output_validators" / "validator" / "judge.py", GOOGLE_JUDGE)
    if not interactive:
        write(folder / "data" / "secret" / "subtask1" / "1.in", "1\n3\n")
        write(folder / "data" / "secret" / "subtask1" / "1.ans", "Case #1: 3\n")
    return folder


def test_a_codejam_custom_judge_is_adapted_to_a_kattis_program(tmp_path):
    p = only_problem(codejam_package(tmp_path / "cj", interactive=False))
    assert (p.checker.kind, p.checker.protocol, p.checker.language) == ("program", "kattis", "python")
    assert "sys.argv[2]" in p.checker.program  # the judge, run by the adapter's wrapper
    assert p.meta["problem_type"] == ["scoring", "custom-judge"] and p.meta["codejam_judge"] is True


def test_an_interactive_codejam_problem_gets_one_test_per_test_set(tmp_path):
    p = only_problem(codejam_package(tmp_path / "cj", interactive=True))
    assert (p.checker.kind, p.checker.protocol) == ("interactor", "kattis")
    assert [(t.input, t.output, t.kind, t.group) for t in p.tests] == [
        ("0\n", "", "private", "secret/test_set_1"), ("1\n", "", "private", "secret/test_set_2")]
    assert p.meta["interactive"] is True


def test_a_codejam_judge_the_adapter_refuses_is_rejected_with_the_reason(tmp_path):
    pkg = codejam_package(tmp_path / "cj", interactive=False)
    (pkg / "output_validators" / "validator" / "judge.py").unlink()
    write(pkg / "output_validators" / "validator" / "judge.cc",
          '#include "recruiting/arena/problem_dev/cocolib/cc/base.h"\nint main() {}\n')
    _, rejects = run(pkg)
    (reject,) = rejects.values()
    assert reject.code == "unsupported_judge" and "cocolib" in reject.detail


def test_codejam_archive_standard_problems_are_kept_with_every_test_set(bench_data):
    """The 128 problems of Google's archive judged by the default validator (float tolerance)."""
    from microcoder.pipeline.sources.kattis import find_packages, package_ids

    root = bench_data / "codejam-archive"
    if not root.is_dir():
        pytest.skip("codejam-archive is not in bench-data")
    problems, _ = run(root)
    packages = {f"kattis/{native}": pkg for pkg, native in package_ids(root, find_packages(root)).items()}
    standard = {pid: p for pid, p in problems.items() if p.meta["problem_type"] == ["scoring"]}
    assert len(standard) >= 122  # >= 95% of the 128; all 128 when this was written
    for pid, p in standard.items():
        assert len(p.tests) == len(list(packages[pid].glob("data/**/*.in"))), pid
        assert p.checker.kind == "float" and all(t.group for t in p.tests) and p.meta["test_groups"]


# A problemtools output validator (argv input answer feedback_dir, the output on stdin, exit 42/43).
PROBLEMTOOLS_VALIDATOR = """import sys
answer = open(sys.argv[2]).read().split()
sys.exit(42 if sys.stdin.read().split() == answer else 43)
"""


def test_a_codejam_source_alone_does_not_make_a_validator_googles(tmp_path):
    """Without problem.yaml's note, a validator in output_validators/validator/ of a Code Jam `source`
    runs as the problemtools validator it is (Google's argv would fail every submission)."""
    pkg = codejam_package(tmp_path / "cj", interactive=False)
    write(pkg / "problem.yaml", "source: Google Code Jam 2019 - Round 1A\nvalidation: custom\n")
    write(pkg / "output_validators" / "validator" / "judge.py", PROBLEMTOOLS_VALIDATOR)
    p = only_problem(pkg)
    assert (p.checker.kind, p.checker.protocol, p.checker.program) == ("program", "kattis", PROBLEMTOOLS_VALIDATOR)
    assert "codejam_judge" not in p.meta


def test_a_codejam_source_with_googles_judge_template_is_adapted_without_the_note(tmp_path):
    pkg = codejam_package(tmp_path / "cj", interactive=False)
    write(pkg / "problem.yaml", "source: Kick Start 2019 - Round A\nvalidation: custom\n")
    write(pkg / "output_validators" / "validator" / "judge.py",
          "import sys\n\ndef FindError(unused_self, input_file, output_file, attempt):\n"
          "  return None if output_file.split() == attempt.split() else 'Case #1: wrong'\n\n"
          "result = FindError(None, open(sys.argv[1]).read(), open(sys.argv[3]).read(), open(sys.argv[2]).read())\n"
          "sys.exit(1 if result else 0)\n")
    p = only_problem(pkg)
    assert p.meta["codejam_judge"] is True and "JUDGE_SOURCE" in p.checker.program


@pytest.mark.parametrize(("statement", "bound"), [
    ("1 ≤ **T** ≤ 50.", 50),
    ("$1 \\le \\mathbf{T} \\le 100$.", 100),
    ("$1 \\leq T \\leq 20$", 20),
    ("QUERY_LIMIT = 100000 queries. 1 ≤ T ≤ 100.", 100),  # not the T of QUERY_LIMIT
    ("T = 10^{5}.", None),  # not 10
    ("T = 10 ^ 5.", None),
    ("**T** = 25.", 25),
    ("T = 10^5. Later: 1 ≤ T ≤ 7.", 7),  # the range is preferred
    ("No bound here: UT = 5, \\T = 3.", None),
])
def test_the_statements_bound_on_the_number_of_cases(statement, bound):
    """An interactive Code Jam problem counts the statement's bound on T as each judge run's cases."""
    from microcoder.pipeline.sources.kattis import Kind, multi_case

    meta = multi_case([TestCase("0\n", "")], statement, Kind(interactive=True, custom=True, codejam=True))
    assert meta["cases_per_judge_run"] == (bound or 1)
    assert meta["cases_per_judge_run_from"] == ("the statement's bound on T" if bound else "not stated: 1")


def test_codejam_archive_google_judges_are_all_detected(bench_data):
    """Every package of the archive with a judge in output_validators/validator/ is read as Google's
    (all carry the note): 7, of which 5 are adapted (the 2 others need Google's cocolib)."""
    from microcoder.pipeline.sources.kattis import _problem_yaml, problem_kind

    root = bench_data / "codejam-archive"
    if not root.is_dir():
        pytest.skip("codejam-archive is not in bench-data")
    judged = sorted(p.parents[1] for p in root.glob("**/output_validators/validator"))
    assert len(judged) == 7
    assert all(problem_kind(pkg, _problem_yaml(pkg)).codejam for pkg in judged)
    problems, rejects = run(root)
    assert sum(bool(p.meta.get("codejam_judge")) for p in problems.values()) == 5
    assert sum(r.code == "unsupported_judge" and "cocolib" in r.detail for r in rejects.values()) == 2


# --- the default validator's flags per test group (issue 35) -----------------------------------------
def test_a_groups_own_case_sensitive_flag_is_not_dropped(tmp_path):
    """problemtools gives a group problem.yaml's flags then its testdata.yaml's: a group that asks for
    case_sensitive must not be judged case-insensitively (YES for yes would be AC)."""
    package(tmp_path / "p")
    write(tmp_path / "p" / "data" / "secret" / "group1" / "testdata.yaml", "output_validator_flags: case_sensitive\n")
    assert only_problem(tmp_path / "p").checker.case_sensitive is True


def test_a_groups_tighter_tolerance_wins_over_problem_yaml(tmp_path):
    """Flags concatenate, later words win: the secret data's 1e-9 holds, not problem.yaml's 1e-2."""
    package(tmp_path / "p", "validator_flags: float_tolerance 1e-2\n")
    write(tmp_path / "p" / "data" / "secret" / "testdata.yaml", "output_validator_flags: float_tolerance 1e-9\n")
    c = only_problem(tmp_path / "p").checker
    assert (c.kind, c.rel_tol, c.abs_tol) == ("float", 1e-9, 1e-9)


def test_groups_with_different_validator_flags_are_refused_not_judged_by_one_groups(tmp_path):
    """One checker judges every test: taking group1's tolerance would let group2's wrong answers pass."""
    pkg = tmp_path / "p"
    package(pkg)
    write(pkg / "data" / "secret" / "group1" / "testdata.yaml", "output_validator_flags: float_tolerance 1e-1\n")
    write(pkg / "data" / "secret" / "group2" / "1.in", "1 1\n")
    write(pkg / "data" / "secret" / "group2" / "1.ans", "2\n")
    write(pkg / "data" / "secret" / "group2" / "testdata.yaml", "output_validator_flags: case_sensitive\n")
    problems, rejects = run(pkg)
    assert not problems and [r.code for r in rejects.values()] == ["unsupported_flags"], rejects


def test_groups_that_agree_on_their_flags_are_kept(tmp_path):
    pkg = tmp_path / "p"
    package(pkg)
    for g in ("group1", "group2"):
        write(pkg / "data" / "secret" / g / "testdata.yaml", "output_validator_flags: float_tolerance 1e-6\n")
    write(pkg / "data" / "secret" / "group2" / "1.in", "1 1\n")
    write(pkg / "data" / "secret" / "group2" / "1.ans", "2\n")
    assert only_problem(pkg).checker.kind == "float"


@pytest.mark.parametrize(("expected", "output", "ok"), [
    ("1.5", "nan", False), ("1e308", "inf", False), ("1.5", "-inf", False), ("16", "0x10", False),
    ("12", "12abc", False), ("12", "12 junk", False), ("12", "1_2", False), ("12", "12\x00", False),
    ("12", "1" * 5000, False), ("1.5", "1.5" + "0" * 100000, True), ("100000", "1e5", True),
    ("Case #1: 2.5", "Case #2: 2.5", False), ("Case #1: 2.5", "case #1:\n2.5000001", True),
    ("Case #1: 1\nCase #2: 2", "Case #2: 2\nCase #1: 1", False), ("Case #1: 1", "Case #1 : 1", False),
    ("Case #1: 1", "Case #01: 1", False), ("Case #1: 1", "Case #1: 1\nCase #2: 1", False),
])
def test_the_default_validator_emulation_on_hostile_tokens(tmp_path, expected, output, ok):
    """A float_tolerance problem's checker, on what a program could print to be misread: nan / inf /
    hex / junk after a number / a very long number, and Code Jam's `Case #` lines moved, renumbered,
    respaced or added (case and line breaks are free, as in Kattis' default validator)."""
    from microcoder.pipeline.evaluator.verdict.compare import compare_stdio

    package(tmp_path / "p", "validator_flags: float_tolerance 1e-6\n")
    checker = only_problem(tmp_path / "p").checker
    assert compare_stdio(expected + "\n", output + "\n", checker).ok is ok
