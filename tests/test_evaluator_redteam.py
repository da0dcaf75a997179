"""Second red-team round (issue 11): attacks by a program that has read the sandbox's code. Each
class is judged by the real sandbox (bubblewrap; the unshare fallback where stated):

1. CPU done in children the kernel reaps by itself (SIGCHLD ignored) counts.
2. Memory is limited for the run as a whole, not per process.
3. Nothing a submission leaves in /tmp (a chain deeper than PATH_MAX) or in System V IPC (a
   segment whose owner and mode it changed) reaches the next submission.
4. Only the socket families a solution needs can be created.
5. A huge output cannot make a checker program fail (SE): it is OLE.
6. A compilation that blocks on a device is a quick, cached CE.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap

import pytest

from pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from pipeline.evaluator.inside import harness_state
from pipeline.evaluator.sandbox import cgroups as cg
from pipeline.evaluator.sandbox import launch as sb
from pipeline.evaluator.sandbox.box import Box, BoxError
from pipeline.evaluator.verdict.judge import output_limit
from pipeline.schema import Checker, Problem, TestCase

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
needs_cgroups = pytest.mark.skipif(cg.detect() is None,
                                   reason="no writable cgroup hierarchy with cpuacct, memory and pids here "
                                          "(not root, or no cgroup v1/v2 controllers mounted)")
needs_unshare_root = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "setpriv")),
    reason="the unshare fallback drops to its own uid only as root with unshare and setpriv")
# Generous wall limits: a loaded machine must not turn what these tests judge into a wall-clock TLE.
SLOW_OK = dict(wall_factor=4.0, wall_slack_s=20.0)
ECHO = Problem(id="echo", source="test", statement="", style="stdio", time_limit_s=1.0,
               tests=[TestCase("41\n", "42\n")])
OTHER = Problem(id="other", source="test", statement="", style="stdio", time_limit_s=1.0,
                tests=[TestCase("1\n", "clean\n")])


def sub(problem: Problem, code: str, lang: str = "python", sid: str = "s") -> Submission:
    return Submission(problem.id, sid, lang, textwrap.dedent(code))


def judge(evaluator, problem, submission):
    return evaluator.evaluate_batch([problem], [submission])[0]


@pytest.fixture(scope="module")
def solo():
    """One worker, so consecutive submissions share the judge and its /tmp."""
    with Evaluator(workers=1, sandbox="bwrap", config=EvaluatorConfig(**SLOW_OK)) as e:
        yield e


@pytest.fixture(scope="module")
def solo_unshare():
    with Evaluator(workers=1, sandbox="unshare", config=EvaluatorConfig(**SLOW_OK)) as e:
        yield e


# --- 1. CPU of auto-reaped children ------------------------------------------------------------------
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


# --- 2. memory of the run as a whole -------------------------------------------------------------------
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


@needs_unshare_root
@needs_cgroups
def test_unshare_fallback_counts_the_run_as_a_whole_too(solo_unshare):
    v = judge(solo_unshare, FAST_ECHO, sub(FAST_ECHO, AUTO_REAPED))
    assert v.status == "TLE" and v.meta["accounting"] == cg.detect().version, v
    assert judge(solo_unshare, SMALL_MEMORY, sub(SMALL_MEMORY, MANY_PROCESSES)).status == "MLE"


# --- 3. state surviving into the next submission --------------------------------------------------------
DEEP_CHAIN = """
    import os
    os.chdir("/tmp")
    for _ in range(24):  # 24 x 256 bytes: deeper than PATH_MAX (4096)
        os.mkdir("d" * 250)
        os.chdir("d" * 250)
    with open("left-behind", "w") as f:
        f.write("x" * 100000)
    os.chmod(".", 0o500)
    print(int(input()) + 1)
