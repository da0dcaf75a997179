"""Pipelined functional sessions: the calls of a submission go to the judge in one request and
the replies stream back. Verdicts must be the same as one call per round trip: each call has its
own time limit, a slow call is TLE (and no later call is judged a pass in first-failure mode), and
the parent's `stop` at the first failure ends the batch, cutting short a call in progress. The
protocol is driven directly (the harness runs unsandboxed here, as `sandbox=none` does); the rest
are real sandboxed runs."""

from __future__ import annotations

import gzip
import json
import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.schema import Problem, TestCase

FAST = EvaluatorConfig(wall_factor=3.0, wall_slack_s=2.0)  # CPU is what these tests judge; wall room for a loaded machine
HARNESS = Path(__file__).resolve().parents[1] / "pipeline" / "evaluator" / "inside" / "harness.py"
SAFETY_S = 60.0  # only so that a broken protocol fails the test instead of hanging it


def functional(pid: str, entry: str, pairs, time_limit_s: float = 1.0) -> Problem:
    return Problem(id=pid, source="test", statement="", style="functional", entry_point=entry,
                   tests=[TestCase(i, o) for i, o in pairs], time_limit_s=time_limit_s)


def sub(pid: str, code: str, sid: str | None = None) -> Submission:
    return Submission(pid, sid or pid, "python", textwrap.dedent(code))


# --- the protocol, driven directly --------------------------------------------------------------------
class Judge:
    """harness.py as a plain subprocess, spoken to as box.py does."""

    def __init__(self, tmp: Path):
        self.scratch = tmp / "scratch"
        self.scratch.mkdir()
        self.tmp = tmp
        self.proc = subprocess.Popen([sys.executable, str(HARNESS)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0, start_new_session=True)
        self.buf = b""
        assert self.request({"op": "init", "scratch": str(self.scratch), "wipe": [str(self.scratch)],
                             "preimport": []})[0]["ok"]

    def send(self, req: dict) -> None:
        self.proc.stdin.write(json.dumps(req).encode() + b"\n")

    def _fill(self, n: int) -> None:
        while len(self.buf) < n:
            ready, _, _ = select.select([self.proc.stdout], [], [], SAFETY_S)
            assert ready, "the judge did not answer"
            data = os.read(self.proc.stdout.fileno(), 1 << 16)
            assert data, "the judge exited"
            self.buf += data

    def reply(self) -> tuple[dict, list[bytes]]:
        while b"\n" not in self.buf:
            self._fill(len(self.buf) + 1)
        line, self.buf = self.buf.split(b"\n", 1)
        header = json.loads(line)
        sizes = header.pop("sizes", [])
        self._fill(sum(sizes))
        blobs = []
        for n in sizes:
            blobs.append(self.buf[:n])
            self.buf = self.buf[n:]
        return header, blobs

    def request(self, req: dict) -> tuple[dict, list[bytes]]:
        self.send(req)
        return self.reply()

    def open(self, code: str, entry: str, inputs: list[str], cpu_s: float = 100.0) -> dict:
        """Open a session and, once it is ready, send its calls (read their replies next)."""
        path = self.tmp / "solution.py"
        path.write_text(textwrap.dedent(code))
        header, _ = self.request({"op": "open", "code": str(path), "entry": entry, "cpu_s": cpu_s,
                                  "wall_s": SAFETY_S})
        self.send({"op": "calls", "inputs": inputs, "cpu_s": cpu_s, "wall_s": SAFETY_S})
        return header

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=SAFETY_S)


@pytest.fixture
def judge(tmp_path):
    j = Judge(tmp_path)
    yield j
    j.close()


FAST_THEN_ENDLESS = """
def f(x):
    if x == 2:
        while True:
            pass
    return x + 1
"""


