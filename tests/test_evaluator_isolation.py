"""A program inherits nothing and sees only its own test (issue 24, items 1-3 and 7).

Every program is forked from the fork server (`harness_zygote.py`), which has held no request,
input, output or code; a stdio run's stdin is a private copy of its own test's input; no
descriptor of the judge's is open in a program. The attacks are real sandboxed programs that scan
*raw memory* (every readable mapping, through ctypes), not Python objects: markers are planted in
other tests' inputs, an earlier sample's output, compile error and code, and found by the hash
of the bytes after a prefix, so the scanning program never holds a marker itself.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import textwrap

import pytest
from sandbox_fixtures import needs_unshare_root

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.schema import Problem, TestCase

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
PREFIX = "MKQZ"  # then 24 hex digits; only their hashes reach the scanning program
SLOW_OK = EvaluatorConfig(wall_factor=4.0, wall_slack_s=20.0)


def marker() -> str:
    return PREFIX + secrets.token_hex(12)


def digest(m: str) -> str:
    return hashlib.sha256(m.encode()).hexdigest()


# Scans every readable private mapping of its own process for PREFIX + 24 hex digits whose sha256
# is one of WANTED (name by hash), and returns the names found (its own input's marker excluded).
SCANNER = r'''
import ctypes, hashlib, re
WANTED = __WANTED__
PREFIX = b"MK" + b"QZ"
TAIL = re.compile(rb"[0-9a-f]{24}")

def scan(own=""):
    found = set()
    with open("/proc/self/maps") as f:
        maps = f.read().splitlines()
    for line in maps:
        parts = line.split()
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        path = parts[5] if len(parts) > 5 else ""
        if parts[1][0] != "r" or path in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
            continue
        try:
            data = ctypes.string_at(lo, hi - lo)
        except Exception:
            continue
        at = data.find(PREFIX)
        while at >= 0:
            m = TAIL.match(data, at + 4)
            if m:
                name = WANTED.get(hashlib.sha256(data[at:at + 28]).hexdigest())
                if name is not None and name != own:
                    found.add(name)
            at = data.find(PREFIX, at + 1)
    return sorted(found)
'''


def scanner(wanted: dict[str, str]) -> str:
    return SCANNER.replace("__WANTED__", repr(wanted))


@pytest.fixture(scope="module")
def solo():
    """One worker: consecutive submissions share one judge (and its fork server)."""
    with Evaluator(workers=1, sandbox="bwrap", config=SLOW_OK) as e:
        yield e


def test_a_stdio_program_finds_no_other_test_input_earlier_output_or_code_in_its_memory(solo):
    later, earlier_in, earlier_code, compile_err = (marker() for _ in range(4))
    earlier_out = PREFIX + earlier_in[len(PREFIX):][::-1]  # what the earlier sample prints
    names = {"later input": later, "earlier input": earlier_in, "earlier output": earlier_out,
             "earlier code": earlier_code, "earlier compile error": compile_err}
    wanted = {digest(m): name for name, m in names.items()}
    # an earlier sample on the same judge: its input, output and code, and a compile error naming
    # a marker (the message travels through the judge)
    first = Problem(id="first", source="test", statement="", style="stdio", time_limit_s=2.0,
                    tests=[TestCase(earlier_in + "\n", earlier_out + "\n")])
    printed = solo.evaluate_batch([first], [Submission("first", "a", "python",
                                                       f"# {earlier_code}\nx = input()\nprint(x[:4] + x[4:][::-1])\n")])[0]
    assert printed.status == "AC"
    broken = solo.evaluate_batch([first], [Submission("first", "b", "python", f"x = '{compile_err}' +\n")])[0]
    assert broken.status == "CE" and compile_err in broken.reason
    # now a program scanning its own memory, at test 1 (test 2's input holds the later marker)
    code = scanner(wanted) + ("\nimport sys\nown = sys.stdin.read().strip()\n"
                              "print(scan(WANTED.get(hashlib.sha256(own.encode()).hexdigest(), '')))\n")
    p = Problem(id="scan", source="test", statement="", style="stdio", time_limit_s=10.0,
                tests=[TestCase("none\n", "[]\n"), TestCase(later + "\n", "[]\n")])
    v = solo.evaluate_batch([p], [Submission("scan", "c", "python", code)], keep_outputs=True)[0]
    assert v.status == "AC", (v.reason, [t.output for t in v.tests])


def test_the_scanner_finds_what_is_there(solo):
    """The attack works: a marker in the program's own input (read into its memory) is found."""
    m = marker()
    code = scanner({digest(m): "mine"}) + "\nimport sys\ndata = sys.stdin.read()\nprint(scan())\n"
    p = Problem(id="scan-own", source="test", statement="", style="stdio", time_limit_s=10.0,
                tests=[TestCase(m + "\n", "['mine']\n")])
    assert solo.evaluate_batch([p], [Submission("scan-own", "s", "python", code)])[0].status == "AC"


