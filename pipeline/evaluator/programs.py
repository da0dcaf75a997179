"""Running programs on tests through the evaluator, with one result cache: what validate (which
judges references and known-wrong solutions on a problem's tests) and testgen (which collects what
references and generator programs print) share.

- `ResultCache`: SQLite, key -> JSON value, one table per kind of result (validate's and testgen's
  runs: `runs`; testgen's generated tests per problem: `problems`). A run's key (`run_key`) is the
  content hash of everything that decides its result: the kind of result, the evaluator's code and
  settings (`verdict_key`), the problem as judged (style, entry point, starter code, checker,
  limits, the meta the judge reads: `problem_hash`), the program (`code_hash`), the test as judged
  (content and group: `judged_test_hash`) and the run index (a program run twice on one test is two
  runs). A change to any of them misses; a change of speed alone (workers, caches) does not.
- `Stream` and `Runner`: one program on one problem's tests, run in increasing input size, chunk
  by chunk, through one judge, so that a stream stops early (presumed too slow, or at its first
  failure) and an interrupt loses at most a chunk per stream; every chunk is committed to the
  cache as it ends. They know nothing of what the caller decides from the results.
- `run_outputs`: program + inputs -> per input (status, output, time, memory), for callers that
  want what a program prints, not a verdict (`Output`); `judge_runs`: a program's verdict and
  per-test statuses without outputs (what testgen's known solutions and mutants need). Both take
  a live evaluator, or a `CachedEvaluator` (one, plus the cache and its `verdict_key`): then they
  run only what the cache does not hold. A key names its kind of result (`KINDS`: judged with
  outputs, as validate's runs; run mode; statuses only), so no two kinds share one.

Our own failures (SE, and a TLE on the wall clock within the CPU limit: `busy_machine`) are never
cached, so a rerun on a quieter machine runs them again.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.evaluator.verdict_key import verdict_key
from microcoder.pipeline.io import content_hash
from microcoder.pipeline.schema import Problem, TestCase

TOO_SLOW = ("TLE", "MLE")  # the program ran out of time or memory: it did not finish the test
CATCHES = ("WA", "RE", "TLE", "MLE", "OLE")  # a program failing a test this way is caught by it
NOT_RUN = ("CE", "SE")  # no verdict on the test: the code did not build, or our harness failed


def at_limit(r: dict[str, Any], limit_s: float) -> str:
    """A run's status under a (lower) limit than the one it ran under: CPU time is what is judged."""
    if r["status"] not in TOO_SLOW + NOT_RUN and (r.get("time_s") or 0.0) > limit_s:
        return "TLE"
    return r["status"]


# --- the cache -----------------------------------------------------------------------------------
# What the judge reads of a problem besides its fields: the output limit, a Kattis validator's flags
# (per test group or the problem's), and whether it is interactive.
JUDGED_META = ("output_limit_mb", "validator_flags", "test_groups", "interactive")


def problem_hash(p: Problem, evaluator_key: str) -> str:
    """What, besides the code and the test, decides a run's result: the problem as judged (its
    limits, checker and the meta the judge reads included) and the evaluator's code and settings
    (`evaluator_key`: `verdict_key`)."""
    checker = json.dumps(p.checker.__dict__ if p.checker else None, sort_keys=True)
    meta = p.meta if isinstance(p.meta, dict) else {}
    judged_meta = json.dumps({k: meta.get(k) for k in JUDGED_META}, sort_keys=True, default=str)
    return content_hash(p.style, p.entry_point or "", p.starter_code or "", checker, repr(p.time_limit_s),
                        repr(p.memory_limit_mb), judged_meta, repr("interactive" in (p.tags or [])), evaluator_key)


def test_hash(t: TestCase) -> str:
    """A test's content: its input and expected output (validate's report names tests by it)."""
    return content_hash(t.input, t.output)


def judged_test_hash(t: TestCase) -> str:
    """The test as judged: its content and its group (which picks a Kattis validator's flags)."""
    return content_hash(test_hash(t), t.group or "")


