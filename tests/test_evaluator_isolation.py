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