def functional(pid: str, markers: list[str]) -> Problem:
    return Problem(id=pid, source="test", statement="", style="functional", entry_point="f", time_limit_s=10.0,
                   tests=[TestCase(json.dumps(m + " " * 300), "[]") for m in markers])


def test_a_session_finds_no_later_input_and_no_earlier_sample_in_its_memory(solo):
    """Functional sessions: a fresh judge, then another sample on the same judge (whose session
    is forked after the first sample's inputs, outputs and code went through the judge), then
    the rerun after a rewind (a new session of the same submission, as Session.stream opens it)."""
    ms = [marker() for _ in range(150)]  # many: freed request memory is then not all reused or trimmed
    code_marker, out_marker = marker(), marker()
    wanted = {digest(m): f"input {i}" for i, m in enumerate(ms)}
    wanted[digest(code_marker)] = "earlier code"
    wanted[digest(out_marker)] = "earlier output"
    own = "def f(x):\n    return scan(WANTED.get(hashlib.sha256(x[:28].encode()).hexdigest(), ''))\n"
    # one call per window: the calls of a window reach the session together by design (their
    # total CPU is held to one call's limit); this checks what the session inherits
    judge_code = scanner(wanted) + own
    first = Problem(id="echo", source="test", statement="", style="functional", entry_point="f", time_limit_s=2.0,
                    tests=[TestCase(json.dumps(out_marker), json.dumps(out_marker))])
    assert solo.evaluate_batch([first], [Submission("echo", "e", "python",
                                                    f"# {code_marker}\ndef f(x):\n    return x\n")])[0].status == "AC"
    p = functional("scan-f", ms)
    for sid in ("fresh", "again"):
        v = solo.evaluate_batch([p], [Submission("scan-f", sid, "python", judge_code)], keep_outputs=True)[0]
        found = [t.output for t in v.tests if t.output != "[]"]
        # the first call of a session is alone: it sees no other input, however many went through
        # the judge before (today's code: "again" found a dozen); later calls see their window's
        assert v.tests[0].output == "[]", found
        assert all("earlier" not in (t.output or "") for t in v.tests), found


def test_a_stdio_run_sees_only_its_own_input(solo):
    """No input store in the box, stdin a private copy (a memory file, not a shared inode), and
    nothing of the judge's open: only fds 0-2."""
    code = textwrap.dedent("""
        import os, sys
        root = "/box/inputs"
        print(os.path.exists(root), sorted(os.listdir("/proc/self/fd")), os.readlink("/proc/self/fd/0")[:7])
    """)
    p = Problem(id="own", source="test", statement="", style="stdio", time_limit_s=2.0,
                tests=[TestCase("1\n", "False ['0', '1', '2', '3'] /memfd:\n"),
                       TestCase("2\n", "False ['0', '1', '2', '3'] /memfd:\n")])
    # fd 3 is listdir's own descriptor of /proc/self/fd
    v = solo.evaluate_batch([p], [Submission("own", "o", "python", code)], keep_outputs=True)[0]
    assert v.status == "AC", [t.output for t in v.tests]


def test_a_status_pipe_write_reaches_nobody(solo):
    """fd 3 (the judge's status pipe) is closed before the program runs: writing there fails,
    so nothing a program writes but its stdout and stderr enters the judge."""
    code = "import os\ntry:\n    os.write(3, b'X' * 100)\n    print('open')\nexcept OSError:\n    print('closed')\n"
    p = Problem(id="fd3", source="test", statement="", style="stdio", time_limit_s=2.0,
                tests=[TestCase("", "closed\n")])
    assert solo.evaluate_batch([p], [Submission("fd3", "s", "python", code)])[0].status == "AC"


