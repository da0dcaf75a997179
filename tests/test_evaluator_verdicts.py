"""Verdicts that used to be wrong in the contestant's favour (issue 24), judged by the real sandbox:

1. A program that finishes with its peak memory over the problem's limit is MLE, not AC / WA
   (native programs get slack address space, so they can finish over the limit).
2. A checker program that fails on the contestant's output but accepts the expected answer makes
   that output WA, not SE (SE is never counted against the model); SE stays for a checker that
   fails on, or rejects, the expected answer too.
3. A Python checker runs with the interpreter's default limit on int digits, so a huge number
   in the output makes int() fail fast (WA by 2) instead of being parsed (or eating the
   checker's CPU until it is killed).
"""

from __future__ import annotations

import shutil
import textwrap

import pytest

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.verdict import checkers
from microcoder.pipeline.schema import Checker, Problem, TestCase

# Generous wall limits: a loaded machine must not turn what these tests judge into a wall-clock TLE.
CFG = EvaluatorConfig(wall_factor=4.0, wall_slack_s=20.0, checker_time_limit_s=3.0)
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def sub(problem: Problem, code: str, lang: str = "python", sid: str = "s") -> Submission:
    return Submission(problem.id, sid, lang, textwrap.dedent(code))


@pytest.fixture(scope="module")
def ev():
    with Evaluator(workers=1, config=CFG) as e:
        yield e


# --- 1. peak memory over the limit ---------------------------------------------------------------------------
LIMITED = Problem(id="limited", source="test", statement="", style="stdio", time_limit_s=2.0, memory_limit_mb=64,
                  tests=[TestCase("41\n", "42\n")])


def touching(mb: int) -> str:
    """C++ that mallocs and touches `mb` MB (volatile: the compiler cannot drop it), then prints
    the right answer and exits 0."""
    return textwrap.dedent(f"""\
        #include <cstdio>
        #include <cstdlib>
        int main() {{
            long n;
            if (scanf("%ld", &n) != 1) return 1;
            size_t size = (size_t){mb} << 20;
            volatile char* p = (volatile char*)malloc(size);
            if (!p) return 2;
            for (size_t i = 0; i < size; i += 4096) p[i] = (char)n;
            long s = 0;
            for (size_t i = 0; i < size; i += 1 << 20) s += p[i];
            printf("%ld\\n", s == n * (long)(size >> 20) ? n + 1 : -1);
        }}
        """)


PYTHON_40_MB = """
    data = bytearray(40 << 20)
    for i in range(0, len(data), 4096):
        data[i] = 1
    print(int(input()) + 1)
"""


@needs_gxx
def test_a_native_program_that_finishes_over_the_memory_limit_is_mle(ev):
    """80 MB touched under a 64 MB limit is MLE though the program printed the right answer;
    20 MB (C++) and 40 MB (Python: the warm interpreter's pages are not the program's) stay AC."""
    over, under, python = ev.evaluate_batch([LIMITED], [sub(LIMITED, touching(80), "cpp", "over"),
                                                        sub(LIMITED, touching(20), "cpp", "under"),
                                                        sub(LIMITED, PYTHON_40_MB, sid="python")])
    assert over.status == "MLE", over
    # with a run group its limit (the stated one) stops it first; without, the peak RSS rule
    assert "64 MB" in over.tests[0].diff and ("peak" in over.tests[0].diff or "exceeded" in over.tests[0].diff), over
    assert under.status == "AC", under
    assert python.status == "AC", python


# --- 2. a checker that fails on the contestant's output -----------------------------------------------------------
# A plain checker: it parses the output without guarding against junk (a traceback, exit 1, on
# anything that is not a number). It reads the test's input too (checkers.run_checker writes it
# next to the answer).
FRAGILE = """
import sys
n = int(open(sys.argv[1]).read())
answer = int(open(sys.argv[2]).read())
value = int(sys.stdin.read().split()[0])
sys.exit(42 if value == answer == n + 1 else 43)
"""
CRASHES_ALWAYS = """
raise RuntimeError("the checker is broken")
"""
REJECTS_ALL_NUMBERS = """
import sys
int(sys.stdin.read().split()[0])
sys.exit(43)
"""


