"""Security review findings: a submission must not change the judge (and so later verdicts), keep
state for the next submission, hide CPU time, reuse another submission's binary, or turn its own
failure into a system error (SE) or a hang of the judging process. Runs under bubblewrap."""

from __future__ import annotations

import ast
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from pipeline.evaluator import (
    Evaluator,
    EvaluatorConfig,
    Submission,
    compare_functional,
    compare_stdio,
)
from pipeline.evaluator.inside import syscall_filter
from pipeline.evaluator.sandbox import launch as sb
from pipeline.schema import Problem, TestCase

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
FAST = dict(wall_factor=1.5, wall_slack_s=0.5)
ECHO = Problem(id="echo", source="test", statement="", style="stdio", time_limit_s=1.0,
               tests=[TestCase("41\n", "42\n"), TestCase("1\n", "2\n")])
ADD = Problem(id="add", source="test", statement="", style="functional", entry_point="add", time_limit_s=1.0,
              tests=[TestCase("1\n2", "3"), TestCase("5\n6", "11")])

# Lowers the judge's (PID 1's) limits and priority; each call reports "ok" or the error.
TAMPER = """
    import os, resource
    def attempt(f):
        try:
            f()
            return "ok"
        except OSError as e:
            return type(e).__name__
    got = [attempt(lambda: resource.prlimit(1, resource.RLIMIT_AS, (64 << 20, 64 << 20))),
           attempt(lambda: resource.prlimit(1, resource.RLIMIT_NPROC, (2, 2))),
           attempt(lambda: os.setpriority(os.PRIO_PROCESS, 1, 19)),
           attempt(lambda: os.setpriority(os.PRIO_USER, 0, 19)),
           attempt(lambda: os.sched_setaffinity(1, {0})),
           attempt(lambda: os.sched_setscheduler(1, os.SCHED_IDLE, os.sched_param(0)))]
    print(got, flush=True)
"""
# An innocent program that needs what TAMPER takes away: 100 MB, a thread, normal priority.
INNOCENT = """
    import os, threading
    block = bytearray(100 << 20)
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    assert os.getpriority(os.PRIO_PROCESS, 0) == 0 and os.sched_getscheduler(0) == os.SCHED_OTHER
    print(int(input()) + 1)
"""


def sub(problem: Problem, code: str, lang: str = "python", sid: str = "s") -> Submission:
    return Submission(problem.id, sid, lang, textwrap.dedent(code))


@pytest.fixture(scope="module")
def ev():
    with Evaluator(workers=2, sandbox="bwrap", config=EvaluatorConfig(**FAST)) as e:
        yield e


@pytest.fixture(scope="module")
def solo():
    """One worker (so consecutive submissions share the judge), without the syscall filter: the
    judge must notice tampering by itself."""
    with Evaluator(workers=1, sandbox="bwrap", config=EvaluatorConfig(syscall_filter=False, **FAST)) as e:
        yield e


def judge(evaluator, problem, submission, **kw):
    return evaluator.evaluate_batch([problem], [submission], **kw)[0]


# --- the judge process cannot be changed from inside ------------------------------------------------
@needs_bwrap
def test_programs_cannot_lower_the_judges_limits_or_priority(ev):
    tamper = judge(ev, ECHO, sub(ECHO, TAMPER), keep_outputs=True)
    if ev._all[0].boxes["run"].info.get("syscall_filter"):  # else the judge notices (next test)
        assert tamper.tests[0].output.strip() == str(["PermissionError"] * 6), tamper
    innocent = ev.evaluate_batch([ECHO], [sub(ECHO, INNOCENT, sid=str(i)) for i in range(4)])
    assert [v.status for v in innocent] == ["AC"] * 4, innocent


@needs_bwrap
def test_a_tampered_judge_is_replaced_before_the_next_run(solo):
    tamper = judge(solo, ECHO, sub(ECHO, TAMPER), keep_outputs=True)
    assert "'ok'" in tamper.tests[0].output  # no filter: the calls work ...
    innocent = judge(solo, ECHO, sub(ECHO, INNOCENT, sid="innocent"))
    assert innocent.status == "AC", innocent  # ... but the next run gets a fresh judge
    assert "restarting" in solo._all[0].boxes["run"].log_tail()


