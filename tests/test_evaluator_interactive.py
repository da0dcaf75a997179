"""Interactive problems (issue 26 item 5), judged by the real sandbox: the submission (run box) and
the interactor (check box) talk over two pipes, and the interactor gives the verdict.

The game: the interactor reads a secret number, the range and how many guesses it allows from its
input file, tells the submission the range, and answers each guess "lower", "higher" or "correct".
Nothing here is timed: a run that must block is stopped by its wall limit, whatever the load.

The last tests search for the test's files the way a submission could under either sandbox (the
host's folders, which the unshare fallback leaves visible, and other processes' descriptors): an
interactor's input and answer, and a checker program's files, never lie where it could find them.
"""

from __future__ import annotations

import os
import secrets
import shutil
import textwrap
from pathlib import Path

import pytest

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.sandbox import launch
from microcoder.pipeline.evaluator.verdict import judge
from microcoder.pipeline.schema import Checker, Problem, TestCase

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

# Wall room for a loaded machine (CPU is what is judged); the submissions that block wait out the
# wall of BLOCKING (its time limit is small), so they do not slow the suite down much.
CFG = EvaluatorConfig(wall_factor=3.0, wall_slack_s=4.0, checker_time_limit_s=5.0, checker_memory_mb=256)
RANGE, GUESSES = 10**9, 32  # binary search needs 30 guesses at most

KATTIS_PY = """
import sys
secret, n, limit = map(int, open(sys.argv[1]).read().split())
assert int(open(sys.argv[2]).read()) == secret, "the answer file does not match the input"

def finish(code, message):
    with open(sys.argv[3] + "judgemessage.txt", "w") as f:
        f.write(message)
    sys.exit(code)

print(n, flush=True)
for guess_no in range(1, limit + 1):
    line = sys.stdin.readline(64)  # reads what it needs: a flood of output stays in the pipe
    if not line:
        finish(43, "the submission stopped guessing")
    try:
        guess = int(line)
    except ValueError:
        finish(43, f"not a number: {line[:20]!r}")
    if guess == secret:
        print("correct", flush=True)
        finish(42, f"found in {guess_no} guesses")
    print("lower" if secret < guess else "higher", flush=True)
finish(43, f"out of guesses ({limit})")
"""

KATTIS_CPP = r"""
#include <cstdio>
#include <string>
static int finish(const char* feedback, int code, const char* message) {
    std::string path = std::string(feedback) + "judgemessage.txt";
    if (FILE* f = fopen(path.c_str(), "w")) { fputs(message, f); fclose(f); }
    return code;
}
int main(int argc, char** argv) {
    long long secret, n, limit, answer;
    FILE* in = fopen(argv[1], "r");
    FILE* ans = fopen(argv[2], "r");
    if (!in || !ans || fscanf(in, "%lld %lld %lld", &secret, &n, &limit) != 3 || fscanf(ans, "%lld", &answer) != 1
        || answer != secret) return 3;
    printf("%lld\n", n);
    fflush(stdout);
    for (long long i = 0; i < limit; i++) {
        long long guess;
        if (scanf("%lld", &guess) != 1) return finish(argv[3], 43, "no guess");
        if (guess == secret) { puts("correct"); fflush(stdout); return finish(argv[3], 42, "found"); }
        puts(secret < guess ? "lower" : "higher");
        fflush(stdout);
    }
    return finish(argv[3], 43, "out of guesses");
}
"""

# What a testlib interactor does, in Python: argv [prog, input, tout, answer], exit 0 / 1 (WA) /
# 2 (PE) / 3 (fail), the message on stderr.
TESTLIB_PY = """
import sys
secret, n, limit = map(int, open(sys.argv[1]).read().split())
tout = open(sys.argv[2], "w")

def finish(code, message):
    tout.write(message + "\\n")
    print(message, file=sys.stderr)
    sys.exit(code)

print(n, flush=True)
for guess_no in range(1, limit + 1):
    tokens = sys.stdin.readline(64).split()
    if not tokens or not tokens[0].isdigit():
        finish(2, "expected a number")
    if int(tokens[0]) == int(open(sys.argv[3]).read()):
        print("correct", flush=True)
        finish(0, f"ok found in {guess_no}")
    print("lower" if secret < int(tokens[0]) else "higher", flush=True)
finish(1, "out of guesses")
"""

