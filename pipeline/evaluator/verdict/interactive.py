"""Interactive problems (`checker.kind == "interactor"`): the submission talks with the
interactor program over two pipes, and the interactor gives the verdict.

Each side runs in its own sandbox box: the submission in the worker's run box, the interactor
in its check box (installed there by `checkers.prepare`). The test's input and answer never lie
on disk: each is a sealed memory file the parent passes to the check box alone (`extra_fds`, as
checkers.run_checker), which the interactor opens as /proc/self/fd/4 and /proc/self/fd/5. So the
submission cannot read them, not even under the unshare sandbox, where every box sees the host's
files; nor the interactor's memory. The parent makes the two pipes (submission stdout ->
interactor stdin, interactor stdout -> submission stdin) and passes each box its two ends with
its `run` request (`stdin_fd` + `stdout_fd`, see inside/PROTOCOL.md); each judge closes its
copies once its program is forked. The parent keeps a box's ends until that box replies (a box
that retires is restarted and sent the same descriptors again), then closes them: when one side
ends, the other reads end-of-file or gets EPIPE / SIGPIPE. Nobody buffers the traffic: a
submission that floods its output fills the pipe and blocks there until the interactor reads
or ends (its write then fails: the interactor's verdict, normally WA), or until its wall limit
(TLE). The interactor's stdout is the pipe too; its stderr and Kattis feedback dir are kept.

Protocols (`checker.protocol`, as checkers.py):
  kattis   `interactor input answer feedback_dir/`; exit 42 accepted, 43 wrong answer; message
           in feedback_dir/judgemessage.txt (or its stderr).
  testlib  `interactor input tout answer`; exit 0 ok, 1 wrong answer, 2 presentation error (WA);
           anything else (3 = fail) is the interactor failing.

Limits: the submission keeps its usual ones (CPU, wall, memory). Its wall is not raised for the
interactor's work: a sane interactor answers in microseconds, and the most common interactive
failure, a missing flush, deadlocks both sides until that wall: every such test would wait
longer. The interactor gets CPU max(checker_time_limit_s, the submission's CPU limit), memory
checker_memory_mb, and a wall past the submission's (wall + its CPU limit + 5 s): a deadlock is
the submission's TLE first, and the interactor has time to write its verdict once the
submission is gone.

Verdict. The side that ended first is the one whose box replied first: the other one can only
notice that end after the parent has seen the reply and closed the pipes, so this order is
causal (what ended first was not the other side's doing). Close to how DOMjudge and
problemtools judge interactive runs:
  - the submission's judge could not start it: SE;
  - the interactor could not start (it does not compile or build, its box failed, its judge
    could not start it): SE "the interactor failed: ...": nothing the submission did;
  - the interactor failed once started (killed by its own limits, crashed, exited with an
    unknown code): WA "the interactor failed on this submission's interaction: ...". Whatever
    the submission sent made it fail (a flood it reads into memory, a 5000-digit number it
    gives to int()): validate keeps only problems whose reference solutions this interactor
    accepted, so an interactor that fails whatever it is sent never gets this far. SE here
    would be a way out for the submission: SE is never counted against the model;
  - the interactor ended first: its verdict (WA, or a failure: WA as above) stands, even if the
    submission then died (EOF, EPIPE or SIGPIPE after the interactor left); its AC leaves the
    submission's own result: TLE (CPU or wall), MLE, RE (crashed or exited non-zero), else AC;
  - the submission ended first: its failure (TLE, MLE, RE) is the verdict; it exited 0: the
    interactor's verdict (AC, WA; an interactor killed by a broken pipe, writing to a submission
    that had left, is WA too; SE only when it could not start).
A submission that closes its stdout but stays alive is not an end: both sides then wait, and its
wall limit makes it TLE.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from microcoder.pipeline.evaluator.sandbox.box import Box, BoxError, BoxKilled, Reply
from microcoder.pipeline.evaluator.sandbox.workspace import MB
from microcoder.pipeline.evaluator.verdict import checkers, runs
from microcoder.pipeline.schema import TestResult

PROTOCOLS = ("kattis", "testlib")
INTERACTOR_WALL_EXTRA_S = 5.0  # beyond the submission's wall and the interactor's CPU limit


@dataclass
class Side:
    """One side of an interactive test: its reply or what failed, and when it ended."""

    reply: Reply | None = None
    error: BoxError | None = None
    ended: float = math.inf


def exchange(box: Box, req: dict[str, Any], timeout: float, fds: tuple[int, ...], side: Side) -> None:
    """Run one side's request; close its pipe ends when the box has replied (or failed), which
    ends the other side's traffic (EOF / EPIPE)."""
    try:
        side.reply = box.request(req, timeout, fds=fds)
    except BoxError as e:
        side.error = e
    finally:
        side.ended = time.monotonic()
        for fd in fds:
            os.close(fd)