@needs_bwrap
def test_no_keyrings_namespaces_or_ptrace_but_threads_and_processes_work(ev):
    v = judge(ev, ECHO, sub(ECHO, """
        import ctypes, multiprocessing, os, subprocess, threading
        libc = ctypes.CDLL(None, use_errno=True)
        refused = []
        # add_key("user", ..., KEY_SPEC_USER_KEYRING): per-uid storage the next submission could read
        refused.append(libc.syscall(248, b"user", b"note", b"x", 1, -4) == -1)
        refused.append(libc.unshare(0x10000000) == -1)  # CLONE_NEWUSER
        refused.append(libc.ptrace(16, os.getppid(), None, None) == -1)  # PTRACE_ATTACH
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
        with multiprocessing.Pool(2) as pool:
            squares = pool.map(abs, [-1, -2])
        echo = subprocess.run(["echo", "x"], capture_output=True, text=True).stdout
        n = int(input())
        print(n + 1 if all(refused) and squares == [1, 2] and echo == "x\\n" else (refused, squares, echo))
    """))
    assert v.status == "AC", v


@needs_bwrap
def test_the_filter_is_the_judges_own_and_inherited_once(ev):
    """The judge (PID 1) installs the filter on itself once; a program inherits exactly that
    one (not a second copy attached per run, which cost ~0.3 ms each)."""
    v = judge(ev, ECHO, sub(ECHO, """
        def seccomp(pid):
            rows = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))
            return rows["Seccomp"].strip(), rows.get("Seccomp_filters", "1").strip()
        input()
        print(seccomp(1), seccomp("self"))
    """), keep_outputs=True)
    if not ev._all[0].boxes["run"].info.get("syscall_filter"):
        pytest.skip("no syscall filter on this kernel")
    assert v.tests[0].output.strip() == "('2', '1') ('2', '1')", v


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_syscall_filter_assembles(machine):
    program = syscall_filter.build(machine)
    assert program and len(program) % 8 == 0
    assert syscall_filter.build("sparc64") is None


def test_box_uids_are_unique_per_box_across_evaluators():
    if not sb.is_root() or not shutil.which("setpriv"):
        pytest.skip("sandboxed programs get their own uids only when we are root")
    uids = [sb.drop_uid_for("bwrap") for _ in range(300)]  # e.g. 100 workers x 3 boxes, any Evaluator
    assert len(set(uids)) == len(uids) and min(uids) >= sb.UID_BASE


# --- verdicts: CPU time, other submissions' files ---------------------------------------------------------
CPU_IN_CHILDREN = """
    import os, time
    def burn_in_children(n, seconds):
        r, w = os.pipe()
        for _ in range(n):
            if os.fork() == 0:
                t = time.process_time()
                while time.process_time() - t < seconds:
                    pass
                os.write(w, b"x")
                time.sleep(60) if DAEMON else os._exit(0)  # never waited for
        for _ in range(n):
            os.read(r, 1)
"""


def test_bind_targets_never_hide_the_interpreter(monkeypatch):
    """A checkout at /check/work/main had its venv hidden by the check box's bind at /check (every
    checker run was an SE). Bind targets now live under a root clear of the interpreter's paths."""
    sb.mount_root.cache_clear()
    monkeypatch.setattr(sb, "interpreter_paths", lambda: ["/box/work/main/.venv", "/box1", "/usr"])
    try:
        assert sb.mount_root() == "/box2" and sb.inside_path("check") == "/box2/check"
        spec = sb.BoxSpec(kind="bwrap")
        with pytest.raises(sb.SandboxUnavailable, match="would hide the interpreter at /box/work/main/.venv"):
            sb.bwrap_args(spec, [sb.Bind(Path("/tmp"), "/box")])
        args = sb.bwrap_args(spec, [sb.Bind(Path("/tmp"), sb.inside_path("check"))])
        assert args[args.index("/box2/check") - 2] == "--ro-bind"
    finally:
        sb.mount_root.cache_clear()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("setpriv") is None,
                    reason="the unshare fallback drops to its own uid only when run as root")