"""
SHM_KEPT = """
    import ctypes, ctypes.util
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget(0x5EC7, 1 << 20, 0o1666)  # IPC_CREAT | 0666
    assert shmid >= 0, ctypes.get_errno()
    addr = libc.shmat(shmid, None, 0)
    ctypes.memmove(addr, b"SECRET-OF-THE-LAST-RUN", 22)
    buf = ctypes.create_string_buffer(256)
    assert libc.shmctl(shmid, 2, buf) == 0  # IPC_STAT
    ctypes.c_uint32.from_buffer(buf, 4).value = 4242  # shm_perm.uid: another owner
    ctypes.c_uint16.from_buffer(buf, 20).value = 0  # shm_perm.mode: no access for anyone
    assert libc.shmctl(shmid, 1, buf) == 0, ctypes.get_errno()  # IPC_SET
    print(int(input()) + 1)
"""
LOOK_AROUND = """
    import os
    tmp = os.environ["TMPDIR"].rstrip("/") + "/"
    with open("/proc/self/mountinfo") as f:  # a checkout under /tmp has its interpreter bound there
        binds = {row.split()[4][len(tmp):].split("/")[0] for row in f if row.split()[4].startswith(tmp)}
    seen = sorted(n for n in os.listdir(tmp) if n != "run" and n not in binds)
    with open("/proc/sysvipc/shm") as f:
        segments = f.read().splitlines()[1:]
    print("clean" if not seen and not segments else f"dirty {seen} {segments}")
"""


@needs_bwrap
@pytest.mark.parametrize("attack", [DEEP_CHAIN, SHM_KEPT], ids=["deep-tmp-chain", "sysv-shm-owner-changed"])
def test_nothing_survives_into_the_next_submission(solo, attack):
    assert judge(solo, ECHO, sub(ECHO, attack, sid="attacker")).status == "AC"
    v = judge(solo, OTHER, sub(OTHER, LOOK_AROUND, sid="victim"))
    assert v.status == "AC", v


@needs_unshare_root
@pytest.mark.parametrize("attack", [DEEP_CHAIN.replace('"/tmp"', 'os.environ["TMPDIR"]'), SHM_KEPT],
                         ids=["deep-tmp-chain", "sysv-shm-owner-changed"])
def test_nothing_survives_into_the_next_submission_unshare(solo_unshare, attack):
    assert judge(solo_unshare, ECHO, sub(ECHO, attack, sid="attacker")).status == "AC"
    v = judge(solo_unshare, OTHER, sub(OTHER, LOOK_AROUND, sid="victim"))
    assert v.status == "AC", v


def test_empty_dir_removes_chains_deeper_than_path_max_and_closed_folders(tmp_path):
    top = tmp_path / "scratch"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    for _ in range(40):  # 40 x 251 bytes, built relative to a descriptor as a program can
        os.mkdir("d" * 250, dir_fd=fd)
        nxt = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(os.open("leaf", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    os.fchmod(fd, 0o500)
    os.close(fd)
    (top / "closed").mkdir(mode=0o000)
    (top / "file").write_text("x")
    assert harness_state.empty_dir(str(top)) and os.listdir(top) == []
    assert harness_state.empty_dir(str(tmp_path / "absent"))


@needs_bwrap
def test_a_failed_clean_up_retires_the_judge_and_is_never_reused(tmp_path):
    """A writable dir the judge cannot empty (here: a read-only bind it is told to wipe) makes
    every clean-up fail: the judge answers `retire` instead of running, the box is replaced, and
    a fresh judge that is dirty at once is an error, never a run in a dirty box."""
    stuck = tmp_path / "stuck"
    stuck.mkdir()
    (stuck / "left").write_text("x")
    os.chmod(tmp_path, 0o755)
    os.chmod(stuck, 0o755)
    spec = sb.BoxSpec(kind="bwrap", drop_uid=sb.drop_uid_for("bwrap"))
    box = Box(spec, [sb.Bind(stuck, sb.inside_path("stuck"))], tmp_path / "work", "run")
    command = box._command

    def with_stuck_wipe():
        cmd, env, init = command()
        return cmd, env, {**init, "wipe": [*init["wipe"], sb.inside_path("stuck")]}

    box._command = with_stuck_wipe
    try:
        box.start()
        assert box.info["clean"] is False
        run = {"op": "run", "kind": "exec", "argv": ["/bin/true"], "cpu_s": 1, "wall_s": 5}
        with pytest.raises(BoxError, match="retired at once"):
            box.request(run, 30)
    finally:
        box.close()


# --- 4. socket families ------------------------------------------------------------------------------------
SOCKETS = """
    import socket
    def attempt(family, kind, proto=0):
        try:
            socket.socket(family, kind, proto).close()
            return "ok"
        except OSError as e:
            return "denied"
    got = {
        "unix": attempt(socket.AF_UNIX, socket.SOCK_STREAM),
        "inet": attempt(socket.AF_INET, socket.SOCK_STREAM),
        "inet6": attempt(socket.AF_INET6, socket.SOCK_DGRAM),
        "vsock": attempt(socket.AF_VSOCK, socket.SOCK_STREAM),
        "netlink": attempt(socket.AF_NETLINK, socket.SOCK_RAW),
        "packet": attempt(socket.AF_PACKET, socket.SOCK_RAW),
    }
    print(got)