def checked(pid: str, program: str) -> Problem:
    return Problem(id=pid, source="test", statement="", style="stdio", time_limit_s=2.0,
                   tests=[TestCase("41\n", "42\n")],
                   checker=Checker(kind="program", language="python", protocol="kattis", program=program))


def test_a_checker_that_fails_on_the_output_but_accepts_the_answer_gives_wa(ev, monkeypatch):
    p = checked("fragile", FRAGILE)
    runs = []
    real = checkers.run_checker
    monkeypatch.setattr(checkers, "run_checker", lambda *a: runs.append(a[5]) or real(*a))  # a[5]: the output
    right, wrong, junk, empty, junk_again = ev.evaluate_batch([p], [
        sub(p, "print(int(input()) + 1, end=' \\n')\n", sid="right"), sub(p, "print(41)\n", sid="wrong"),
        sub(p, "print('forty-two')\n", sid="junk"), sub(p, "pass\n", sid="empty"),
        sub(p, "print('xlii')\n", sid="junk-again")])
    assert right.status == "AC" and wrong.status == "WA", (right, wrong)
    for v in (junk, empty, junk_again):
        assert v.status == "WA", v
        diff = v.tests[0].diff
        assert "the checker failed on this output" in diff and "checker exit code 1" in diff, diff
    assert "ValueError" in junk.tests[0].diff and "IndexError" in empty.tests[0].diff
    # the expected answer was fed to the checker once: after that, its acceptance is remembered
    assert runs.count("42\n") == 1, runs


@pytest.mark.parametrize(("program", "why"), [(CRASHES_ALWAYS, "fails on the expected answer too"),
                                              (REJECTS_ALL_NUMBERS, "rejects the expected answer")],
                         ids=["crashes-always", "rejects-every-number"])
def test_a_checker_that_fails_on_the_expected_answer_too_is_se(ev, program, why):
    p = checked(f"broken-{len(program)}", program)
    v = ev.evaluate_batch([p], [sub(p, "print('forty-two')\n")])[0]
    assert v.status == "SE", v
    assert "checker exit code 1" in v.tests[0].diff and why in v.tests[0].diff, v.tests[0].diff


# --- 3. the int-digit limit in checkers ----------------------------------------------------------------------------
# A sloppy checker for "print the answer modulo 10^9+7": it reduces what it reads instead of
# checking the range. Without the interpreter's digit limit, a 100,000-digit number congruent to
# the answer passes it.
MODULO = """
import sys
MOD = 10**9 + 7
want = int(open(sys.argv[2]).read())
got = sys.stdin.read().split()
sys.exit(42 if len(got) == 1 and int(got[0]) % MOD == want else 43)
"""
EXACT = """
import sys
want = int(open(sys.argv[2]).read())
got = sys.stdin.read().split()
sys.exit(42 if len(got) == 1 and int(got[0]) == want else 43)
"""


def test_a_huge_number_congruent_to_the_answer_does_not_pass_a_python_checker(ev):
    p = checked("modulo", MODULO)
    huge = """
        import sys
        sys.set_int_max_str_digits(0)
        print(int(input()) + 1 + (10**9 + 7) * 10**100000)
    """
    right, v = ev.evaluate_batch([p], [sub(p, "print(int(input()) + 1)\n", sid="right"), sub(p, huge, sid="huge")])
    assert right.status == "AC", right
    assert v.status == "WA", v
    assert "Exceeds the limit" in v.tests[0].diff, v.tests[0].diff


