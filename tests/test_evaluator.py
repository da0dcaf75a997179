"""Evaluator behaviour: verdicts for stdio and functional programs (Python and C++), checkers,
modes, bad input, the batch deadline and the streaming API. All runs are real sandboxed runs."""

from __future__ import annotations

import dataclasses
import os
import textwrap

import pytest

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission, evaluate, evaluate_batch
from microcoder.pipeline.evaluator.sandbox.launch import resolve_kind
from microcoder.pipeline.evaluator.verdict import testlib
from microcoder.pipeline.schema import Checker, Problem, TestCase

FAST = EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)


def stdio(pid: str, pairs, **kw) -> Problem:
    return Problem(id=pid, source="test", statement="", style="stdio",
                   tests=[TestCase(i, o) for i, o in pairs], time_limit_s=kw.pop("time_limit_s", 1.0), **kw)


def functional(pid: str, entry: str, pairs, **kw) -> Problem:
    return Problem(id=pid, source="test", statement="", style="functional", entry_point=entry,
                   tests=[TestCase(i, o) for i, o in pairs], time_limit_s=kw.pop("time_limit_s", 1.0), **kw)


def sub(pid: str, code: str, lang: str = "python", sid: str | None = None) -> Submission:
    return Submission(pid, sid or pid, lang, textwrap.dedent(code))


SUM = stdio("sum", [("1 2\n", "3\n"), ("10 20\n", "30\n"), ("-1 1\n", "0\n")])
ADD = functional("add", "add", [("1\n2", "3"), ("[1]\n[2]", "[1, 2]"), ('"a"\n"b"', '"ab"')])


@pytest.fixture(scope="module")
def ev():
    with Evaluator(workers=2, config=FAST) as e:
        yield e


def judge(ev, problem, submission, **kw):
    return ev.evaluate_batch([problem], [submission], **kw)[0]


# --- stdio, Python -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("a, b = map(int, input().split())\nprint(a + b)\n", "AC"),
        ("import sys\na, b = map(int, sys.stdin.buffer.read().split())\nsys.stdout.write(f'{a+b}\\n')\n", "AC"),
        ("a, b = map(int, open(0).read().split())\nprint(a + b)\nexit()\n", "AC"),
        ("print(0)\n", "WA"),
        ("raise ValueError('boom')\n", "RE"),
        ("import sys\nsys.exit(3)\n", "RE"),
        ("while True:\n    pass\n", "TLE"),
        ("import time\ntime.sleep(30)\n", "TLE"),
        ("x = [0] * (10 ** 9)\n", "MLE"),
        ("while True:\n    print('y' * 1000)\n", "OLE"),
        ("print(\n", "CE"),
    ],
)
def test_python_stdio_statuses(ev, code, status):
    v = judge(ev, SUM, sub("sum", code))
    assert v.status == status, v
    assert v.total == 3
    if status == "AC":
        assert v.passed == 3 and [t.strategy for t in v.tests] == ["exact"] * 3
    if status == "CE":
        assert "SyntaxError" in v.reason and v.tests == []


def test_python_stdio_program_semantics(ev):
    """Things real programs do: a worker thread with a big stack, output at exit, __main__ guard."""
    threaded = """
        import sys, threading
        sys.setrecursionlimit(10 ** 6)
        threading.stack_size(1 << 26)
        def depth(n):
            return 0 if n == 0 else 1 + depth(n - 1)
        def main():
            a, b = map(int, input().split())
            print(a + b + depth(50000) - 50000)
        threading.Thread(target=main).start()
    """
    at_exit = """
        import atexit, io, sys
        buf = io.StringIO()
        atexit.register(lambda: sys.__stdout__.write(buf.getvalue()))
        a, b = map(int, input().split())
        buf.write(f"{a + b}\\n")
    """
    default_thread = """
        import threading
        def main():
            print(sum(map(int, input().split())))
        threading.Thread(target=main).start()
    """
    guarded = "def main():\n    print(sum(map(int, input().split())))\nif __name__ == '__main__':\n    main()\n"
    programs = [threaded, default_thread, at_exit, guarded]
    got = ev.evaluate_batch([SUM], [sub("sum", c, sid=str(i)) for i, c in enumerate(programs)])
    assert [v.status for v in got] == ["AC"] * 4, got