def test_every_run_has_its_own_copy_of_its_input():
    """Nothing a program can lock or write is shared between boxes or runs: each run's stdin is
    a new memory file, sealed against writes, never the input store's file (which two boxes
    judging the same problem would both open: a lock on it is a channel between them)."""
    code = textwrap.dedent("""
        import fcntl, os
        st = os.fstat(0)
        try:
            os.write(0, b"x")
            writable = True
        except OSError:
            writable = False
        fcntl.flock(0, fcntl.LOCK_EX | fcntl.LOCK_NB)  # its own: never held by anyone else
        print(st.st_dev, st.st_ino, writable)
    """)
    p = Problem(id="ino", source="test", statement="", style="stdio", time_limit_s=2.0,
                tests=[TestCase("same\n", "?\n")])
    with Evaluator(workers=2, sandbox="bwrap", config=SLOW_OK) as ev:
        got = ev.evaluate_batch([p, p], [Submission("ino", f"s{i}", "python", code) for i in range(2)],
                                keep_outputs=True)
    outs = [v.tests[0].output.split() for v in got]
    assert [o[2] for o in outs] == ["False", "False"], outs
    assert outs[0][:2] != outs[1][:2], outs  # two files, not one shared inode


def test_a_session_rerun_after_a_rewind_finds_no_input_of_the_batch_before(solo):
    """A rewind (two honest 0.6 s calls that went over the 1 s limit together, in one window)
    reruns the rest in a fresh session, one call at a time, after the judge held the whole batch
    of inputs: the first scan of that session finds none of the batch's other inputs."""
    ms = [marker() for _ in range(150)]
    wanted = {digest(m): f"input {i}" for i, m in enumerate(ms)}
    code = scanner(wanted) + (
        "import time\n"
        "def f(x):\n"
        "    if isinstance(x, int):\n"
        "        end = time.process_time() + (0.6 if x == 6 else 0)\n"
        "        while time.process_time() < end:\n"
        "            pass\n"
        "        return x\n"
        "    return scan(WANTED.get(hashlib.sha256(x[:28].encode()).hexdigest(), ''))\n")
    tests = [TestCase(str(x), str(x)) for x in (0, 0, 0, 6, 6)]
    tests += [TestCase(json.dumps(m + " " * 300), "[]") for m in ms]
    p = Problem(id="scan-rewind", source="test", statement="", style="functional", entry_point="f",
                time_limit_s=1.0, tests=tests)
    v = solo.evaluate_batch([p], [Submission("scan-rewind", "r", "python", code)], keep_outputs=True)[0]
    assert [t.status for t in v.tests[:5]] == ["AC"] * 5, v.reason
    assert v.tests[5].output == "[]", v.tests[5].output  # the rerun's first scan, alone in its window


def test_a_judge_that_stays_readable_does_not_start(tmp_path, monkeypatch):
    """The judge holds every input and output: a judge process that could not make itself
    non-dumpable (a same-uid program could read its memory) is refused, never used."""
    from microcoder.pipeline.evaluator.sandbox import box as boxes
    from microcoder.pipeline.evaluator.sandbox import launch as sb

    box = boxes.Box(sb.BoxSpec(kind="bwrap"), [], tmp_path, "run")
    box.start()
    try:
        assert box.info["untraceable"] is True
    finally:
        box.close()
    real = boxes.Box._receive

    def readable(self, timeout):
        reply = real(self, timeout)
        reply.header.pop("untraceable", None)
        return reply

    monkeypatch.setattr(boxes.Box, "_receive", readable)
    with pytest.raises(boxes.BoxError, match="non-dumpable"):
        boxes.Box(sb.BoxSpec(kind="bwrap"), [], tmp_path, "run2").start()


