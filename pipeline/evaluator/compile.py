"""C++ compilation, sandboxed in the worker's build box and cached by (flags, source) hash.

The same source is compiled once per Evaluator, however many workers ask for it at once (GRPO
groups often hold identical samples); compile errors are cached too.

A compilation that runs out of wall-clock time having used almost no CPU was blocked, not slowed
down: the source made the compiler wait (`#include` of a FIFO or a terminal; the sandbox's /dev
has no device that blocks, but the unshare fallback shows the host's files). That is the
source's doing, so it is a CE and cached; one that used its CPU share is a busy machine (SE,
not cached).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pipeline.evaluator.box import BoxError
from pipeline.evaluator.config import EvaluatorConfig
from pipeline.evaluator.workspace import MB, Worker, write_file

ERROR_KEEP = 4000
BLOCKED_CPU_SHARE = 0.1  # of the wall-clock limit: less CPU than this in all that time = blocked


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
        self._results: dict[str, CompileResult] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def key(self, source: str, extra_flags: tuple[str, ...] = ()) -> str:
        h = hashlib.sha256("\0".join([self.cfg.cpp_compiler, *self.cfg.cpp_flags, *extra_flags]).encode())
        h.update(b"\0" + source.encode("utf-8", "surrogatepass"))
        return h.hexdigest()[:32]

    def compile(self, source: str, worker: Worker, extra_flags: tuple[str, ...] = ()) -> CompileResult:
        """`extra_flags` (e.g. `-I` for a checker's testlib.h) follow the configured flags."""
        key = self.key(source, extra_flags)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            hit = self._results.get(key)
            if hit is not None:
                return CompileResult(hit.status, hit.binary, hit.message, 0.0, cached=True)
            result = self._compile(key, source, worker, extra_flags)
            if result.status != "SE":  # a harness failure (or a busy machine) is not a property of the source
                self._results[key] = result
            return result

    def _compile(self, key: str, source: str, worker: Worker, extra_flags: tuple[str, ...]) -> CompileResult:
        compiler = shutil.which(self.cfg.cpp_compiler)
        if compiler is None:
            return CompileResult("SE", message=f"C++ compiler {self.cfg.cpp_compiler!r} not found on PATH")
        src, out = worker.build / "main.cpp", worker.build / "prog"
        out.unlink(missing_ok=True)
        write_file(src, source)
        box = worker.box("build")
        limit = self.cfg.compile_time_limit_s
        req = {
            "op": "run", "kind": "exec",
            "argv": [compiler, *self.cfg.cpp_flags, *extra_flags, "-o", box.inside(out), box.inside(src)],
            "cpu_s": limit, "wall_s": 2 * limit + 5, "mem_bytes": self.cfg.compile_memory_mb * MB,
            "fsize_bytes": 512 * MB, "nofile": 512, "out_bytes": 64 * 1024, "err_bytes": 64 * 1024,
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
        if h["exit"] != 0 or not out.exists():
            why = diag or (f"compiler killed by signal {h['signal']}" if h["signal"] else f"compiler exit {h['exit']}")
            return CompileResult("CE", message=why, seconds=seconds)
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
