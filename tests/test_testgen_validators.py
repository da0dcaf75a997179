"""Problem-shipped input validators run in the sandbox on generated inputs (issue 25 item 3): the
Kattis format's exit codes (42 valid, anything else not confirmed, 0 included), an authored
validator's (0 valid), the validator arguments of testdata.yaml reaching the program, and a
validator that cannot be trusted (no build, no verdict, rejects the problem's own tests) leaving
every input unconfirmed with a reason that says so. The packages are built here in the problem
package format's layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import SourceContext
from microcoder.pipeline.testgen.validators import InputValidator, check_inputs, is_unusable, validators_of

# Two integers 1 <= a, b <= MAX on one line; MAX is the first argument (default 100).
PY_VALIDATOR = """import re, sys
limit = int(sys.argv[1]) if len(sys.argv) > 1 else 100
text = sys.stdin.read()
m = re.fullmatch(r"(\\d+) (\\d+)\\n", text)
ok = m is not None and all(1 <= int(x) <= limit for x in m.groups())
sys.exit(42 if ok else 43)
"""

# The same as a module with a main guard and a __future__ import (the argument shim must keep both working).
PY_VALIDATOR_MAIN = """from __future__ import annotations
import re, sys


def main() -> None:
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    m = re.fullmatch(r"(\\d+) (\\d+)\\n", sys.stdin.read())
    sys.exit(42 if m is not None and all(1 <= int(x) <= limit for x in m.groups()) else 43)


if __name__ == "__main__":
    main()
"""

TESTLIB_VALIDATOR = """#include "testlib.h"
int main(int argc, char* argv[]) {
    registerValidation(argc, argv);
    inf.readInt(1, 100, "a");
    inf.readSpace();
    inf.readInt(1, 100, "b");
    inf.readEoln();
    inf.readEof();
}
"""

CPP_HEADER = """#pragma once
#include <cstdlib>
inline void accept_input() { std::exit(42); }
inline void reject_input() { std::exit(43); }
"""

CPP_VALIDATOR = """#include <bits/stdc++.h>
#include "validate.h"
int main(int argc, char** argv) {
    long long limit = 100;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--max") limit = std::atoll(argv[i + 1]);
    long long a, b;
    if (scanf("%lld %lld", &a, &b) != 2) reject_input();
    if (a < 1 || b < 1 || a > limit || b > limit) reject_input();
    int c;
    if ((c = getchar()) != '\\n' || getchar() != EOF) reject_input();
    accept_input();
}
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def package(folder: Path) -> Path:
    write(folder / "problem.yaml", "name: Sum\nsource: Made-up Contest\nlicense: cc by\n")
    write(folder / "problem_statement" / "problem.en.md", "Read two integers and print their sum.\n")
    write(folder / "data" / "sample" / "1.in", "1 2\n")
    write(folder / "data" / "sample" / "1.ans", "3\n")
    write(folder / "data" / "secret" / "1.in", "10 20\n")
    write(folder / "data" / "secret" / "1.ans", "30\n")
    write(folder / "submissions" / "accepted" / "sol.py", "print(sum(map(int, input().split())))\n")
    return folder


def read_one(pkg: Path) -> Problem:
    (problem,) = read_source("kattis", build_options("kattis", {"path": str(pkg)}), SourceContext("kattis"))
    assert isinstance(problem, Problem), problem
    return problem


def bare_problem(tests: list[TestCase] | None = None) -> Problem:
    return Problem(id="p", source="t", statement="two integers", style="stdio", tests=tests or [], time_limit_s=1.0)


@pytest.fixture(scope="module")
def ev():
    from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig

    with Evaluator(workers=1, config=EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)) as evaluator:
        yield evaluator


def test_kattis_python_validator_drops_invalid_inputs_with_the_reason(tmp_path, ev):
    pkg = package(tmp_path / "sum")
    write(pkg / "input_validators" / "validate.py", PY_VALIDATOR)
    problem = read_one(pkg)
    validators = validators_of(problem)
    assert [(v.name, v.language, v.valid_exit) for v in validators] == [("kattis:validate.py", "python", 42)]
    (reasons,) = check_inputs(ev, [(problem, validators, ["3 4\n", "3 400\n", "3 4", "x y\n"])])
    assert reasons == [None] + ["rejected by kattis:validate.py (exit 43)"] * 3


def test_kattis_cpp_validator_gets_its_header_and_the_testdata_arguments(tmp_path, ev):
    """A directory program (one source, its header beside it) and legacy `input_validator_flags`:
    `--max 50` must reach argv, else 60 would pass the validator's default limit of 100."""
    pkg = package(tmp_path / "sum")
    write(pkg / "input_format_validators" / "validate" / "validate.cpp", CPP_VALIDATOR)
    write(pkg / "input_format_validators" / "validate" / "validate.h", CPP_HEADER)
    write(pkg / "data" / "testdata.yaml", "input_validator_flags: --max 50\n")
    problem = read_one(pkg)
    (entry,) = problem.meta["input_validators"]
    assert entry["flags"] == ["--max", "50"] and "inline void accept_input()" in entry["code"]
    assert '#include "validate.h"' not in entry["code"]
    (reasons,) = check_inputs(ev, [(problem, validators_of(problem), ["3 4\n", "3 60\n", "50 50\n", "3 4 5\n"])])
    assert reasons == [None, "rejected by kattis:validate (exit 43)", None, "rejected by kattis:validate (exit 43)"]


