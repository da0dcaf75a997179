"""On-disk state of an Evaluator: test inputs (host side only), and one Worker per pool slot.

No box sees the input store. A stdio run gets its own test's input as its stdin, a private copy
made for that run (`private_copy`: a sealed memory file), so it can neither read other tests'
inputs nor lock or write anything another box uses. The current submission's code (Python source
or compiled binary, removed after it) is the only file of the job visible in the run box;
functional arguments travel inline in the requests. Expected outputs stay in the parent process;
a checker's or an interactor's files (input, answer, contestant output) reach its check box as
sealed memory files too (`private_data`), never as files on disk: only the checker program
itself is installed in the worker's check dir.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.evaluator.sandbox import launch as sb
from microcoder.pipeline.evaluator.sandbox.box import Box
from microcoder.pipeline.evaluator.verdict import testlib
from microcoder.pipeline.schema import Problem

MB = 1 << 20


def write_file(path: Path, data: str | bytes, mode: int = 0o644) -> None:
    """Write via a temp name + rename, readable by the sandbox's unprivileged uid."""
    tmp = path.with_name(f".{path.name}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


class InputStore:
    """Test inputs as files, content-addressed per problem, kept for the `capacity` most recently
    used problems (the trainer judges the same problems over and over)."""

    def __init__(self, root: Path, capacity: int):
        self.root = root
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)  # no box binds it; where host files are visible (unshare), its uid may not enter
        self.capacity = max(1, capacity)
        self._lock = threading.Lock()
        self._users: OrderedDict[str, int] = OrderedDict()
        self._keys: OrderedDict[int, tuple[Problem, str]] = OrderedDict()

    def key(self, problem: Problem) -> str:
        with self._lock:
            hit = self._keys.get(id(problem))
            if hit is not None and hit[0] is problem:
                self._keys.move_to_end(id(problem))
                return hit[1]
        h = hashlib.sha256()  # content only: renamed copies of a problem share their files
        for t in problem.tests:
            data = t.input.encode("utf-8")
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
        key = h.hexdigest()[:32]
        with self._lock:
            self._keys[id(problem)] = (problem, key)
            while len(self._keys) > 4 * self.capacity:
                self._keys.popitem(last=False)
        return key

    @contextmanager
    def use(self, problem: Problem) -> Iterator[Path]:
        """The directory holding `<i>.in` for every test of `problem` while in use."""
        key = self.key(problem)
        folder = self.root / key
        with self._lock:
            self._users[key] = self._users.get(key, 0) + 1
            self._users.move_to_end(key)
            if not folder.exists():
                staging = self.root / f".{key}.{threading.get_ident()}"
                staging.mkdir(mode=0o700)
                for i, t in enumerate(problem.tests):
                    write_file(staging / f"{i}.in", t.input, mode=0o600)
                os.replace(staging, folder)
        try:
            yield folder
        finally:
            with self._lock:
                self._users[key] -= 1
                self._evict()

    def _evict(self) -> None:
        for key in list(self._users):
            if len(self._users) <= self.capacity:
                return
            if self._users[key] == 0:
                del self._users[key]
                shutil.rmtree(self.root / key, ignore_errors=True)


