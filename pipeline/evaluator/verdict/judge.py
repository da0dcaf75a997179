"""Judge one submission against one problem on one worker: the verdict logic.

Time: CPU time is judged against `time_limit_s x timeout_scale` (TestResult.time_s is that CPU
time); the wall-clock limit (x wall_factor + wall_slack_s) only catches sleeping / blocked
programs. Memory: address-space limit = the problem's memory limit (+ the warm interpreter's own
mappings for Python, + memory_slack_mb for native code); the run group's limit = the problem's
limit on top of what the group held before, for the run as a whole (every process, files in /tmp
and /dev/shm); an out-of-memory kill in the group, MemoryError / bad_alloc / a peak RSS at the
limit read as MLE. A program that finishes with the run's peak over the problem's limit is MLE
too, as contest judges report it (`peak_over`: the group's peak less what it held before the
program, where the judge read it; the process's own peak RSS without a run group).

Checker programs (`checkers.py`): one that fails on the contestant's output but accepts the
expected answer makes that output WA (OLE over the output limit); SE only when it fails on, or
rejects, the expected answer too (`judged`). Interactive problems (`checker.kind ==
"interactor"`): each test runs the submission against the interactor program, each in its own
box, and the interactor gives the verdict (`interactive.py`).
"""

from __future__ import annotations

import os
import time
from contextlib import nullcontext
from typing import Any

from microcoder.pipeline.evaluator.config import EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.sandbox.box import BoxError, BoxKilled
from microcoder.pipeline.evaluator.sandbox.workspace import MB, private_copy, write_file
from microcoder.pipeline.evaluator.verdict import checkers, interactive
from microcoder.pipeline.evaluator.verdict.compare import Comparison, compare_functional, compare_stdio
from microcoder.pipeline.evaluator.verdict.compile import install
from microcoder.pipeline.evaluator.verdict.runs import (
    REPLY_GRACE_S,
    Cancelled,
    Job,
    Limits,
    checkpoint,
    memory_exceeded,
    memory_mb,
    num,
    peak_over,
    run_failure,
    run_limits,
    run_result,
    signal_name,
    tail,
    tle_diff,
)
from microcoder.pipeline.schema import PROGRAM_KINDS, STYLES, Problem, TestResult, Verdict

LANGUAGES = ("python", "cpp")
# first-failure: stop at a submission's first failed test; all: judge every test; run: run every test
# and keep what it printed, comparing nothing (status AC = ran to completion; checker and expected
# outputs unused): how programs are run for their outputs (`microcoder.pipeline.evaluator.programs`)
JUDGING_MODES = ("first-failure", "all")  # what a verdict may be asked in: `run` judges nothing
MODES = (*JUDGING_MODES, "run")
CALLS_CHUNK_BYTES = 1 << 20  # test inputs per pipelined `calls` request (at least one test)


def bad_input_reason(problem: Problem | None, sub: Submission) -> tuple[str, str] | None:
    """(status, reason) when the pair cannot be judged at all."""
    if problem is None:
        return "SE", f"unknown problem id {sub.problem_id!r}"
    if sub.language not in LANGUAGES:
        return "CE", f"unsupported language {sub.language!r} (supported: {', '.join(LANGUAGES)})"
    if not sub.code.strip():
        return "CE", "empty code"
    ck = problem.checker
    interactor = ck is not None and ck.kind == "interactor"
    marked = problem.meta.get("interactive") or "interactive" in (problem.tags or []) or problem.style == "interactive"
    if marked and not interactor:
        return "SE", "interactive problem without an interactor"
    if problem.style not in STYLES:
        return "SE", f"unsupported problem style {problem.style!r}"
    if not problem.tests:
        return "SE", "the problem has no tests"
    if problem.style == "functional":
        if not (problem.entry_point or "").strip():
            return "SE", "functional problem without an entry_point"
        if sub.language != "python":
            return "SE", "functional problems are judged for Python submissions only"
    if ck is not None and ck.kind in PROGRAM_KINDS and not (ck.program or "").strip():
        return "SE", f"checker kind {ck.kind!r} without a program"
    if interactor and problem.style != "stdio":
        return "SE", "an interactor judges stdio programs only"
    return None