"""
SOCKETS_PROBLEM = Problem(id="sockets", source="test", statement="", style="stdio", time_limit_s=2.0, tests=[
    TestCase("", "{'unix': 'ok', 'inet': 'ok', 'inet6': 'ok', 'vsock': 'denied', 'netlink': 'denied', "
                 "'packet': 'denied'}\n")])


@needs_bwrap
def test_only_the_socket_families_a_solution_needs(solo):
    v = judge(solo, SOCKETS_PROBLEM, sub(SOCKETS_PROBLEM, SOCKETS))
    assert v.status == "AC", v


# --- 5. checker abuse ------------------------------------------------------------------------------------------
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


# --- 6. a compiler that blocks ---------------------------------------------------------------------------------
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
def test_unshare_fallback_compile_blocked_on_a_device_or_a_pipe_is_a_cached_ce():
    """The fallback's /dev is minimal too; a FIFO among the host files it shows blocks the
    compiler without CPU: CE once the wall-clock limit is out, cached."""
    folder = tempfile.mkdtemp(prefix="redteam-fifo-", dir="/tmp")
    try:
        os.chmod(folder, 0o755)
        fifo = os.path.join(folder, "pipe.h")
        os.mkfifo(fifo, 0o644)
        cfg = EvaluatorConfig(compile_time_limit_s=1.0, **SLOW_OK)
        with Evaluator(workers=1, sandbox="unshare", config=cfg) as ev:
            assert judge(ev, ECHO, sub(ECHO, BLOCKING_INCLUDE, "cpp", "ptmx")).status == "CE"
            source = f'#include "{fifo}"\nint main() {{}}\n'
            first = judge(ev, ECHO, sub(ECHO, source, "cpp", "fifo"))
            assert first.status == "CE" and "blocked" in first.reason, first
            again = judge(ev, ECHO, sub(ECHO, source, "cpp", "fifo-again"))
            assert again.status == "CE" and again.meta.get("compile_cached") is True, again
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- 5 (unit). what a run may write --------------------------------------------------------------------------------
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


# --- 6 (both kinds). the box's /dev ------------------------------------------------------------------------------
DEV_LOOK = """
    import os
    try:
        open("/dev/left-behind", "w").close()
        wrote = "wrote"
    except OSError:
        wrote = "read-only"
    print(sorted(os.listdir("/dev")), wrote, os.path.exists("/dev/ptmx"), len(open("/dev/urandom", "rb").read(8)))