def test_stop_cuts_a_running_call_short(judge):
    """The parent saw a failure in call 1 and sends `stop` while call 2 runs forever (and its
    CPU limit is far away): the judge ends the batch at once, with call 2 unjudged."""
    assert judge.open(FAST_THEN_ENDLESS, "f", ["1", "2", "3"])["frame"]["event"] == "ready"
    first, blobs = judge.reply()
    assert first["frame"]["event"] == "result" and blobs == [b"2"]
    judge.send({"op": "stop"})
    end, _ = judge.reply()
    assert end == {"ok": True, "end": True, "ran": 1, "stopped": True}
    assert judge.request({"op": "ping"})[0] == {"ok": True}  # in step: nothing else was queued


def test_batch_streams_one_reply_per_call_then_end(judge):
    assert judge.open("def f(x):\n    return [x] * 2\n", "f", ["1", '"a"', "null"])["frame"]["event"] == "ready"
    got = [judge.reply() for _ in range(3)]
    assert [b[0] for _, b in got] == [b"[1, 1]", b'["a", "a"]', b"[null, null]"]
    assert all(h["kernel_cpu_s"] >= 0 for h, _ in got)
    assert judge.reply()[0] == {"ok": True, "end": True, "ran": 3, "stopped": False}
    judge.send({"op": "stop"})  # too late for that batch: consumed without a reply
    assert judge.request({"op": "ping"})[0] == {"ok": True}


def test_replies_held_back_for_a_batch_leave_room_for_a_full_size_result(judge, tmp_path):
    """The judge sends call replies on in batches, their payloads still in the session's result
    buffer: a result as large as one frame may be must still fit behind them (not OLE), and one
    over it is still OLE. Order and count are kept."""
    (tmp_path / "solution.py").write_text("def f(n):\n    return 'x' * n\n")
    cap = 1000 + 64 * 1024  # out_bytes + the frame's allowance (harness_pipes.FRAME_SLACK)
    header, _ = judge.request({"op": "open", "code": str(tmp_path / "solution.py"), "entry": "f", "cpu_s": 100.0,
                               "wall_s": SAFETY_S, "out_bytes": 1000})
    assert header["frame"]["event"] == "ready"
    sizes = [10] * 31 + [cap - 200, 10, cap + 10]
    judge.send({"op": "calls", "inputs": [str(n) for n in sizes], "cpu_s": 100.0, "wall_s": SAFETY_S,
                "defer_age_s": SAFETY_S})  # replies held back until 32 frames: all 31 are when the big one comes
    for n in sizes[:-1]:
        h, blobs = judge.reply()
        assert h["frame"]["ok"] is True and blobs == [b"\"" + b"x" * n + b"\""]
    over, _ = judge.reply()
    assert over["killed"] == "ole"
    assert judge.reply()[0] == {"ok": True, "end": True, "ran": len(sizes), "stopped": False}


def test_each_call_has_its_own_cpu_limit(judge):
    """Call 2 spins past its CPU limit (the wall limit is far away, however loaded the machine):
    killed as `cpu` on its own meter, and the batch ends there (call 3 never runs)."""
    assert judge.open(FAST_THEN_ENDLESS, "f", ["1", "2", "3"], cpu_s=0.3)["frame"]["event"] == "ready"
    assert judge.reply()[1] == [b"2"]
    killed, _ = judge.reply()
    assert killed["killed"] == "cpu" and killed["kernel_cpu_s"] > 0.3
    assert judge.reply()[0] == {"ok": True, "end": True, "ran": 2, "stopped": False}


# Reads the next call's input from the session's command buffer (a window's inputs arrive
# together) and does that call's work in advance: 0.6 s now and 0.5 s then, where the call
# alone takes 1.1 s, over a 1 s limit.
READ_AHEAD = """
    import gc, io, time
    seen = {}
    def spin(seconds):
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
    def f(x):
        if x == 5:
            for o in gc.get_objects():
                if isinstance(o, io.BufferedReader) and not o.closed:
                    try:
                        seen["next"] = seen.get("next") or b"\\n7" in o.peek(1 << 16)
                    except (OSError, ValueError):
                        pass
            spin(0.6)
        if x == 7:
            spin(0.5 if seen.get("next") else 1.1)
        return x
"""
# Two honest calls of 0.6 s each under a 1 s limit: together over it.
TWO_SLOW_CALLS = """
    import time
    def f(x):
        end = time.process_time() + (0.6 if x == 6 else 0)
        while time.process_time() < end:
            pass
        return x
"""


