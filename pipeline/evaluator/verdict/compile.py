"""C++ compilation, sandboxed in the worker's build box and cached by (flags, source) hash.

The same source is compiled once per Evaluator, however many workers ask for it at once (GRPO
groups often hold identical samples); compile errors are cached too.

A compile over its limits is the source's doing, a CE, cached, as DOMjudge and Codeforces rule
it: its CPU limit (`compile_time_limit_s`, on the run's counter, which holds every process of the
compile: the driver, cc1plus, as, ld) and its wall limit (2 x that + 5 s). Out of wall time within
its CPU time, the compiler waited: on something the source made it read, or on a stalled machine.
The judge's own health tells which, never the source's CPU use (a source that computed for a while
and then blocked had its SE on demand, the wall limit paid again at every resubmission): the same
build box compiles a reference source (`int main`), in the same run group, and measures its share
of a CPU (CPU time over wall time). Under limit / wall limit, the share at which a compile that
stays within its CPU limit runs out of wall time, in both of two tries: a stalled machine, SE (not
cached). Otherwise CE. `Compiler(health=...)` replaces the check (tests).

What a source can make the compiler read is held to the include path by construction. The
compiler runs under `inside/compile_guard.py`: its stdout and stderr are a file, never a pipe, and
`-pipe` is left out, so nothing it can open blocks (`#include "/dev/stdout"` read the judge's pipe);
where the kernel has Landlock, it and its children may read only beneath the system folders, the
source's folder and `-I` folders, so nothing under /proc or /dev opens, however the path is
spelled or built by macros, nor by the assembler's `.incbin`. Besides, the compiler's own
dependency list (`-MD`) must name only files under /usr (as spelled and as resolved), the
compiler's prefix, the source's folder and `-I` folders: otherwise CE. That holds the includes
where the kernel has no Landlock; `.incbin` is unchecked then, and a FIFO among the host's files
(unshare fallback) blocks the compiler: the wall limit once, then a cached CE.

Compile outputs are bounded: every file the compiler writes is limited to a little over
`max_binary_mb` (RLIMIT_FSIZE: the assembler or the linker is killed beyond it), and a binary over
`max_binary_mb` is a CE (`char a[200<<20] = {1};` is one line). The cache holds at most
`compile_cache_mb` in all, least recently used entries evicted first; the binary last handed to each
worker is never evicted, as the worker is about to `install()` it (a hard link, which then outlives
the eviction).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.evaluator.sandbox import launch as sb
from microcoder.pipeline.evaluator.sandbox.box import BoxError, Reply
from microcoder.pipeline.evaluator.sandbox.workspace import MB, Worker, write_file

ERROR_KEEP = 4000
GUARD = sb.HARNESS_DIR / "compile_guard.py"
GUARD_FAILED = 125  # compile_guard.GUARD_FAILED: the guard itself failed, not the compiler
LOG = "compile.log"  # in the run folder: outside every folder the compiler may open
SYSTEM_INCLUDE_ROOT = "/usr"  # where the compiler's own headers lie (a compiler's prefix besides)
INCLUDE_OPTIONS = ("-I", "-isystem", "-iquote", "-idirafter")
LANDLOCK = True  # where the kernel has it (tests turn it off to test the dependency list alone)
REFERENCE = "int main() { return 0; }\n"
REFERENCE_TRIES = 2  # a stall shows in each; a blip in one
REFERENCE_CPU_S, REFERENCE_WALL_S = 10.0, 20.0
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
    def __init__(self, cache_dir: Path, cfg: EvaluatorConfig, health: Callable[[Worker], str | None] | None = None):
        """`health(worker)`: None when the machine is healthy, else what shows it stalled (asked
        after a wall-limit hit; default `stalled`, a reference compile)."""
        self.health = health if health is not None else self.stalled
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

    def _run(self, worker: Worker, name: str, source: str, extra_flags: tuple[str, ...], cpu_s: float,
             wall_s: float) -> tuple[Reply, Path, str]:
        """Compile `source` as `<name>.cpp` into `<name>` in the worker's build dir under the guard.
        Returns the judge's reply, the dependency list's path and the source's path inside the box;
        raises BoxError."""
        src, out, deps = (worker.build / n for n in (f"{name}.cpp", name, f"{name}.d"))
        out.unlink(missing_ok=True)
        deps.unlink(missing_ok=True)
        write_file(src, source)
        box = worker.box("build")
        flags = [f for f in (*self.cfg.cpp_flags, *extra_flags) if f != "-pipe"]  # -pipe: cc1plus's stdout a pipe
        guard = {"log": f"{{cwd}}/{LOG}", "tmp": "{cwd}/tmp",
                 "read": [*(d for d in sb.SYSTEM_DIRS if os.path.exists(d)), *self._roots(extra_flags)],
                 "write": [box.inside(worker.build), "{cwd}/tmp"], "landlock": LANDLOCK}
        req = {
            "op": "run", "kind": "exec",
            "argv": [sys.executable, "-I", "-S", box.inside(GUARD), json.dumps(guard), self._compiler, *flags,
                     "-MD", "-MF", box.inside(deps), "-o", box.inside(out), box.inside(src)],
            "cpu_s": cpu_s, "wall_s": wall_s, "mem_bytes": self.cfg.compile_memory_mb * MB,
            "fsize_bytes": self.cfg.max_binary_mb * MB + FSIZE_SLACK, "nofile": 512, "out_bytes": 64 * 1024,
            "err_bytes": 64 * 1024, "err_mode": "head", "mkdirs": ["tmp"], "collect": [LOG],
        }
        return box.request(req, wall_s + 30), deps, box.inside(src)

    @property
    def _compiler(self) -> str:
        return shutil.which(self.cfg.cpp_compiler) or self.cfg.cpp_compiler

    def _roots(self, extra_flags: tuple[str, ...] | None) -> list[str]:
        """The folders a source may include from besides the build dir (inside paths): the system
        headers, the compiler's own prefix, and the include folders the flags name (the
        configured ones and `extra_flags`; None: the first two only)."""
        roots = [SYSTEM_INCLUDE_ROOT]
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(self._compiler)))
        if prefix != "/":  # a compiler in /bin: its headers are under /usr anyway
            roots.append(prefix)
        flags = [] if extra_flags is None else [*self.cfg.cpp_flags, *extra_flags]
        for i, flag in enumerate(flags):
            for option in INCLUDE_OPTIONS:
                if flag == option and i + 1 < len(flags):
                    roots.append(flags[i + 1])
                elif flag.startswith(option) and len(flag) > len(option):
                    roots.append(flag[len(option):])
        return list(dict.fromkeys(os.path.normpath(r) for r in roots))

    def _compile(self, key: str, source: str, worker: Worker, extra_flags: tuple[str, ...]) -> CompileResult:
        if shutil.which(self.cfg.cpp_compiler) is None:
            return CompileResult("SE", message=f"C++ compiler {self.cfg.cpp_compiler!r} not found on PATH")
        limit = self.cfg.compile_time_limit_s
        wall_limit = 2 * limit + 5
        out = worker.build / "main"
        t0 = time.monotonic()
        try:
            reply, deps, src_inside = self._run(worker, "main", source, extra_flags, limit, wall_limit)
        except BoxError as e:
            return CompileResult("SE", message=f"compiler sandbox failed: {e}")
        h = reply.header
        seconds = time.monotonic() - t0
        if not h.get("ok") or h.get("harness_error"):
            return CompileResult("SE", message=f"compiler could not run: {h.get('harness_error')}", seconds=seconds)
        log = reply.blobs[2] if len(reply.blobs) > 2 else b""
        diag = (log + reply.blobs[1] + reply.blobs[0]).decode("utf-8", "replace")
        diag = diag.replace(src_inside, "main.cpp").strip()[:ERROR_KEEP]
        if h["why"] == "exit" and h["exit"] == GUARD_FAILED and "compile guard:" in diag:
            out.unlink(missing_ok=True)
            return CompileResult("SE", message=f"the compiler's guard failed: {diag}", seconds=seconds)
        if h["why"] == "cpu":
            return CompileResult("CE", message=f"compilation exceeded {limit:g} s of CPU time", seconds=seconds)
        if h["why"] == "wall":
            stalled = self.health(worker)
            if stalled is not None:
                return CompileResult("SE", message=f"compilation ran out of {wall_limit:g} s of wall-clock time "
                                     f"on a stalled machine: {stalled}", seconds=seconds)
            return CompileResult("CE", message=f"compilation ran out of {wall_limit:g} s of wall-clock time, "
                                 "within its CPU time, on a healthy machine: the source kept the compiler "
                                 "waiting", seconds=seconds)
        too_big = f"over the {self.cfg.max_binary_mb:g} MB limit on the binary's size (evaluator.max_binary_mb)"
        max_binary = self.cfg.max_binary_mb * MB
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
        outside = self._outside_include_path(deps, worker, extra_flags)
        if outside is not None:
            out.unlink(missing_ok=True)
            return CompileResult("CE", message=outside, seconds=seconds)
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

    def _outside_include_path(self, deps: Path, worker: Worker, extra_flags: tuple[str, ...]) -> str | None:
        """Why a compile that succeeded read a file outside the include path, by its `-MD` list (paths
        as the box sees them); None when it read none."""
        try:
            fd = os.open(deps, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # it always writes one: a CE, never an SE a source could ask for
            return "the compiler wrote no dependency list (-MD)"
        try:
            with os.fdopen(fd, "rb") as f:
                text = f.read(self.cfg.max_binary_mb * MB + FSIZE_SLACK).decode("utf-8", "surrogateescape")
        finally:
            deps.unlink(missing_ok=True)
        system = self._roots(None)  # bound into the box where they are on the host: resolved here
        roots = [*self._roots(extra_flags), worker.box("build").inside(worker.build)]
        for path in dependencies(text):
            spelled = os.path.normpath(path)
            real = os.path.realpath(spelled) if _under(spelled, system) else spelled
            if not (_under(spelled, roots) and _under(real, roots)):
                shown = spelled if real == spelled else f"{spelled} (a link to {real})"
                return (f"main.cpp includes {shown}, outside the include path (the system headers under "
                        f"{SYSTEM_INCLUDE_ROOT}, the source's own folder): nothing from /proc, /dev or elsewhere")
        return None

    def stalled(self, worker: Worker) -> str | None:
        """The default health check: None when a reference compile in `worker`'s build box gets the
        share of a CPU (CPU time over wall time) a compile needs to use its CPU limit within its wall
        limit, in one of REFERENCE_TRIES tries; else what the last try showed. It runs where the
        compile ran (same box, same run group), so it gets the share the compile got."""
        why = None
        for _ in range(REFERENCE_TRIES):
            why = self._reference(worker)
            if why is None:
                return None
        return why

    def _reference(self, worker: Worker) -> str | None:
        t0 = time.monotonic()
        try:
            reply, _, _ = self._run(worker, "reference", REFERENCE, (), REFERENCE_CPU_S, REFERENCE_WALL_S)
        except BoxError as e:
            return f"the build box failed on a reference compile ({e})"
        finally:
            for name in ("reference.cpp", "reference", "reference.d"):
                (worker.build / name).unlink(missing_ok=True)
        h = reply.header
        if not h.get("ok") or h.get("why") != "exit" or h.get("exit") != 0:
            return f"a reference compile failed ({h.get('why')}, exit {h.get('exit')}, signal {h.get('signal')})"
        cpu = max((float(h[k]) for k in ("cpu_s", "total_cpu_s") if isinstance(h.get(k), (int, float))), default=0.0)
        wall = float(h["wall_s"]) if isinstance(h.get("wall_s"), (int, float)) else time.monotonic() - t0
        share = cpu / wall if wall > 0 else 1.0
        limit = self.cfg.compile_time_limit_s
        needed = limit / (2 * limit + 5)
        if share >= needed:
            return None
        return (f"a reference compile got {share:.0%} of a CPU ({cpu:.2f} s of CPU in {wall:.2f} s), under the "
                f"{needed:.0%} a compile needs to use its CPU limit within its wall limit")


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def dependencies(rule: str) -> list[str]:
    """The prerequisites of the make rule `-MD` writes (`target: a b \\` newline `c`; a space in a
    name escaped `\\ `, `#` as `\\#`, `$` as `$$`)."""
    words, word, i = [], [], 0
    rule = rule.replace("\\\n", " ")
    while i < len(rule):
        c = rule[i]
        if c == "\\" and i + 1 < len(rule) and rule[i + 1] in " #\\":
            word.append(rule[i + 1])
            i += 2
            continue
        if c == "$" and rule[i + 1:i + 2] == "$":
            word.append("$")
            i += 2
            continue
        if c.isspace():
            if word:
                words.append("".join(word))
                word = []
        else:
            word.append(c)
        i += 1
    if word:
        words.append("".join(word))
    for k, w in enumerate(words):  # the target, up to its colon
        if w.endswith(":"):
            return words[k + 1:]
    return words


def install(binary: Path, dest: Path) -> None:
    """Make a cached binary visible in a worker's exchange dir (hard link; copy across devices)."""
    dest.unlink(missing_ok=True)
    try:
        os.link(binary, dest)
    except OSError:
        shutil.copy2(binary, dest)
        os.chmod(dest, 0o755)
