"""The limits of a run and their verdicts, judged by the real sandbox (bubblewrap; the unshare
fallback where marked): processes (per-box uid with RLIMIT_NPROC, `pids.max`), memory (RLIMIT_AS
and the run group's limit, for the run as a whole), CPU time (the run group's counter, children
never waited for or reaped by the kernel included), output (per test, smaller where a checker reads
it), disk, the stack, and a compilation that blocks. Each excess is a proper verdict, and the pool
keeps judging afterwards."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from sandbox_fixtures import (
    ECHO,
    FAST,
    SLOW_OK,
    assert_pool_still_judges,
    evaluator_fixture,
    judge,
    needs_bwrap,
    needs_cgroups,
    needs_unshare_root,
    run,
    sub,
)

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig
from microcoder.pipeline.evaluator.inside import compile_guard
from microcoder.pipeline.evaluator.sandbox import cgroups as cg
from microcoder.pipeline.evaluator.sandbox import launch as sb
from microcoder.pipeline.evaluator.verdict import compile as compile_module
from microcoder.pipeline.evaluator.verdict.judge import output_limit
from microcoder.pipeline.schema import Checker, Problem, TestCase

ADD = Problem(id="add", source="test", statement="", style="functional", entry_point="add", time_limit_s=1.0,
              tests=[TestCase("1\n2", "3"), TestCase("5\n6", "11")])


ev = evaluator_fixture("ev", 2, **FAST)
solo = evaluator_fixture("solo", 1, **SLOW_OK)
solo_unshare = evaluator_fixture("solo_unshare", 1, "unshare", **SLOW_OK)


# --- processes -------------------------------------------------------------------------------------------
@needs_bwrap
def test_fork_bomb_is_contained(ev):
    v = run(ev, """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """)
    assert v.status in ("TLE", "RE"), v
    assert_pool_still_judges(ev)


def test_box_uids_are_unique_per_box_across_evaluators():
    if not sb.is_root() or not shutil.which("setpriv"):
        pytest.skip("sandboxed programs get their own uids only when we are root")
    uids = [sb.drop_uid_for("bwrap") for _ in range(300)]  # e.g. 100 workers x 3 boxes, any Evaluator
    assert len(set(uids)) == len(uids) and min(uids) >= sb.UID_BASE


# --- memory, in one process or spread over many ----------------------------------------------------------
@needs_bwrap
def test_memory_bomb_is_mle(ev):
    v = run(ev, "chunks = []\nwhile True:\n    chunks.append(bytearray(10 ** 7))\n")
    assert v.status == "MLE", v
    assert_pool_still_judges(ev)


MANY_PROCESSES = """
    import os, time
    for _ in range(8):
        if os.fork() == 0:
            block = bytearray(30 << 20)  # each child well under the limit, together far over it
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(1.5)  # all eight hold their memory at once
            os._exit(0)
    for _ in range(8):
        os.wait()
    print(int(input()) + 1)
"""
SMALL_MEMORY = Problem(id="small-memory", source="test", statement="", style="stdio", time_limit_s=2.0,
                       memory_limit_mb=64, tests=[TestCase("41\n", "42\n")])


@needs_bwrap
@needs_cgroups
def test_memory_limit_holds_for_the_whole_run(solo):
    v = judge(solo, SMALL_MEMORY, sub(SMALL_MEMORY, MANY_PROCESSES))
    assert v.status == "MLE", v


MANY_PROCESSES_FUNCTIONAL = """
    import os, time
    def add(a, b):
        for _ in range(8):
            if os.fork() == 0:
                block = bytearray(30 << 20)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(1.5)
                os._exit(0)
        for _ in range(8):
            os.wait()
        return a + b