def output_limit(problem: Problem, cfg: EvaluatorConfig) -> int:
    """Bytes of output a run may write (OLE beyond): the problem's own `meta["output_limit_mb"]`
    when it states one, else `output_limit_mb`, or `checker_output_mb` when a checker program
    reads the output (what a checker is fed is bounded: a flood of tokens must be the program's
    OLE, not a checker that dies of memory, SE); never under twice the longest expected output."""
    longest = max(len(t.output) for t in problem.tests)
    stated = problem.meta.get("output_limit_mb") if isinstance(problem.meta, dict) else None
    if isinstance(stated, (int, float)) and not isinstance(stated, bool) and stated > 0:
        limit = float(stated)
    elif problem.checker is not None and problem.checker.kind in PROGRAM_KINDS:
        limit = min(cfg.checker_output_mb, cfg.output_limit_mb)
    else:
        limit = cfg.output_limit_mb
    return max(int(limit * MB), 2 * longest + 4096)


def limits_for(problem: Problem, cfg: EvaluatorConfig, timeout_scale: float) -> Limits:
    cpu = problem.time_limit_s * timeout_scale
    return Limits(cpu_s=cpu, wall_s=cpu * cfg.wall_factor + cfg.wall_slack_s,
                  mem_bytes=problem.memory_limit_mb * MB, out_bytes=output_limit(problem, cfg))


# --- comparison ------------------------------------------------------------------------------------
def compare(job: Job, index: int, actual: str, *, converted: bool = False) -> Comparison:
    problem, test = job.problem, job.problem.tests[index]
    expected, checker = test.output, problem.checker
    if checker is not None and checker.kind == "interactor":  # it judges during the run, never an output
        raise checkers.CheckerFailure("an interactor cannot judge an output after the run")
    if checker is not None and checker.kind == "program":
        checkers.prepare(checker, job.worker, job.compiler)
        return checkers.run_checker(checker, job.worker, job.cfg, test.input, expected, actual,
                                    checkers.validator_args(problem, test))
    if problem.style == "functional":
        return compare_functional(expected, actual, checker, converted=converted)
    return compare_stdio(expected, actual, checker)


def judged(job: Job, index: int, actual: str, tr: TestResult, converted: bool = False) -> TestResult:
    """Fill AC/WA (or SE when the checker / test data fails) into a test that ran cleanly; in mode
    `run`, AC with its output (nothing is compared)."""
    if job.keep_outputs or job.mode == "run":
        tr.output = actual[: job.cfg.keep_output_bytes]
    if job.mode == "run":
        tr.status = "AC"
        return tr
    try:
        cmp = compare(job, index, actual, converted=converted)
    except checkers.CheckerCrash as e:
        tr.status, tr.diff = _checker_crashed(job, index, actual, e)
        return tr
    except checkers.CheckerFailure as e:
        tr.status, tr.diff = "SE", str(e)[:500]
        return tr
    except ValueError as e:  # the test's expected output is not valid for its style
        tr.status, tr.diff = "SE", f"bad test data: {e}"[:500]
        return tr
    tr.status, tr.strategy, tr.diff = ("AC", cmp.strategy, None) if cmp.ok else ("WA", None, cmp.message)
    return tr


def _checker_crashed(job: Job, index: int, actual: str, failure: checkers.CheckerCrash) -> tuple[str, str]:
    """(status, diff) of an output the checker program crashed on (or ran out of its limits,
    or exited with an unknown code): when it accepts the expected answer, the output broke it:
    WA, or OLE over the output limit (never SE, which is not counted against the model: a
    wrong answer could be made to crash the checker on purpose). Otherwise the checker or the
    test data is broken: SE."""
    test = job.problem.tests[index]
    why = checkers.accepts_expected(job.problem.checker, job.worker, job.compiler, job.cfg, test.input, test.output,
                                    checkers.validator_args(job.problem, test))
    if why is not None:
        return "SE", f"{failure}; {why}"[:500]
    status = "OLE" if len(actual.encode("utf-8", "surrogatepass")) > job.limits.out_bytes else "WA"
    return status, f"the checker failed on this output ({str(failure)[:360]}); it accepts the expected answer"


# --- the job dir ------------------------------------------------------------------------------------------
JOB_FILES = ("prog", "solution.py")


def install_source(job: Job) -> str:
    """The Python source as a file in the worker's job dir; its path inside the sandbox. (Not
    inline in the request: the judge process would hold it in memory, which the next
    submission's forked process inherits.)"""
    path = job.worker.job / "solution.py"
    write_file(path, job.sub.code.encode("utf-8", "surrogatepass"))
    return job.worker.box("run").inside(path)