# A real testlib interactor (registerInteraction: inf = the test's input, ouf = the submission's
# output, tout = the result file; quitf(_ok / _wa / _pe, ...)); testlib.h is installed by `make setup`.
TESTLIB_CPP = r"""
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerInteraction(argc, argv);
    long long secret = inf.readLong(), n = inf.readLong();
    int limit = inf.readInt();
    std::cout << n << std::endl;
    for (int guess_no = 1; guess_no <= limit; guess_no++) {
        long long guess = ouf.readLong(1, n, "guess");
        if (guess == secret) {
            std::cout << "correct" << std::endl;
            tout << guess_no << std::endl;
            quitf(_ok, "found in %d guesses", guess_no);
        }
        std::cout << (secret < guess ? "lower" : "higher") << std::endl;
    }
    quitf(_wa, "out of guesses");
}
"""

CRASHING_PY = """
import sys
secret, n, limit = map(int, open(sys.argv[1]).read().split())
print(n, flush=True)
raise RuntimeError("the interactor is broken")
"""

# Reads whole lines and int()s them, as many a judge does: a submission can make it fail.
NAIVE_PY = """
import sys
secret, n, limit = map(int, open(sys.argv[1]).read().split())
print(n, flush=True)
for _ in range(limit):
    guess = int(sys.stdin.readline())
    if guess == secret:
        print("correct", flush=True)
        sys.exit(42)
    print("lower" if secret < guess else "higher", flush=True)
sys.exit(43)
"""

BINARY_SEARCH_PY = """
n = int(input())
lo, hi = 1, n
while True:
    mid = (lo + hi) // 2
    print(mid, flush=True)
    reply = input()
    if reply == "correct":
        break
    if reply == "lower":
        hi = mid - 1
    else:
        lo = mid + 1
"""

BINARY_SEARCH_CPP = r"""
#include <cstdio>
#include <cstring>
int main() {
    long long n;
    if (scanf("%lld", &n) != 1) return 1;
    long long lo = 1, hi = n;
    char reply[16];
    while (true) {
        long long mid = (lo + hi) / 2;
        printf("%lld\n", mid);
        fflush(stdout);
        if (scanf("%15s", reply) != 1) return 1;
        if (!strcmp(reply, "correct")) return 0;
        if (!strcmp(reply, "lower")) hi = mid - 1; else lo = mid + 1;
    }
}
"""

LINEAR_PY = """
n = int(input())
for guess in range(1, n + 1):
    print(guess, flush=True)
    if input() == "correct":
        break
"""

SILENT_PY = """
n = int(input())
input()  # waits for an answer to a guess it never made
"""

SILENT_CPP = r"""
#include <cstdio>
int main() {
    long long n, m;
    scanf("%lld", &n);
    scanf("%lld", &m);  // waits for an answer to a guess it never made
}
"""

CRASHES_PY = """
n = int(input())
raise ValueError("the submission is broken")
"""

CRASHES_CPP = r"""
#include <cstdio>
int main() {
    long long n;
    scanf("%lld", &n);
    volatile int* p = nullptr;
    return *p;
}
"""

FLOOD_LINES_PY = """
import sys
chunk = "1\\n" * (1 << 16)
while True:
    sys.stdout.write(chunk)
"""

FLOOD_JUNK_PY = """
import sys
chunk = "x" * (1 << 20)
while True:
    sys.stdout.write(chunk)
"""

FLOOD_CPP = r"""
#include <cstdio>
int main() {
    static char chunk[1 << 16];
    for (int i = 0; i < (int)sizeof chunk; i++) chunk[i] = i % 2 ? '\n' : '7';
    for (;;) fwrite(chunk, 1, sizeof chunk, stdout);
}
"""