"""
SMALL_MEMORY_ADD = Problem(id="small-memory-add", source="test", statement="", style="functional", entry_point="add",
                           time_limit_s=2.0, memory_limit_mb=64, tests=[TestCase("1\n2", "3"), TestCase("2\n2", "4")])


@needs_bwrap
@needs_cgroups
def test_memory_limit_holds_for_a_functional_call_as_a_whole(solo):
    v = solo.evaluate_batch([SMALL_MEMORY_ADD], [sub(SMALL_MEMORY_ADD, MANY_PROCESSES_FUNCTIONAL)], mode="all")[0]
    assert [t.status for t in v.tests] == ["MLE", "MLE"], v  # one kill fails one call, each call its own


@needs_bwrap
@needs_cgroups
def test_each_box_has_its_run_group_with_the_limits_and_it_goes_with_the_box():
    with Evaluator(workers=1, sandbox="bwrap", config=EvaluatorConfig(nproc=48, **SLOW_OK)) as ev:
        v = judge(ev, SMALL_MEMORY, sub(SMALL_MEMORY, "print(int(input()) + 1)\n"))
        assert v.status == "AC" and v.meta["accounting"] == cg.detect().version, v
        box = ev._all[0].boxes["run"]
        group = box.cgroup
        assert box.accounting == group.version and group.pids_max() == 48
        dirs = list(group.dirs.values())
        assert all(d.is_dir() for d in dirs)
    assert not any(d.exists() for d in dirs)


@needs_bwrap
def test_without_control_groups_the_rlimits_judge_and_the_verdict_says_so(monkeypatch):
    monkeypatch.setattr(cg, "detect", lambda: None)
    with Evaluator(workers=1, sandbox="bwrap", config=EvaluatorConfig(**SLOW_OK)) as ev:
        v = judge(ev, ECHO, sub(ECHO, "print(int(input()) + 1)\n"))
        assert v.status == "AC" and v.meta["accounting"] == "rlimit", v
        hog = judge(ev, SMALL_MEMORY, sub(SMALL_MEMORY, "x = bytearray(200 << 20)\n"))
        assert hog.status == "MLE", hog  # the address-space limit, per process


# --- CPU time, also where it hides -----------------------------------------------------------------------
@needs_bwrap
def test_infinite_loop_and_ignored_sigterm_are_tle(ev):
    assert run(ev, "while True:\n    pass\n").status == "TLE"
    v = run(ev, "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass\n")
    assert v.status == "TLE"
    assert_pool_still_judges(ev)


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


AUTO_REAPED = """
    import os, signal, time
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children: no rusage reaches us
    for _ in range(4):
        if os.fork() == 0:
            t = time.process_time()
            while time.process_time() - t < 0.2:
                pass
            os._exit(0)
        while True:  # wait for the child to be gone (reaped by the kernel) before the next one
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
    print(int(input()) + 1)
"""
FAST_ECHO = Problem(id="fast-echo", source="test", statement="", style="stdio", time_limit_s=0.5,
                    tests=[TestCase("41\n", "42\n")])


@needs_bwrap
@needs_cgroups
def test_cpu_of_children_the_kernel_reaps_counts(solo):
    v = judge(solo, FAST_ECHO, sub(FAST_ECHO, AUTO_REAPED))
    assert v.status == "TLE", v
    assert v.tests[0].time_s >= 0.5, v
    assert v.meta["accounting"] == cg.detect().version


AUTO_REAPED_FUNCTIONAL = """
    import os, signal, time
    def add(a, b):
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        for _ in range(4):
            if os.fork() == 0:
                t = time.process_time()
                while time.process_time() - t < 0.2:
                    pass
                os._exit(0)
            while True:
                try:
                    os.waitpid(-1, 0)
                except ChildProcessError:
                    break
        return a + b