def test_first_failure_stops_and_all_runs_everything(ev):
    code = "a, b = map(int, input().split())\nprint(a + b if a != 10 else 0)\n"
    first = judge(ev, SUM, sub("sum", code))
    assert first.status == "WA" and [t.status for t in first.tests] == ["AC", "WA"] and first.passed == 1
    full = judge(ev, SUM, sub("sum", code), mode="all", keep_outputs=True)
    assert [t.status for t in full.tests] == ["AC", "WA", "AC"] and full.passed == 2
    assert [t.output for t in full.tests] == ["3\n", "0\n", "0\n"]
    assert "expected '30', got '0'" in full.tests[1].diff
    assert full.reason.startswith("test 2: WA")


def test_tolerant_cascade_strategies(ev):
    p = stdio("fl", [("", "0.333333\nYES\n")])
    v = judge(ev, p, sub("fl", "print('0.3333333333')\nprint('YES   ')\n"))
    assert v.status == "AC" and v.tests[0].strategy == "numeric"


# --- stdio, C++ -------------------------------------------------------------------------------------------
CPP_SUM = "#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);}\n"


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (CPP_SUM, "AC"),
        ("#include <cstdio>\nint main(){puts(\"0\");}\n", "WA"),
        ("int main(){ return missing; }\n", "CE"),
        ("int main(){ volatile int *p = 0; *p = 1; }\n", "RE"),
        ("int main(){ volatile unsigned long x = 0; while (true) x++; }\n", "TLE"),
        ("#include <vector>\nint main(){ std::vector<long> v(1L << 31, 1); return v[7] == 5; }\n", "MLE"),
    ],
)
def test_cpp_stdio_statuses(ev, code, status):
    v = judge(ev, SUM, sub("sum", code, "cpp"))
    assert v.status == status, v
    if status == "CE":
        assert "missing" in v.reason and "main.cpp" in v.reason


def test_cpp_compiles_once_per_source(ev):
    v1, v2 = ev.evaluate_batch([SUM], [sub("sum", CPP_SUM + "//x\n", "cpp", "a"), sub("sum", CPP_SUM + "//x\n", "cpp", "b")])
    assert v1.status == v2.status == "AC"
    assert sorted([v1.meta["compile_cached"], v2.meta["compile_cached"]]) == [False, True]


@pytest.mark.parametrize(("why", "stalled", "status", "cached"), [
    ("cpu", None, "CE", True),
    ("wall", None, "CE", True),
    ("wall", "a reference compile got 3% of a CPU", "SE", False),
])
def test_a_compile_timeout_is_the_sources_fault_unless_the_machine_is_stalled(tmp_path, why, stalled, status, cached):
    """Out of CPU time, or out of wall time on a healthy machine: the source's fault (CE), cached.
    Out of wall time on a stalled machine (the judge's own health check, never the source's CPU use):
    SE, never a failed sample, so the next submission of that source compiles again."""
    from microcoder.pipeline.evaluator.sandbox.box import Reply
    from microcoder.pipeline.evaluator.verdict.compile import Compiler

    calls = []

    class FakeBox:
        def inside(self, path):
            return str(path)

        def request(self, req, timeout):
            calls.append(req)
            # 20 s of CPU: out of wall time having worked
            return Reply({"ok": True, "why": why, "exit": None, "signal": 9, "cpu_s": 20.0}, [b"", b""])

    class FakeWorker:
        build = tmp_path

        def box(self, name):
            return FakeBox()

    compiler = Compiler(tmp_path / "bin", EvaluatorConfig(), health=lambda worker: stalled)
    first, again = (compiler.compile("int main(){}", FakeWorker()) for _ in range(2))
    assert first.status == again.status == status and "time" in first.message
    assert (again.cached, len(calls)) == ((True, 1) if cached else (False, 2))


# --- functional -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("def add(a, b):\n    return a + b\n", "AC"),
        ("def add(a, b):\n    return b + a\n", "WA"),
        ("def add(a, b):\n    raise KeyError(a)\n", "RE"),
        ("def add(a, b):\n    while True:\n        pass\n", "TLE"),
        ("def add(a, b):\n    return [0] * (10 ** 9)\n", "MLE"),
        ("def add(a, b)\n    return a\n", "CE"),
        ("import os\ndef add(a, b):\n    os._exit(1)\n", "RE"),
        ("def plus(a, b):\n    return a + b\n", "RE"),  # entry point missing
        ("raise SystemExit('at import')\n", "RE"),
        ("def add(a, b):\n    return object()\n", "WA"),
    ],
)
def test_functional_statuses(ev, code, status):
    v = judge(ev, ADD, sub("add", code))
    assert v.status == status, v