EXITS_AT_ONCE_PY = "pass\n"

PRESENTATION_PY = """
print(input(), flush=True)  # the upper end: a guess
input()
print("my guess")
"""

FLOOD_ONE_LINE_PY = """
import sys
input()
chunk = b"7" * (1 << 24)
while True:
    sys.stdout.buffer.write(chunk)
"""

HUGE_NUMBER_PY = """
input()
print("7" * 5000, flush=True)
input()
"""

CLOSES_STDOUT_PY = """
import os
n = int(input())
os.close(1)
"""


def cheater(check_dir: str) -> str:
    """A submission that looks for the answer where the interactor's files could be: the check
    folder's place inside a box and on the host, the run folder, its parents' /proc entries, and
    every file it can list under the mount root. It guesses a secret it found, else gives up."""
    return f"""
import os
import re

places = [{check_dir!r}, {launch.inside_path("check")!r}, "/proc/1/root{launch.inside_path("check")}",
          "/proc/%d/root{launch.inside_path("check")}" % os.getppid(), "/proc/%d/cwd" % os.getppid(),
          ".", "..", "/tmp", "{launch.mount_root()}"]
numbers = set()
for place in places:
    for root, _dirs, files in os.walk(place):
        for name in files:
            try:
                with open(os.path.join(root, name), "rb") as f:
                    numbers.update(int(x) for x in re.findall(rb"[0-9]{{6,}}", f.read(1 << 16)))
            except OSError:
                pass
    for name in ("answer.txt", "input.txt"):
        try:
            with open(os.path.join(place, name), "rb") as f:
                numbers.update(int(x) for x in re.findall(rb"[0-9]{{6,}}", f.read()))
        except OSError:
            pass
n = int(input())
for guess in sorted(numbers - {{n}}):
    print(guess, flush=True)
    if input() == "correct":
        break
"""


def game(pid: str, program: str, language: str = "python", protocol: str = "kattis",
         time_limit_s: float = 2.0, tests: int = 2) -> Problem:
    """A guessing game with `tests` secrets (random: nothing but the interactor's files holds them)."""
    cases = []
    for _ in range(tests):
        secret = secrets.randbelow(RANGE - 2 * 10**6) + 10**6
        cases.append(TestCase(f"{secret} {RANGE} {GUESSES}\n", f"{secret}\n"))
    return Problem(id=pid, source="test", statement="", style="stdio", time_limit_s=time_limit_s,
                   tests=cases, meta={"interactive": True},
                   checker=Checker(kind="interactor", language=language, protocol=protocol, program=program))


def sub(problem: Problem, code: str, lang: str = "python", sid: str = "s") -> Submission:
    return Submission(problem.id, sid, lang, textwrap.dedent(code))


@pytest.fixture(scope="module")
def ev():
    with Evaluator(workers=1, config=CFG) as e:
        yield e


def statuses(verdicts) -> dict[str, str]:
    return {v.submission_id: v.status for v in verdicts}


def test_python_submissions_against_a_python_interactor(ev):
    p = game("guess-py", KATTIS_PY)
    blocking = game("guess-py-blocking", KATTIS_PY, time_limit_s=0.5, tests=1)
    vs = ev.evaluate_batch([p, blocking], [
        sub(p, BINARY_SEARCH_PY, sid="ac"), sub(p, LINEAR_PY, sid="wa-strategy"),
        sub(p, CRASHES_PY, sid="re"), sub(p, EXITS_AT_ONCE_PY, sid="exits"),
        sub(p, CLOSES_STDOUT_PY, sid="closes-stdout"),
        sub(blocking, SILENT_PY, sid="tle-silent"), sub(p, "def (:\n", sid="ce")])
    got = {v.submission_id: v for v in vs}
    assert statuses(vs) == {"ac": "AC", "wa-strategy": "WA", "re": "RE", "exits": "WA", "closes-stdout": "WA",
                            "tle-silent": "TLE", "ce": "CE"}, vs
    assert got["ac"].passed == 2 and got["ac"].tests[0].strategy == "interactor", got["ac"]
    assert "out of guesses" in got["wa-strategy"].reason, got["wa-strategy"]
    assert "the submission is broken" in got["re"].reason, got["re"]
    assert "wall-clock" in got["tle-silent"].reason, got["tle-silent"]
    assert got["ac"].meta["comparison"] == "checker:interactor"