"""
FAST_ADD = Problem(id="fast-add", source="test", statement="", style="functional", entry_point="add",
                   time_limit_s=0.5, tests=[TestCase("1\n2", "3")])


@needs_bwrap
@needs_cgroups
def test_cpu_of_children_the_kernel_reaps_counts_in_a_functional_call(solo):
    v = judge(solo, FAST_ADD, sub(FAST_ADD, AUTO_REAPED_FUNCTIONAL))
    assert v.status == "TLE", v


@needs_unshare_root
@needs_cgroups
def test_unshare_fallback_counts_the_run_as_a_whole_too(solo_unshare):
    v = judge(solo_unshare, FAST_ECHO, sub(FAST_ECHO, AUTO_REAPED))
    assert v.status == "TLE" and v.meta["accounting"] == cg.detect().version, v
    assert judge(solo_unshare, SMALL_MEMORY, sub(SMALL_MEMORY, MANY_PROCESSES)).status == "MLE"


# --- output, also into a checker -------------------------------------------------------------------------
@needs_bwrap
def test_infinite_output_is_ole(ev):
    v = run(ev, "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n")
    assert v.status == "OLE", v
    assert_pool_still_judges(ev)


TOKEN_CHECKER = """
import sys
answer = open(sys.argv[2]).read().split()
team = sys.stdin.read().split()  # a reasonable checker: it reads the whole output
sys.exit(42 if team == answer else 43)
"""
CHECKED = Problem(id="checked", source="test", statement="", style="stdio", time_limit_s=2.0,
                  tests=[TestCase("41\n", "42\n")],
                  checker=Checker(kind="program", language="python", protocol="kattis", program=TOKEN_CHECKER))
FLOOD = """
    import sys
    sys.stdout.write("ab " * (8 << 20))  # 24 MB of two-character tokens
"""


@needs_bwrap
def test_a_flood_of_tokens_is_ole_not_a_checker_failure():
    cfg = EvaluatorConfig(checker_memory_mb=256, **SLOW_OK)
    with Evaluator(workers=1, sandbox="bwrap", config=cfg) as ev:
        v = judge(ev, CHECKED, sub(CHECKED, FLOOD))
        assert v.status == "OLE", v
        assert judge(ev, CHECKED, sub(CHECKED, "print(int(input()) + 1)\n")).status == "AC"


def test_output_limit_is_per_problem_and_smaller_where_a_checker_reads_it():
    cfg = EvaluatorConfig(output_limit_mb=64, checker_output_mb=16)
    mb = 1 << 20
    assert output_limit(ECHO, cfg) == 64 * mb
    assert output_limit(CHECKED, cfg) == 16 * mb
    stated = Problem(id="stated", source="test", statement="", style="stdio", tests=[TestCase("", "1\n")],
                     meta={"output_limit_mb": 2})
    assert output_limit(stated, cfg) == 2 * mb
    big = Problem(id="big", source="test", statement="", style="stdio", tests=[TestCase("", "x" * (3 * mb))],
                  checker=CHECKED.checker, meta={"output_limit_mb": 1})
    assert output_limit(big, cfg) == 6 * mb + 4096  # never under twice the expected output


# --- disk and stack --------------------------------------------------------------------------------------
DISK_FILL = """
    import os
    n = 0
    try:
        while True:  # one big file, then many files: RLIMIT_FSIZE, then the tmpfs size
            with open(f"/tmp/fill{n // 64}", "ab") as f:
                f.write(b"x" * (1 << 20))
            n += 1
    except OSError:
        pass
    print(42 if n < 4096 else n)