def test_functional_all_mode_recovers_after_a_crash(ev):
    code = "import os\ndef add(a, b):\n    if a == [1]:\n        os._exit(3)\n    return a + b\n"
    v = judge(ev, ADD, sub("add", code), mode="all")
    assert [t.status for t in v.tests] == ["AC", "RE", "AC"] and v.status == "RE"


def test_leetcode_solution_styles_and_conversions(ev):
    two_sum = functional("two", "Solution().twoSum", [("[2,7,11,15]\n9", "[0,1]"), ("[3,3]\n6", "[0,1]")])
    code = """
        class Solution:
            def twoSum(self, nums: List[int], target: int) -> List[int]:
                seen = {}
                for i, x in enumerate(nums):
                    if target - x in seen:
                        return (seen[target - x], i)   # a tuple: accepted, marked structural
                    seen[x] = i
    """
    v = judge(ev, two_sum, sub("two", code))
    assert v.status == "AC" and v.tests[0].strategy == "structural"
    bare = functional("two2", "twoSum", two_sum_tests := [("[3,3]\n6", "[0,1]")])
    assert judge(ev, bare, sub("two2", code)).status == "AC"
    assert two_sum_tests
    reverse = functional("rev", "Solution().reverseList", [("[1,2,3]", "[3,2,1]"), ("[]", "[]")])
    code = """
        class Solution:
            def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:
                prev = None
                while head:
                    head.next, prev, head = prev, head, head.next
                return prev
    """
    assert judge(ev, reverse, sub("rev", code), mode="all").status == "AC"
    invert = functional("inv", "Solution().invertTree", [("[4,2,7,1,3,6,9]", "[4,7,2,9,6,3,1]"), ("[2,null,3]", "[2,3]")])
    code = """
        class Solution:
            def invertTree(self, root: Optional[TreeNode]) -> Optional[TreeNode]:
                if root:
                    root.left, root.right = self.invertTree(root.right), self.invertTree(root.left)
                return root
    """
    assert judge(ev, invert, sub("inv", code), mode="all").status == "AC"
    in_place = functional("rot", "Solution().rotate", [("[1,2,3]\n1", "[3,1,2]")])
    code = """
        class Solution:
            def rotate(self, nums: List[int], k: int) -> None:
                nums[:] = nums[-k:] + nums[:-k]
    """
    assert judge(ev, in_place, sub("rot", code)).status == "AC"


def test_functional_set_and_float_returns(ev):
    # a returned set matches a list in any order only under an unordered checker (issue 24 item 4)
    p = functional("uniq", "uniq", [("[3,1,3,2]", "[1,2,3]")], checker=Checker(kind="tokens", unordered=True))
    v = judge(ev, p, sub("uniq", "def uniq(xs):\n    return set(xs)\n"), keep_outputs=True)
    assert v.status == "AC" and v.tests[0].output == '{"__set__": [1, 2, 3]}'
    v = judge(ev, functional("uniq", "uniq", [("[3,1,3,2]", "[1,2,3]")]), sub("uniq", "def uniq(xs):\n    return set(xs)\n"))
    assert v.status == "WA"
    half = functional("half", "half", [("1", "0.3333333")])
    v = judge(ev, half, sub("half", "def half(x):\n    return x / 3\n"))
    assert v.status == "AC" and v.tests[0].strategy == "numeric"


# --- checkers ----------------------------------------------------------------------------------------------------
KATTIS_PY = """
import sys
inp, ans, feedback = sys.argv[1], sys.argv[2], sys.argv[3]
want = float(open(ans).read())
got = sys.stdin.read().split()
if len(got) == 1 and abs(float(got[0]) - want) <= 0.01:
    sys.exit(42)
open(feedback + "judgemessage.txt", "w").write(f"off by more than 0.01 from {want}")
sys.exit(43)
"""
TESTLIB_PY = """
import sys
inp, out, ans = sys.argv[1:4]
ok = sorted(open(out).read().split()) == sorted(open(ans).read().split())
print("ok" if ok else "permutation differs", file=sys.stderr)
sys.exit(0 if ok else 1)
"""
KATTIS_CPP = """
#include <cstdio>
#include <cmath>
int main(int argc, char** argv) {
    double want, got; FILE* a = fopen(argv[2], "r"); if (fscanf(a, "%lf", &want) != 1) return 1;
    if (scanf("%lf", &got) != 1) return 43;
    return std::fabs(got - want) <= 0.01 ? 42 : 43;
}
"""
TESTLIB_CPP = """
#include <cstdio>
int main(int argc, char** argv) {
    long long a, b; FILE* out = fopen(argv[2], "r"); FILE* ans = fopen(argv[3], "r");
    if (fscanf(out, "%lld", &a) != 1) { fprintf(stderr, "no number"); return 2; }
    if (fscanf(ans, "%lld", &b) != 1) return 3;
    return a == b ? 0 : 1;
}
"""