def clear_job_dir(job: Job) -> None:
    """The next submission on this worker must not find (and run) this one's code or binary."""
    for name in JOB_FILES:
        (job.worker.job / name).unlink(missing_ok=True)


# --- stdio ---------------------------------------------------------------------------------------------
def prepare_stdio(job: Job) -> tuple[dict[str, Any] | None, Verdict | None]:
    """The run request shared by every test (the Python source or the C++ binary, compiled or taken
    from the cache, in the worker's job dir), or an early CE / SE verdict."""
    worker, sub = job.worker, job.sub
    box = worker.box("run")
    if sub.language == "cpp":
        result = job.compiler.compile(sub.code, worker)
        meta = {"compile_s": round(result.seconds, 3), "compile_cached": result.cached}
        if result.status != "ok":
            return None, Verdict(sub.problem_id, sub.submission_id, result.status, total=len(job.problem.tests),
                                 reason=result.message, meta=meta)
        install(result.binary, worker.job / "prog")
        req = {"op": "run", "kind": "exec", "argv": [box.inside(worker.job / "prog")], **run_limits(job, True)}
        return {**req, "_meta": meta}, None
    return {"op": "run", "kind": "python", "code": install_source(job), **run_limits(job, False)}, None


def run_stdio_test(job: Job, base: dict[str, Any], index: int, input_path) -> TestResult | str:
    """One stdio test; returns a TestResult, or the compile error text (Python syntax errors)."""
    box = job.worker.box("run")
    req = {k: v for k, v in base.items() if not k.startswith("_")}
    req["stdin_fd"] = True
    stdin = private_copy(input_path)  # the run's own copy: nothing of the problem's other tests
    try:
        reply = box.request(req, job.limits.wall_s + REPLY_GRACE_S, fds=(stdin,))
    finally:
        os.close(stdin)
    h = reply.header
    if not h.get("ok"):
        raise BoxError(f"judge process error: {h.get('harness_error')}")
    if h.get("compile_error") is not None:
        return h["compile_error"]
    stdout = reply.blobs[0].decode("utf-8", "replace")
    stderr = reply.blobs[1].decode("utf-8", "replace")
    tr = run_result(h)
    failure = run_failure(job, h, stderr, native=req["kind"] == "exec")
    if failure is None:
        return judged(job, index, stdout, tr)
    tr.status, tr.diff = failure
    if job.keep_outputs:
        tr.output = stdout[: job.cfg.keep_output_bytes]
    return tr


def judge_stdio(job: Job, folder) -> tuple[list[TestResult], Verdict | None, dict[str, Any]]:
    try:
        base, early = prepare_stdio(job)
        if early is not None:
            return [], early, {}
        results: list[TestResult] = []
        ck = job.problem.checker
        run_test = interactive.run_interactive_test if ck is not None and ck.kind == "interactor" else run_stdio_test
        for i in range(len(job.problem.tests)):
            checkpoint(job)
            tr = run_test(job, base, i, folder / f"{i}.in")
            if isinstance(tr, str):
                sub = job.sub
                return [], Verdict(sub.problem_id, sub.submission_id, "CE", total=len(job.problem.tests),
                                   reason=tr.strip()[:2000]), {}
            results.append(tr)
            if tr.status != "AC" and job.mode == "first-failure":
                break
        return results, None, base.get("_meta", {})
    finally:
        clear_job_dir(job)


