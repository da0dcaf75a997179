"""Program directories (Kattis problem package format) as checker or interactor programs: built
and installed in the worker's boxes. What a record holds (`Checker(language="bundle")`, the files
as JSON) and how it is packed, read and written: pipeline/program_bundle.py.

How such a program is built and run follows the format (spec 2025-09, "Programs"; problemtools'
run/buildrun.py and run/source.py for the older packages):
  build/run  a `build` or `run` script at the top: `build` (when there) runs with (a copy of) the
             directory as its working directory and must leave an executable `run`, which is then
             the program (a binary, or a shell script: one without `#!` is run by /bin/sh).
  C++ / C    no script: every C++ source (.cc .cpp .cxx .c++ .C) is compiled together into one
             binary (C sources (.c) alike with cc when they are the majority, as problemtools does).
  Python     no script: the entry is `__main__.py` (the directory is then run as `python3 dir`
             runs it), else `main.py`, else the one file with `if __name__ == "__main__"`, else the
             first file in sorted order (problemtools' choice); the directory is on sys.path.

A build runs in the worker's build box (never on the host) with the compile limits, in a writable
copy of the directory there: a new folder with a random name in the worker's build dir, given to
the box's uid. All there is the box's to change (into a link to a host folder, a FIFO, ...), so the
host reaches it only through descriptors of folders it opened itself, never following a link, and
empties the build dir before and after. What a build leaves is copied (folders, regular files the
box owns and links that stay inside; nothing else, and within bounds) into the compiler's cache
dir once per program and evaluator, and from there into the worker's check dir, which only its
check box sees. A build that fails is remembered (it fails the same way next time); one that the
machine failed (the sandbox, a busy machine running out of wall-clock time) is not.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
import stat
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from microcoder.pipeline.evaluator.sandbox.box import BoxError
from microcoder.pipeline.evaluator.sandbox.workspace import MB, Worker
from microcoder.pipeline.evaluator.verdict import testlib
from microcoder.pipeline.evaluator.verdict.compile import Compiler
from microcoder.pipeline.program_bundle import (
    MAX_DEPTH,
    MAX_TOTAL_BYTES,
    SCRIPTS,
    load,
    open_dir,
    write_files,
    write_new,
)

CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".C")
C_SUFFIXES = (".c",)
PYTHON_SUFFIXES = (".py", ".py3")
C_FLAGS = ("-O2", "-pipe", "-DONLINE_JUDGE")
MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]\s*:""", re.MULTILINE)
DIAG_KEEP = 2000
BLOCKED_CPU_SHARE = 0.1  # as in compile.py: less CPU than this share of the wall limit = blocked
INSTALLED = "bundle"  # the program's folder in the worker's check dir
LAUNCHER = ".launch.py"  # a Python program's starter (a dot name: never one of the program's files)
BUILT_KEEP = 64  # built programs kept per process (least recently used evicted)
MAX_PRODUCTS = 10_000  # files, folders and links a build may leave
MAX_REMOVED = 1_000_000  # entries a clean-up removes at most (a box still adding more)
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO opens without blocking

PYTHON_LAUNCHER = """\
import os, runpy, sys
here = os.path.dirname(os.path.abspath(__file__))
target = os.path.join(here, {entry!r}) if {entry!r} else here
sys.path.insert(0, here)
sys.argv[0] = target
runpy.run_path(target, run_name="__main__")
"""


class BuildError(RuntimeError):
    """The program directory does not build (or cannot be run as given). `lasting`: the
    program's own doing (remembered), not the machine's."""

    def __init__(self, message: str, lasting: bool = True):
        super().__init__(message)
        self.lasting = lasting


# --- how to build and run it --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    kind: str  # script | cpp | c | python
    sources: tuple[str, ...] = ()  # compiled together (cpp, c)
    entry: str | None = None  # python: the entry file ("" = the directory's __main__.py)
    build: bool = False  # script: a build script to run first


