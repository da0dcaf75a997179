"""A Kattis package whose output validator (or interactor) does not compile (issue 39).

The verdict stays SE (a broken checker is the system's fault, never the contestant's), and each
test's `diff` says what broke: `checkers.NOT_COMPILED` and the compiler's first error line, which
`checkers.not_compiled` reads back (validate's reject reason names it instead of "statuses: SE").
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.verdict.checkers import NOT_COMPILED, first_error_line, not_compiled
from microcoder.pipeline.schema import Problem
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import SourceContext

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
ECHO = "print(input())\n"
BROKEN_CPP = "#include <cstdio>\nint main() {\n  return 42\n}\n"  # no `;` before `}`
BROKEN_PY = "import sys\ndef check(:\n    sys.exit(42)\n"


def package(folder: Path, validation: str, validator: str) -> Problem:
    files = {"problem.yaml": f"source: Made-up Contest\nvalidation: {validation}\n",
             "problem_statement/problem.en.md": "Print the number you read.\n",
             "data/secret/1.in": "3\n", "data/secret/1.ans": "3\n", "data/secret/2.in": "4\n",
             "data/secret/2.ans": "4\n", "submissions/accepted/echo.py": ECHO,
             f"output_validators/{validator}": BROKEN_CPP if validator.endswith(".cpp") else BROKEN_PY}
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    items = list(read_source("kattis", build_options("kattis", {"path": str(folder)}), SourceContext("kattis")))
    assert len(items) == 1 and isinstance(items[0], Problem), items
    return items[0]


@pytest.fixture(scope="module")
def ev():
    with Evaluator(workers=1, config=EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)) as e:
        yield e


def judge_reference(ev, p: Problem):
    ref = p.reference_solutions[0]
    (v,) = ev.evaluate_batch([p], [Submission(p.id, "ref", ref.language, ref.code)], mode="all")
    return v


@needs_gxx
def test_an_output_validator_that_does_not_compile_says_so(ev, tmp_path):
    v = judge_reference(ev, package(tmp_path / "p", "custom", "check/check.cpp"))
    assert v.status == "SE" and len(v.tests) == 2, v
    for t in v.tests:
        assert t.status == "SE" and t.diff.startswith(NOT_COMPILED), t
        assert not_compiled(t.diff) == t.diff[len(NOT_COMPILED):]
    line = not_compiled(v.tests[0].diff)
    # the line that says what is wrong, as one line, without the sandbox's folders
    assert re.fullmatch(r"main\.cpp:3:\d+: error: expected .;. before .}. token", line), line


def test_a_python_output_validator_with_a_syntax_error_says_so(ev, tmp_path):
    v = judge_reference(ev, package(tmp_path / "p", "custom", "check.py"))
    assert v.status == "SE", v
    assert not_compiled(v.tests[0].diff) == "SyntaxError: invalid syntax (line 2)", v.tests[0].diff


@needs_gxx
def test_an_interactor_that_does_not_compile_says_so(ev, tmp_path):
    v = judge_reference(ev, package(tmp_path / "p", "custom interactive", "interact.cpp"))
    assert v.status == "SE", v
    assert v.tests[0].diff.startswith("the interactor failed: " + NOT_COMPILED)
    assert "error:" in not_compiled(v.tests[0].diff)


def test_first_error_line_and_not_compiled():
    gxx = ("/box/build/src.cpp: In function 'void error(int)':\n"
           "/box/build/src.cpp:3:11: error: expected ';' before '}' token\n    3 |   return 42\n")
    assert first_error_line(gxx) == "src.cpp:3:11: error: expected ';' before '}' token"
    assert first_error_line("compilation ran out of 30 s of wall-clock time") == \
        "compilation ran out of 30 s of wall-clock time"
    assert first_error_line("") == "no diagnostics"
    assert not_compiled("checker exit code 3: checker does not compile: x") is None
    assert not_compiled(None) is None and not_compiled("rejected by the output validator") is None