def private_copy(path: Path) -> int:
    """A descriptor of a new sealed memory file holding `path`'s bytes, at offset 0: one run's
    stdin. Seekable and mappable like a file, but nothing another run or box can see or lock."""
    fd = os.memfd_create("input", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        with open(path, "rb") as src:
            size = os.fstat(src.fileno()).st_size
            done = 0
            while done < size:
                n = os.sendfile(fd, src.fileno(), done, size - done)
                if n == 0:
                    break
                done += n
        _seal(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def private_data(data: str | bytes, name: str = "data") -> int:
    """As `private_copy`, for data in memory: a checker's or an interactor's file (the test's
    input, its answer, the contestant's output), passed to the check box as a descriptor so that
    no file of a test lies on a disk another box could search (under unshare, every box sees the
    host's files)."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
        while view:
            view = view[os.write(fd, view):]
        _seal(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _seal(fd: int) -> None:
    """No more changes to the memory file, and its offset back at 0."""
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    os.lseek(fd, 0, os.SEEK_SET)


class Worker:
    """One pool slot: its exchange directories and its boxes (run, check, build), started lazily
    and restarted when they die. Used by one thread at a time."""

    BOXES = ("run", "check", "build")

    def __init__(self, slot: int, root: Path, inputs: InputStore, cfg: EvaluatorConfig, kind: str,
                 drop: bool = True):
        self.slot, self.cfg, self.kind, self.drop = slot, cfg, kind, drop
        self.dir = root / f"worker-{slot}"
        self.job, self.check, self.build = (self.dir / n for n in ("job", "check", "build"))
        for d in (self.dir, self.job, self.check, self.build):
            d.mkdir(mode=0o755, parents=True, exist_ok=True)
            os.chmod(d, 0o755)
        self.inputs = inputs
        self.boxes: dict[str, Box] = {}
        self.prepared: dict[str, str] = {}  # what is currently installed in job/ and check/

    def _spec(self, name: str) -> sb.BoxSpec:
        uid = sb.drop_uid_for(self.kind) if self.drop else None
        return sb.BoxSpec(kind=self.kind, tmp_bytes=self.cfg.tmpfs_mb * MB, shm_bytes=self.cfg.shm_mb * MB,
                          nproc=self.cfg.nproc, drop_uid=uid, syscall_filter=self.cfg.syscall_filter)

    def box(self, name: str) -> Box:
        return self._box(name).ensure()

    def launch(self, name: str) -> None:
        """Start the box without waiting for it to be ready (the next `box(name)` waits)."""
        box = self._box(name)
        if not box.alive:
            box.close()
            box.launch()

    def _box(self, name: str) -> Box:
        box = self.boxes.get(name)
        if box is None:
            spec = self._spec(name)
            binds = {
                "run": [sb.Bind(self.job, sb.inside_path("job"))],
                "check": [sb.Bind(self.check, sb.inside_path("check"))],
                "build": [sb.Bind(self.build, sb.inside_path("build"), writable=True)],
            }[name]
            headers = testlib.include_dir(self.cfg.testlib_dir)
            if name == "build" and headers is not None:  # for C++ checker programs
                binds.append(sb.Bind(headers, sb.inside_path("include")))
            if name == "build" and spec.drop_uid is not None:
                os.chown(self.build, spec.drop_uid, spec.drop_uid)
            elif spec.drop_uid is not None:
                # job/ (the submission) and check/ (the checker or interactor, possibly holding a
                # judge's seeds) for their own box's uid alone: under the unshare fallback every box
                # sees the host's files, and only the owner may enter these (bwrap binds each into
                # its box alone anyway)
                folder = self.job if name == "run" else self.check
                os.chown(folder, spec.drop_uid, spec.drop_uid)
                os.chmod(folder, 0o700)
            box = self.boxes[name] = Box(spec, binds, self.dir, name)
            box.slowdown = self.cfg.slowdown
        return box

    def include_inside(self, folder: Path) -> str:
        """Where a header folder (testlib.h) appears in the build box; a box started before the
        folder existed is started again with it bound."""
        try:
            return self.box("build").inside(folder)
        except ValueError:
            self.boxes.pop("build").close()
            return self.box("build").inside(folder)

    def kill(self) -> None:
        """Kill every box now (batch deadline); callable from another thread."""
        for box in list(self.boxes.values()):
            box.kill()

    def revive(self) -> None:
        """After a deliberate kill: let the boxes start again on next use."""
        for box in self.boxes.values():
            if box.killed:
                box.reset()
        self.prepared.clear()

    def close(self) -> None:
        for box in self.boxes.values():
            box.close()
        self.boxes.clear()