# --- functional ------------------------------------------------------------------------------------------
class Session:
    """The functional submission loaded in the run box; reopened after a crash or a timeout.

    Its calls are pipelined: once the session is loaded, one request carries the inputs of every
    test still to run and the judge streams one reply per call; each is judged here while the
    next call runs. (Not with the `open` request: the session child is forked from the judge and
    must not find later tests' inputs in its memory.) The judge meters and limits each call
    alone, and gives the child its inputs in windows whose calls together stay under one call's
    limit; a window that would not is answered `rewind` and the rest runs in a fresh session, one
    call at a time (`harness.Harness.run_calls`). At the first failure (mode first-failure) this
    side sends `stop`, which ends the batch and cuts short a call in progress, so no later test
    is judged."""

    def __init__(self, job: Job):
        self.job, self.box = job, job.worker.box("run")
        code = job.sub.code
        leetcode = "class Solution" in code or (job.problem.entry_point or "").strip().startswith("Solution")
        self.open_req = {"op": "open", "code": install_source(job),
                         "entry": job.problem.entry_point, "prelude": "leetcode" if leetcode else None,
                         **run_limits(job, False),
                         "rlimit_cpu_s": job.limits.cpu_s * (len(job.problem.tests) + 1) + 1}
        self.is_open = False
        self.oom_mark = 0  # the run group's out-of-memory kills before the session opened
        self.judge_ooms = 0.0  # the judge's count of them since the session opened, as of the last reply
        self.base_rss_kb: Any = None  # the session child's RSS before the program (the judge's reply)
        self.retire = False  # its peak went over the limit: later calls need a fresh child

    def open(self) -> TestResult | str | None:
        """None when loaded; a failed TestResult for the test at hand; or compile-error text."""
        lim = self.job.limits
        self.oom_mark, self.judge_ooms = self.box.oom_kills(), 0.0
        reply = self.box.request(self.open_req, lim.wall_s + REPLY_GRACE_S)
        h, payload = reply.header, reply.blobs[0].decode("utf-8", "replace") if reply.blobs else ""
        if not h.get("ok"):
            raise BoxError(f"judge process error: {h.get('harness_error')}")
        self.base_rss_kb, self.retire = h.get("base_rss_kb"), False
        frame = h.get("frame") if isinstance(h.get("frame"), dict) else None
        if frame is not None and frame.get("event") == "ready":
            self.is_open = True
            return None
        if frame is not None and frame.get("event") == "compile_error":
            return payload
        tr = self._failure(h, frame, payload, loading=True)
        return tr

    def stream(self, indices: list[int], keep_going) -> None:
        """Run the calls for tests `indices` in the open session and judge each reply as it
        arrives: `keep_going(index, TestResult)` returns False to stop (the rest is not run, or
        not judged). One request per CALLS_CHUNK_BYTES of inputs (big inputs must not all sit in
        the judge's memory at once). Returns when done; the session may have died or been
        stopped (`is_open`; a call whose peak memory was over the limit: `retire`)."""
        tests, start, window_max = self.job.problem.tests, 0, None
        while start < len(indices) and self.is_open:
            end, size = start + 1, len(tests[indices[start]].input)
            while end < len(indices) and size + len(tests[indices[end]].input) <= CALLS_CHUNK_BYTES:
                size += len(tests[indices[end]].input)
                end += 1
            got = self._stream_chunk(indices[start:end], keep_going, window_max)
            if got is False:
                return
            if got is not True:  # rewound at indices[start + got]: from there in a fresh session, one call at a time
                start, window_max = start + got, 1
                failed = self.open()
                if failed is not None:  # it loaded before: report what happened now as the test's result
                    keep_going(indices[start], failed if isinstance(failed, TestResult)
                               else TestResult("CE", diff=failed[:500]))
                    return
                continue
            start = end

    def _stream_chunk(self, indices: list[int], keep_going, window_max: int | None = None) -> bool | int:
        """One `calls` request; False when `keep_going` said stop, or a call's peak memory was
        over the limit (`retire`: the child's peak stays, so the rest needs a fresh session); the
        position in `indices` of the call the judge answered `rewind` (the session is gone;
        nothing from there was judged)."""
        job, lim = self.job, self.job.limits
        timeout = lim.wall_s + REPLY_GRACE_S
        req = {"op": "calls", "inputs": [job.problem.tests[i].input for i in indices],
               "cpu_s": lim.cpu_s, "wall_s": lim.wall_s}
        if window_max is not None:
            req["window_max"] = window_max
        self.box.send(req)
        ended, stopping, k, rewind = False, False, 0, None
        try:
            while True:
                reply = self.box._receive(timeout)  # the batch's next reply (request sent above)
                h = reply.header
                if h.get("end"):
                    ended = True
                    return rewind if rewind is not None and not stopping else not stopping
                if stopping or rewind is not None:
                    continue  # ran before the judge saw `stop`: not judged
                if k >= len(indices):
                    raise BoxError("judge process error: more replies than calls")
                if h.get("rewind"):
                    rewind, self.is_open = k, False
                    continue
                tr = self.result(indices[k], h, reply.blobs[0] if reply.blobs else b"")
                k += 1
                if not keep_going(indices[k - 1], tr) or self.retire:
                    stopping = True
                    self.box.send({"op": "stop"})
        finally:
            if not ended:  # an error or a cancellation in the middle: replies may still be on the way
                self.box.kill(on_purpose=False)
                self.is_open = False

    def result(self, index: int, h: dict[str, Any], payload: bytes) -> TestResult:
        """The TestResult of one call's reply."""
        job, lim = self.job, self.job.limits
        if not h.get("ok"):
            raise BoxError(f"judge process error: {h.get('harness_error')}")
        frame = h.get("frame") if isinstance(h.get("frame"), dict) else None
        if frame is None or frame.get("event") != "result":
            return self._failure(h, frame, payload.decode("utf-8", "replace"), loading=False)
        cpu = max(num(frame.get("cpu_s")), num(h.get("kernel_cpu_s")))
        tr = TestResult("RE", time_s=round(cpu, 4), memory_mb=memory_mb({**h, "maxrss_kb": frame.get("maxrss_kb")}))
        text = payload.decode("utf-8", "replace")
        if cpu > lim.cpu_s:
            tr.status, tr.diff = "TLE", tle_diff(cpu, lim.cpu_s, None)
        elif self._oom(h):  # processes the call started, together over the limit (cgroups.py)
            tr.status, tr.diff = "MLE", f"the call's processes together exceeded {lim.mem_bytes >> 20} MB"
        elif peak := peak_over(frame.get("maxrss_kb"), self._base(h), lim.mem_bytes, native=False,
                               group_peak_kb=h.get("group_peak_kb")):
            tr.status, tr.diff, self.retire = "MLE", peak, True
        elif frame.get("ok") is True:
            return judged(job, index, text, tr, converted=bool(frame.get("converted")))
        elif frame.get("error_type") == "Unserialisable":  # a value no answer can equal; no output to run for
            tr.status, tr.diff = ("RE" if job.mode == "run" else "WA"), text[:300]
        elif frame.get("error_type") == "MemoryError":
            tr.status, tr.diff = "MLE", tail(text)
        else:
            tr.diff = tail(text) or str(frame.get("error_type"))
        if job.keep_outputs:
            tr.output = text[: job.cfg.keep_output_bytes]
        return tr

    def _base(self, h: dict[str, Any]) -> Any:
        """The session child's RSS before the program, from the judge (never from a frame,
        which the program can write)."""
        return h.get("base_rss_kb") or self.base_rss_kb

    def _oom(self, h: dict[str, Any]) -> bool:
        """Whether the run group saw an out-of-memory kill since the last call; the mark moves
        on, so one kill fails one call. The judge's count, read as the call ended, where it
        gives one (the parent reads replies later, maybe after the next call's kill)."""
        if "group_oom_kills" in h:
            now_judged = num(h["group_oom_kills"])
            seen, self.judge_ooms = now_judged > self.judge_ooms, now_judged
            return seen
        now = self.box.oom_kills()
        seen, self.oom_mark = now > self.oom_mark, now
        return seen

    def _failure(self, h: dict[str, Any], frame: dict[str, Any] | None, text: str, loading: bool) -> TestResult:
        """The session child died, was killed, or misbehaved: it is gone either way."""
        self.is_open = False
        lim = self.job.limits
        cpu = num(h.get("kernel_cpu_s"))
        tr = TestResult("RE", time_s=round(cpu, 4), memory_mb=memory_mb(h))
        where = " while loading the code" if loading else ""
        killed = h.get("killed")
        if killed in ("cpu", "wall") or cpu > lim.cpu_s:
            tr.status, tr.diff = "TLE", tle_diff(cpu, lim.cpu_s, killed) + where
        elif killed == "ole":
            tr.status, tr.diff = "OLE", f"return value exceeded {lim.out_bytes} bytes"
        elif killed == "protocol":
            tr.diff = "the program corrupted the judge's result channel"
        elif h.get("died"):
            sig = h.get("signal")
            if (self._oom(h) or memory_exceeded(text, num(h.get("maxrss_kb")), lim.mem_bytes)
                    or peak_over(h.get("maxrss_kb"), self._base(h), lim.mem_bytes, native=False,
                                 group_peak_kb=h.get("group_peak_kb"))):
                tr.status = "MLE"
            what = f"killed by {signal_name(sig)}" if sig is not None else f"exit code {h.get('exit')}"
            tr.diff = (f"{what}{where}: {tail(text)}" if text.strip() else what + where)[:500]
        elif frame is not None and frame.get("event") in ("load_error", "entry_error"):
            tr.status = "MLE" if "MemoryError" in text else "RE"
            tr.diff = (f"error{where}: {tail(text)}" if frame["event"] == "load_error" else text)[:500]
        else:
            tr.diff = f"unexpected message from the program's process{where}"
        return tr