def plan(files: dict[str, str]) -> Plan:
    """How the format builds and runs a program directory with these files."""
    if any(name in files for name in SCRIPTS):
        return Plan("script", build="build" in files)
    by_kind = {kind: sorted(p for p in files if p.endswith(suffixes))
               for kind, suffixes in (("cpp", CPP_SUFFIXES), ("c", C_SUFFIXES), ("python", PYTHON_SUFFIXES))}
    kind = max(by_kind, key=lambda k: len(by_kind[k]))  # ties: the first (C++, then C)
    sources = by_kind[kind]
    if not sources:
        raise ValueError("no build or run script and no C++, C or Python source: the format does not say "
                         f"how to build it (files: {', '.join(sorted(files)[:10])})")
    if kind != "python":
        return Plan(kind, sources=tuple(sources))
    return Plan("python", sources=tuple(sources), entry=_python_entry(files, sources))


def _python_entry(files: dict[str, str], sources: list[str]) -> str:
    if "__main__.py" in files:
        return ""
    if "main.py" in files:
        return "main.py"
    top = [p for p in sources if "/" not in p] or sources
    guarded = [p for p in top if MAIN_GUARD.search(files[p])]
    return guarded[0] if len(guarded) == 1 else top[0]


@dataclass(frozen=True)
class Launch:
    """How to start an installed program: the harness's run kind, the file it runs (`code`) and
    the argv before the program's own arguments; paths relative to the worker's check dir, or
    absolute (/bin/sh)."""

    kind: str  # exec | python
    code: str
    argv0: tuple[str, ...]


@dataclass(frozen=True)
class Built:
    folder: Path  # in the compiler's cache dir
    launch: Launch


def launch_for(p: Plan, folder: Path) -> Launch:
    """How the built program in `folder` is started once installed in a check dir."""
    if p.kind == "python":
        entry = f"{INSTALLED}/{p.entry}" if p.entry else INSTALLED
        return Launch("python", f"{INSTALLED}/{LAUNCHER}", (entry,))
    run = f"{INSTALLED}/run"
    fd = os.open(folder / "run", FILE_FLAGS)
    try:
        head = os.read(fd, 4) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    finally:
        os.close(fd)
    if head.startswith(b"#!") or head == b"\x7fELF":
        return Launch("exec", run, (run,))
    return Launch("exec", run, ("/bin/sh", run))  # a script without `#!`: POSIX shells run it with sh


# --- building --------------------------------------------------------------------------------------------
_built: OrderedDict[str, Built | str] = OrderedDict()  # cache key -> built program, or why it does not build
_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


