"""Running programs on tests through the evaluator, with one result cache: what validate (which
judges references and known-wrong solutions on a problem's tests) and testgen (which collects what
references and generator programs print) share.

- `ResultCache`: SQLite, key -> JSON value, one table per kind of result (validate's and testgen's
  runs: `runs`; testgen's generated tests per problem: `problems`). A run's key (`run_key`) is the
  content hash of everything that decides its result: the kind of result, the evaluator's code and
  settings (`verdict_key`), the problem as judged (style, entry point, starter code, checker,
  limits, the meta the judge reads: `problem_hash`), the program (`code_hash`), the test as judged
  (content and group: `judged_test_hash`) and the run index (a program run twice on one test is two
  runs). A change to any of them misses; a change of speed alone (workers, caches) does not. The
  file is bounded by size (`max_mb`: the stages' `cache_max_mb`), least recently used rows evicted,
  never a running run's; `figures()` gives its size, rows, hits and evictions for the stats.
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

import heapq
import itertools
import json
import logging
import os
import sqlite3
import threading
import zlib
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


DEFAULT_MAX_MB = 2048  # ExecutionFields.cache_max_mb: validate's and testgen's bound unless params say otherwise
MB = 1 << 20
TABLE_COLUMNS = "key TEXT PRIMARY KEY, value TEXT NOT NULL, used INTEGER NOT NULL DEFAULT 0"  # used: last-use stamp
LOW_WATER = 0.8  # a trim leaves the file at this share of its bound, so the next runs add rows before another
TOUCH_BATCH = 65536  # hits stamped in one transaction (rowids: ~2 MB); fewer commits rewrite fewer pages
TRIM_PASSES = 3  # a trim's estimate is checked on the compacted file; a rare second pass closes the gap


@dataclass
class _Session:
    """What the caches of one file open in this process share: one run. `base` is the first stamp
    of the run (rows stamped below it were last used by an earlier run), `tick` the last stamp
    given; the last cache to close trims the file."""

    base: int
    size_before: int
    tick: int = 0
    open: int = 0
    evicted: int = 0

    def next_stamp(self) -> int:
        self.tick = max(self.tick, self.base) + 1
        return self.tick


_sessions: dict[str, _Session] = {}
_sessions_lock = threading.Lock()


def file_bytes(path: str | Path) -> int:
    """The cache's size: the bytes of its SQLite file (0 when absent)."""
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def cache_tables(db: sqlite3.Connection) -> list[str]:
    """The file's cache tables (key, value, used), every one that `ResultCache` made or migrated."""
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return [t for t in names if {"key", "value"} <= _columns(db, t)]


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}


def _migrate(db: sqlite3.Connection) -> None:
    """Give every cache table of the file its last-used stamp (and the index eviction reads): a file
    written before the bound (key, value) gets the column in place (no row rewritten; its rows count
    as the least recently used)."""
    for t in cache_tables(db):
        if "used" not in _columns(db, t):
            db.execute(f"ALTER TABLE {t} ADD COLUMN used INTEGER NOT NULL DEFAULT 0")
        db.execute(f"CREATE INDEX IF NOT EXISTS {t}_used ON {t}(used)")


def _last_stamp(db: sqlite3.Connection) -> int:
    return max([db.execute(f"SELECT coalesce(max(used), 0) FROM {t}").fetchone()[0] for t in cache_tables(db)] or [0])


def evict_lru(db: sqlite3.Connection, free: float, below: int | None = None, tables: list[str] | None = None) -> int:
    """Delete the least recently used rows of `tables` (default every cache table of `db`; stamped
    below `below`, when given) until their key and value bytes reach `free`; returns how many (not
    committed)."""
    if free <= 0:
        return 0
    cursors = [db.execute(f"SELECT used, rowid, length(key) + length(value), ? FROM {t} WHERE used < ? ORDER BY used",
                          (t, 2**62 if below is None else below)) for t in tables or cache_tables(db)]
    victims: dict[str, list[tuple[int]]] = {}
    freed = 0
    for _, rowid, size, table in heapq.merge(*cursors):
        victims.setdefault(table, []).append((rowid,))
        freed += size
        if freed >= free:
            break
    for c in cursors:
        c.close()
    for table, rows in victims.items():
        db.executemany(f"DELETE FROM {table} WHERE rowid = ?", rows)
    return sum(len(rows) for rows in victims.values())