def interactor_request(job: runs.Job, box: Box, protocol: str, args: list[str] | None = None) -> dict[str, Any]:
    """The interactor's run request: its stdin and stdout are the pipes, then two extra
    descriptors, the test's input and answer (`play` sends them in that order); `args`: a Kattis
    validator's flags (checkers.validator_args)."""
    checker, cfg, lim, args = job.problem.checker, job.cfg, job.limits, args or []
    command = checkers.program_command(checker, box, job.worker)  # python, binary or a built bundle
    inp, ans = checkers.passed_file(0), checkers.passed_file(1)
    cpu = max(cfg.checker_time_limit_s, lim.cpu_s)
    req = {"op": "run", "kind": command["kind"], "code": command["code"], "stdin_fd": True, "stdout_fd": True,
           "extra_fds": 2,
           "cpu_s": cpu, "wall_s": lim.wall_s + cpu + INTERACTOR_WALL_EXTRA_S,
           "mem_bytes": cfg.checker_memory_mb * MB, "stack_bytes": cfg.checker_memory_mb * MB,
           "fsize_bytes": 16 * MB, "nofile": 64, "out_bytes": 4096,
           "int_max_str_digits": sys.int_info.default_max_str_digits,  # as checkers.run_checker
           "sigpipe": "ignore"}  # problemtools ignores SIGPIPE for the validator: a late write is no crash
    if protocol == "kattis":
        req.update(argv=[*command["argv0"], inp, ans, "{cwd}/feedback/", *args], mkdirs=["feedback"],
                   collect=["feedback/judgemessage.txt", "feedback/teammessage.txt"])
    else:
        req.update(argv=[*command["argv0"], inp, "{cwd}/tout.txt", ans])
    return req


def interactor_verdict(side: Side, protocol: str) -> tuple[str, str]:
    """("AC" | "WA" | "SE", message). SE only when the interactor could not start: nothing the
    submission did. Once started, a failure is WA (see the module docstring); so is a broken pipe
    (SIGPIPE, or Python's BrokenPipeError): only a submission that had ended, and its box
    replied, leaves no reader of the interactor's output."""
    if side.error is not None or side.reply is None:
        return "SE", f"its sandbox failed: {side.error or 'no reply'}"
    h = side.reply.header
    if h.get("compile_error") is not None:  # a Python interactor's syntax error: say so, as for C++
        return "SE", checkers.NOT_COMPILED + checkers.first_error_line(h["compile_error"])
    if not h.get("ok") or h.get("harness_error"):
        return "SE", f"it could not run: {h.get('harness_error')}"
    if h.get("exec_enomem") or not h.get("started"):
        return "SE", f"it could not start: {h.get('exec_enomem') or 'no sign of its start'}"
    stderr = side.reply.blobs[1].decode("utf-8", "replace").strip() if len(side.reply.blobs) > 1 else ""
    failed = "the interactor failed on this submission's interaction"
    if h["why"] != "exit":
        return "WA", f"{failed}: it exceeded its limits ({h['why']})"
    if h.get("group_oom_kills") or h.get("cg_oom_kills"):  # its run group's memory limit, no slack
        return "WA", f"{failed}: it exceeded its limits (memory)"
    code = h["exit"]
    feedback = next((b.decode("utf-8", "replace").strip() for b in side.reply.blobs[2:] if b.strip()), "")
    message = (feedback or stderr)[:300]
    if protocol == "kattis" and code in (checkers.KATTIS_AC, checkers.KATTIS_WA):
        return ("AC" if code == checkers.KATTIS_AC else "WA"), message or "rejected by the interactor"
    if protocol == "testlib" and code in (0, 1, 2):
        what = "wrong answer" if code == 1 else "presentation error"
        return ("AC" if code == 0 else "WA"), f"{what}: {message}" if message else what
    if h["signal"] == signal.SIGPIPE or (code not in (0, None) and "BrokenPipeError" in stderr):
        return "WA", "the submission stopped reading before the interaction ended (broken pipe)"
    how = f"exit code {code}" if code is not None else f"killed by signal {h['signal']}"
    return "WA", f"{failed}: {how}: {stderr[-300:]}"  # the end: a traceback's last line says what failed