def build_key(program: str, compiler: Compiler) -> str:
    cfg = compiler.cfg
    h = hashlib.sha256("\0".join([str(compiler.cache_dir), cfg.cpp_compiler, *cfg.cpp_flags, str(cfg.testlib_dir),
                                  str(cfg.compile_time_limit_s), str(cfg.compile_memory_mb),
                                  str(cfg.max_binary_mb)]).encode())
    h.update(b"\0" + program.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


def build(program: str, worker: Worker, compiler: Compiler) -> Built:
    """The built program (once per program and compiler; concurrent callers wait for one build).
    Raises BuildError."""
    key = build_key(program, compiler)
    with _guard:
        lock = _locks.setdefault(key, threading.Lock())
    with lock:
        with _guard:
            hit = _built.get(key)
            if isinstance(hit, Built) and not hit.folder.is_dir():  # its evaluator's cache dir is gone
                hit = None
            if hit is not None:
                _built.move_to_end(key)
        if hit is None:
            try:
                hit = _build(program, key, worker, compiler)
            except BuildError as e:
                if not e.lasting:
                    raise
                hit = str(e)
            _remember(key, hit)
    if isinstance(hit, str):
        raise BuildError(hit)
    return hit


def _remember(key: str, result: Built | str) -> None:
    with _guard:
        _built[key] = result
        while len(_built) > BUILT_KEEP:
            old, gone = _built.popitem(last=False)
            _locks.pop(old, None)
            if isinstance(gone, Built):
                _remove_path(gone.folder)


def install(built: Built, check_dir: Path) -> Launch:
    """Put the built program in a worker's check dir (hard links; copies across devices)."""
    dest = check_dir / INSTALLED
    _remove_path(dest)
    with _guard:  # not evicted meanwhile
        shutil.copytree(built.folder, dest, symlinks=True, copy_function=_link_or_copy)
    return built.launch


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _build(program: str, key: str, worker: Worker, compiler: Compiler) -> Built:
    try:
        files, executable = load(program)
        p = plan(files)
    except ValueError as e:
        raise BuildError(str(e)) from None
    command = _build_command(p, files, worker, compiler)
    owner = worker.box("build").spec.drop_uid if command else None
    with _fresh_folder(worker.build) as (name, work):
        write_files(files, executable, work, owner)
        if command:
            if owner is not None:
                os.fchown(work, owner, owner)  # last: until now the box could not enter it
            os.fchmod(work, 0o755)
            _run_build(command, worker.build / name, worker, compiler,
                       "build script" if p.kind == "script" else "compilation")
        return _keep(work, key, compiler, p, owner)


def _build_command(p: Plan, files: dict[str, str], worker: Worker, compiler: Compiler) -> list[str]:
    """What to run in the program's folder to build it ([] when nothing)."""
    cfg = compiler.cfg
    if p.kind == "script":
        return ["./build"] if p.build else []
    if p.kind == "python":
        return []
    if p.kind == "c":
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise BuildError("no C compiler (cc) on PATH", lasting=False)
        return [cc, *C_FLAGS, "-o", "run", *p.sources, "-lm"]
    cxx = shutil.which(cfg.cpp_compiler)
    if cxx is None:
        raise BuildError(f"C++ compiler {cfg.cpp_compiler!r} not found on PATH", lasting=False)
    include = testlib.include_dir(cfg.testlib_dir)
    shipped = any(PurePosixPath(f).name == testlib.HEADER for f in files)
    if include is None and not shipped and any(testlib.uses_testlib(files[s]) for s in p.sources):
        raise BuildError("it includes testlib.h, which is not installed here: `make setup` installs it "
                         "(or set evaluator.testlib_dir)", lasting=False)
    flags = ["-I", worker.include_inside(include)] if include else []  # may restart the build box
    return [cxx, *cfg.cpp_flags, *flags, "-o", "run", *p.sources]


def _run_build(command: list[str], work: Path, worker: Worker, compiler: Compiler, what: str) -> None:
    """Run `command` in `work` in the build box, with the compile limits; BuildError if it fails."""
    cfg = compiler.cfg
    box = worker.box("build")
    limit = cfg.compile_time_limit_s
    wall = 2 * limit + 5
    req = {"op": "run", "kind": "exec",
           # stdout joins stderr: a chatty build is not an output over its limit
           "argv": ["/bin/sh", "-c", 'cd "$1" && shift && exec "$@" >&2', "sh", box.inside(work), *command],
           "cpu_s": limit, "wall_s": wall, "mem_bytes": cfg.compile_memory_mb * MB,
           "fsize_bytes": cfg.max_binary_mb * MB + MB, "nofile": 512, "out_bytes": 64 * 1024,
           "err_bytes": 64 * 1024, "err_mode": "head"}
    try:
        reply = box.request(req, wall + 30)
    except BoxError as e:
        raise BuildError(f"the build sandbox failed: {e}", lasting=False) from e
    h = reply.header
    if not h.get("ok") or h.get("harness_error"):
        raise BuildError(f"the {what} could not run: {h.get('harness_error')}", lasting=False)
    diag = reply.blobs[1].decode("utf-8", "replace").replace(box.inside(work) + "/", "")
    diag = diag.strip()[:DIAG_KEEP]
    if h["why"] == "cpu":
        raise BuildError(f"the {what} exceeded {limit:g} s of CPU time")
    if h["why"] == "wall":
        figures = [float(h[k]) for k in ("cpu_s", "total_cpu_s") if isinstance(h.get(k), (int, float))]
        blocked = bool(figures) and max(figures) < BLOCKED_CPU_SHARE * wall
        raise BuildError(f"the {what} ran out of {wall:g} s of wall-clock time"
                         + (" having used almost no CPU (blocked)" if blocked else " (a busy machine?)"),
                         lasting=blocked)
    if h["why"] != "exit" or h.get("exit") != 0:
        how = f"exit code {h['exit']}" if h.get("exit") is not None else f"signal {h.get('signal')} ({h['why']})"
        raise BuildError(f"the {what} failed with {how}" + (f": {diag}" if diag else ""))


def _keep(work: int, key: str, compiler: Compiler, p: Plan, owner: int | None) -> Built:
    """Copy what the build left in the folder open as `work` into the cache dir (root-owned,
    readable by every box) and check that it can be run."""
    bundles = compiler.cache_dir / "bundles"
    bundles.mkdir(mode=0o755, exist_ok=True)
    os.chmod(bundles, 0o755)
    target = bundles / key
    staging = bundles / f".{key}.{threading.get_ident()}"
    _remove_path(staging)
    try:
        os.mkdir(staging, 0o755)
        os.chmod(staging, 0o755)
        kept = open_dir(staging)
        try:
            _copy_products(work, kept, max(MAX_TOTAL_BYTES, 4 * compiler.cfg.max_binary_mb * MB), owner)
            _check_products(p, kept)
        finally:
            os.close(kept)
        _remove_path(target)
        os.replace(staging, target)
    finally:
        _remove_path(staging)
    return Built(target, launch_for(p, target))


def _check_products(p: Plan, kept: int) -> None:
    """A program that is not Python must have left an executable file `run` (not a link); a
    Python one gets its launcher."""
    if p.kind == "python":
        write_new(LAUNCHER, PYTHON_LAUNCHER.format(entry=p.entry).encode(), 0o644, kept)
        return
    try:
        st = os.lstat("run", dir_fd=kept)
    except FileNotFoundError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode) or not st.st_mode & 0o100:
        raise BuildError("the build did not leave an executable file called `run`" if p.build
                         else "`run` is not an executable file")