def test_a_three_million_digit_number_is_wa_not_a_checker_failure(ev):
    """int() of 3 million digits takes the checker tens of seconds without the digit limit (SE
    before issue 24); with it the checker fails fast on this output only: WA."""
    p = checked("exact", EXACT)
    v = ev.evaluate_batch([p], [sub(p, "import sys\nsys.stdout.write('7' * 3_000_000 + '\\n')\n")])[0]
    assert v.status == "WA", v
    assert "Exceeds the limit" in v.tests[0].diff, v.tests[0].diff


def test_the_peak_that_counts_is_the_programs_own():
    from microcoder.pipeline.evaluator.verdict.runs import peak_over

    mb = 1 << 20
    # an exec'd binary: the kernel's peak starts at the forked judge's (base_rss_kb); absent: 0
    assert peak_over(70 * 1024, None, 64 * mb, native=True) is not None
    assert peak_over(70 * 1024, 70 * 1024, 64 * mb, native=True) is None  # the judge's pages, not its own
    assert peak_over(60 * 1024, 0, 64 * mb, native=True) is None
    # a Python program forked from the warm judge: its peak less the RSS it started from; without
    # that figure, no verdict from the peak
    assert peak_over(80 * 1024, None, 64 * mb, native=False) is None
    assert peak_over(80 * 1024, 20 * 1024, 64 * mb, native=False) is None
    assert peak_over(90 * 1024, 20 * 1024, 64 * mb, native=False) == "peak memory 70.0 MB > limit 64 MB"
    assert peak_over(float("inf"), 0, 64 * mb, native=True) is None  # (frame values come from the program)


def test_a_functional_call_over_the_memory_limit_is_mle_and_the_rest_run_in_a_fresh_session(ev):
    """The session child's peak stays for its later calls: after a call's MLE, mode all runs the
    rest in a fresh session. The peak that counts is the program's own: above the RSS the child
    starts from (the judge's `base_rss_kb`)."""
    p = Problem(id="grows", source="test", statement="", style="functional", entry_point="f", time_limit_s=2.0,
                memory_limit_mb=64, tests=[TestCase(str(x), str(2 * x)) for x in range(4)])
    code = "def f(x):\n    if x == 1:\n        data = b'x' * (80 << 20)\n    return 2 * x\n"
    v = ev.evaluate_batch([p], [sub(p, code)], mode="all")[0]
    assert [t.status for t in v.tests] == ["AC", "MLE", "AC", "AC"], v


# A Kattis output validator that accepts an output equal to the flag after `mode` it is given
# (after its feedback dir): the package's flags reach it, per test group where the group sets them.
FLAGGED_VALIDATOR = """
import sys
args = sys.argv[4:]
want = args[args.index("mode") + 1] if "mode" in args else "none"
sys.exit(42 if sys.stdin.read().strip() == want else 43)
"""


def test_a_kattis_validator_gets_its_groups_flags_else_the_problems(ev):
    p = Problem(id="flags", source="t", statement="", style="stdio", time_limit_s=2.0,
                tests=[TestCase("1\n", "", "private", "secret/g1"), TestCase("2\n", "", "private", "secret/g2")],
                checker=Checker(kind="program", language="python", protocol="kattis", program=FLAGGED_VALIDATOR),
                meta={"validator_flags": "mode 7",
                      "test_groups": [{"group": "secret/g1", "output_validator_flags": "mode 9"},
                                      {"group": "secret/g2"}]})
    right = "print(9 if input() == '1' else 7)"
    wrong = "input()\nprint(7)"
    assert checkers.validator_args(p, p.tests[0]) == ["mode", "9"]
    assert checkers.validator_args(p, p.tests[1]) == ["mode", "7"]
    ok, bad = ev.evaluate_batch([p], [Submission("flags", "right", "python", right),
                                      Submission("flags", "wrong", "python", wrong)])
    assert ok.status == "AC", ok
    assert bad.status == "WA" and bad.tests[0].status == "WA", bad