def combine(job: runs.Job, sub: Side, inter: Side, protocol: str, native: bool) -> TestResult:
    """The test's verdict from both sides (the rules in the module docstring)."""
    h = sub.reply.header
    stderr = sub.reply.blobs[1].decode("utf-8", "replace") if len(sub.reply.blobs) > 1 else ""
    tr = runs.run_result(h)
    failure = runs.run_failure(job, h, stderr, native)
    verdict, message = interactor_verdict(inter, protocol)
    interactor_first = inter.ended < sub.ended
    if failure is not None and (failure[0] == "SE" or not interactor_first or verdict == "AC"):
        tr.status, tr.diff = failure
    elif verdict == "SE":
        tr.status, tr.diff = "SE", f"the interactor failed: {message}"[:500]
    elif verdict == "WA":
        tr.status, tr.diff = "WA", message[:500]
    else:
        tr.status, tr.strategy, tr.diff = "AC", "interactor", None
    return tr


def play(job: runs.Job, run_box: Box, sreq: dict[str, Any], check_box: Box, ireq: dict[str, Any],
         files: tuple[str, str]) -> tuple[Side, Side]:
    """Run the submission and the interactor at once, joined by two pipes; (submission, interactor).
    `files`: the test's input and answer, which only the interactor gets (sealed memory files)."""
    fds = checkers.private_files(*files)
    try:
        fds += os.pipe()  # submission stdout -> interactor stdin
        fds += os.pipe()  # interactor stdout -> submission stdin
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    inp, ans, to_inter_r, to_inter_w, to_sub_r, to_sub_w = fds
    sub_side, inter = Side(), Side()
    thread = threading.Thread(target=exchange, name="interactor", daemon=True,
                              args=(check_box, ireq, ireq["wall_s"] + runs.REPLY_GRACE_S,
                                    (to_inter_r, to_sub_w, inp, ans), inter))
    try:
        thread.start()
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    try:
        exchange(run_box, sreq, job.limits.wall_s + runs.REPLY_GRACE_S, (to_sub_r, to_inter_w), sub_side)
    finally:
        thread.join()  # its request has a timeout: this ends
    return sub_side, inter


def run_interactive_test(job: runs.Job, base: dict[str, Any], index: int, input_path) -> TestResult | str:
    """One test of an interactive problem; a TestResult, or the compile error text (Python
    syntax errors), like judge.run_stdio_test. `input_path` is not used: the submission never
    gets the input, the interactor reads it (its own sealed copy, see `play`)."""
    checker, test, worker = job.problem.checker, job.problem.tests[index], job.worker
    protocol = checker.protocol or "kattis"
    if protocol not in PROTOCOLS:
        return TestResult("SE", diff=f"the interactor failed: unknown protocol {protocol!r}")
    try:
        checkers.prepare(checker, worker, job.compiler)
    except checkers.CheckerFailure as e:
        return TestResult("SE", diff=f"the interactor failed: {e}"[:500])
    run_box, check_box = worker.box("run"), worker.box("check")
    ireq = interactor_request(job, check_box, protocol, checkers.validator_args(job.problem, test))
    sreq = {k: v for k, v in base.items() if not k.startswith("_")}
    sreq.update(stdin_fd=True, stdout_fd=True)
    sub_side, inter = play(job, run_box, sreq, check_box, ireq, (test.input, test.output))
    if sub_side.error is not None:  # the run box failed (or the batch was cancelled): as run_stdio_test
        raise sub_side.error
    if isinstance(inter.error, BoxKilled):  # killed on purpose: the batch deadline
        raise inter.error
    h = sub_side.reply.header
    if not h.get("ok"):
        raise BoxError(f"judge process error: {h.get('harness_error')}")
    if h.get("compile_error") is not None:
        return h["compile_error"]
    return combine(job, sub_side, inter, protocol, native=sreq["kind"] == "exec")