def test_a_flood_of_output_is_wa_or_tle_never_se(ev):
    p = game("guess-flood", KATTIS_PY, time_limit_s=0.5, tests=1)
    vs = ev.evaluate_batch([p], [sub(p, FLOOD_LINES_PY, sid="lines"), sub(p, FLOOD_JUNK_PY, sid="junk")])
    for v in vs:
        assert v.status in ("WA", "TLE"), v
    assert statuses(vs) == {"lines": "WA", "junk": "WA"}, vs  # the interactor stopped at its limit / the junk


@needs_gxx
def test_cpp_submissions_and_a_cpp_interactor(ev):
    py = game("guess-cpp-sub", KATTIS_PY)
    cpp = game("guess-cpp-interactor", KATTIS_CPP, language="cpp")
    blocking = game("guess-cpp-blocking", KATTIS_CPP, language="cpp", time_limit_s=0.5, tests=1)
    vs = ev.evaluate_batch([py, cpp, blocking], [
        sub(py, BINARY_SEARCH_CPP, "cpp", "ac-vs-py"), sub(cpp, BINARY_SEARCH_CPP, "cpp", "ac-vs-cpp"),
        sub(cpp, BINARY_SEARCH_PY, sid="py-ac-vs-cpp"), sub(cpp, LINEAR_PY, sid="py-wa-vs-cpp"),
        sub(cpp, CRASHES_CPP, "cpp", "re"), sub(cpp, FLOOD_CPP, "cpp", "flood"),
        sub(cpp, EXITS_AT_ONCE_PY, sid="exits"), sub(blocking, SILENT_CPP, "cpp", "tle-silent")])
    assert statuses(vs) == {"ac-vs-py": "AC", "ac-vs-cpp": "AC", "py-ac-vs-cpp": "AC", "py-wa-vs-cpp": "WA",
                            "re": "RE", "flood": "WA", "exits": "WA", "tle-silent": "TLE"}, vs


def test_a_testlib_interactor(ev):
    p = game("guess-testlib", TESTLIB_PY, protocol="testlib")
    ac, wa, pe = ev.evaluate_batch([p], [sub(p, BINARY_SEARCH_PY, sid="ac"), sub(p, LINEAR_PY, sid="wa"),
                                         sub(p, PRESENTATION_PY, sid="pe")])
    assert ac.status == "AC", ac
    assert wa.status == "WA" and "out of guesses" in wa.reason, wa
    assert pe.status == "WA" and "presentation error" in pe.reason, pe


@needs_gxx
def test_a_real_testlib_interactor(ev):
    from microcoder.pipeline.evaluator.verdict import testlib

    if testlib.include_dir(CFG.testlib_dir) is None:
        pytest.skip("testlib.h is not installed (make setup installs it)")
    p = game("guess-testlib-cpp", TESTLIB_CPP, language="cpp", protocol="testlib")
    ac, cpp, wa, pe = ev.evaluate_batch([p], [sub(p, BINARY_SEARCH_PY, sid="ac"), sub(p, BINARY_SEARCH_CPP, "cpp", "cpp"),
                                              sub(p, LINEAR_PY, sid="wa"), sub(p, PRESENTATION_PY, sid="pe")])
    assert ac.status == "AC" and cpp.status == "AC", (ac, cpp)
    assert wa.status == "WA" and "out of guesses" in wa.reason, wa
    assert pe.status == "WA", pe  # testlib: a token that is no number is a presentation error (WA here)


