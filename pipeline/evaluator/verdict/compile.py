"""C++ compilation, sandboxed in the worker's build box and cached by (flags, source) hash.

The same source is compiled once per Evaluator, however many workers ask for it at once (GRPO
groups often hold identical samples); compile errors are cached too.

A compilation that runs out of wall-clock time having used almost no CPU was blocked, not slowed
down: the source made the compiler wait (`#include` of a FIFO or a terminal; the sandbox's /dev
has no device that blocks, but the unshare fallback shows the host's files). That is the
source's doing, so it is a CE and cached; one that used its CPU share is a busy machine (SE,
not cached).

Compile outputs are bounded: every file the compiler writes is limited to a little over
`max_binary_mb` (RLIMIT_FSIZE: the assembler or the linker is killed beyond it), and a binary over
`max_binary_mb` is a CE (`char a[200<<20] = {1};` is one line). The cache holds at most
`compile_cache_mb` in all, least recently used entries evicted first; the binary last handed to each
worker is never evicted, as the worker is about to `install()` it (a hard link, which then outlives
the eviction).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.evaluator.sandbox.box import BoxError
from microcoder.pipeline.evaluator.sandbox.workspace import MB, Worker, write_file

ERROR_KEEP = 4000
BLOCKED_CPU_SHARE = 0.1  # of the wall-clock limit: less CPU than this in all that time = blocked
FSIZE_SLACK = 1 * MB  # compiler files may exceed max_binary_mb by this much (object files' extra tables)
ENTRY_OVERHEAD = 512  # bytes charged to every cache entry besides its binary and message


@dataclass(frozen=True)
class CompileResult:
    status: str  # ok | CE | SE
    binary: Path | None = None
    message: str | None = None  # compiler diagnostics (CE) or what failed (SE)
    seconds: float = 0.0
    cached: bool = False


class Compiler:
    def __init__(self, cache_dir: Path, cfg: EvaluatorConfig):
        self.cache_dir = cache_dir
        self.cache_dir.mkdir(mode=0o755, parents=True, exist_ok=True)
        os.chmod(self.cache_dir, 0o755)  # not masked by the umask
        self.cfg = cfg
        self._results: OrderedDict[str, CompileResult] = OrderedDict()  # least recently used first
        self._sizes: dict[str, int] = {}
        self.cached_bytes = 0
        self._locks: dict[str, list] = {}  # key -> [lock, threads using it]; only keys in flight
        self._handed: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()  # worker -> key
        self._guard = threading.Lock()  # _results, _sizes, cached_bytes, _locks, _handed

    def key(self, source: str, extra_flags: tuple[str, ...] = ()) -> str:
        h = hashlib.sha256("\0".join([self.cfg.cpp_compiler, *self.cfg.cpp_flags, *extra_flags]).encode())
        h.update(b"\0" + source.encode("utf-8", "surrogatepass"))
        return h.hexdigest()[:32]

    def compile(self, source: str, worker: Worker, extra_flags: tuple[str, ...] = ()) -> CompileResult:
        """`extra_flags` (e.g. `-I` for a checker's testlib.h) follow the configured flags."""
        key = self.key(source, extra_flags)
        with self._guard:
            entry = self._locks.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                with self._guard:
                    hit = self._results.get(key)
                    if hit is not None:
                        self._results.move_to_end(key)
                        self._hand(worker, key, hit)
                        return CompileResult(hit.status, hit.binary, hit.message, 0.0, cached=True)
                result = self._compile(key, source, worker, extra_flags)
                if result.status != "SE":  # a harness failure (or a busy machine) is not a property of the source
                    self._store(key, result, worker)
                return result
        finally:
            with self._guard:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._locks[key]

    def _hand(self, worker: Worker, key: str, result: CompileResult) -> None:
        """Pin the binary `worker` is about to install (and release the one it installed before)."""
        try:
            if result.binary is not None:
                self._handed[worker] = key
            else:
                self._handed.pop(worker, None)
        except TypeError:  # a worker that cannot be weakly referenced: nothing pinned for it
            pass

    def _store(self, key: str, result: CompileResult, worker: Worker) -> None:
        """Cache `result`, then evict least recently used entries until the cache fits its budget."""
        size = ENTRY_OVERHEAD + len(result.message or "")
        if result.binary is not None:
            try:
                size += result.binary.stat().st_size
            except OSError:
                pass
        with self._guard:
            self._results[key] = result
            self._sizes[key] = size
            self.cached_bytes += size
            self._hand(worker, key, result)
            pinned = set(self._handed.values())
            budget = self.cfg.compile_cache_mb * MB
            for old in list(self._results):
                if self.cached_bytes <= budget:
                    break
                if old == key or old in pinned:
                    continue
                self._evict(old)

    def _evict(self, key: str) -> None:
        """Under the guard. A worker that installed this binary keeps its hard link (or copy)."""
        result = self._results.pop(key)
        self.cached_bytes -= self._sizes.pop(key)
        if result.binary is not None:
            shutil.rmtree(self.cache_dir / key, ignore_errors=True)

    def _compile(self, key: str, source: str, worker: Worker, extra_flags: tuple[str, ...]) -> CompileResult:
        compiler = shutil.which(self.cfg.cpp_compiler)
        if compiler is None:
            return CompileResult("SE", message=f"C++ compiler {self.cfg.cpp_compiler!r} not found on PATH")
        src, out = worker.build / "main.cpp", worker.build / "prog"
        out.unlink(missing_ok=True)
        write_file(src, source)
        box = worker.box("build")
        limit = self.cfg.compile_time_limit_s
        max_binary = self.cfg.max_binary_mb * MB
        req = {
            "op": "run", "kind": "exec",
            "argv": [compiler, *self.cfg.cpp_flags, *extra_flags, "-o", box.inside(out), box.inside(src)],
            "cpu_s": limit, "wall_s": 2 * limit + 5, "mem_bytes": self.cfg.compile_memory_mb * MB,
            "fsize_bytes": max_binary + FSIZE_SLACK, "nofile": 512, "out_bytes": 64 * 1024, "err_bytes": 64 * 1024,
            "err_mode": "head",
        }
        t0 = time.monotonic()
        try:
            reply = worker.box("build").request(req, 2 * limit + 30)
        except BoxError as e:
            return CompileResult("SE", message=f"compiler sandbox failed: {e}")
        h = reply.header
        seconds = time.monotonic() - t0
        if not h.get("ok") or h.get("harness_error"):
            return CompileResult("SE", message=f"compiler could not run: {h.get('harness_error')}", seconds=seconds)
        diag = (reply.blobs[1] + reply.blobs[0]).decode("utf-8", "replace")
        diag = diag.replace(box.inside(src), "main.cpp").strip()[:ERROR_KEEP]
        if h["why"] == "cpu":
            return CompileResult("CE", message=f"compilation exceeded {limit:g} s of CPU time", seconds=seconds)
        wall_limit = 2 * limit + 5
        figures = [float(h[k]) for k in ("cpu_s", "total_cpu_s") if isinstance(h.get(k), (int, float))]
        if h["why"] == "wall" and figures and max(figures) < BLOCKED_CPU_SHARE * wall_limit:
            cpu = max(figures)
            return CompileResult("CE", message=f"compilation blocked: {cpu:.2f} s of CPU in {wall_limit:g} s "
                                 "(does the source include a device or a pipe?)", seconds=seconds)
        if h["why"] == "wall":  # CPU time within the limit: a busy machine, not the source's fault
            return CompileResult("SE", message=f"compilation ran out of {2 * limit + 5:g} s of wall-clock time "
                                 "with CPU time to spare (a busy machine)", seconds=seconds)
        too_big = f"over the {self.cfg.max_binary_mb:g} MB limit on the binary's size (evaluator.max_binary_mb)"
        if h["exit"] != 0 or not out.exists():
            size = out.stat().st_size if out.exists() else 0
            if h.get("signal") == signal.SIGXFSZ or "File size limit exceeded" in diag or size > max_binary:
                out.unlink(missing_ok=True)  # the part written so far
                killed = next((line for line in diag.splitlines() if "File size limit exceeded" in line), "")
                return CompileResult("CE", message=f"compiler output {too_big}" + (f"\n{killed}" if killed else ""),
                                     seconds=seconds)
            out.unlink(missing_ok=True)
            why = diag or (f"compiler killed by signal {h['signal']}" if h["signal"] else f"compiler exit {h['exit']}")
            return CompileResult("CE", message=why, seconds=seconds)
        size = out.stat().st_size
        if size > max_binary:
            out.unlink(missing_ok=True)
            return CompileResult("CE", message=f"binary of {size / MB:.1f} MB is {too_big}", seconds=seconds)
        target = self.cache_dir / key
        target.mkdir(mode=0o755, exist_ok=True)
        os.chmod(target, 0o755)
        os.chmod(out, 0o755)
        os.replace(out, target / "prog")
        return CompileResult("ok", target / "prog", diag or None, seconds)


def install(binary: Path, dest: Path) -> None:
    """Make a cached binary visible in a worker's exchange dir (hard link; copy across devices)."""
    dest.unlink(missing_ok=True)
    try:
        os.link(binary, dest)
    except OSError:
        shutil.copy2(binary, dest)
        os.chmod(dest, 0o755)