def judge_functional(job: Job, folder) -> tuple[list[TestResult], Verdict | None, dict[str, Any]]:
    session = Session(job)
    results: list[TestResult] = []
    n_tests = len(job.problem.tests)
    done = False

    def keep_going(index: int, tr: TestResult) -> bool:
        nonlocal done
        checkpoint(job)
        results.append(tr)
        done = tr.status != "AC" and job.mode == "first-failure"
        return not done

    try:
        first = session.open()
        if isinstance(first, str):
            sub = job.sub
            return [], Verdict(sub.problem_id, sub.submission_id, "CE", total=n_tests,
                               reason=first.strip()[:2000]), {}
        if first is not None:  # the code cannot even load: every test fails the same way
            n = 1 if job.mode == "first-failure" else n_tests
            return [TestResult(first.status, first.time_s, first.memory_mb, diff=first.diff) for _ in range(n)], None, {}
        session.stream(list(range(n_tests)), keep_going)  # every call pipelined, see Session
        # mode all: the session died on a test (crash, time or memory limit) or went over the
        # memory limit (`retire`); reopen for the rest
        while not done and len(results) < n_tests:
            checkpoint(job)
            rest = list(range(len(results), n_tests))
            failed = session.open()
            if failed is None:
                session.stream(rest, keep_going)
            else:
                keep_going(rest[0], failed if isinstance(failed, TestResult) else TestResult("CE", diff=failed[:500]))
    finally:
        clear_job_dir(job)
        if session.is_open and session.box.alive:
            try:  # stop the session child now (no reply: the next request finds the box clean)
                session.box.send({"op": "close", "reply": False})
            except BoxError:
                pass
    return results, None, {}