def trim(path: str | Path, max_bytes: float) -> int:
    """Bring the file at `path` down to `LOW_WATER` x `max_bytes` when it is over `max_bytes`: a
    new file of the most recently used rows that fit, in place of the old one. Returns the rows
    left out. (Deleting the others instead frees few whole pages, rows going here and there, so the
    file would not shrink without a VACUUM on top; one copy of what is kept costs less than both.)"""
    evicted = 0
    for _ in range(TRIM_PASSES):
        size = file_bytes(path)
        if size <= max_bytes:
            break
        # a 2 GB file takes about a minute: say why the stage pauses at its end
        logging.getLogger(__name__).info("result cache %s: %.0f MB, over its %.0f MB bound: keeping the rows "
                                         "used last", path, size / MB, max_bytes / MB)
        db = sqlite3.connect(str(path))
        try:
            _migrate(db)  # a file no ResultCache opened since the bound: its stamps count as the oldest
            tables = cache_tables(db)
            payload = sum(db.execute(f"SELECT total(length(key) + length(value)) FROM {t}").fetchone()[0] for t in tables)
            # the payload that fits: the file holds size / payload bytes per payload byte now (at most)
            tmp = Path(path).with_name(Path(path).name + ".compact")
            n = _rebuild(db, tmp, _oldest_kept(db, tables, LOW_WATER * max_bytes * payload / max(size, 1)))
        finally:
            db.close()
        if n == 0:
            tmp.unlink(missing_ok=True)
            break
        os.replace(tmp, path)  # atomic: an interrupt leaves the old file whole
        evicted += n
    return evicted


def _oldest_kept(db: sqlite3.Connection, tables: list[str], keep: float) -> dict[str, tuple[int, int]]:
    """Per table, the (used, rowid) of its least recently used row to keep: the most recently used
    rows of every table together whose key and value bytes fit in `keep` (stamp ties: newer rowid)."""
    def newest_first(t: str):
        for used, rowid, n in db.execute(f"SELECT used, rowid, length(key) + length(value) FROM {t} "
                                         "ORDER BY used DESC, rowid DESC"):
            yield used, rowid, n, t

    oldest = dict.fromkeys(tables, (2**62, 0))  # nothing kept
    total = 0
    for used, rowid, n, t in heapq.merge(*(newest_first(t) for t in tables), reverse=True):
        total += n
        if total > keep:
            break
        oldest[t] = (used, rowid)
    return oldest


def _rebuild(db: sqlite3.Connection, tmp: Path, oldest: dict[str, tuple[int, int]]) -> int:
    """Write the rows of `db` from `oldest` on (per table) into the new file `tmp`; returns the rows
    left out."""
    tmp.unlink(missing_ok=True)
    db.execute("ATTACH DATABASE ? AS fresh", (str(tmp),))
    left_out = 0
    try:
        for t, (used, rowid) in oldest.items():
            db.execute(f"CREATE TABLE fresh.{t} ({TABLE_COLUMNS})")
            kept = db.execute(f"INSERT INTO fresh.{t} (key, value, used) SELECT key, value, used FROM main.{t} "
                              "WHERE (used, rowid) >= (?, ?) ORDER BY rowid", (used, rowid)).rowcount
            left_out += db.execute(f"SELECT count(*) FROM main.{t}").fetchone()[0] - kept
            db.execute(f"CREATE INDEX fresh.{t}_used ON {t}(used)")  # built once, sorted: cheaper than per row
        db.commit()
    except BaseException:
        db.rollback()
        raise
    finally:
        db.execute("DETACH DATABASE fresh")
    return left_out


# A value's JSON over this many bytes is stored zlib-compressed (a BLOB): testgen's per-problem rows
# hold full-size inputs and outputs (~3 MB a problem on real sources, 4.5x smaller compressed, ~8 ms a
# MB to compress); text rows (older files, small values) are read as they are.
COMPRESS_ABOVE = 4096


def encode_value(value: Any) -> str | bytes:
    text = json.dumps(value)
    return zlib.compress(text.encode(), 1) if len(text) > COMPRESS_ABOVE else text


def decode_value(raw: str | bytes) -> Any:
    return json.loads(zlib.decompress(raw) if isinstance(raw, bytes) else raw)