def test_python_validator_gets_per_validator_arguments_of_test_group_yaml(tmp_path, ev):
    """2025-09: `input_validator_args` in data/secret/test_group.yaml, a map by validator name."""
    pkg = package(tmp_path / "sum")
    write(pkg / "input_validators" / "validate.py", PY_VALIDATOR_MAIN)
    write(pkg / "input_validators" / "other.py", PY_VALIDATOR)
    write(pkg / "data" / "secret" / "test_group.yaml", "input_validator_args:\n  validate: ['5']\n")
    problem = read_one(pkg)
    assert [(e["name"], e["flags"]) for e in problem.meta["input_validators"]] == [
        ("kattis:other.py", []), ("kattis:validate.py", ["5"])]
    (reasons,) = check_inputs(ev, [(problem, validators_of(problem), ["3 4\n", "3 6\n", "3 600\n"])])
    assert reasons == [None, "rejected by kattis:validate.py (exit 43)", "rejected by kattis:other.py (exit 43)"]


def test_exit_0_from_a_kattis_validator_is_not_valid(ev):
    """The format: 42 is valid, any other exit (0 too) is not confirmed valid."""
    zero = InputValidator("kattis:zero.py", "python", "import sys\nsys.stdin.read()\n", 42)
    fortytwo = InputValidator("kattis:yes.py", "python", "import sys\nsys.exit(42)\n", 42)
    reasons = check_inputs(ev, [(bare_problem(), [zero], ["1 2\n"]), (bare_problem(), [fortytwo], ["1 2\n"])])
    assert reasons == [["rejected by kattis:zero.py (exit 0)"], [None]]


def test_authored_validator_accepts_on_exit_0(ev):
    code = "import sys\na, b = map(int, sys.stdin.read().split())\nsys.exit(0 if a <= b else 1)\n"
    authored = InputValidator("authored", "python", code, 0)
    problem = bare_problem([TestCase("1 2\n", "3\n", "public")])
    (reasons,) = check_inputs(ev, [(problem, [authored], ["1 5\n", "5 1\n", "oops\n"])])
    assert reasons == [None, "rejected by authored (exit 1)", "rejected by authored (exit 1)"]


def test_authored_testlib_validator_runs_with_the_installed_header(ev):
    from microcoder.pipeline.evaluator.verdict import testlib

    if testlib.include_dir(None) is None:
        pytest.skip("testlib.h is not installed (make setup)")
    validator = InputValidator("authored", "cpp", TESTLIB_VALIDATOR, 0)
    (reasons,) = check_inputs(ev, [(bare_problem(), [validator], ["3 4\n", "3 400\n", "3 4 \n"])])
    assert reasons == [None, "rejected by authored (exit 3)", "rejected by authored (exit 3)"]


def test_a_validator_that_does_not_compile_leaves_every_input_unconfirmed(ev):
    broken = InputValidator("kattis:broken.cpp", "cpp", "int main() { return 42 }\n", 42)
    (reasons,) = check_inputs(ev, [(bare_problem(), [broken], ["1 2\n", "3 4\n"])])
    assert all(r.startswith("validator kattis:broken.cpp did not compile: ") and "error" in r for r in reasons), reasons
    assert all(is_unusable(r) for r in reasons)


def test_a_validator_rejecting_the_problems_own_tests_is_unusable(ev):
    """It accepts "1 2" but not the sample "7 7": neither its acceptances nor its rejections count."""
    code = "import sys\nsys.exit(42 if sys.stdin.read() == '1 2\\n' else 43)\n"
    picky = InputValidator("kattis:picky.py", "python", code, 42)
    problem = bare_problem([TestCase("7 7\n", "14\n", "public")])
    (reasons,) = check_inputs(ev, [(problem, [picky], ["1 2\n", "3 4\n"])])
    assert reasons == ["validator kattis:picky.py unusable: it does not accept the problem's own test input 1 "
                       "(rejected by kattis:picky.py (exit 43))"] * 2


def test_a_validator_with_no_verdict_on_any_input_is_unusable(ev):
    crash = InputValidator("kattis:crash.cpp", "cpp", "#include <csignal>\nint main() { std::raise(SIGSEGV); }\n", 42)
    (reasons,) = check_inputs(ev, [(bare_problem(), [crash], ["1 2\n", "3 4\n"])])
    assert reasons[0] == reasons[1] and is_unusable(reasons[0]) and "SIGSEGV" in reasons[0], reasons


def test_jobs_keep_their_order_and_empty_jobs_cost_nothing(ev):
    yes = InputValidator("kattis:yes.py", "python", "import sys\nsys.exit(42)\n", 42)
    no = InputValidator("kattis:no.py", "python", "import sys\nsys.exit(43)\n", 42)
    reasons = check_inputs(ev, [(bare_problem(), [yes], []), (bare_problem(), [], ["1\n"]),
                                (bare_problem(), [yes, no], ["1\n", "2\n"])])
    assert reasons == [[], [None], ["rejected by kattis:no.py (exit 43)"] * 2]


def test_cpp_arguments_reach_a_main_taking_const_char_pointers(ev):
    from microcoder.pipeline.testgen.validators import with_arguments

    code = ("#include <cstring>\nint main(int argc, const char* argv[]) {\n"
            "    return argc == 3 && !std::strcmp(argv[1], \"--max\") && !std::strcmp(argv[2], \"5 \\\"x\\\"\") ? 42 : 43;\n}\n")
    validator = InputValidator("kattis:v.cpp", "cpp", with_arguments("cpp", code, "kattis:v.cpp", ["--max", '5 "x"']), 42)
    (reasons,) = check_inputs(ev, [(bare_problem(), [validator], ["1\n"])])
    assert reasons == [None]