@pytest.mark.parametrize(
    ("language", "protocol", "program", "good", "bad"),
    [
        ("python", "kattis", KATTIS_PY, "print(3.141)", "print(3.2)"),
        ("cpp", "kattis", KATTIS_CPP, "print(3.141)", "print(3.2)"),
        ("python", "testlib", TESTLIB_PY, "print(3.14159)", "print(3)"),
        ("cpp", "testlib", TESTLIB_CPP, "print(3)", "print(4)"),
    ],
)
def test_program_checkers(ev, language, protocol, program, good, bad):
    expected = "3" if language == "cpp" and protocol == "testlib" else "3.14159"
    ck = Checker(kind="program", program=program, language=language, protocol=protocol)
    p = stdio(f"ck-{language}-{protocol}", [("", expected)], checker=ck)
    ok, wrong = ev.evaluate_batch([p], [sub(p.id, good, sid="good"), sub(p.id, bad, sid="bad")])
    assert ok.status == "AC" and ok.tests[0].strategy == "program" and ok.meta["comparison"] == "checker:program"
    assert wrong.status == "WA", wrong
    if protocol == "kattis" and language == "python":
        assert "off by more than 0.01" in wrong.tests[0].diff


def test_broken_checker_is_a_system_error(ev):
    ck = Checker(kind="program", program="import sys\nsys.exit(7)\n", language="python", protocol="kattis")
    v = judge(ev, stdio("ck-bad", [("", "1")], checker=ck), sub("ck-bad", "print(1)"))
    assert v.status == "SE" and "checker exit code 7" in v.tests[0].diff
    ck = Checker(kind="program", program="int main( {", language="cpp", protocol="testlib")
    v = judge(ev, stdio("ck-ce", [("", "1")], checker=ck), sub("ck-ce", "print(1)"))
    assert v.status == "SE" and "checker does not compile" in v.tests[0].diff


# A checker as Codeforces / Polygon write them: against testlib.h (which `make setup` installs).
TESTLIB_H_CPP = """
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    int n = inf.readInt();
    long long a = ouf.readLong(), b = ouf.readLong();
    if (a + b != n) quitf(_wa, "%lld + %lld != %d", a, b, n);
    quitf(_ok, "a valid pair");
}
"""


@pytest.mark.skipif(testlib.include_dir(None) is None,
                    reason="testlib.h is not installed: `make setup` installs it (it needs PyPI)")
def test_a_testlib_checker_accepts_any_valid_answer(ev):
    ck = Checker(kind="program", program=TESTLIB_H_CPP, language="cpp", protocol="testlib")
    p = stdio("ck-testlib-h", [("5\n", "2 3")], checker=ck)
    other, wrong = ev.evaluate_batch([p], [sub(p.id, "print(1, 4)", sid="other"), sub(p.id, "print(1, 1)", sid="w")])
    assert other.status == "AC" and other.tests[0].strategy == "program", other
    assert wrong.status == "WA" and "1 + 1 != 5" in wrong.tests[0].diff, wrong


@pytest.mark.skipif(testlib.include_dir(None) is None,
                    reason="testlib.h is not installed: `make setup` installs it (it needs PyPI)")
def test_testlib_installed_after_the_build_box_started_is_picked_up(tmp_path):
    import shutil

    ck = Checker(kind="program", program=TESTLIB_H_CPP, language="cpp", protocol="testlib")
    with Evaluator(workers=1, config=dataclasses.replace(FAST, testlib_dir=str(tmp_path))) as e:
        assert judge(e, SUM, sub("sum", CPP_SUM, "cpp", "c")).status == "AC"  # the build box is up, no header
        shutil.copy(testlib.include_dir(None) / testlib.HEADER, tmp_path / testlib.HEADER)
        tmp_path.chmod(0o755)  # the sandbox's uid reads it (pytest makes its folders 0700)
        v = judge(e, stdio("ck-late-h", [("5\n", "2 3")], checker=ck), sub("ck-late-h", "print(4, 1)"))
    assert v.status == "AC", v


