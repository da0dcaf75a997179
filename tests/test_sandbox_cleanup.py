"""Nothing of one submission reaches the next, judged by the real sandbox (bubblewrap; the unshare
fallback where marked): after a run the judge kills every process (daemons included), wipes its
folders by handle (chains deeper than PATH_MAX, closed folders), removes System V IPC by id and
the job's binary, and forks programs from a judge that holds nothing of earlier submissions; a
clean-up that fails retires the judge, never reused dirty."""

from __future__ import annotations

import os

import pytest
from sandbox_fixtures import (
    ECHO,
    FAST,
    SLOW_OK,
    evaluator_fixture,
    judge,
    needs_bwrap,
    needs_unshare_root,
    run,
    settled_leftovers,
    sub,
)

from microcoder.pipeline.evaluator.inside import harness_state
from microcoder.pipeline.evaluator.sandbox import launch as sb
from microcoder.pipeline.evaluator.sandbox.box import Box, BoxError
from microcoder.pipeline.schema import Problem, TestCase

OTHER = Problem(id="other", source="test", statement="", style="stdio", time_limit_s=1.0,
                tests=[TestCase("1\n", "clean\n")])


ev = evaluator_fixture("ev", 2, **FAST)
solo = evaluator_fixture("solo", 1, **SLOW_OK)
solo_unshare = evaluator_fixture("solo_unshare", 1, "unshare", **SLOW_OK)


# --- processes ---------------------------------------------------------------------------------------------
@needs_bwrap
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


# Daemons that hide from every process of their uid: one non-dumpable by prctl, one by exec of an
# execute-only copy of a binary (the kernel makes such a process non-dumpable). Under the box's
# hidepid /proc (a program sees only what it may ptrace-read) neither is listed there; the judge
# must kill them all the same.
HIDDEN_DAEMONS = """
    import ctypes, os, shutil, time
    def daemon(action):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                action()
            os._exit(0)
        os.wait()
    def undumpable():
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
        time.sleep(60)
        os._exit(0)
    def execute_only():
        path = os.path.join(os.environ["TMPDIR"], "sleeper")
        shutil.copy("/bin/sleep", path)
        os.chmod(path, 0o111)
        os.execv(path, [path, "60"])
    daemon(undumpable)
    daemon(execute_only)
    time.sleep(0.3)
    print(int(input()) + 1)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the leftover check reads the host's /proc as root")
@pytest.mark.parametrize("sandbox", [pytest.param("ev", marks=needs_bwrap),
                                     pytest.param("solo_unshare", marks=needs_unshare_root)])
def test_daemons_hidden_from_their_uid_do_not_survive(sandbox, request):
    evaluator = request.getfixturevalue(sandbox)
    v = run(evaluator, HIDDEN_DAEMONS)  # (`run` asserts no sandboxed process of ours is left)
    assert v.status == "AC", v
    assert run(evaluator, "print(int(input()) + 1)\n").status == "AC"


# --- files and System V IPC --------------------------------------------------------------------------------
@needs_bwrap
def test_a_previous_submissions_binary_is_gone(solo):
    cpp = "#include <cstdio>\nint main(){long long x;scanf(\"%lld\",&x);printf(\"%lld\\n\",x+1);}\n"
    assert judge(solo, ECHO, sub(ECHO, cpp, "cpp", "cpp")).status == "AC"
    copier = judge(solo, ECHO, sub(ECHO, f"import os\nos.execv('{sb.inside_path('job')}/prog', ['prog'])\n", sid="copier"))
    assert copier.status == "RE" and "FileNotFoundError" in copier.tests[0].diff, copier


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


# --- the judge's memory ------------------------------------------------------------------------------------
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


# --- last: after every hostile run above -------------------------------------------------------------------
@needs_bwrap
def test_nothing_is_left_in_the_judge_after_hostile_runs(ev):
    """After everything above, the pool still judges and no sandboxed process is left."""
    assert judge(ev, ECHO, sub(ECHO, "print(int(input()) + 1)")).status == "AC"
    if os.geteuid() == 0:
        assert settled_leftovers() == []