def test_a_window_of_calls_together_stays_under_one_calls_limit(judge):
    """After three quick calls the judge sends the next inputs together. A program that reads
    the next one early and spreads its work over the call before (each under the 1 s limit) is
    cut off when the window as a whole goes over it: that call gets `rewind` (no verdict; the
    parent reruns it alone, where its 1.1 s are TLE). Without the window's limit both pass."""
    assert judge.open(READ_AHEAD, "f", ["0", "0", "0", "5", "7"], cpu_s=1.0)["frame"]["event"] == "ready"
    assert [judge.reply()[1] for _ in range(4)] == [[b"0"], [b"0"], [b"0"], [b"5"]]
    rewound, _ = judge.reply()
    assert rewound.get("rewind") is True and "frame" not in rewound
    assert judge.reply()[0] == {"ok": True, "end": True, "ran": 5, "stopped": False}


def test_frames_that_waited_for_a_busy_judge_carry_no_false_time_limit(judge):
    """The judge is stopped (as a loaded machine would delay it) while the child runs a window of
    two honest 0.6 s calls: when it looks again, the first frame's CPU since the last one counts
    both calls. It must not be reported as that call's time (1.2 s: a false TLE); the window
    is over its limit, so the call is rewound instead, and no call's time is over 1 s."""
    import signal
    import time

    assert judge.open(TWO_SLOW_CALLS, "f", ["0", "0", "0", "6", "6"], cpu_s=1.0)["frame"]["event"] == "ready"
    assert [judge.reply()[1] for _ in range(3)] == [[b"0"], [b"0"], [b"0"]]
    judge.proc.send_signal(signal.SIGSTOP)  # the window of both 6s was sent before reply 3 left
    try:
        time.sleep(1.6)
    finally:
        judge.proc.send_signal(signal.SIGCONT)
    replies = []
    while not (h := judge.reply()[0]).get("end"):
        replies.append(h)
    assert any(h.get("rewind") for h in replies)
    assert all(h["kernel_cpu_s"] <= 1.0 for h in replies if "frame" in h)