def test_a_testlib_checker_without_the_header_is_a_clear_system_error(tmp_path):
    ck = Checker(kind="program", program=TESTLIB_H_CPP, language="cpp", protocol="testlib")
    with Evaluator(workers=1, config=dataclasses.replace(FAST, testlib_dir=str(tmp_path))) as e:
        v = judge(e, stdio("ck-no-h", [("5\n", "2 3")], checker=ck), sub("ck-no-h", "print(2, 3)"))
    assert v.status == "SE" and "testlib.h, which is not installed here" in v.tests[0].diff, v


def test_problem_checker_overrides_the_cascade(ev):
    strict = stdio("strict", [("", "0.5")], checker=Checker(kind="exact"))
    assert judge(ev, strict, sub("strict", "print(0.5000001)")).status == "WA"
    unordered = stdio("any", [("", "1 2 3")], checker=Checker(kind="tokens", unordered=True))
    v = judge(ev, unordered, sub("any", "print(3, 1, 2)"))
    assert v.status == "AC" and v.tests[0].strategy == "tokens"


# --- bad input -----------------------------------------------------------------------------------------------------
def test_bad_inputs_get_verdicts_not_exceptions(ev):
    interactive = stdio("inter", [("", "")], meta={"interactive": True})
    empty = stdio("empty", [])
    items = [
        sub("nope", "print(1)"),
        sub("sum", "print(1)", "java"),
        sub("sum", "   \n"),
        sub("inter", "print(1)"),
        sub("empty", "print(1)"),
        sub("add", "int main(){}", "cpp"),
        {"problem_id": "sum", "language": "python"},
    ]
    got = ev.evaluate_batch([SUM, ADD, interactive, empty], items)
    assert [(v.status, v.reason.split(" ")[0]) for v in got] == [
        ("SE", "unknown"), ("CE", "unsupported"), ("CE", "empty"), ("SE", "interactive"),
        ("SE", "the"), ("SE", "functional"), ("SE", "malformed")]
    assert got[-1].submission_id == "#6"


# --- API -----------------------------------------------------------------------------------------------------
def test_batch_keeps_order_and_stream_yields_all(ev):
    codes = ["print(0)", "a,b=map(int,input().split())\nprint(a+b)"] * 3
    subs = [sub("sum", c, sid=str(i)) for i, c in enumerate(codes)]
    got = ev.evaluate_batch({"sum": SUM}, subs)
    assert [v.submission_id for v in got] == [s.submission_id for s in subs]
    assert [v.status for v in got] == ["WA", "AC"] * 3
    streamed = list(ev.evaluate([SUM], iter(subs), progress=False))
    assert sorted(v.submission_id for v in streamed) == sorted(s.submission_id for s in subs)
    assert all(v.meta["sandbox"] == resolve_kind("auto")[0] for v in streamed)


def test_batch_deadline_kills_and_pool_recovers(ev):
    slow = [sub("sum", "import time\ntime.sleep(20)", sid=f"slow{i}") for i in range(3)]
    fast = sub("sum", "a,b=map(int,input().split())\nprint(a+b)", sid="fast")
    got = ev.evaluate_batch([stdio("sum", SUM_PAIRS, time_limit_s=10.0)], [fast, *slow], deadline_s=1.0)
    assert got[0].status == "AC"
    assert [(v.status, v.reason) for v in got[1:]] == [("TLE", "batch deadline")] * 3
    assert judge(ev, SUM, fast).status == "AC"  # the killed boxes were restarted


SUM_PAIRS = [(t.input, t.output) for t in SUM.tests]


def test_module_level_helpers_and_timeout_scale():
    got = evaluate_batch([SUM], [sub("sum", "print(0)")], workers=1)
    assert got[0].status == "WA"
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3:\n    pass\nprint(42)\n"
    p = stdio("busy", [("", "42")], time_limit_s=1.0)
    assert evaluate_batch([p], [sub("busy", busy)], workers=1)[0].status == "AC"
    assert evaluate_batch([p], [sub("busy", busy)], workers=1, timeout_scale=0.2)[0].status == "TLE"
    streamed = list(evaluate([ADD], [sub("add", "def add(a, b):\n    return a + b\n")], workers=1, progress=False))
    assert streamed[0].status == "AC"