"""
DEV_PROBLEM = Problem(id="dev", source="test", statement="", style="stdio", time_limit_s=2.0, tests=[TestCase(
    "", "['fd', 'full', 'null', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'urandom', 'zero'] read-only False 8\n")])


@needs_bwrap
def test_the_box_dev_holds_only_devices_that_do_not_block_and_is_read_only(solo):
    v = judge(solo, DEV_PROBLEM, sub(DEV_PROBLEM, DEV_LOOK))
    assert v.status == "AC", v


@needs_unshare_root
def test_the_unshare_fallback_dev_is_the_same(solo_unshare):
    v = judge(solo_unshare, DEV_PROBLEM, sub(DEV_PROBLEM, DEV_LOOK))
    assert v.status == "AC", v


# --- 3 (unshare). the host's shared folders ----------------------------------------------------------------------
HOST_FOLDERS = """
    import os
    written = []
    for d in ("/tmp", "/var/tmp", "/run/lock", os.environ["TMPDIR"]):
        try:
            with open(os.path.join(d, "redteam-left-behind"), "w") as f:
                f.write("x")
            written.append(d == os.environ["TMPDIR"] and "TMPDIR" or d)
        except OSError:
            pass
    print(written)
"""
HOST_FOLDERS_PROBLEM = Problem(id="host-folders", source="test", statement="", style="stdio", time_limit_s=2.0,
                               tests=[TestCase("", "['TMPDIR']\n")])
CPP_ECHO = '#include <cstdio>\nint main(){long long x; scanf("%lld", &x); printf("%lld\\n", x + 1);}\n'


@needs_unshare_root
def test_unshare_fallback_leaves_nothing_in_the_hosts_shared_folders(solo_unshare):
    try:
        v = judge(solo_unshare, HOST_FOLDERS_PROBLEM, sub(HOST_FOLDERS_PROBLEM, HOST_FOLDERS))
        assert v.status == "AC", v
    finally:
        left = [d for d in ("/tmp", "/var/tmp", "/run/lock") if os.path.exists(f"{d}/redteam-left-behind")]
        for d in left:
            os.unlink(f"{d}/redteam-left-behind")
    assert left == []
    if shutil.which("g++"):  # the build box still writes its own folder
        assert judge(solo_unshare, ECHO, sub(ECHO, CPP_ECHO, "cpp", "cpp")).status == "AC"


# --- issue 24 item 4. a returned set is not re-ordered to match a list -----------------------------------------------
SORT_DESC = Problem(id="sort-desc", source="test", statement="Return nums sorted in descending order.",
                    style="functional", entry_point="Solution().sortDesc", time_limit_s=2.0,
                    tests=[TestCase("[3,1,2]", "[3, 2, 1]"), TestCase("[10,30,20,40]", "[40, 30, 20, 10]")])
DISTINCT_ANY_ORDER = Problem(id="distinct-any", source="test", statement="Return the distinct values in any order.",
                             style="functional", entry_point="Solution().sortDesc", time_limit_s=2.0,
                             tests=SORT_DESC.tests, checker=Checker(kind="tokens", unordered=True))
RETURNS_A_SET = """
    from typing import List
    class Solution:
        def sortDesc(self, nums: List[int]) -> List[int]:
            return set(nums)
"""


@needs_bwrap
def test_a_returned_set_is_wa_for_an_ordered_list_and_ac_only_under_an_unordered_checker(solo):
    right = RETURNS_A_SET.replace("set(nums)", "sorted(nums, reverse=True)")
    verdicts = solo.evaluate_batch(
        [SORT_DESC, DISTINCT_ANY_ORDER],
        [sub(SORT_DESC, RETURNS_A_SET, sid="set"), sub(SORT_DESC, right, sid="sorted"),
         sub(DISTINCT_ANY_ORDER, RETURNS_A_SET, sid="set-any")])
    as_set, as_sorted, any_order = verdicts
    assert as_set.status == "WA", as_set
    assert as_sorted.status == "AC", as_sorted
    assert any_order.status == "AC", any_order