"""


@needs_bwrap
def test_disk_fill_is_bounded_and_wiped(ev):
    # a memory limit above the tmpfs size: the tmpfs is what stops the writes
    roomy = Problem(id="roomy", source="test", statement="", style="stdio", time_limit_s=1.0,
                    memory_limit_mb=512, tests=[TestCase("41\n", "42\n")])
    v = run(ev, DISK_FILL, problem=roomy)
    assert v.status == "AC", v
    clean = run(ev, "import os\nleft = [f for f in os.listdir('/tmp') if f.startswith('fill')]\n"
                    "print(42 if not left and os.listdir('/dev/shm') == [] else 0)\n")
    assert clean.status == "AC", clean


@needs_bwrap
@needs_cgroups
def test_files_in_the_tmpfs_are_memory_of_the_run(ev):
    """/tmp is a tmpfs: what a program keeps there is memory it holds, judged with the rest."""
    v = run(ev, DISK_FILL, problem=SMALL_MEMORY)
    assert v.status == "MLE", v


@needs_bwrap
def test_deep_recursion_gets_a_verdict(ev):
    runaway = run(ev, """
        import sys
        sys.setrecursionlimit(10 ** 8)
        def down(n):
            return down(n + 1) + 1
        down(0)
    """)
    assert runaway.status in ("RE", "MLE", "TLE"), runaway  # 3.11 frames live on the heap
    through_c = run(ev, """
        import sys
        sys.setrecursionlimit(10 ** 8)
        class A:
            def __getattr__(self, name):
                return getattr(self, name)
        A().x
    """)
    assert through_c.status in ("RE", "MLE"), through_c  # the C stack: segfault at the stack limit
    default = run(ev, "def down(n):\n    return down(n + 1)\ndown(0)\n")
    assert default.status == "RE" and "RecursionError" in default.tests[0].diff
    legit = run(ev, """
        import sys
        sys.setrecursionlimit(10 ** 6)
        def depth(n):
            return 0 if n == 0 else 1 + depth(n - 1)
        print(depth(200000) - 200000 + int(input()) + 1)
    """)
    assert legit.status == "AC", legit


# --- a compilation that blocks ---------------------------------------------------------------------------
BLOCKING_INCLUDE = '#include "/dev/ptmx"\nint main() {}\n'


@needs_bwrap
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_compile_blocked_on_a_device_is_a_cached_ce():
    cfg = EvaluatorConfig(compile_time_limit_s=2.0, **SLOW_OK)
    with Evaluator(workers=1, sandbox="bwrap", config=cfg) as ev:
        first = judge(ev, ECHO, sub(ECHO, BLOCKING_INCLUDE, "cpp", "first"))
        assert first.status == "CE", first
        again = judge(ev, ECHO, sub(ECHO, BLOCKING_INCLUDE, "cpp", "again"))
        assert again.status == "CE" and again.meta.get("compile_cached") is True, again


@needs_unshare_root
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("landlock", [pytest.param(True, marks=pytest.mark.skipif(
    compile_guard.landlock_abi() < 1, reason="the kernel has no Landlock")), False])
def test_unshare_fallback_compile_blocked_on_a_device_or_a_pipe_is_a_cached_ce(monkeypatch, landlock):
    """The fallback's /dev is minimal too; a FIFO among the host files it shows is outside the
    include path (Landlock: the compiler cannot open it). Without Landlock it blocks the compiler
    until the wall limit, and the machine's own health (a reference compile, really run here) says
    whether that was the source: CE, cached, on a healthy machine."""
    monkeypatch.setattr(compile_module, "LANDLOCK", landlock)
    folder = tempfile.mkdtemp(prefix="redteam-fifo-", dir="/tmp")
    try:
        os.chmod(folder, 0o755)
        fifo = os.path.join(folder, "pipe.h")
        os.mkfifo(fifo, 0o644)
        cfg = EvaluatorConfig(compile_time_limit_s=1.0, **SLOW_OK)
        with Evaluator(workers=1, sandbox="unshare", config=cfg) as ev:
            probes = []

            def health(worker):  # the real check, recorded: its verdict depends on the machine's load
                probes.append(ev.compiler.stalled(worker))
                return None

            ev.compiler.health = health
            assert judge(ev, ECHO, sub(ECHO, BLOCKING_INCLUDE, "cpp", "ptmx")).status == "CE"
            source = f'#include "{fifo}"\nint main() {{}}\n'
            first = judge(ev, ECHO, sub(ECHO, source, "cpp", "fifo"))
            assert first.status == "CE", first
            if landlock:
                assert "Permission denied" in first.reason and probes == [], first
            else:
                assert "wall-clock" in first.reason and "healthy" in first.reason, first
                assert len(probes) == 1 and (probes[0] is None or "of a CPU" in probes[0]), probes
            again = judge(ev, ECHO, sub(ECHO, source, "cpp", "fifo-again"))
            assert again.status == "CE" and again.meta.get("compile_cached") is True, again
    finally:
        shutil.rmtree(folder, ignore_errors=True)