# --- entry point -------------------------------------------------------------------------------------------
def judge(job: Job, timeout_scale: float, base_meta: dict[str, Any]) -> Verdict:
    """Judge job.sub against job.problem; raises Cancelled (deadline) and BoxError (harness)."""
    problem, sub = job.problem, job.sub
    t0 = time.monotonic()
    meta = dict(base_meta)
    bad = bad_input_reason(problem, sub)
    if bad is not None:
        return Verdict(sub.problem_id, sub.submission_id, bad[0], total=len(problem.tests) if problem else 0,
                       reason=bad[1], meta=meta)
    job.limits = limits_for(problem, job.cfg, timeout_scale)
    ck = problem.checker
    meta["comparison"] = f"checker:{ck.kind}" if ck is not None else "cascade"
    checkpoint(job)
    # stdin files for stdio; functional arguments travel inline (a checker program gets the
    # test's input as a file of its own, written by checkers.run_checker)
    with job.worker.inputs.use(problem) if problem.style == "stdio" else nullcontext() as folder:
        run = judge_functional if problem.style == "functional" else judge_stdio
        results, early, extra = run(job, folder)
    meta.update(extra)
    run_box = job.worker.boxes.get("run")
    meta["accounting"] = run_box.accounting if run_box is not None else "rlimit"  # cgroup-v1 | cgroup-v2 | rlimit
    if early is not None:
        early.meta = {**meta, **early.meta, "judge_s": round(time.monotonic() - t0, 4)}
        return early
    total = len(problem.tests)
    passed = sum(t.status == "AC" for t in results)
    failed = next((t for t in results if t.status != "AC"), None)
    status = "AC" if failed is None and len(results) == total else (failed.status if failed else "SE")
    reason = None
    if failed is not None:
        reason = f"test {results.index(failed) + 1}: {failed.status}" + (f" ({failed.diff})" if failed.diff else "")
    meta["judge_s"] = round(time.monotonic() - t0, 4)
    return Verdict(sub.problem_id, sub.submission_id, status, passed=passed, total=total,
                   time_s=round(sum(t.time_s for t in results), 4), tests=results, reason=reason, meta=meta)


__all__ = ["Cancelled", "Job", "JUDGING_MODES", "MODES", "judge", "BoxError", "BoxKilled"]