def test_an_interactor_that_crashes_is_wa_for_every_submission(ev):
    """Once started, an interactor that fails judges the submission WA: what the submission sent
    may have made it fail, and SE would let it escape. One that fails whatever it is sent fails
    the reference solutions too, and validate drops its problem."""
    p = game("guess-broken", CRASHING_PY, tests=1)
    right, blocking = ev.evaluate_batch([p], [sub(p, BINARY_SEARCH_PY, sid="right"), sub(p, SILENT_PY, sid="silent")])
    for v in (right, blocking):
        assert v.status == "WA", v
        assert "the interactor failed on this submission's interaction" in v.reason, v
        assert "the interactor is broken" in v.reason, v


def test_a_submission_cannot_force_se_by_breaking_the_interactor(ev):
    """A line the interactor reads into memory until it dies (MemoryError), a 5000-digit number
    its int() refuses: the interactor fails, and the submission that made it fail is WA."""
    p = game("guess-naive", NAIVE_PY, tests=1)
    right, flood, huge = ev.evaluate_batch([p], [sub(p, BINARY_SEARCH_PY, sid="right"),
                                                 sub(p, FLOOD_ONE_LINE_PY, sid="flood"),
                                                 sub(p, HUGE_NUMBER_PY, sid="huge")])
    assert right.status == "AC", right
    for v in (flood, huge):
        assert v.status == "WA" and "the interactor failed on this submission's interaction" in v.reason, v
    assert "MemoryError" in flood.reason or "exceeded its limits" in flood.reason, flood
    assert "ValueError" in huge.reason, huge


def test_an_interactor_that_cannot_start_is_se(ev):
    p = game("guess-syntax-error", "def (:\n", tests=1)
    v, = ev.evaluate_batch([p], [sub(p, BINARY_SEARCH_PY)])
    assert v.status == "SE" and "the interactor failed: checker does not compile: SyntaxError" in v.reason, v


@needs_gxx
def test_an_interactor_that_does_not_compile_is_se(ev):
    p = game("guess-no-compile", "int main( {", language="cpp", tests=1)
    v, = ev.evaluate_batch([p], [sub(p, BINARY_SEARCH_PY)])
    assert v.status == "SE" and "the interactor failed: checker does not compile" in v.reason, v


def test_the_submission_cannot_read_the_interactors_files(ev):
    """The secrets lie only in the worker's check folder, which only the check box sees: a
    submission that searches everywhere it could be finds nothing and cannot guess in time."""
    p = game("guess-cheat", KATTIS_PY, tests=3)
    check_dir = str(ev.root / "worker-0" / "check")
    v, = ev.evaluate_batch([p], [sub(p, cheater(check_dir), sid="cheat")])
    assert v.status in ("WA", "TLE"), v  # found nothing; its search may run out of CPU on a busy machine


def test_interactive_problems_without_an_interactor_are_refused():
    plain = Problem(id="i", source="test", statement="", style="stdio", tests=[TestCase("1\n", "1\n")],
                    meta={"interactive": True})
    s = Submission("i", "s", "python", "print(1)\n")
    assert judge.bad_input_reason(plain, s) == ("SE", "interactive problem without an interactor")
    functional = game("f", KATTIS_PY)
    functional.style, functional.entry_point = "functional", "f"
    assert judge.bad_input_reason(functional, s) == ("SE", "an interactor judges stdio programs only")
    empty = game("e", "  ")
    assert judge.bad_input_reason(empty, s) == ("SE", "checker kind 'interactor' without a program")
    assert judge.bad_input_reason(game("g", KATTIS_PY), s) is None


# --- the test's files never lie on disk -------------------------------------------------------------
TOKEN_PREFIX = "7331"  # + 14 random digits: what the searcher looks for


def token() -> str:
    return TOKEN_PREFIX + str(secrets.randbelow(10**14)).zfill(14)


