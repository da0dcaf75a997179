"""Adversarial programs: each gets a proper verdict, nothing escapes the sandbox, no process is
left behind, and the pool keeps judging afterwards. Runs under bubblewrap (skipped without it)."""

from __future__ import annotations

import os
import shutil
import socket
import textwrap
import time

import pytest

from pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from pipeline.evaluator.sandbox.launch import UID_BASE, inside_path
from pipeline.schema import Problem, TestCase

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

SECRET = "hf_fake_secret_do_not_leak_7351"
ECHO = Problem(id="echo", source="test", statement="", style="stdio", time_limit_s=1.0,
               tests=[TestCase("41\n", "42\n")])
GOOD = "print(int(input()) + 1)\n"


@pytest.fixture(scope="module")
def ev():
    os.environ["HF_TOKEN"] = SECRET  # set in the parent before the judges start
    try:
        with Evaluator(workers=2, sandbox="bwrap", config=EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)) as e:
            yield e
    finally:
        os.environ.pop("HF_TOKEN", None)


def _descends_from_us(parents: dict[str, str], pid: str) -> bool:
    """Whether `pid` is in this test process's tree: other sessions on the machine run sandboxes
    of their own under the same uid range, and theirs are not ours to count."""
    me, seen = str(os.getpid()), set()
    while pid in parents and pid not in seen:
        seen.add(pid)
        pid = parents[pid]
        if pid == me:
            return True
    return False


def leftover_processes() -> list[str]:
    """Sandboxed processes of ours alive now other than the judge processes themselves (PID 1
    inside, and its fork server)."""
    found, parents = [], {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parents[pid] = fields.get("PPid", "0").strip()
        uid = int(fields["Uid"].split()[1])
        inner_pid = fields.get("NSpid", "").split()[-1:]
        fork_server = fields.get("Name", "").strip() == "fork-server"  # the judge's, forks every program
        if uid >= UID_BASE and inner_pid != ["1"] and not fork_server:
            found.append((pid, f"{pid} uid={uid} {cmd}"))
    return [line for pid, line in found if _descends_from_us(parents, pid)]


def settled_leftovers(timeout_s: float = 30.0) -> list[str]:
    """leftover_processes() once it settles: a judge of an earlier Evaluator may still be exiting
    (returns as soon as none is left; the bound is generous because a loaded machine, with another
    test suite beside this one, can take seconds to finish a SIGKILLed sandbox off)."""
    deadline = time.monotonic() + timeout_s
    found = leftover_processes()
    while found and time.monotonic() < deadline:
        time.sleep(0.05)
        found = leftover_processes()
    return found


def run(ev, code: str, problem: Problem = ECHO, **kw):
    v = ev.evaluate_batch([problem], [Submission(problem.id, "adv", "python", textwrap.dedent(code))], **kw)[0]
    if os.geteuid() == 0:  # sandboxed code runs under its own uids only when we are root
        assert settled_leftovers() == []
    return v


def assert_pool_still_judges(ev):
    assert run(ev, GOOD).status == "AC"


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


def test_memory_bomb_is_mle(ev):
    v = run(ev, "chunks = []\nwhile True:\n    chunks.append(bytearray(10 ** 7))\n")
    assert v.status == "MLE", v
    assert_pool_still_judges(ev)


def test_infinite_loop_and_ignored_sigterm_are_tle(ev):
    assert run(ev, "while True:\n    pass\n").status == "TLE"
    v = run(ev, "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass\n")
    assert v.status == "TLE"
    assert_pool_still_judges(ev)


def test_infinite_output_is_ole(ev):
    v = run(ev, "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n")
    assert v.status == "OLE", v
    assert_pool_still_judges(ev)


def test_parent_secrets_are_invisible(ev):
    v = run(ev, """
        import os, glob
        seen = repr(dict(os.environ))
        for path in glob.glob("/proc/*/environ"):
            try:
                seen += open(path, "rb").read().decode(errors="replace")
            except OSError:
                pass
        print("LEAK" if "hf_" in seen or "HF_TOKEN" in seen else 42)
    """, keep_outputs=True)
    assert v.status == "AC", v
    assert SECRET not in (v.tests[0].output or "")


def test_writes_outside_the_workdir_fail(ev, tmp_path):
    job, inputs = inside_path("job"), inside_path("inputs")
    target = tmp_path / "escaped.txt"
    v = run(ev, f"""
        import os
        wrote = []
        for path in [{str(target)!r}, "/etc/escaped", "/usr/escaped", {job + "/escaped"!r}, {inputs + "/escaped"!r},
                     {inside_path("judge") + "/escaped"!r}, {os.getcwd() + "/escaped"!r}, "/escaped"]:
            try:
                with open(path, "w") as f:
                    f.write("x")
                wrote.append(path)
            except OSError:
                pass
        open("local.txt", "w").write("fine")  # the private working directory is writable
        print(42 if not wrote else wrote)
    """)
    assert v.status == "AC", v
    assert not target.exists() and not os.path.exists("escaped")


def test_network_is_unreachable(ev):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.2)
        port = server.getsockname()[1]
        v = run(ev, f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=1).close()
                print("connected")
            except OSError:
                print(42)
        """)
        assert v.status == "AC", v
        with pytest.raises(TimeoutError):
            server.accept()


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


def test_daemonised_grandchild_does_not_survive(ev):
    v = run(ev, """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(0.3)
                open("/tmp/daemon-was-here", "w").write("x")
                time.sleep(60)
            os._exit(0)
        print(int(input()) + 1)
    """)
    assert v.status == "AC", v
    # Nothing the grandchild left may reach the next run (/tmp may also hold the bound interpreter's
    # parent folders when the venv itself lives under /tmp, as in a CI checkout there).
    clean = run(ev, "import os, time\ntime.sleep(0.5)\nprint(42 if 'daemon-was-here' not in os.listdir('/tmp') else 0)\n")
    assert clean.status == "AC", clean


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


def test_disk_fill_is_bounded_and_wiped(ev):
    v = run(ev, """
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
    """)
    assert v.status == "AC", v
    clean = run(ev, "import os\nleft = [f for f in os.listdir('/tmp') if f.startswith('fill')]\n"
                    "print(42 if not left and os.listdir('/dev/shm') == [] else 0)\n")
    assert clean.status == "AC", clean