# --- what a box wrote: never followed -------------------------------------------------------------------
# The build folder and all under it belong to the build box, which may have made any of it a link
# (to a host folder), a FIFO (an open that blocks) or a hard link to a file it cannot read. So the
# host reaches it only through descriptors of folders it opened itself, one name at a time, never
# following a link (O_NOFOLLOW), never opening anything but a folder or a regular file, and reads
# only the files the box owns (open_dir, write_new: pipeline/program_bundle.py).
@contextlib.contextmanager
def _fresh_folder(parent: Path) -> Iterator[tuple[str, int]]:
    """(name, descriptor) of a new folder of ours under `parent` (the worker's build dir), with a
    name no build can foresee; what earlier builds left in `parent` is removed before and after."""
    top = open_dir(parent)
    try:
        _empty(top)
        name = f"bundle-{secrets.token_hex(8)}"
        os.mkdir(name, 0o700, dir_fd=top)
        work = open_dir(name, top)
        try:
            yield name, work
        finally:
            os.close(work)
            _empty(top)
    finally:
        os.close(top)


def _empty(top: int) -> None:
    """Best effort: remove all in the folder open as `top`, never following a link. A folder's
    entries are moved up into `top` before it goes, so a deep tree needs no deep recursion."""
    budget = MAX_REMOVED
    try:
        while names := os.listdir(top):
            for name in names:
                budget -= 1
                if budget < 0:
                    return
                try:
                    os.unlink(name, dir_fd=top)
                    continue
                except IsADirectoryError:
                    pass
                inner = open_dir(name, top)
                try:
                    for entry in os.listdir(inner):
                        os.rename(entry, secrets.token_hex(8), src_dir_fd=inner, dst_dir_fd=top)
                finally:
                    os.close(inner)
                os.rmdir(name, dir_fd=top)
    except OSError:
        pass  # a name that went meanwhile, a folder not emptied: the next build starts elsewhere anyway