def _descendants_cpu_s(pid: int) -> float:
    """User + system CPU seconds of every process below `pid` (from /proc)."""
    total, todo = 0.0, [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while todo:
        parent = todo.pop()
        try:
            for task in os.listdir(f"/proc/{parent}/task"):
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    kids = [int(x) for x in f.read().split()]
                for kid in kids:
                    with open(f"/proc/{kid}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                    total += (int(fields[11]) + int(fields[12])) / tick
                todo += kids
        except OSError:
            continue
    return total


def test_frames_that_waited_together_keep_each_calls_own_time(judge):
    """The judge is stopped while the child runs a window of two 0.3 s calls (together under the
    1 s limit): the CPU since the last frame is both calls' when it looks again. Each call is
    still reported with its own ~0.3 s, not 0.6 s and 0 (validate derives time limits from
    these times)."""
    import signal
    import time

    code = TWO_SLOW_CALLS.replace("0.6 if x == 6", "0.3 if x == 3")
    assert judge.open(code, "f", ["0", "0", "0", "3", "3"], cpu_s=1.0)["frame"]["event"] == "ready"
    assert [judge.reply()[1] for _ in range(3)] == [[b"0"], [b"0"], [b"0"]]
    start = _descendants_cpu_s(judge.proc.pid)
    judge.proc.send_signal(signal.SIGSTOP)
    try:  # until the child has spent both calls' CPU and waits (a fixed sleep was short on a loaded machine)
        deadline = time.monotonic() + SAFETY_S
        last = -1.0
        while time.monotonic() < deadline:
            spent = _descendants_cpu_s(judge.proc.pid) - start
            if spent >= 0.55 and spent == last:  # no CPU for 0.2 s: done, blocked on its next input
                break
            last = spent
            time.sleep(0.2)
    finally:
        judge.proc.send_signal(signal.SIGCONT)
    got = [judge.reply() for _ in range(2)]
    assert [b for _, b in got] == [[b"3"], [b"3"]]
    assert all(0.25 < h["kernel_cpu_s"] < 0.45 for h, _ in got), [h["kernel_cpu_s"] for h, _ in got]
    assert judge.reply()[0]["end"]


def test_a_call_alone_cannot_fake_a_queue_to_report_less_time(judge):
    """A first call (alone in its window) spins 1.3 s past its 1 s limit while the judge is not
    scheduled, then writes its own frame claiming 0 s and a second frame behind it, as if the
    next call's frame were queued. Its kernel time must still be the whole 1.3 s (a TLE), not
    the claim: only calls of one window share a lap."""
    import signal
    import time

    code = """
        import json, os, time
        def f(x):
            open("started", "w").close()
            end = time.process_time() + 1.3
            while time.process_time() < end:
                pass
            frame = json.dumps({"event": "result", "ok": True, "converted": False, "cpu_s": 0.0, "maxrss_kb": 1, "n": 1})
            os.write(3, (frame + "\\n1").encode() * 2)
            os._exit(0)
    """
    header = judge.open(code, "f", ["1", "2"], cpu_s=1.0)
    started = judge.scratch / "run" / "started"
    deadline = time.monotonic() + SAFETY_S
    while not started.exists() and time.monotonic() < deadline:  # the call runs: the judge sent it
        time.sleep(0.005)
    judge.proc.send_signal(signal.SIGSTOP)
    try:
        time.sleep(2.5)
    finally:
        judge.proc.send_signal(signal.SIGCONT)
    assert header["frame"]["event"] == "ready"
    first, _ = judge.reply()
    assert first["kernel_cpu_s"] > 1.0, first


def test_a_call_run_alone_is_never_rewound(judge):
    """`window_max: 1` (the parent's rerun after a rewind): one input at a time, each call on
    its own limit, so two 0.6 s calls under 1 s both pass."""
    path = judge.tmp / "solution.py"
    path.write_text(textwrap.dedent(TWO_SLOW_CALLS))
    assert judge.request({"op": "open", "code": str(path), "entry": "f", "cpu_s": 1.0,
                          "wall_s": SAFETY_S})[0]["frame"]["event"] == "ready"
    judge.send({"op": "calls", "inputs": ["0", "0", "0", "6", "6"], "cpu_s": 1.0, "wall_s": SAFETY_S,
                "window_max": 1})
    got = [judge.reply() for _ in range(5)]
    assert [b for _, b in got] == [[b"0"], [b"0"], [b"0"], [b"6"], [b"6"]]
    assert all(h["frame"]["ok"] for h, _ in got)
    assert judge.reply()[0]["end"]


@pytest.mark.parametrize("header", [
    {"event": "result", "ok": True, "n": 1, "note": "the answer is 1"},  # a key of its own
    {"event": "the answer is 1", "ok": True, "n": 1},  # an event that is not one
    {"event": "result", "ok": False, "n": 1, "error_type": "A" * 65},  # a long "type name"
])
def test_a_frame_header_carries_no_text_of_the_programs_choosing(judge, header):
    """The judge parses frame headers in its own heap, which later submissions are forked with:
    a program must not be able to leave its output there. Only the known keys, events and a
    short exception type name are accepted; anything else is the program corrupting its
    result channel (the call fails, RE)."""
    code = f"""
        import json, os
        def f(x):
            os.write(3, json.dumps({header!r}).encode() + b"\\n" + b"1")
            os._exit(0)
    """
    assert judge.open(code, "f", ["1"])["frame"]["event"] == "ready"
    killed, _ = judge.reply()
    assert killed["killed"] == "protocol"


def test_an_exception_with_a_long_class_name_is_still_an_ordinary_failure(judge):
    code = """
        class ThisExceptionHasAVeryLongNameThatGoesOnAndOnWellPastSixtyFourCharacters(Exception):
            pass
        def f(x):
            raise ThisExceptionHasAVeryLongNameThatGoesOnAndOnWellPastSixtyFourCharacters("no")
    """
    assert judge.open(code, "f", ["1"])["frame"]["event"] == "ready"
    h, blobs = judge.reply()
    assert h["frame"]["ok"] is False and len(h["frame"]["error_type"]) == 64
    assert b"ThisExceptionHasAVeryLongName" in blobs[0]


def test_calls_without_a_session_end_at_once(judge):
    header = judge.open("def f(x):\n    return (\n", "f", ["1"])
    assert header["frame"]["event"] == "compile_error"
    assert judge.reply()[0] == {"ok": True, "end": True, "ran": 0, "stopped": False}


def test_a_session_child_cannot_find_later_inputs(judge):
    """The child is forked before its calls' inputs reach the judge: even a program that scans
    every object it inherited does not find a later test's input."""
    code = """
        import gc
        def secret(v):
            return (isinstance(v, str) and "SECRET-LATER-INPUT" in v
                    or isinstance(v, (bytes, bytearray)) and b"SECRET-LATER-INPUT" in v)
        def f(x):
            for o in gc.get_objects():  # every container; strings and bytes sit in them
                items = [*o.keys(), *o.values()] if isinstance(o, dict) else o if isinstance(o, (list, tuple)) else ()
                if any(secret(v) for v in items):
                    return True
            return False
    """
    assert judge.open(code, "f", ["1", '"SECRET-LATER-INPUT"'])["frame"]["event"] == "ready"
    assert judge.reply()[1] == [b"false"]  # call 1 does not see call 2's input
    assert judge.reply()[1] == [b"true"]  # (the check works: call 2 sees its own argument)
    assert judge.reply()[0]["end"]


def test_results_encode_the_same_with_and_without_the_plain_fast_path(judge):
    """Flat lists of exact JSON scalars skip the Encoder's walk; everything else takes it. The
    text and the `converted` flag must be what the Encoder gives either way."""
    code = """
        class Big(int):
            pass
        VALUES = [[1, "a", None, True, 2.5], 7, "s", None, [], (1, 2), [[1], [2]], [Big(3)], Big(4), {1}]
        def f(i):
            return VALUES[i]
    """
    n = 10
    assert judge.open(code, "f", [str(i) for i in range(n)])["frame"]["event"] == "ready"
    got = [judge.reply() for _ in range(n)]
    assert [b[0] for _, b in got] == [b'[1, "a", null, true, 2.5]', b"7", b'"s"', b"null", b"[]", b"[1, 2]",
                                      b"[[1], [2]]", b"[3]", b"4", b'{"__set__": [1]}']
    assert [h["frame"]["converted"] for h, _ in got] == [False] * 5 + [True, False, False, False, True]
    assert judge.reply()[0]["end"]


def test_a_forged_frame_header_reaches_the_parent_as_valid_json(judge):
    """The judge forwards a frame header as the text it came in, which the program writes. One
    in UTF-16 (json.loads takes it, but its NUL bytes would break the parent's reader: an SE for
    the program's own doing) or with control characters is encoded again instead."""
    code = """
        import json, os
        def f(x):
            header = {"event": "result", "ok": True, "n": 1}
            raw = json.dumps(header).encode("utf-16-le") if x == 1 else b'{"n": 1,\t"event": "result"}'
            os.write(3, raw + b"\\n" + b"7")
            os._exit(0)
    """
    for x in (1, 2):
        assert judge.open(code, "f", [str(x)])["frame"]["event"] == "ready"
        header, blobs = judge.reply()  # json.loads in reply(): the line must be valid JSON
        assert header["frame"]["n"] == 1 and blobs == [b"7"]
        assert judge.reply()[0]["end"]


# --- verdicts, through the sandboxed evaluator --------------------------------------------------------
@pytest.fixture(scope="module")
def ev():
    with Evaluator(workers=2, config=FAST) as e:
        yield e


SQUARE = functional("square", "sq", [(str(i), str(i * i)) for i in range(6)])


def statuses(v) -> list[str]:
    return [t.status for t in v.tests]


def test_first_failure_stops_at_the_failing_test(ev):
    wrong_at_3 = sub("square", "def sq(x):\n    return x * x if x != 2 else -1\n", "wa3")
    crash_at_4 = sub("square", "def sq(x):\n    if x == 3:\n        raise IndexError('no')\n    return x * x\n", "re4")
    right = sub("square", "def sq(x):\n    return x * x\n", "ok")
    v_wa, v_re, v_ok = ev.evaluate_batch([SQUARE], [wrong_at_3, crash_at_4, right])
    assert (v_wa.status, statuses(v_wa), v_wa.passed) == ("WA", ["AC", "AC", "WA"], 2)
    assert (v_re.status, statuses(v_re)) == ("RE", ["AC", "AC", "AC", "RE"])
    assert (v_ok.status, v_ok.passed, len(v_ok.tests)) == ("AC", 6, 6)


def test_mode_all_judges_every_test_after_a_failure(ev):
    wrong_at_3 = sub("square", "def sq(x):\n    return x * x if x != 2 else -1\n", "wa3")
    (v,) = ev.evaluate_batch([SQUARE], [wrong_at_3], mode="all")
    assert statuses(v) == ["AC", "AC", "WA", "AC", "AC", "AC"] and v.passed == 5


ENDLESS_AT_2 = sub("square", """
    def sq(x):
        if x == 1:
            while True:
                pass
        return x * x
""", "tle2")


def test_a_slow_call_is_tle_and_no_later_call_passes(ev):
    (v,) = ev.evaluate_batch([SQUARE], [ENDLESS_AT_2])
    assert v.status == "TLE" and statuses(v) == ["AC", "TLE"] and v.passed == 1


def test_mode_all_reopens_the_session_after_a_killed_call(ev):
    (v,) = ev.evaluate_batch([SQUARE], [ENDLESS_AT_2], mode="all")
    assert statuses(v) == ["AC", "TLE", "AC", "AC", "AC", "AC"]


def test_wrong_answer_before_an_endless_call(ev):
    """Call 1 is wrong, call 2 would loop: the verdict is the WA of test 1 alone (the stop also
    cuts call 2 short, see test_stop_cuts_a_running_call_short)."""
    code = sub("square", "def sq(x):\n    while x == 1:\n        pass\n    return -1\n", "wa-then-loop")
    (v,) = ev.evaluate_batch([SQUARE], [code])
    assert v.status == "WA" and statuses(v) == ["WA"]


def test_time_limit_is_per_call_not_per_batch(ev):
    """Four calls of ~0.25 s CPU each under a 0.6 s limit: all AC (a batch's calls must not
    share one meter)."""
    p = functional("busy", "busy", [(str(i), str(i)) for i in range(4)], time_limit_s=0.6)
    code = sub("busy", """
        import time
        def busy(x):
            end = time.process_time() + 0.25
            while time.process_time() < end:
                pass
            return x
    """)
    (v,) = ev.evaluate_batch([p], [code])
    assert v.status == "AC" and v.passed == 4


def test_a_rewound_window_is_rerun_one_call_at_a_time(ev):
    """Sandboxed, end to end: the read-ahead program is TLE on the call it prepared for (rerun
    alone after the rewind); two honest 0.6 s calls that went over the 1 s limit together are
    rerun and pass, with the verdict one call at a time gives."""
    spread = functional("spread", "f", [("0", "0")] * 3 + [("5", "5"), ("7", "7")])
    honest = functional("honest", "f", [("0", "0")] * 3 + [("6", "6"), ("6", "6")])
    v_spread, v_honest = ev.evaluate_batch([spread, honest], [sub("spread", READ_AHEAD), sub("honest", TWO_SLOW_CALLS)])
    assert (v_spread.status, statuses(v_spread)) == ("TLE", ["AC", "AC", "AC", "AC", "TLE"])
    assert (v_honest.status, v_honest.passed) == ("AC", 5)
    assert all(t.time_s < 1.0 for t in v_honest.tests)


def test_the_box_stays_in_step_after_stops(ev):
    """Many submissions that stop early, on both workers, then ones that run every call: each
    verdict is its own (a reply left over from a stopped batch would shift them)."""
    subs = []
    for k in range(6):
        subs.append(sub("square", f"def sq(x):\n    return x * x if x < {k} else -x - 1\n", f"wa{k}"))
    subs.append(sub("square", "def sq(x):\n    return x * x\n", "ok"))
    verdicts = ev.evaluate_batch([SQUARE], subs * 2)
    for v in verdicts[:-1]:
        if v.submission_id == "ok":
            continue
        k = int(v.submission_id[2:])
        assert statuses(v) == ["AC"] * k + ["WA"], v
    assert all(v.status == "AC" and v.passed == 6 for v in verdicts if v.submission_id == "ok")


# --- real LeetCode problems: first-failure is a prefix of mode all -----------------------------------
def leetcode_problems(root: Path, n: int) -> list[tuple[Problem, str]]:
    from microcoder.pipeline.sources.pyliterals import (
        NotLiteral,
        encode_args,
        find_signature,
        parse_call_text,
        parse_literal,
        to_json,
    )

    out = []
    for line in gzip.open(root / "leetcodedataset" / "LeetCodeDataset-v0.2.0-test.jsonl.gz", "rt"):
        rec = json.loads(line)
        code = rec["prompt"] + "\n" + rec["completion"]
        sig = find_signature(code, rec["entry_point"].split(".")[-1], "Solution")
        if sig is None:
            continue
        tests = []
        for item in rec["input_output"]:
            try:
                tests.append(TestCase(encode_args(parse_call_text(item["input"], sig.params)),
                                      to_json(parse_literal(item["output"]))))
            except NotLiteral:
                continue
        if len(tests) >= 2:
            out.append((Problem(id=rec["task_id"], source="leetcodedataset", statement="", style="functional",
                                entry_point=rec["entry_point"], tests=tests, time_limit_s=3.0), code))
        if len(out) == n:
            return out
    return out


def test_real_leetcode_first_failure_matches_mode_all(ev, bench_data):
    """References (all AC) and a wrong variant of each (its result off by one or reversed):
    the first-failure verdict is mode all's first failing test, its tests a prefix of all's."""
    pairs = leetcode_problems(bench_data, 25)
    problems, subs = [p for p, _ in pairs], []
    for p, code in pairs:
        method = p.entry_point.split(".")[-1]
        subs.append(Submission(p.id, f"{p.id}:ref", "python", code))
        subs.append(Submission(p.id, f"{p.id}:wrong", "python", code + textwrap.dedent(f"""
            _Base = Solution
            class Solution(_Base):
                def {method}(self, *a, **k):
                    r = _Base.{method}(self, *a, **k)
                    return r + 1 if isinstance(r, int) else (r[::-1] + r[:1] if isinstance(r, (list, str)) else None)
        """)))
    first = ev.evaluate_batch(problems, subs)
    every = ev.evaluate_batch(problems, subs, mode="all")
    assert [v.status for v in first if v.submission_id.endswith(":ref")] == ["AC"] * len(pairs)
    for f, a in zip(first, every, strict=True):
        assert statuses(f) == statuses(a)[: len(f.tests)]
        failing = next((s for s in statuses(a) if s != "AC"), None)
        assert f.status == (failing or "AC")
        assert f.passed == sum(s == "AC" for s in statuses(f))


# --- lazy start (the CLI reads its inputs while the judges start) --------------------------------------
def test_lazy_start_judges_as_a_waited_pool_does():
    with Evaluator(workers=2, config=FAST, wait=False) as lazy:
        (v,) = lazy.evaluate_batch([SQUARE], [sub("square", "def sq(x):\n    return x * x\n")])
        assert (v.status, v.passed) == ("AC", 6)
        assert v.meta["sandbox"] == lazy.meta["sandbox"] != ""


def test_lazy_start_closed_unused_stops_its_judges():
    lazy = Evaluator(workers=2, config=FAST, wait=False)
    first, others = lazy._pending_start[1]
    procs = [w.boxes["run"].proc for w in (first, *others) if "run" in w.boxes]
    assert procs and all(p is not None for p in procs)
    lazy.close()
    assert all(p.poll() is not None for p in procs)
    assert not lazy.root.exists()


def test_a_batch_deadline_in_the_middle_of_a_stream_leaves_the_pool_usable():
    """The deadline cancels a submission while its calls stream in: its box is killed (replies
    may still be on the way) and the next submission on that worker gets a fresh, in-step judge."""
    slow = functional("slow", "slow", [(str(i), str(i)) for i in range(200)], time_limit_s=2.0)
    code = sub("slow", """
        import time
        def slow(x):
            end = time.process_time() + 0.02
            while time.process_time() < end:
                pass
            return x
    """)
    with Evaluator(workers=1, config=FAST) as ev:
        (late,) = ev.evaluate_batch([slow], [code], deadline_s=0.5)
        assert (late.status, late.reason) == ("TLE", "batch deadline")
        right = sub("square", "def sq(x):\n    return x * x\n")
        (v,) = ev.evaluate_batch([SQUARE], [right])
        assert (v.status, v.passed) == ("AC", 6)


def test_a_crash_mid_batch_in_mode_all(ev):
    """sys.exit in call 2 is that test's RE; the session is gone, so call 3 finds a dead child (RE,
    as before pipelining) and the rest run in a reopened session."""
    code = sub("square", "import sys\ndef sq(x):\n    if x == 1:\n        sys.exit(3)\n    return x * x\n", "exit2")
    (v,) = ev.evaluate_batch([SQUARE], [code], mode="all")
    assert statuses(v) == ["AC", "RE", "RE", "AC", "AC", "AC"]
    assert v.tests[2].diff == "exit code 0"


def test_inputs_go_in_chunks_with_the_same_verdicts(ev, monkeypatch):
    """Big inputs are sent a chunk at a time (here: one test per chunk); verdicts, the stop at
    the first failure and mode all are the same."""
    from microcoder.pipeline.evaluator.verdict import judge

    monkeypatch.setattr(judge, "CALLS_CHUNK_BYTES", 1)
    wrong_at_3 = sub("square", "def sq(x):\n    return x * x if x != 2 else -1\n", "wa3")
    right = sub("square", "def sq(x):\n    return x * x\n", "ok")
    v_wa, v_ok = ev.evaluate_batch([SQUARE], [wrong_at_3, right])
    assert statuses(v_wa) == ["AC", "AC", "WA"] and (v_ok.status, v_ok.passed) == ("AC", 6)
    (v_all,) = ev.evaluate_batch([SQUARE], [ENDLESS_AT_2], mode="all")
    assert statuses(v_all) == ["AC", "TLE", "AC", "AC", "AC", "AC"]


def test_a_frame_written_before_the_program_ended_is_read_before_its_end():
    """The fork server may report a program's end before the judge has read the pipes: what the
    program wrote first (a session's compile-error frame) must still decide, or a syntax error
    reads as a crash while loading (RE instead of CE; seen in 1 of 120 such submissions)."""
    sys.path.insert(0, str(HARNESS.parent))
    import harness_pipes
    import harness_procs

    r, w = os.pipe()
    os.write(w, b'{"event": "compile_error", "n": 2}\nXY')
    os.close(w)
    sink = harness_pipes.Sink(r, 1 << 16, "head")
    quiet_r, quiet_w = os.pipe()  # the server's socket: nothing more to read

    class EndedAlready:
        dead, fd, exits = False, quiet_r, {}

        def poll(self, pid):
            return 0, harness_procs.Rusage(0.0, 0.0, 0)

    frames = []

    def until(woke):
        got = harness_pipes.take_frame(sink, 1 << 20)
        if got is not None:
            frames.append(got[0])
        return bool(frames)

    try:
        why, _, _ = harness_procs.watch(12345, EndedAlready(), [sink], time.monotonic() + 5, None, None, until=until)
    finally:
        sink.close()
        os.close(quiet_r)
        os.close(quiet_w)
    assert why == "until" and frames[0]["event"] == "compile_error"