class ResultCache:
    """key -> JSON value in the SQLite table `table` of the file `path` (created as needed); safe
    to use from several threads (the runs' threads write as their chunks end).

    Bounded by `max_mb` (the file's bytes), least recently used rows first. Every row carries the
    stamp of its last use (`used`: a counter of the file, one step per batch of writes or hits, never
    the clock); hits are stamped in batches (`TOUCH_BATCH`), so a read stays one SELECT. While a run
    goes on (from the first open of the file in this process to its last close) none of its rows is
    evicted: when the file is over the bound, the run's writes evict as many bytes of its table's
    rows of earlier runs (whose pages the new rows then fill). The last close trims the file to
    `LOW_WATER` of the bound, the run's own rows included, least recently used first (`trim`), so a
    rerun of a run larger than the bound hits what fits. `figures()` says what the cache did. One
    process at a time per file: another's run is not protected, and a trim replaces the file."""

    def __init__(self, path: str | Path, table: str = "runs", max_mb: float = DEFAULT_MAX_MB):
        if not table.isidentifier():
            raise ValueError(f"table must be an identifier, got {table!r}")
        if not max_mb > 0:
            raise ValueError(f"max_mb must be > 0, got {max_mb!r}")
        self.path, self.table, self.max_mb = Path(path), table, max_mb
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = self.misses = 0
        self._touched: list[int] = []  # rowids of hits whose stamps are not written yet
        self._written = 0  # bytes written since the last check of the bound
        self._closed_figures: dict[str, Any] | None = None
        self._lock = threading.Lock()
        with _sessions_lock:
            self.session = _sessions.get(self._name)
            before = file_bytes(self.path)
            if self.session is None:
                self.path.with_name(self.path.name + ".compact").unlink(missing_ok=True)  # an interrupted trim's
            self.db = sqlite3.connect(str(self.path), check_same_thread=False)
            try:
                self.db.execute(f"CREATE TABLE IF NOT EXISTS {table} ({TABLE_COLUMNS})")
                _migrate(self.db)
                self.db.commit()
                if self.session is None:
                    self.session = _sessions[self._name] = _Session(_last_stamp(self.db) + 1, before)
            except sqlite3.DatabaseError as e:
                self.db.close()
                raise OSError(f"result cache {self.path}: {e} (delete the file to start an empty cache)") from None
            self.session.open += 1

    @property
    def _name(self) -> str:
        return str(self.path.resolve())

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self.db.execute(f"SELECT value, used, rowid FROM {self.table} WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
            if row[1] < self.session.base:  # stamped by an earlier run: this run uses it
                self._touched.append(row[2])
                if len(self._touched) >= TOUCH_BATCH:
                    self._stamp_touched()
                    self.db.commit()
        return decode_value(row[0])

    def put_many(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        if not items:
            return
        rows = [(k, encode_value(v)) for k, v in items]
        with self._lock:
            stamp = self._stamp()
            self._stamp_touched()
            self.db.executemany(f"INSERT OR REPLACE INTO {self.table} (key, value, used) VALUES (?, ?, ?)",
                                [(k, v, stamp) for k, v in rows])
            self._written += sum(len(k) + len(v) for k, v in rows)
            if self._written >= max(self.max_mb * MB / 64, 64 * 1024):  # a stat now and then, not per chunk
                if file_bytes(self.path) > self.max_mb * MB:
                    # earlier runs' rows of this table only: its hits are stamped, another table's may not be
                    n = evict_lru(self.db, self._written, below=self.session.base, tables=[self.table])
                    with _sessions_lock:
                        self.session.evicted += n
                self._written = 0
            self.db.commit()

    def _stamp(self) -> int:
        with _sessions_lock:
            return self.session.next_stamp()

    def _stamp_touched(self) -> None:
        """Under the lock: write the stamps of the hits not stamped yet (the caller commits)."""
        if self._touched:
            stamp = self._stamp()
            self.db.executemany(f"UPDATE {self.table} SET used = ? WHERE rowid = ?",
                                [(stamp, r) for r in sorted(self._touched)])  # in file order: fewer page reads
            self._touched = []

    def close(self, trim_file: bool = True) -> None:
        """Write the hits' stamps and close; the last cache of the file open in this process trims
        it to its bound (`trim`; `trim_file` False leaves that to the next run: an interrupt)."""
        if self._closed_figures is not None:
            return
        with self._lock:
            self._stamp_touched()
            self.db.commit()
            with _sessions_lock:
                self.session.open -= 1
                last = self.session.open == 0
                if last:
                    del _sessions[self._name]
            rows = None if last else self._rows(self.db)
            self.db.close()
            if last:
                if trim_file:
                    self.session.evicted += trim(self.path, self.max_mb * MB)
                db = sqlite3.connect(str(self.path))
                try:
                    rows = self._rows(db)
                finally:
                    db.close()
            self._closed_figures = {"size_mb_after": _mb(file_bytes(self.path)), "rows": rows}

    @staticmethod
    def _rows(db: sqlite3.Connection) -> int:
        return sum(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in cache_tables(db))

    def figures(self) -> dict[str, Any]:
        """What the cache did in this run: its file, bound and size (when the run began, and now:
        after the trim, once closed), its rows (every table of the file), this table's hits and misses,
        and the rows the trim evicted (on the figures of the cache closed last)."""
        now = self._closed_figures or {"size_mb_after": _mb(file_bytes(self.path)), "rows": None}
        looked = self.hits + self.misses
        return {"path": str(self.path), "max_mb": self.max_mb, "size_mb_before": _mb(self.session.size_before),
                **now, "hits": self.hits, "misses": self.misses,
                "hit_rate": round(self.hits / looked, 4) if looked else None, "evicted": self.session.evicted}


def _mb(n: int) -> float:
    return round(n / MB, 3)


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