def _remove_path(path: Path) -> None:
    """Remove `path` (a link, a file or a folder and all in it), never following a link below it."""
    try:
        parent = open_dir(path.parent)
    except FileNotFoundError:
        return
    try:
        try:
            os.unlink(path.name, dir_fd=parent)
            return
        except FileNotFoundError:
            return
        except IsADirectoryError:
            pass
        folder = open_dir(path.name, parent)
        try:
            _empty(folder)
        finally:
            os.close(folder)
        os.rmdir(path.name, dir_fd=parent)
    except OSError:
        pass
    finally:
        os.close(parent)


@dataclass
class _Budget:
    limit: int  # bytes in all
    bytes: int = 0
    entries: int = 0


def _copy_products(src: int, dst: int, limit: int, owner: int | None) -> None:
    """Copy from the folder open as `src` into the one open as `dst`: folders, regular files (with
    `owner`, only those that uid owns: a hard link to another's file is not the build's) and
    relative links that stay inside (`_stays_inside`); nothing else, and at most `limit` bytes."""
    _copy_folder(src, dst, 0, _Budget(limit), owner)


def _copy_folder(src: int, dst: int, depth: int, budget: _Budget, owner: int | None) -> None:
    for name in sorted(os.listdir(src)):
        budget.entries += 1
        if budget.entries > MAX_PRODUCTS:
            raise BuildError(f"the build left over {MAX_PRODUCTS} files")
        try:
            st = os.lstat(name, dir_fd=src)
            if stat.S_ISLNK(st.st_mode):
                link = os.readlink(name, dir_fd=src)
                if _stays_inside(link, depth):
                    os.symlink(link, name, dir_fd=dst)
            elif stat.S_ISDIR(st.st_mode):
                if depth >= MAX_DEPTH:
                    raise BuildError(f"the build left folders nested over {MAX_DEPTH} deep")
                _copy_subfolder(name, src, dst, depth, budget, owner)
            elif stat.S_ISREG(st.st_mode) and owner in (None, st.st_uid):
                _copy_file(name, src, dst, budget, owner)
        except OSError as e:  # the box changed it meanwhile (a link or FIFO swapped in)
            raise BuildError(f"could not copy what the build left ({name}): {e}", lasting=False) from e


def _copy_subfolder(name: str, src: int, dst: int, depth: int, budget: _Budget, owner: int | None) -> None:
    inner = open_dir(name, src)
    try:
        os.mkdir(name, 0o755, dir_fd=dst)
        copy = open_dir(name, dst)
        try:
            os.fchmod(copy, 0o755)
            _copy_folder(inner, copy, depth + 1, budget, owner)
        finally:
            os.close(copy)
    finally:
        os.close(inner)


def _copy_file(name: str, src: int, dst: int, budget: _Budget, owner: int | None) -> None:
    fd = os.open(name, FILE_FLAGS, dir_fd=src)
    try:
        st = os.fstat(fd)  # what was opened, not what was looked at: it may have been swapped
        if not stat.S_ISREG(st.st_mode) or owner not in (None, st.st_uid):
            return
        chunks, left = [], budget.limit - budget.bytes + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    budget.bytes += len(data)
    if budget.bytes > budget.limit:
        raise BuildError(f"the build left over {budget.limit // MB} MB of files")
    write_new(name, data, 0o755 if st.st_mode & 0o111 else 0o644, dst)


def _stays_inside(link: str, depth: int) -> bool:
    """Whether a link found `depth` folders below the top stays under it, whatever the links on
    its way are: relative, its `..` all at the start and no more of them than `depth` (a `..`
    after a name could step up out of a link to a folder)."""
    parts = [part for part in link.split("/") if part not in ("", ".")]
    ups = next((i for i, part in enumerate(parts) if part != ".."), len(parts))
    return not link.startswith("/") and ups <= depth and ".." not in parts[ups:]
