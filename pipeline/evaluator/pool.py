"""The Evaluator: a persistent pool of sandboxed judges, streaming and batch APIs.

Threads drive the judge processes (all the work happens in subprocesses); each thread borrows a
Worker (its boxes and directories) for one submission at a time. Boxes outlive submissions, so
sandbox and interpreter start-up are paid once per worker, not per submission or test.

Interrupts: every evaluator of the process is registered here, so that a stage stopped by SIGINT
or SIGTERM (`microcoder.pipeline.stage.run_stage`) kills every judge at once (`interrupt_all`; a sandbox's
PID 1 takes every program it runs along), and the calls in progress raise `Interrupted` instead
of returning verdicts that were never judged. `close` kills what is still running rather than
waiting for it.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import queue
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import weakref
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from microcoder.pipeline.evaluator.config import EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.sandbox import launch as sb
from microcoder.pipeline.evaluator.sandbox.box import Box, BoxError, BoxKilled, _children
from microcoder.pipeline.evaluator.sandbox.workspace import InputStore, Worker
from microcoder.pipeline.evaluator.verdict.compile import Compiler
from microcoder.pipeline.evaluator.verdict.judge import MODES, Cancelled, Job, judge
from microcoder.pipeline.schema import Problem, Verdict

log = logging.getLogger(__name__)
_warned: set[str] = set()
_warn_lock = threading.Lock()
INTERRUPTED = "interrupted: the evaluator was stopped before this submission was judged"


class Interrupted(KeyboardInterrupt):
    """The evaluator was interrupted (SIGINT / SIGTERM, `interrupt`): its judges were killed, and the
    submissions they had not finished have no verdict. A KeyboardInterrupt, so that no `except
    Exception` on the way up takes it for a failure of one submission."""


_live: weakref.WeakSet = weakref.WeakSet()  # every evaluator of this process (local or Ray) not yet closed
_live_lock = threading.Lock()


def register(evaluator) -> None:
    """Let `interrupt_all` reach `evaluator` (which has `interrupt()` and `kill_now()`)."""
    with _live_lock:
        _live.add(evaluator)


def _registered() -> list:
    try:
        return list(_live)
    except RuntimeError:  # changed while copied (a signal handler takes no lock): once more
        return list(_live)


def interrupt_all() -> None:
    """Stop every evaluator of this process now: kill its judges and what they run; calls in
    progress raise `Interrupted`. Safe from any thread (the stage's signal handler starts one)."""
    for ev in _registered():
        try:
            ev.interrupt()
        except Exception as e:  # noqa: BLE001 - the others must still be stopped
            log.warning("stopping an evaluator: %s", e)


def kill_all_now() -> None:
    """SIGKILL every judge of this process without taking a lock or waiting: the last step before
    `os._exit` (a second signal)."""
    for ev in _registered():
        try:
            ev.kill_now()
        except Exception:  # noqa: BLE001 - best effort, the process is leaving
            pass


def _sigkill_box(box: Box) -> None:
    """SIGKILL a box's sandbox as `Box.kill` does (its PID 1, hence every program in its namespace,
    and the outer process's group), without waiting or locking."""
    proc = box.proc
    if proc is None:
        return
    for pid in [*_children(proc.pid), proc.pid]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def warn_once(message: str) -> None:
    with _warn_lock:
        if message in _warned:
            return
        _warned.add(message)
    print(f"WARNING (microcoder evaluator): {message}", file=sys.stderr)


def problem_map(problems: Iterable[Problem] | Mapping[str, Problem]) -> dict[str, Problem]:
    if isinstance(problems, Mapping):
        return dict(problems)
    out: dict[str, Problem] = {}
    for p in problems:
        if p.id in out:
            warn_once(f"duplicate problem id {p.id!r}: the first one is used")
            continue
        out[p.id] = p
    return out


def as_submission(item: Submission | Mapping[str, Any], index: int) -> tuple[Submission, str | None]:
    """A Submission, or a placeholder plus the reason it is malformed (judged SE, never raised)."""
    if isinstance(item, Submission):
        return item, None
    d = dict(item) if isinstance(item, Mapping) else {}
    try:
        return Submission.from_dict(d), None
    except ValueError as e:
        sid = d.get("submission_id") if isinstance(d.get("submission_id"), str) else f"#{index}"
        pid = d.get("problem_id") if isinstance(d.get("problem_id"), str) else ""
        return Submission(pid, sid, str(d.get("language", "")), ""), f"malformed submission: {e}"


class _NoBar:
    """The progress bar when there is none (tqdm is imported only to show one)."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str, refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int | None, show: bool):
    if not show:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc="evaluate", unit="sub", dynamic_ncols=True)


class _Control:
    """Cancellation handle of one job: the deadline sets it and kills the boxes in use."""

    def __init__(self):
        self.event = threading.Event()
        self._lock = threading.Lock()
        self.worker: Worker | None = None

    def attach(self, worker: Worker | None) -> None:
        with self._lock:
            self.worker = worker

    def cancel(self) -> None:
        with self._lock:
            self.event.set()
            worker = self.worker
        if worker is not None:
            worker.kill()


class Evaluator:
    """A persistent pool of sandboxed judges; reuse it across calls (the trainer calls it every step).

    `workers` parallel judges (default os.cpu_count()); `timeout_scale` multiplies every time limit;
    `sandbox` is auto | bwrap | unshare | none (none: tests only). `config` supplies the remaining
    settings (EvaluatorConfig; the three arguments above always win). `wait=False` returns as soon
    as the judges are launched and the first evaluate call waits for them (and falls back to a
    weaker sandbox then if need be), so a caller can read its inputs while they start."""

    def __init__(self, workers: int | None = None, timeout_scale: float = 1.0, sandbox: str = "auto",
                 *, config: EvaluatorConfig | None = None, wait: bool = True):
        cfg = dataclasses.replace(config or EvaluatorConfig(), workers=workers, timeout_scale=timeout_scale,
                                  sandbox=sandbox)
        if not (cfg.slowdown > 0 and math.isfinite(cfg.slowdown)):
            raise ValueError(f"evaluator.slowdown must be a positive number, got {cfg.slowdown!r}")
        self.cfg = cfg
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.timeout_scale = timeout_scale
        self.root = Path(tempfile.mkdtemp(prefix="microcoder-eval-"))
        os.chmod(self.root, 0o755)
        self.inputs = InputStore(self.root / "inputs", cfg.input_cache_problems)
        self.compiler = Compiler(self.root / "bin", cfg)
        self._closed = False
        self._free: queue.SimpleQueue[Worker] = queue.SimpleQueue()
        self._all: list[Worker] = []
        self._seen: list[Worker] = []  # every worker made, started or not: what an interrupt kills
        self._interrupted = threading.Event()
        self._running: set[_Control] = set()  # the jobs in progress (close and interrupt stop them)
        self._running_lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._pending_start: tuple[str, tuple[Worker, list[Worker]] | None] | None = None
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="microcoder-eval")
        register(self)
        try:
            if wait:
                self._start(sandbox, None)
            else:
                self._pending_start = (sandbox, self._launch_first_choice(sandbox))
        except BaseException:
            self._discard(self._seen, now=True)
            shutil.rmtree(self.root, ignore_errors=True)
            self._closed = True
            with _live_lock:
                _live.discard(self)
            raise

    @classmethod
    def from_config(cls, cfg: EvaluatorConfig, *, wait: bool = True) -> Evaluator:
        return cls(cfg.workers, cfg.timeout_scale, cfg.sandbox, config=cfg, wait=wait)

    def _start(self, sandbox: str, launched: tuple[Worker, list[Worker]] | None) -> None:
        try:
            self.kind, self.meta, first = self._select_sandbox(sandbox, launched)
            if self._interrupted.is_set():  # during the start of the others
                raise Interrupted()
        except BaseException:
            self._discard(self._seen, now=True)
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self._all = [first] + (self._prestarted or [self._worker(i) for i in range(1, self.workers)])
        for w in self._all:
            self._free.put(w)

    def _ensure_started(self) -> None:
        """The judges launched by `wait=False`, awaited (once, by the first evaluate call)."""
        with self._start_lock:
            pending, self._pending_start = self._pending_start, None
            if pending is not None:
                self._start(*pending)

    def _launch_first_choice(self, requested: str) -> tuple[Worker, list[Worker]]:
        """Every worker's run box launched with the sandbox `_select_sandbox` tries first."""
        kind, _ = sb.resolve_kind(requested)
        drop = sb.is_root() and kind != "none"
        first = self._new_worker(0, kind, drop)
        try:
            first.launch("run")
        except Exception as e:  # noqa: BLE001 - started (or given up on) by _select_sandbox
            log.debug("worker 0: run box did not launch ahead of use: %s", e)
            first.close()
        return first, self._prestart(kind, drop)

    # sandbox selection -------------------------------------------------------------------------------
    def _worker(self, slot: int, kind: str | None = None, drop: bool | None = None) -> Worker:
        return self._new_worker(slot, kind or self.kind, self._drop if drop is None else drop)

    def _new_worker(self, slot: int, kind: str, drop: bool) -> Worker:
        if self._interrupted.is_set():  # nothing starts after an interrupt
            raise Interrupted()
        worker = Worker(slot, self.root, self.inputs, self.cfg, kind, drop)
        self._seen.append(worker)
        return worker

    @staticmethod
    def _discard(workers: list[Worker], now: bool) -> None:
        """Close `workers`; `now`: kill their boxes first (an interrupt does not wait for a judge to
        finish its start or its run)."""
        for w in workers:
            if now:
                w.kill()
            w.close()

    def _prestart(self, kind: str, drop: bool) -> list[Worker]:
        """Workers 1..n-1 with their run boxes launched (from this thread, see Box.launch) to start
        alongside worker 0's: start-up is mostly waiting for bwrap and the interpreter."""
        others = [self._new_worker(i, kind, drop) for i in range(1, self.workers)]
        for w in others:
            try:
                w.launch("run")
            except Exception as e:  # noqa: BLE001 - retried (and reported) when the worker is used
                log.debug("worker %d: run box did not launch ahead of use: %s", w.slot, e)
                w.close()
        return others

    @staticmethod
    def _await_started(others: list[Worker]) -> None:
        """Wait for the launched boxes; one that failed is closed and retried on first use, as a
        box that died would be."""
        for w in others:
            try:
                w.box("run")
            except Exception as e:  # noqa: BLE001 - as above
                log.debug("worker %d: run box did not start ahead of use: %s", w.slot, e)
                w.close()

    def _select_sandbox(self, requested: str, launched: tuple[Worker, list[Worker]] | None = None
                        ) -> tuple[str, dict[str, Any], Worker]:
        """Start worker 0's run box with the best sandbox that works here (bwrap > unshare for
        'auto', never none: `sb.resolve_kind` fails closed, and so does a start that fails with
        both); every fallback is warned about once and recorded in Verdict.meta. The other
        workers' run boxes start at the same time with the first choice (kept when it works);
        `launched`: those of the first choice, already launched (`_launch_first_choice`)."""
        kind, warning = sb.resolve_kind(requested)
        fallbacks = ("bwrap", "unshare")  # isolated kinds only: 'auto' never ends unisolated
        order = [kind]
        if requested == "auto":
            order += [k for k in fallbacks[fallbacks.index(kind) + 1:] if sb.available(k)]
        notes = [warning] if warning else []
        self._prestarted: list[Worker] = []
        first_try = True
        for k in order:
            for drop in ((True, False) if sb.is_root() and k != "none" else (False,)):
                first_attempt, first_try = first_try, False
                if first_attempt and launched is not None:
                    worker, others = launched
                else:
                    worker = self._new_worker(0, k, drop)
                    others = self._prestart(k, drop) if first_attempt else []
                try:
                    worker.box("run")
                    if not first_attempt:  # a fallback that works: start the others with it too
                        others = self._prestart(k, drop)
                    self._await_started(others)
                except BaseException as e:
                    stopped = self._interrupted.is_set() or not isinstance(e, BoxError)
                    self._discard([worker, *others], now=stopped)
                    if self._interrupted.is_set():  # killed on purpose: no fallback to try
                        raise Interrupted() from None
                    if stopped:
                        raise
                    notes.append(f"sandbox {k}{' (unprivileged uid)' if drop else ''} failed to start: "
                                 f"{str(e)[:300]}")
                    continue
                info = worker.boxes["run"].info
                if self.cfg.syscall_filter and not info.get("syscall_filter"):
                    notes.append(f"no syscall filter ({info.get('syscall_filter_error')}): a program can lower the "
                                 "judge's limits (detected after the run: the judge is restarted) and use keyrings")
                if sb.is_root() and k != "none" and not drop:
                    notes.append(f"sandbox {k}: cannot run as an unprivileged uid here, so code runs as root "
                                 "(RLIMIT_NPROC does not hold; only the namespaces contain processes)")
                self._drop = drop
                self._prestarted = others
                meta: dict[str, Any] = {"sandbox": k}
                if notes:
                    meta["sandbox_warning"] = " | ".join(notes)
                    for n in notes:
                        warn_once(n)
                return k, meta, worker
            if requested != "auto":
                break
        raise sb.SandboxUnavailable("no sandbox could be started: " + " | ".join(notes))

    # one job -----------------------------------------------------------------------------------------
    def _run(self, problem: Problem | None, item, index: int, mode: str, keep_outputs: bool,
             control: _Control) -> Verdict:
        sub, malformed = as_submission(item, index)
        if malformed:
            return Verdict(sub.problem_id, sub.submission_id, "SE", reason=malformed, meta=dict(self.meta))
        with self._running_lock:
            self._running.add(control)
        worker = self._free.get()
        control.attach(worker)
        try:
            if control.event.is_set() or self._interrupted.is_set() or self._closed:
                raise Cancelled()
            job = Job(problem, sub, worker, self.cfg, self.compiler, mode, keep_outputs, control.event)
            return judge(job, self.timeout_scale, self.meta)
        except (Cancelled, BoxKilled):
            return self._cut_short(problem, sub)
        except BoxError as e:
            if control.event.is_set():
                return self._cut_short(problem, sub)
            return Verdict(sub.problem_id, sub.submission_id, "SE", total=len(problem.tests) if problem else 0,
                           reason=f"judge process failed: {e}"[:1000], meta=dict(self.meta))
        except Exception as e:  # noqa: BLE001 - an evaluator bug must not stop the run
            log.error("evaluator error on %s/%s:\n%s", sub.problem_id, sub.submission_id, traceback.format_exc())
            return Verdict(sub.problem_id, sub.submission_id, "SE", total=len(problem.tests) if problem else 0,
                           reason=f"evaluator error: {e!r}"[:1000], meta=dict(self.meta))
        finally:
            control.attach(None)
            with self._running_lock:
                self._running.discard(control)
            if not self._interrupted.is_set():  # after an interrupt, a killed box stays down
                worker.revive()
            self._free.put(worker)

    def _cut_short(self, problem: Problem | None, sub: Submission) -> Verdict:
        """The verdict of a job stopped on purpose: by an interrupt (never a verdict on the code:
        the call raises `Interrupted`), or by the batch deadline (TLE)."""
        if self._interrupted.is_set() or self._closed:
            return Verdict(sub.problem_id, sub.submission_id, "SE", total=len(problem.tests) if problem else 0,
                           reason=INTERRUPTED, meta=dict(self.meta))
        return self._deadline_verdict(problem, sub)

    def _deadline_verdict(self, problem: Problem | None, sub: Submission) -> Verdict:
        return Verdict(sub.problem_id, sub.submission_id, "TLE", total=len(problem.tests) if problem else 0,
                       reason="batch deadline", meta=dict(self.meta))

    def _checked(self, verdict: Verdict) -> Verdict:
        """`verdict`, unless its job was stopped by an interrupt: then the call raises."""
        if verdict.reason == INTERRUPTED and self._interrupted.is_set():
            raise Interrupted()
        return verdict

    def _cancel_running(self) -> None:
        with self._running_lock:
            running = list(self._running)
        for control in running:
            control.cancel()

    @staticmethod
    def _problem_of(pmap: dict[str, Problem], item) -> Problem | None:
        pid = item.problem_id if isinstance(item, Submission) else (item.get("problem_id") if isinstance(item, Mapping) else None)
        return pmap.get(pid) if isinstance(pid, str) else None

    def _check(self, mode: str) -> None:
        if self._interrupted.is_set():
            raise Interrupted()
        if self._closed:
            raise RuntimeError("the Evaluator is closed")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self._ensure_started()

    # public API --------------------------------------------------------------------------------------
    def evaluate(self, problems, submissions: Iterable[Submission], *, mode: str = "first-failure",
                 keep_outputs: bool = False, progress: bool = True) -> Iterator[Verdict]:
        """Judge `submissions` (Submission objects or dicts) and yield Verdicts as they complete."""
        self._check(mode)
        pmap = problem_map(problems)
        total = len(submissions) if hasattr(submissions, "__len__") else None
        source = enumerate(submissions)
        pending: dict[Future, _Control] = {}

        def submit() -> bool:
            try:
                i, item = next(source)
            except StopIteration:
                return False
            control = _Control()
            fut = self._executor.submit(self._run, self._problem_of(pmap, item), item, i, mode, keep_outputs, control)
            pending[fut] = control
            return True

        bar = progress_bar(total, progress)
        try:
            while len(pending) < 2 * self.workers and submit():
                pass
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    pending.pop(fut)
                    verdict = self._checked(fut.result())
                    bar.update(1)
                    bar.set_postfix_str(verdict.status, refresh=False)
                    submit()
                    yield verdict
        finally:
            bar.close()
            for fut, control in pending.items():  # abandoned early: stop what is still running
                fut.cancel()
                control.cancel()
            wait(list(pending))

    def evaluate_batch(self, problems, submissions: Iterable[Submission], *, mode: str = "first-failure",
                       deadline_s: float | None = None, keep_outputs: bool = False,
                       progress: bool = False) -> list[Verdict]:
        """Judge all, return verdicts in submission order. Submissions unfinished `deadline_s` seconds
        after the call get TLE with reason 'batch deadline'; their processes are killed."""
        start = time.monotonic()
        self._check(mode)
        pmap = problem_map(problems)
        items = list(submissions)
        controls = [_Control() for _ in items]
        bar = progress_bar(len(items), progress)
        futures = [self._executor.submit(self._run, self._problem_of(pmap, item), item, i, mode, keep_outputs, c)
                   for i, (item, c) in enumerate(zip(items, controls, strict=True))]
        for fut in futures:
            fut.add_done_callback(lambda _f: bar.update(1))
        try:
            remaining = None if deadline_s is None else max(0.0, deadline_s - (time.monotonic() - start))
            done, late = wait(futures, timeout=remaining)
            for fut, control in zip(futures, controls, strict=True):
                if fut in late:
                    fut.cancel()
                    control.cancel()
            wait(futures)  # the cancelled ones return promptly: their boxes were killed
        except BaseException:  # a KeyboardInterrupt in this thread: what this call started stops now
            for fut, control in zip(futures, controls, strict=True):
                fut.cancel()
                control.cancel()
            raise
        finally:
            bar.close()
        out = []
        for i, (fut, item) in enumerate(zip(futures, items, strict=True)):
            if fut in done:
                out.append(self._checked(fut.result()))
            elif self._interrupted.is_set():
                raise Interrupted()
            else:
                sub, _ = as_submission(item, i)
                out.append(self._deadline_verdict(self._problem_of(pmap, item), sub))
        return out

    def interrupt(self) -> None:
        """Stop now (SIGINT / SIGTERM): kill every judge and what it runs and start nothing more;
        the calls in progress, and later ones, raise `Interrupted`. Safe from any thread."""
        self._interrupted.set()
        self._cancel_running()
        for w in list(self._seen):
            w.kill()

    def kill_now(self) -> None:
        """SIGKILL every judge without a lock or a wait, and remove the folders: the process is
        about to exit (its run groups are swept by the next evaluator)."""
        self._interrupted.set()
        for w in list(self._seen):
            try:
                boxes = list(w.boxes.values())
            except RuntimeError:  # changed while copied: the next try reads it whole
                boxes = list(w.boxes.values())
            for box in boxes:
                _sigkill_box(box)
        shutil.rmtree(self.root, ignore_errors=True)

    def close(self) -> None:
        """Close the judges and remove the folders. Work still running (a caller that gave up on
        it: an exception, an interrupt, an evaluate iterator left open) is killed, not waited for."""
        if self._closed:
            return
        self._closed = True
        self._cancel_running()
        self._executor.shutdown(wait=True, cancel_futures=True)
        with self._start_lock:  # launched but never awaited: closed with the others
            self._pending_start = None
        workers = list(self._seen)  # started, awaited or not, and fallbacks given up on
        now = self._interrupted.is_set()  # killed, not asked to finish (EOF and up to 2 s each)
        if sys.is_finalizing():
            # from __del__ at interpreter exit (the caller never closed us): no thread can start
            # any more (Thread.start would wait forever for it), so one after the other
            self._discard(workers, now)
        else:
            closers = [threading.Thread(target=self._discard, args=([w], now)) for w in workers]
            for t in closers:
                t.start()
            for t in closers:
                t.join()
        shutil.rmtree(self.root, ignore_errors=True)
        with _live_lock:
            _live.discard(self)

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def evaluate(problems, submissions, *, workers: int | None = None, mode: str = "first-failure",
             timeout_scale: float = 1.0, keep_outputs: bool = False, progress: bool = True) -> Iterator[Verdict]:
    """One-shot streaming evaluation with a temporary Evaluator (closed when the iterator ends)."""
    with Evaluator(workers, timeout_scale) as ev:
        yield from ev.evaluate(problems, submissions, mode=mode, keep_outputs=keep_outputs, progress=progress)


def evaluate_batch(problems, submissions, *, workers: int | None = None, mode: str = "first-failure",
                   timeout_scale: float = 1.0, deadline_s: float | None = None,
                   keep_outputs: bool = False) -> list[Verdict]:
    """One-shot batch evaluation with a temporary Evaluator."""
    start = time.monotonic()
    with Evaluator(workers, timeout_scale) as ev:
        remaining = None if deadline_s is None else max(0.0, deadline_s - (time.monotonic() - start))
        return ev.evaluate_batch(problems, submissions, mode=mode, deadline_s=remaining, keep_outputs=keep_outputs)