def test_unshare_fallback_runs_unprivileged_and_hides_closed_directories(tmp_path):
    """Without bubblewrap, a root evaluator whose interpreter sits under a closed directory (/root,
    0700) used to run submissions as root. Now the box covers such a directory with an empty tmpfs
    and binds back only what the judge needs."""
    closed = sb.closed_ancestor(sys.base_prefix) or sb.closed_ancestor(str(Path(sb.HARNESS_DIR)))
    code = textwrap.dedent(f"""
        import os
        print(os.getuid())
        try:
            print(sorted(os.listdir({closed!r})) if {closed!r} != "None" else "-")
        except OSError as e:
            print(type(e).__name__)
    """)
    with Evaluator(workers=1, sandbox="unshare") as solo:
        v = solo.evaluate_batch([ECHO], [sub(ECHO, code)], keep_outputs=True)[0]
        assert "unprivileged uid" not in solo.meta.get("sandbox_warning", ""), solo.meta
    uid, listing = v.tests[0].output.splitlines()[:2]
    assert int(uid) >= sb.UID_BASE, v
    if closed is not None:  # only the path components leading to what the judge needs
        needed = {Path(p).relative_to(closed).parts[0] for p in (*sb.interpreter_paths(), str(sb.HARNESS_DIR))
                  if p.startswith(closed + "/")}
        assert set(ast.literal_eval(listing)) == needed, (listing, needed)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("setpriv") is None,
                    reason="the unshare fallback drops to its own uid only when run as root")
def test_unshare_fallback_drops_its_uid_with_a_closed_temp_dir_and_a_strict_umask(tmp_path, monkeypatch):
    """The evaluator's folders under a closed TMPDIR, and umask 077: the box still drops to its own
    uid (the binds are staged outside what the cover hides; folders are made 0755 whatever the umask)."""
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(closed))
    stages_before = set(Path("/tmp").glob("microcoder-stage-*"))
    old = os.umask(0o077)
    try:
        with Evaluator(workers=1, sandbox="unshare") as solo:
            assert str(solo.root).startswith(str(closed))
            v = solo.evaluate_batch([ECHO], [sub(ECHO, "import os\nprint(os.getuid())\n")], keep_outputs=True)[0]
            assert "unprivileged uid" not in solo.meta.get("sandbox_warning", ""), solo.meta
    finally:
        os.umask(old)
    assert v.tests and int(v.tests[0].output) >= sb.UID_BASE, v
    assert set(Path("/tmp").glob("microcoder-stage-*")) == stages_before  # the staging folder is removed



@needs_bwrap
def test_cpu_time_of_children_never_waited_for_counts(ev):
    stdio = CPU_IN_CHILDREN + """
    DAEMON = True
    burn_in_children(2, 0.6)
    print(int(input()) + 1, flush=True)
    os._exit(0)
    """
    functional = CPU_IN_CHILDREN + """
    DAEMON = False
    def add(a, b):
        burn_in_children(2, 0.6)
        return a + b
    """
    got = ev.evaluate_batch([ECHO, ADD], [sub(ECHO, stdio, sid="stdio"), sub(ADD, functional, sid="functional")])
    assert [v.status for v in got] == ["TLE", "TLE"], got


@needs_bwrap
def test_a_previous_submissions_binary_is_gone(solo):
    cpp = "#include <cstdio>\nint main(){long long x;scanf(\"%lld\",&x);printf(\"%lld\\n\",x+1);}\n"
    assert judge(solo, ECHO, sub(ECHO, cpp, "cpp", "cpp")).status == "AC"
    copier = judge(solo, ECHO, sub(ECHO, f"import os\nos.execv('{sb.inside_path('job')}/prog', ['prog'])\n", sid="copier"))
    assert copier.status == "RE" and "FileNotFoundError" in copier.tests[0].diff, copier


# Counts, in the program's own memory (inherited from the judge by fork), marker strings that only
# earlier submissions produced; the full markers never exist in this program's own objects.
MEMORY_SCAN = """
    import ctypes
    MARKS = [(b"OUTPUT_MARK_", bytes([55, 55])), (b"RESULT_MARK_", bytes([56, 56])), (b"SOURCE_MARK_", bytes([57, 57]))]
    counts = [0, 0, 0]
    for line in open("/proc/self/maps").read().splitlines():
        parts = line.split()
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        if "r" not in parts[1] or (len(parts) > 5 and parts[5].startswith("[v")) or hi - lo > 1 << 28:
            continue
        data = ctypes.string_at(lo, hi - lo)
        for k, (prefix, suffix) in enumerate(MARKS):
            i = data.find(prefix)
            while i >= 0:
                counts[k] += data[i + len(prefix):i + len(prefix) + len(suffix)] == suffix
                i = data.find(prefix, i + 1)
    print(counts)
"""