test_hash.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def code_hash(language: str, code: str) -> str:
    return content_hash(language, code)


KINDS = ("judged", "run", "status")  # a judged run with its output; a run-mode output; a status only


def run_key(kind: str, problem_key: str, program_key: str, test_key: str, run: int) -> str:
    """One run's cache key, of the kind of result (`KINDS`: no two kinds ever share a key),
    `problem_hash`, `code_hash`, `judged_test_hash` and the run index."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return content_hash(kind, problem_key, program_key, test_key, str(run))


class ResultCache:
    """key -> JSON value in the SQLite table `table` of the file `path` (created as needed); safe
    to use from several threads (the runs' threads write as their chunks end)."""

    def __init__(self, path: str | Path, table: str = "runs"):
        if not table.isidentifier():
            raise ValueError(f"table must be an identifier, got {table!r}")
        self.path, self.table = Path(path), table
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), check_same_thread=False)
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self.db.execute(f"SELECT value FROM {self.table} WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_many(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        if not items:
            return
        with self._lock:
            self.db.executemany(f"INSERT OR REPLACE INTO {self.table} VALUES (?, ?)",
                                [(k, json.dumps(v)) for k, v in items])
            self.db.commit()

    def close(self) -> None:
        self.db.close()


def busy_machine(r: dict[str, Any]) -> bool:
    """A TLE on the wall clock within the CPU limit: the program slept or blocked, or the machine was
    busy. Not cached (as the evaluator does for compiles), so a rerun on a quieter machine judges it again."""
    return r["status"] == "TLE" and str(r.get("diff") or "").startswith("wall-clock limit exceeded")


# --- streams of runs -------------------------------------------------------------------------------
@dataclass
class Stream:
    """One program on one problem's tests, run in increasing input size, chunk by chunk, so that it
    can stop early: after `presume_after` consecutive TLE/MLE (the rest is presumed too slow) or,
    with `stop_at_failure`, at its first failed test. With `chunk_s`, chunks start at one test and
    grow (up to `chunk`) while this program's runs are fast, to about `chunk_s` seconds of runs: the
    judge returns a chunk's results only at its end, so that is about all an interrupt can take
    from the cache. `results`: test index -> {status, time_s, output, diff} (+ `presumed`, and
    `whole_run` where the program did not build or the harness failed: the same for every test)."""

    name: str
    problem: Problem  # at the limit the runs are judged under
    language: str
    code: str
    order: list[int]  # test indices, smallest input first
    keys: dict[int, str]  # cache key per test
    mode: str = "first-failure"  # evaluator mode of one chunk
    chunk: int = 16
    chunk_s: float | None = None
    presume_after: int = 2
    stop_at_failure: bool = False
    results: dict[int, dict[str, Any]] = field(default_factory=dict)
    _pos: int = 0
    _streak: int = 0
    _done: bool = False
    _size: int = 1  # the next chunk's size, with chunk_s

    def next_chunk(self) -> list[int] | None:
        """The next tests to run, or None when the stream is finished (results then complete
        for `order`, except the tests after a `stop_at_failure` stop)."""
        while not self._done and self._pos < len(self.order):
            r = self.results.get(self.order[self._pos])
            if r is None:
                break
            self._pos += 1
            self._account(r)
        if self._done or self._pos >= len(self.order):
            self._done = True
            return None
        todo = []
        size = self.chunk if self.chunk_s is None else self._size
        for ti in self.order[self._pos:]:
            if ti in self.results or len(todo) >= size:
                break
            todo.append(ti)
        return todo

    def _account(self, r: dict[str, Any]) -> None:
        status = r["status"]
        if status == "CE" or (status == "SE" and r.get("whole_run")):  # nothing will run: same for every test
            self._fill({k: v for k, v in r.items() if k != "output"}, presumed=False)
            return
        self._streak = self._streak + 1 if status in TOO_SLOW else 0
        if self.presume_after and self._streak >= self.presume_after:
            self._fill({"status": "TLE", "time_s": 0.0, "output": None,
                        "diff": f"not run: too slow on the {self._streak} previous (smaller) tests"}, presumed=True)
        elif self.stop_at_failure and status in CATCHES:
            self._done = True

    def _fill(self, value: dict[str, Any], presumed: bool) -> None:
        for ti in self.order[self._pos:]:
            self.results.setdefault(ti, {**value, "presumed": presumed})
        self._done = True

    def record(self, chunk: list[int], verdict) -> list[tuple[str, dict[str, Any]]]:
        """Store a chunk's verdict; returns the (key, value) pairs worth caching."""
        fresh = []
        if not verdict.tests:  # compile error, harness failure or deadline: no per-test results
            value = {"status": verdict.status, "time_s": 0.0, "output": None, "diff": verdict.reason, "whole_run": True}
            for ti in chunk:
                self.results[ti] = dict(value)
                if value["status"] != "SE":
                    fresh.append((self.keys[ti], value))
            return fresh
        for ti, tr in zip(chunk, verdict.tests, strict=False):  # first-failure: the tests up to the failure
            value = {"status": tr.status, "time_s": tr.time_s, "output": tr.output, "diff": tr.diff}
            self.results[ti] = value
            if tr.status != "SE" and not busy_machine(value):  # never cache our own failures
                fresh.append((self.keys[ti], value))
        self._resize(verdict.tests)
        return fresh

    def _resize(self, ran: list) -> None:
        """With `chunk_s`: the next chunk holds about `chunk_s` seconds of this program's runs (a TLE
        costs the whole limit), at most twice as many tests as the last."""
        if self.chunk_s is None or not ran:
            return
        spent = sum(max(tr.time_s or 0.0, self.problem.time_limit_s if tr.status == "TLE" else 0.0) for tr in ran)
        fit = int(self.chunk_s * len(ran) / spent) if spent > 0 else self.chunk
        self._size = max(1, min(self.chunk, 2 * self._size, fit))


class Runner:
    """Drives Streams through one judge (`make_evaluator` of the evaluator settings on `executor`),
    started on first need (a fully cached rerun starts none). Each stream runs one chunk at a time;
    2 x workers streams are in flight so the judges stay busy between a stream's chunks. Every
    chunk's runs are committed to the cache as it ends; an interrupt (SIGINT / SIGTERM) kills the
    judges and `run` re-raises it (the caller says what was kept: `kept`)."""

    chunk_s = 1.0  # seconds of runs per chunk (Stream.chunk_s): the most an interrupt loses per stream

    def __init__(self, evaluator: EvaluatorConfig, cache: ResultCache, *, executor: str = "local",
                 ray_address: str | None = None, presume_after: int = 2, progress: bool = True):
        self.evaluator, self.cache, self.progress = evaluator, cache, progress
        self.executor, self.ray_address, self.presume_after = executor, ray_address, presume_after
        self.key = verdict_key(evaluator)
        self.ev: Any = None  # the evaluator (local or Ray), made on first use: _start
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._stop = threading.Event()  # set on an interrupt: no stream starts another chunk
        self.executed = 0
        self.presumed = 0
        self.cached = 0
        self.committed = 0  # runs of this process written to the cache

    def stream(self, name: str, problem: Problem, language: str, code: str, tests: list[int], run: int,
               **kw) -> Stream:
        """A Stream over `tests` (smallest input first) with what the cache already holds. Streams
        judge (mode first-failure or all): their results are verdicts, cached as such."""
        if kw.get("mode", "first-failure") not in ("first-failure", "all"):
            raise ValueError(f"a stream judges: mode first-failure or all, got {kw['mode']!r}")
        ph, ch = problem_hash(problem, self.key), code_hash(language, code)
        order = sorted(tests, key=lambda i: (len(problem.tests[i].input), i))
        keys = {ti: run_key("judged", ph, ch, judged_test_hash(problem.tests[ti]), run) for ti in order}
        kw.setdefault("presume_after", self.presume_after)
        kw.setdefault("chunk_s", self.chunk_s)
        s = Stream(name, problem, language, code, order, keys, **kw)
        for ti in order:
            hit = self.cache.get(keys[ti])
            if hit is not None:
                s.results[ti] = hit
        return s

    def run(self, streams: list[Stream], desc: str) -> None:
        for s in streams:
            self.cached += len(s.results)
        pending = [s for s in streams if s.next_chunk() is not None]
        if pending:
            n_tests = sum(len(s.order) - len(s.results) for s in pending)
            bar = tqdm(total=n_tests, desc=desc, unit="test", disable=not self.progress, mininterval=1.0)
            try:
                self._start()
                self._drive_all(pending, bar)
            finally:
                bar.close()
        for s in streams:
            self.presumed += sum(1 for r in s.results.values() if r.get("presumed"))

    def _drive_all(self, streams: list[Stream], bar) -> None:
        """Every stream, 2 x workers at a time. On an interrupt (or a failure) the judges are killed
        and no stream starts another chunk, so the threads end at once, not after their streams."""
        from concurrent.futures import as_completed

        pool = ThreadPoolExecutor(2 * max(1, self.ev.workers), thread_name_prefix="runs")
        try:
            for fut in as_completed([pool.submit(self._drive, s, bar) for s in streams]):
                fut.result()
        except BaseException:
            self._stop.set()
            self.ev.interrupt()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def kept(self) -> str:
        """What an interrupted run keeps (the stage's one-line message)."""
        n = self.committed
        return (f"kept {n} finished run{'' if n == 1 else 's'} in the cache {self.cache.path} (besides the "
                f"{self.cached} found there); a rerun resumes from them")

    def _start(self) -> None:
        if self.ev is None:
            from microcoder.pipeline.evaluator.factory import make_evaluator

            self.ev = make_evaluator(self.evaluator, executor=self.executor, ray_address=self.ray_address)

    def _drive(self, s: Stream, bar) -> None:
        from microcoder.pipeline.evaluator import Submission

        shown = len(s.results)
        while not self._stop.is_set() and (chunk := s.next_chunk()) is not None:
            before = len(s.results)  # presumed results (filled by next_chunk) are not runs
            sid = f"{s.name}#{next(self._ids)}"
            sub_problem = replace(s.problem, id=sid, tests=[s.problem.tests[i] for i in chunk])
            verdict = self.ev.evaluate_batch({sid: sub_problem}, [Submission(sid, sid, s.language, s.code)],
                                             mode=s.mode, keep_outputs=True)[0]
            fresh = s.record(chunk, verdict)
            self.cache.put_many(fresh)
            with self._lock:
                self.committed += len(fresh)
                self.executed += len(s.results) - before
                bar.update(len(s.results) - shown)
            shown = len(s.results)
        with self._lock:
            bar.update(len(s.results) - shown)  # presumed or never needed (stopped at a first failure)
            bar.update(max(0, len(s.order) - len(s.results)))

    def close(self) -> None:
        if self.ev is not None:
            self.ev.close()


# --- run mode: what a program prints ------------------------------------------------------------------


@dataclass
class Output:
    """One program run on one input. `status`: AC (ran to completion: `output` is what it printed,
    or a functional call's JSON result), else RE / TLE / MLE / OLE, or CE / SE for the whole run
    (then `output` is None and `time_s` 0)."""

    status: str
    output: str | None
    time_s: float
    memory_mb: float | None = None
    message: str | None = None


class CachedEvaluator:
    """A live evaluator whose run mode (`run_outputs`) reads and writes `cache`, under
    `evaluator_key` (`verdict_key` of the settings it was made from); everything else is the
    evaluator's own (judging goes straight to it)."""

    def __init__(self, ev, cache: ResultCache, evaluator_key: str):
        self.ev, self.cache, self.evaluator_key = ev, cache, evaluator_key
        self.executed = 0
        self.cached = 0

    def __getattr__(self, name: str):
        return getattr(self.ev, name)


def output_key(evaluator_key: str, problem: Problem, language: str, code: str, text: str) -> str:
    """The cache key of one run-mode run (`run_key`, with the problem as run: no checker)."""
    return run_key("run", problem_hash(replace(problem, checker=None), evaluator_key), code_hash(language, code),
                   content_hash(text), 0)


def run_outputs(ev, jobs: list[tuple[Any, Problem, str, str, list[str]]]) -> dict[Any, list[Output]]:
    """{key: one Output per input} for (key, problem, language, code, inputs): every program on every
    input, in one call of the live evaluator `ev` (the problem's limits and style apply; its checker
    and tests do not). `ev` keeps outputs up to its `keep_output_bytes`. With a `CachedEvaluator`,
    the runs its cache holds are not run again, and each program's fresh runs are committed as it
    ends (never SE, nor a TLE on the wall clock: `busy_machine`)."""
    cache = ev if isinstance(ev, CachedEvaluator) else None
    out: dict[Any, list[Output | None]] = {}
    todo, keys = [], {}
    for key, problem, language, code, inputs in jobs:
        out[key] = [None] * len(inputs)
        if cache:
            keys[key] = [output_key(cache.evaluator_key, problem, language, code, x) for x in inputs]
            for i, k in enumerate(keys[key]):
                hit = cache.cache.get(k)
                out[key][i] = None if hit is None else Output(**hit)
            cache.cached += sum(o is not None for o in out[key])
        missing = [i for i, o in enumerate(out[key]) if o is None]
        if missing:
            todo.append(((key, missing), problem, language, code, [inputs[i] for i in missing]))
    for (key, missing), runs in _run(cache.ev if cache else ev, todo):
        for i, o in zip(missing, runs, strict=True):
            out[key][i] = o
        if cache:
            cache.executed += len(runs)
            cache.cache.put_many([(keys[key][i], o.__dict__) for i, o in zip(missing, runs, strict=True)
                                  if _cacheable(o)])
    return out  # type: ignore[return-value]  # every None filled


def _cacheable(o: Output) -> bool:
    return o.status != "SE" and not busy_machine({"status": o.status, "diff": o.message})


def _run(ev, jobs: list[tuple[Any, Problem, str, str, list[str]]]):
    """(key, one Output per input) for each job, as its program ends."""
    from microcoder.pipeline.evaluator import Submission

    if not jobs:  # everything was cached: no judge call
        return

    problems: dict[str, Problem] = {}
    subs = []
    by_sid: dict[str, tuple[Any, int]] = {}
    for j, (key, problem, language, code, inputs) in enumerate(jobs):
        if not inputs:
            continue
        sid = f"run{j}"
        # no checker: it is not run in mode `run`, and the plain output limit applies
        problems[sid] = replace(problem, id=sid, checker=None, tests=[TestCase(x, "", "generated") for x in inputs])
        subs.append(Submission(problem_id=sid, submission_id=sid, language=language, code=code))
        by_sid[sid] = (key, len(inputs))
    for verdict in ev.evaluate(problems, subs, mode="run", keep_outputs=True, progress=False):
        key, n = by_sid[verdict.submission_id]
        runs = [Output(tr.status, tr.output, float(tr.time_s or 0.0), tr.memory_mb, tr.diff) for tr in verdict.tests[:n]]
        runs += [Output(verdict.status, None, 0.0, None, verdict.reason)] * (n - len(runs))
        yield key, runs


# --- judging through the cache: statuses per test -----------------------------------------------------
def judge_runs(ev, items: list[tuple[Any, Problem, str, str]], mode: str) -> dict[Any, tuple[str, str | None, list]]:
    """{key: (verdict status, its reason, per test: {status, time_s, diff} or None where not judged)}
    for (key, problem, language, code) with tests, judged in `mode` (first-failure: up to the first
    failure; all: every test) without keeping outputs, in one evaluator call. With a
    `CachedEvaluator`, tests judged before are read from its cache (first-failure: a cached failure
    decides; the run starts at the first test not cached) and fresh ones written as each program ends."""
    cache = ev if isinstance(ev, CachedEvaluator) else None
    results: dict[Any, list] = {}
    keys: dict[Any, list[str]] = {}
    todo = []
    for key, problem, language, code in items:
        got: list[dict[str, Any] | None] = [None] * len(problem.tests)
        if cache:
            ph, ch = problem_hash(problem, cache.evaluator_key), code_hash(language, code)
            keys[key] = [run_key("status", ph, ch, judged_test_hash(t), 0) for t in problem.tests]
            got = [cache.cache.get(k) for k in keys[key]]
        if mode == "first-failure":
            stop = next((i for i, r in enumerate(got) if r is None or r["status"] != "AC"), len(got))
            got[stop + 1:] = [None] * len(got[stop + 1:])  # past a (cached) failure nothing is judged
            missing = list(range(stop, len(got))) if stop < len(got) and got[stop] is None else []
        else:
            missing = [i for i, r in enumerate(got) if r is None]
        if cache:
            cache.cached += sum(r is not None for r in got)
        results[key] = got
        if missing:
            todo.append((key, problem, language, code, missing))
    reasons: dict[Any, tuple[str, str | None]] = {}
    for key, missing, verdict in _judge(cache.ev if cache else ev, todo, mode):
        got = results[key]
        if verdict.tests:
            fresh = [{"status": tr.status, "time_s": tr.time_s, "diff": tr.diff} for tr in verdict.tests]
        else:  # did not build, or the harness failed: the same for every test
            fresh = [{"status": verdict.status, "time_s": 0.0, "diff": verdict.reason, "whole_run": True}] * len(missing)
        for i, r in zip(missing, fresh, strict=False):
            got[i] = r
        reasons[key] = (verdict.status, verdict.reason)
        if cache:
            cache.executed += len(fresh)
            cache.cache.put_many([(keys[key][i], r) for i, r in zip(missing, fresh, strict=False)
                                  if r["status"] != "SE" and not busy_machine(r) and (verdict.tests or r["status"] == "CE")])
    out = {}
    for key, got in results.items():  # the verdict as the judge gives it (verdict/judge.py) on the whole test list
        failed = next((i for i, r in enumerate(got) if r is not None and r["status"] != "AC"), None)
        if failed is not None:
            r = got[failed]
            reason = r["diff"] if r.get("whole_run") else \
                f"test {failed + 1}: {r['status']}" + (f" ({r['diff']})" if r["diff"] else "")
            out[key] = (r["status"], reason, got)
        elif all(r is not None for r in got):
            out[key] = ("AC", None, got)
        else:  # stopped short without a failure: the evaluator's own verdict (SE)
            out[key] = (*reasons.get(key, ("SE", None)), got)
    return out


def _judge(ev, jobs: list[tuple[Any, Problem, str, str, list[int]]], mode: str):
    """(key, the test indices judged, the verdict) for each job, as its program ends."""
    from microcoder.pipeline.evaluator import Submission

    if not jobs:  # everything was cached: no judge call
        return

    problems, subs, by_sid = {}, [], {}
    for j, (key, problem, language, code, tests) in enumerate(jobs):
        sid = f"judge{j}"
        problems[sid] = replace(problem, id=sid, tests=[problem.tests[i] for i in tests])
        subs.append(Submission(problem_id=sid, submission_id=sid, language=language, code=code))
        by_sid[sid] = (key, tests)
    for verdict in ev.evaluate(problems, subs, mode=mode, progress=False):
        key, tests = by_sid[verdict.submission_id]
        yield key, tests, verdict

