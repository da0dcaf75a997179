"""Code Jam judges written for both Pythons, and Python 2 ones that import print_function (issue 39).

A judge that runs under Python 2 and 3 alike (`try: input = raw_input` / `except NameError: pass`,
`if sys.version_info[0] < 3:`) is Python 3 code: run as it is, never converted. A Python 2 only name
inside such a guard does not make it Python 2; the same name outside one still does. A judge that is
Python 2 but imports print_function keeps `print(..., file=sys.stderr)` through the conversion (the
print fixer does not run on it), however its `__future__` list is written.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from microcoder.pipeline.sources.codejam_judge import adapt, future_features, is_python2, to_python3

# A custom judge (Google's argv: input, attempt, expected) for both Pythons, as Google's later judges
# are written: the attempt must be the expected number.
BOTH_PYTHONS_JUDGE = """import sys
try:
  input = raw_input
except NameError:
  pass


def main():
  with open(sys.argv[2]) as attempt, open(sys.argv[3]) as expected:
    got, want = attempt.read().split(), expected.read().split()
  if got != want:
    print("expected", want, "got", got, file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
  main()
"""

GUARDED = {
    "try NameError, print_function": "from __future__ import print_function\n" + BOTH_PYTHONS_JUDGE,
    "try NameError, tuple": "try:\n  rng = xrange\nexcept (ImportError, NameError):\n  rng = range\n",
    "version_info if/else": "import sys\nif sys.version_info[0] < 3:\n  read = raw_input\nelse:\n  read = input\n",
    "version_info else branch": "import sys\nif sys.version_info >= (3,):\n  pass\nelse:\n  text = unicode('x')\n",
    "version_info imported": "from sys import version_info\nif version_info.major == 2:\n  n = long(3)\n",
    "conditional expression": "import sys\nrng = xrange if sys.version_info < (3,) else range\n",
    "six.PY2 dict method": "import six\nd = {}\nif six.PY2:\n  items = d.iteritems()\n",
    "own PY2 flag": "import sys\nPY2 = sys.version_info[0] == 2\nif PY2:\n  text = unicode('x')\n",
}


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_python2_names_under_a_version_guard_are_python3(name):
    assert not is_python2(GUARDED[name])


NOT_GUARDS = {
    "the same name unguarded too": "try:\n  input = raw_input\nexcept NameError:\n  pass\nx = raw_input()\n",
    "a broad except wraps a python 2 judge": "try:\n  for i in xrange(3):\n    pass\nexcept Exception:\n  pass\n",
    "a bare except": "try:\n  n = long(3)\nexcept:\n  pass\n",
    "a variable called version": "version = 2\nif version == 2:\n  n = long(3)\n",
    "xrange outside the NameError try": "try:\n  input = raw_input\nexcept NameError:\n  pass\n"
                                        "for i in xrange(3):\n  pass\n",
}


@pytest.mark.parametrize("name", sorted(NOT_GUARDS))
def test_python2_code_outside_a_guard_is_still_python2(name):
    assert is_python2(NOT_GUARDS[name])


def kattis_custom(prog: Path, tmp_path: Path, attempt: str, answer: str) -> tuple[int, str]:
    """Runs an adapted custom judge on one attempt: (exit code, judgemessage.txt)."""
    (tmp_path / "in").write_text("")
    (tmp_path / "ans").write_text(answer)
    feedback = tmp_path / f"fb{len(list(tmp_path.glob('fb*')))}"
    feedback.mkdir()
    r = subprocess.run([sys.executable, str(prog), str(tmp_path / "in"), str(tmp_path / "ans"), f"{feedback}/"],
                       input=attempt, capture_output=True, text=True, timeout=60)
    assert r.returncode in (42, 43), r.stderr
    message = feedback / "judgemessage.txt"
    return r.returncode, message.read_text() if message.exists() else ""


def adapted(tmp_path: Path, source: str) -> str:
    judge = tmp_path / "judge.py"
    judge.write_text(source)
    return adapt(judge, interactive=False)[1]


def test_a_judge_for_both_pythons_runs_as_python3(tmp_path):
    """Without print_function it is not Python 2 at all (print(..., file=...)); converting it failed."""
    program = adapted(tmp_path, BOTH_PYTHONS_JUDGE)
    assert "PYTHON2 = False" in program and "Python 3" in program.splitlines()[0]
    prog = tmp_path / "prog.py"
    prog.write_text(program)
    assert kattis_custom(prog, tmp_path, "7\n", "7\n") == (42, "")
    assert kattis_custom(prog, tmp_path, "8\n", "7\n") == (43, "expected ['7'] got ['8']\n")


# Python 2 (xrange, an unguarded raw_input) with print as a function, its __future__ list over two lines.
PY2_PRINT_FUNCTION_JUDGE = '''"""A Python 2 judge printing as Python 3 does."""
from __future__ import (absolute_import,  # the list goes on
                        print_function)
import sys

if __name__ == "__main__":
  got = file(sys.argv[2]).read().split()
  want = [str(i * 2) for i in xrange(int(file(sys.argv[3]).read()))]
  if got != want:
    print("want", len(want), "numbers,", "got", len(got), file=sys.stderr)
    sys.exit(1)
'''


def test_a_python2_judge_importing_print_function_keeps_print_calls(tmp_path):
    assert is_python2(PY2_PRINT_FUNCTION_JUDGE)
    converted = to_python3(PY2_PRINT_FUNCTION_JUDGE)
    assert 'print("want", len(want), "numbers,", "got", len(got), file=sys.stderr)' in converted
    assert "range(int(" in converted and "xrange" not in converted
    prog = tmp_path / "prog.py"
    prog.write_text(adapted(tmp_path, PY2_PRINT_FUNCTION_JUDGE))
    assert kattis_custom(prog, tmp_path, "0 2 4\n", "3\n") == (42, "")
    assert kattis_custom(prog, tmp_path, "0 2\n", "3\n") == (43, "want 3 numbers, got 2\n")


def test_print_function_keeps_a_print_call_with_several_arguments():
    """The print fixer would make `print("a", 1)` print a tuple, as Python 2's statement did."""
    converted = to_python3("from __future__ import print_function\nprint('a', 1)\nx = xrange(2)\n")
    assert "print('a', 1)" in converted and "print(('a', 1))" not in converted


def test_future_features_after_a_docstring_and_over_lines():
    source = ('#!/usr/bin/env python\n"""Doc."""\n\nfrom __future__ import division as d, print_function\n'
              "from __future__ import (absolute_import,  # why\n    unicode_literals)\nimport sys\n"
              "from __future__ import generators\n")
    assert future_features(source) == {"division", "print_function", "absolute_import", "unicode_literals"}
    assert future_features("print `x`\n") == frozenset() and future_features("") == frozenset()


def test_python2_division_is_kept_unless_imported_over_lines():
    assert "_py2_div" in to_python3("a = 7 / 2\n")
    assert "_py2_div" not in to_python3("from __future__ import (print_function,\n    division)\na = 7 / 2\n")


def test_archive_judges_classified_and_adapted(bench_data):
    """The archive's 5 Python judges are Python 2 (`print >> sys.stderr`, none guards a name) and
    convert; the two C++ ones stay unsupported (cocolib)."""
    archive = bench_data / "codejam-archive"
    if not archive.is_dir():
        pytest.skip("codejam-archive is not in bench-data")
    judges = sorted(archive.glob("**/output_validators/*/*.py"))
    assert len(judges) == 5
    for judge in judges:
        assert is_python2(judge.read_text()), judge
        program = adapt(judge, interactive=judge.parents[2].name == "war_of_the_words")[1]
        assert "PYTHON2 = True" in program