def searcher(host_root: Path, wait_for_go: bool) -> str:
    """A submission that looks for every token it can find where a test's files could be: the
    evaluators' folders on the host (visible under the unshare sandbox: the reviewer's glob), the
    check folder's place in a box, the folders of the processes it can see and their open
    descriptors (/proc/*/fd, its own aside); it prints what it found. `wait_for_go`: an
    interactive test, searched once the interactor has its files open."""
    return f"""
import glob, os, re, stat

{"input()" if wait_for_go else ""}
me = str(os.getpid())
places = glob.glob({str(host_root / "microcoder-eval-*")!r} + "/**", recursive=True)
places += glob.glob({launch.inside_path("check")!r} + "/**", recursive=True)
places += glob.glob({launch.mount_root()!r} + "/**", recursive=True)
for pid in os.listdir("/proc"):
    if pid.isdigit() and pid != me:
        places += glob.glob(f"/proc/{{pid}}/fd/*")
        places += glob.glob(f"/proc/{{pid}}/cwd/*")
        places += glob.glob(f"/proc/{{pid}}/root{launch.inside_path("check")}/**", recursive=True)
found = set()
for path in places:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            continue
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            data = os.read(fd, 1 << 20)
        finally:
            os.close(fd)
    except OSError:
        continue
    found.update(m.decode() for m in re.findall(rb"{TOKEN_PREFIX}[0-9]{{14}}", data))
print(" ".join(sorted(found)) or "nothing", flush=True)
"""


# The interactor opens its files, says "go", and rejects a submission that names any token of
# its input or answer (which holds this test's tokens and every earlier test's).
SECRETS_INTERACTOR = """
import sys
with open(sys.argv[1]) as f:
    given = f.read().split()
with open(sys.argv[2]) as f:
    secret = set(f.read().split())
assert given[0] in secret, "the input does not match the answer"
print("go", flush=True)
leaked = set(sys.stdin.readline().split()) & secret
with open(sys.argv[3] + "judgemessage.txt", "w") as f:
    f.write("leaked: " + " ".join(sorted(leaked)))
sys.exit(43 if leaked else 42)
"""

# A checker (Kattis protocol: output on stdin) that does the same, except for the submission's
# own input (the first token of the answer), which the submission has anyway.
SECRETS_CHECKER = """
import sys
with open(sys.argv[1]) as f:
    given = f.read().split()
with open(sys.argv[2]) as f:
    own, *secret = f.read().split()
assert given == [own], "the input does not match the answer"
leaked = set(sys.stdin.read().split()) & set(secret)
with open(sys.argv[3] + "judgemessage.txt", "w") as f:
    f.write("leaked: " + " ".join(sorted(leaked)))
sys.exit(43 if leaked else 42)
"""


def secret_tests(n: int) -> list[TestCase]:
    """Test i: input one token; answer that token, then a token of its own and every earlier test's."""
    cases, earlier = [], []
    for _ in range(n):
        given, answer = token(), token()
        cases.append(TestCase(f"{given}\n", " ".join([given, answer, *earlier]) + "\n"))
        earlier += [given, answer]
    return cases


def secrets_problems() -> tuple[Problem, Problem]:
    interactive = Problem(id="secrets-interactive", source="test", statement="", style="stdio", time_limit_s=5.0,
                          tests=secret_tests(3), meta={"interactive": True},
                          checker=Checker(kind="interactor", language="python", protocol="kattis",
                                          program=SECRETS_INTERACTOR))
    checked = Problem(id="secrets-checker", source="test", statement="", style="stdio", time_limit_s=5.0,
                      tests=secret_tests(3),
                      checker=Checker(kind="program", language="python", protocol="kattis", program=SECRETS_CHECKER))
    return interactive, checked


def unshare_skip_reason() -> str | None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return "the unshare fallback runs boxes under their own uids only as root"
    return launch.unshare_problem()


