"""The judge process and its fork server cannot be changed from inside the real sandbox
(bubblewrap): the judge is PID 1 of the box (a program cannot kill it), a syscall filter the judge
installs on itself once keeps its limits, priority and scheduling, and keeps keyrings, new
namespaces and ptrace out of reach (threads and processes still work), and a judge found tampered
with is replaced before the next run."""

from __future__ import annotations

import os

import pytest
from sandbox_fixtures import FAST, assert_pool_still_judges, evaluator_fixture, judge, needs_bwrap, run, sub

from microcoder.pipeline.evaluator.inside import syscall_filter
from microcoder.pipeline.schema import Problem, TestCase

# Two tests: a program that passes the first runs again in the same judge.
ECHO = Problem(id="echo", source="test", statement="", style="stdio", time_limit_s=1.0,
               tests=[TestCase("41\n", "42\n"), TestCase("1\n", "2\n")])

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


ev = evaluator_fixture("ev", 2, **FAST)


# one judge, without the syscall filter: the judge must notice tampering by itself
solo = evaluator_fixture("solo", 1, syscall_filter=False, **FAST)


@needs_bwrap
def test_killing_the_parent_does_nothing(ev):
    v = run(ev, """
        import os, signal
        for pid in (os.getppid(), 1):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        print(int(input()) + 1)
    """)
    assert v.status == "AC", v
    assert_pool_still_judges(ev)


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


def seccomp(status: str) -> tuple[str, str]:
    rows = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return rows["Seccomp"].strip(), rows.get("Seccomp_filters", "1").strip()


def judge_status(box) -> str:
    """The judge's /proc status, read on the host (the box's /proc hides it from programs): the
    process below the box's bwrap that is PID 1 of its namespace."""
    found, parents = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = open(f"/proc/{pid}/status").read()
        except OSError:
            continue
        rows = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        parents[pid] = rows.get("PPid", "").strip()
        if rows.get("NSpid", "").split()[-1:] == ["1"]:
            found[pid] = status
    for pid, status in found.items():
        up = pid
        while up in parents and up != str(box.proc.pid):
            up = parents[up]
        if up == str(box.proc.pid):
            return status
    raise AssertionError("no judge process found")


@needs_bwrap
def test_the_filter_is_the_judges_own_and_inherited_once(ev):
    """The judge (PID 1) installs the filter on itself once; a program inherits exactly that
    one (not a second copy attached per run, which cost ~0.3 ms each)."""
    v = judge(ev, ECHO, sub(ECHO, """
        input()
        print(open("/proc/self/status").read())
    """), keep_outputs=True)
    box = ev._all[0].boxes["run"]
    if not box.info.get("syscall_filter"):
        pytest.skip("no syscall filter on this kernel")
    assert seccomp(judge_status(box)) == ("2", "1")
    assert seccomp(v.tests[0].output) == ("2", "1"), v


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_syscall_filter_assembles(machine):
    program = syscall_filter.build(machine)
    assert program and len(program) % 8 == 0
    assert syscall_filter.build("sparc64") is None