@needs_bwrap
def test_earlier_outputs_and_code_are_not_in_the_next_programs_memory(solo):
    """Programs are forked from the judge process: what it held of earlier submissions (their
    output is the expected answer when they were right) must not be in the copy."""
    lines = Problem(id="lines", source="test", statement="", style="stdio", time_limit_s=1.0,
                  tests=[TestCase("", "OUTPUT_MARK_77\n" * 1000)])
    result = Problem(id="result", source="test", statement="", style="functional", entry_point="f",
                     time_limit_s=1.0, tests=[TestCase('"x"', '"RESULT_MARK_88"')])
    right = [sub(lines, "# SOURCE_MARK_99\nprint(('OUTPUT_MARK_' + str(77) + '\\n') * 1000, end='')\n", sid="a"),
             sub(result, "def f(x):\n    return 'RESULT_MARK_' + str(88)\n", sid="b")]
    assert [v.status for v in solo.evaluate_batch([lines, result], right)] == ["AC", "AC"]
    scan = judge(solo, lines, sub(lines, MEMORY_SCAN, sid="scan"), keep_outputs=True)
    assert scan.tests[0].output == "[0, 0, 0]\n", scan


# --- the result channel and the comparison belong to the judge --------------------------------------------
FRAME = """
import os, time
def frame(payload, head=b""):
    return b'{"event": "result", "ok": true, ' + head + b'"n": %d}\\n' % len(payload) + payload
def add(a, b):
    os.write(3, {forged})  # the judge's result channel
    time.sleep(5)
"""
DEEP = "b'[' * 100000 + b']' * 100000"


CORRUPT = "corrupted the judge's result channel"


@needs_bwrap
@pytest.mark.parametrize(("forged", "status", "diff"), [
    (DEEP + " + b'\\n'", "RE", CORRUPT),  # a nested header: the judge process recursed and failed (was SE)
    ("frame(b'3', b'\"x\": ' + b'[' * 990 + b']' * 990 + b', ')", "RE", CORRUPT),  # nested value in a header (was SE)
    ("frame(b'3', b'\"cpu_s\": NaN, ')", "RE", CORRUPT),  # a NaN CPU time (was AC with time NaN)
    (f"frame({DEEP})", "WA", "nested too deeply"),  # a nested result: the parent's json.loads recursed (was SE)
    ("frame(b'{\"__repr__\": 5, \"__type__\": [1]}')", "WA", "unsupported return type"),  # a TypeError in the parent (was SE)
])
def test_forged_result_frames_are_the_programs_fault(ev, forged, status, diff):
    v = judge(ev, ADD, Submission("add", "frame", "python", FRAME.replace("{forged}", forged)))
    assert v.status == status and diff in v.tests[0].diff, v


@pytest.mark.timeout(60)
def test_comparison_is_linear_and_total_on_hostile_output():
    # a digit run that does not end as a number: quadratic backtracking took hours here
    assert not compare_stdio("5\n", "1" * 1_000_000 + "x\n").ok
    assert compare_stdio("0.5\n", "0.5" + "0" * 1_000_000 + "\n").ok
    deep = "[" * 100_000 + "]" * 100_000
    assert compare_functional("[[1]]", deep).message == "return value nested too deeply"
    assert compare_functional("[1]", "[" * 900 + "1" + "]" * 900).ok is False
    assert not compare_functional("1", '{"__repr__": 5, "__type__": [1]}').ok


@needs_bwrap
def test_nothing_is_left_in_the_judge_after_hostile_runs(ev):
    """After everything above, the pool still judges and no sandboxed process is left."""
    from test_evaluator_adversarial import settled_leftovers

    assert judge(ev, ECHO, sub(ECHO, "print(int(input()) + 1)")).status == "AC"
    if os.geteuid() == 0:
        assert settled_leftovers() == []