# Lists /proc and reads every /proc/<pid>/status and cmdline it can, with a forked child (a copy
# of the program, not exec'd) and an exec'd one alive; prints what it saw as JSON.
PROC_LOOK_PY = r'''
import json, os, subprocess, sys, time
r, w = os.pipe()
forked = os.fork()
if forked == 0:
    os.close(w)
    os.read(r, 1)
    os._exit(0)
os.close(r)
execd = subprocess.Popen(["/bin/sleep", "30"])
for _ in range(200):  # Popen returns at the exec, a moment before /proc shows the new image;
    # exec sets comm before the arguments, so wait for cmdline itself
    with open(f"/proc/{execd.pid}/cmdline", "rb") as f:
        if f.read() == b"/bin/sleep\x0030\x00":
            break
    time.sleep(0.01)
seen = {}
for name in os.listdir("/proc"):
    if name.isdigit():
        entry = {}
        for part in ("status", "cmdline"):
            try:
                with open(f"/proc/{name}/{part}", "rb") as f:
                    text = f.read().decode("utf-8", "replace")
                entry[part] = text.split("\n", 1)[0] if part == "status" else text.replace("\0", " ")[:80]
            except OSError as e:
                entry[part] = type(e).__name__
        seen[name] = entry
probe = {}
for pid in ("1", str(os.getppid())):
    try:
        os.stat(f"/proc/{pid}")
        probe[pid] = "visible"
    except OSError as e:
        probe[pid] = type(e).__name__
own = {"self": str(os.getpid()), "forked": str(forked), "execd": str(execd.pid)}
fds = sorted(os.listdir("/proc/self/fd"))
stdin = sys.stdin.read().strip() == "41" and os.path.exists("/dev/stdin")
execd.kill()
execd.wait()
os.write(w, b"x")
os.waitpid(forked, 0)
print(json.dumps({"seen": seen, "probe": probe, "own": own, "fds": fds, "stdin": stdin}))
'''
PROC_LOOK_CPP = r'''
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
int main() {
    int p[2];
    if (pipe(p)) return 1;
    pid_t kid = fork();
    if (kid == 0) { char c; close(p[1]); read(p[0], &c, 1); _exit(0); }
    close(p[0]);
    printf("{\"own\": {\"self\": \"%d\", \"forked\": \"%d\"}, \"seen\": {", getpid(), kid);
    DIR *d = opendir("/proc");
    bool first = true;
    while (dirent *e = readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[64], line[256] = "unreadable";
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        if (FILE *f = fopen(path, "r")) {
            if (!fgets(line, sizeof line, f)) strcpy(line, "empty");
            fclose(f);
        }
        line[strcspn(line, "\n\"\\")] = 0;
        if (char *tab = strchr(line, '\t')) *tab = ' ';
        printf("%s\"%s\": {\"status\": \"%s\"}", first ? "" : ", ", e->d_name, line);
        first = false;
    }
    closedir(d);
    bool one = access("/proc/1", F_OK) == 0;
    long x = 0;
    bool in = scanf("%ld", &x) == 1 && x == 41 && access("/proc/self/fd/0", R_OK) == 0;
    printf("}, \"probe\": {\"1\": \"%s\"}, \"stdin\": %s}\n", one ? "visible" : "hidden", in ? "true" : "false");
    fflush(stdout);
    close(p[1]);
    waitpid(kid, nullptr, 0);
}
'''


def proc_view(evaluator, language: str, code: str) -> dict:
    p = Problem(id="proc", source="test", statement="", style="stdio", time_limit_s=10.0,
                tests=[TestCase("41\n", "?\n")])
    v = evaluator.evaluate_batch([p], [Submission("proc", language, language, code)], keep_outputs=True)[0]
    out = v.tests[0].output if v.tests else ""
    assert out and out.startswith("{"), (v.status, v.reason, out)
    return json.loads(out)


@pytest.mark.parametrize("sandbox", ["bwrap", pytest.param("unshare", marks=needs_unshare_root)])
def test_a_program_sees_only_its_own_processes(sandbox):
    """/proc shows a program itself and its own children (forked or exec'd), readable as
    before; not the judge (PID 1), not the fork server that forked it, not anything else."""
    with Evaluator(workers=1, sandbox=sandbox, config=SLOW_OK) as ev:
        for language, code in (("python", PROC_LOOK_PY), ("cpp", PROC_LOOK_CPP)):
            got = proc_view(ev, language, code)
            own = got["own"]
            assert set(got["seen"]) == set(own.values()), (language, got["seen"], own)
            assert got["seen"][own["self"]]["status"].startswith("Name:"), (language, got["seen"])
            assert got["seen"][own["forked"]]["status"].startswith("Name:"), (language, got["seen"])
            assert got["probe"]["1"] != "visible", (language, got["probe"])
            assert got["stdin"] is True, (language, got)
            if language == "python":
                assert got["seen"][own["execd"]]["cmdline"] == "/bin/sleep 30 ", got["seen"]
                assert set(got["probe"].values()) == {"FileNotFoundError"}, got["probe"]
                assert got["fds"][:3] == ["0", "1", "2"], got["fds"]
        # a functional session child, forked the same way
        p = Problem(id="proc-fn", source="test", statement="", style="functional", entry_point="f",
                    time_limit_s=10.0, tests=[TestCase("1", "?")])
        code = "import os\ndef f(x):\n    return [n for n in os.listdir('/proc') if n.isdigit()], str(os.getpid())\n"
        v = ev.evaluate_batch([p], [Submission("proc-fn", "fn", "python", code)], keep_outputs=True)[0]
        seen, me = json.loads(v.tests[0].output)
        assert seen == [me], (seen, me)