@pytest.mark.parametrize("kind", ["bwrap", "unshare"])
def test_no_file_of_a_test_is_where_a_submission_could_find_it(kind):
    """The interactor's input and answer (of the current test, and of earlier ones) and a checker
    program's files (of earlier tests): nothing a submission can find while it runs, in either
    sandbox. Under unshare every box sees the host's files: they used to lie in the worker's check
    folder there, and a submission globbing for them passed every test."""
    if kind == "unshare" and (why := unshare_skip_reason()) is not None:
        pytest.skip(why)
    interactive, checked = secrets_problems()
    with Evaluator(workers=1, sandbox=kind, config=CFG) as e:
        host_root = e.root.parent
        a, b = e.evaluate_batch([interactive, checked], [sub(interactive, searcher(host_root, True), sid="interactive"),
                                                         sub(checked, searcher(host_root, False), sid="checker")])
        check_dir = e.root / "worker-0" / "check"
        left = sorted(p.name for p in check_dir.iterdir())
        modes = {d: (e.root / "worker-0" / d).stat().st_mode & 0o777 for d in ("job", "check")}
    if os.geteuid() == 0:  # boxes drop to their own uids: job/ and check/ only for their own box
        assert modes == {"job": 0o700, "check": 0o700}, modes
    assert a.status == "AC" and a.passed == 3, a
    assert b.status == "AC" and b.passed == 3, b
    assert set(left) <= {"checker.py"}, left  # the checker program, and nothing of a test


# --- protocol edges (issue 35): every one gets the submission's verdict, never AC unless the
# interactor accepted and the submission ended cleanly, never SE -------------------------------------------
def searching(then: str, newline_last: bool = True) -> str:
    """Binary search, then `then` (code run after "correct"); without `newline_last`, the guess that
    must be right (lo == hi) goes without its newline and the program exits at once."""
    last = "" if newline_last else """
    if lo == hi:
        sys.stdout.write(str(mid))
        sys.stdout.flush()
        sys.exit(0)"""
    return f"""
import sys
n = int(input())
lo, hi = 1, n
while True:
    mid = (lo + hi) // 2{last}
    print(mid, flush=True)
    reply = input()
    if reply == "correct":
        break
    if reply == "lower":
        hi = mid - 1
    else:
        lo = mid + 1
{then}
"""


WRITES_FIRST_PY = """
import sys
sys.stdout.write("".join(f"{g}\\n" for g in range(1, 1001)))
sys.stdout.flush()
"""

NO_NEWLINE_WAITS_PY = """
import sys
n = int(input())
sys.stdout.write(str(n // 2))  # no newline: the interactor's readline waits, and so does this
sys.stdout.flush()
input()
"""


def test_protocol_edges_get_the_submissions_verdict(ev):
    p = game("guess-edges", KATTIS_PY, time_limit_s=0.5, tests=1)
    vs = ev.evaluate_batch([p], [
        sub(p, searching(""), sid="ac"),
        sub(p, searching("", newline_last=False), sid="last-line-without-newline"),
        sub(p, WRITES_FIRST_PY, sid="writes-before-reading"),
        sub(p, searching("while True:\n    pass"), sid="correct-then-spins"),
        sub(p, searching("import time\ntime.sleep(60)"), sid="correct-then-sleeps"),
        sub(p, searching("raise SystemExit(3)"), sid="correct-then-exits-non-zero"),
        sub(p, searching("while True:\n    print(1, flush=True)"), sid="correct-then-floods"),
        sub(p, NO_NEWLINE_WAITS_PY, sid="partial-line-then-waits")])
    got = statuses(vs)
    # Right, but gone before the interactor's "correct": AC, or WA where the interactor's write found no
    # reader and it died of the broken pipe (a race; never SE, never AC unless the interactor accepted).
    assert got.pop("last-line-without-newline") in ("AC", "WA"), vs
    assert got == {"ac": "AC", "writes-before-reading": "WA",
                   "correct-then-spins": "TLE", "correct-then-sleeps": "TLE", "correct-then-exits-non-zero": "RE",
                   "correct-then-floods": "RE", "partial-line-then-waits": "TLE"}, vs