@pytest.mark.parametrize("kind", ["unshare", "none"])
def test_fallback_sandboxes_judge_too(kind):
    with Evaluator(workers=1, sandbox=kind, config=FAST) as e:
        got = e.evaluate_batch([SUM, ADD], [sub("sum", "a,b=map(int,input().split())\nprint(a+b)"),
                                            sub("add", "def add(a, b):\n    return a + b\n"),
                                            sub("sum", CPP_SUM, "cpp", "c")])
    assert [v.status for v in got] == ["AC", "AC", "AC"]
    assert got[0].meta["sandbox"] == kind


def test_a_strict_umask_does_not_lock_the_sandbox_out():
    """Folders and files the sandbox reads are made readable whatever the umask (077 once turned
    every run into an SE: the inputs folder was created 0700)."""
    old = os.umask(0o077)
    try:
        with Evaluator(workers=1, config=FAST) as e:
            got = e.evaluate_batch([SUM], [sub("sum", "a,b=map(int,input().split())\nprint(a+b)"),
                                           sub("sum", CPP_SUM, "cpp", "c")])
    finally:
        os.umask(old)
    assert [v.status for v in got] == ["AC", "AC"], got


def test_every_worker_box_starts_with_the_pool():
    """The workers' judges start together in the constructor, each its own sandbox, and stay up
    (bwrap dies with the *thread* that spawned it: they must not come from a short-lived one)."""
    with Evaluator(workers=3, config=FAST) as e:
        boxes = [w.boxes["run"] for w in e._all]
        assert all(b.alive and b.info.get("ok") for b in boxes)
        assert len({b.proc.pid for b in boxes}) == 3
        code = "a,b=map(int,input().split())\nprint(a+b)"
        got = e.evaluate_batch([SUM, ADD], [sub("sum", code, sid=f"s{i}") for i in range(4)]
                               + [sub("add", "def add(a, b):\n    return a + b\n", sid="f")])
        assert all(b.alive for b in boxes)  # the same judges served the batch
    assert [v.status for v in got] == ["AC"] * 5


# --- CLI -------------------------------------------------------------------------------------------------------------
def test_cli_writes_one_verdict_line_per_submission(tmp_path):
    import dataclasses
    import json

    from typer.testing import CliRunner

    from microcoder.pipeline import io
    from microcoder.pipeline.cli import app

    # the CLI's reader refuses records without a statement (unusable: their submissions get SE)
    io.write_problems(tmp_path / "problems.jsonl", [dataclasses.replace(p, statement=p.id) for p in (SUM, ADD)])
    lines = [json.dumps({"problem_id": "sum", "submission_id": "ok", "language": "python",
                         "code": "a,b=map(int,input().split())\nprint(a+b)"}),
             "{not json",
             json.dumps({"problem_id": "add", "submission_id": "wa", "language": "python",
                         "code": "def add(a, b):\n    return 0\n"})]
    (tmp_path / "subs.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "verdicts.jsonl"
    result = CliRunner().invoke(app, ["evaluate", "--problems", str(tmp_path / "problems.jsonl"),
                                      "--submissions", str(tmp_path / "subs.jsonl"), "-o", str(out),
                                      "--workers", "1", "--mode", "all", "--no-progress",
                                      "--set", "wall_slack_s=0.5"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["submission_id"], r["status"]) for r in rows] == [("ok", "AC"), ("line2", "SE"), ("wa", "WA")]
    assert rows[0]["passed"] == rows[0]["total"] == 3 and len(rows[0]["tests"]) == 3
    assert {"problem_id", "submission_id", "status", "passed", "total", "time_s", "tests"} <= set(rows[2])
    assert "AC 1" in result.output


def test_a_process_that_never_closes_its_evaluator_still_exits(tmp_path):
    """Evaluator.__del__ at interpreter exit closes the judges without starting threads (none can
    start then: the process used to wait forever for one)."""
    import subprocess
    import sys

    script = tmp_path / "leave.py"
    script.write_text("from microcoder.pipeline.evaluator import Evaluator\n"
                      "ev = Evaluator(workers=2)\n"
                      "raise SystemExit(3)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        done = subprocess.run([sys.executable, str(script)], cwd=root, env={**os.environ, "PYTHONPATH": root},
                              capture_output=True, timeout=120)  # only a hang guard, not a timing
    except subprocess.TimeoutExpired:
        pytest.fail("the process hung at exit")
    assert done.returncode == 3, done.stderr[-2000:]
