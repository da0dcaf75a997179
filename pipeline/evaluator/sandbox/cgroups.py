"""A control group per box: CPU, memory and process count for a run as a whole.

rlimits are per process: a program that leaves its work to children the kernel reaps by itself
(SIGCHLD ignored) hides their CPU time (no rusage reaches anyone), and 64 processes under a 256 MB
address-space limit each hold 16 GB together. A control group counts every process a run starts,
however it ends.

Layout: under the evaluator process's own group in each hierarchy (so limits placed on the
evaluator still hold), `microcoder-<pid>/<box>-<n>/` is the *run group* of one box. The judge
process (the harness, PID 1 of the sandbox) stays outside it: it is not counted, and the
kernel's out-of-memory killer, which only looks inside the group at its limit, never picks it.
Each program the judge forks moves itself into the run group before anything else (it writes
"0" to the group's `cgroup.procs`, through a file descriptor the evaluator opened as root and
passed down; a program cannot reopen it, the sandbox has no /sys, and the descriptor is closed
before the program runs), so everything it starts is inside.

The evaluator (the parent process, outside the sandbox) sets the limits before each request and
reads the counters after it: `cpuacct.usage` / `cpu.stat` (CPU), `memory.max_usage_in_bytes` /
`memory.peak` and the oom-kill count (memory: the judge reads these through descriptors, per run
and per functional call), `pids.max` (process count). cgroup v1 (one
hierarchy per controller, as on this kind of machine) and v2 (unified) are supported; without a
writable hierarchy holding all three controllers (not root, no controllers mounted) `detect()`
is None and the rlimits are all there is. The rlimits stay as a second line either way.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

V1_CONTROLLERS = ("cpuacct", "memory", "pids")
V2_CONTROLLERS = ("cpu", "memory", "pids")
_seq = itertools.count()


@dataclass(frozen=True)
class Layout:
    version: str  # cgroup-v1 | cgroup-v2
    bases: dict[str, Path]  # controller -> this process's own group in its hierarchy (v2: one path)


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, super options) of every cgroup mount."""
    out = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields, rfields = left.split(), right.split()
                if len(rfields) >= 3 and rfields[0] in ("cgroup", "cgroup2"):
                    out.append((fields[4].replace("\\040", " "), rfields[0], set(rfields[2].split(","))))
    except OSError:
        pass
    return out


def _own_groups() -> dict[str, str]:
    """controller (or '' for v2) -> this process's group path, from /proc/self/cgroup."""
    groups = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for c in controllers.split(",") if controllers else [""]:
                    groups[c] = path
    except (OSError, ValueError):
        pass
    return groups


def _own_dir(mount: str, own: str) -> Path:
    """Our group's directory; the mount itself when it is rooted at our group (a cgroup namespace)."""
    path = Path(mount) / own.lstrip("/")
    return path if path.is_dir() else Path(mount)


def _writable(base: Path) -> bool:
    probe = base / f"microcoder-probe-{os.getpid()}-{next(_seq)}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        probe.rmdir()
    except OSError:
        pass
    return True


def _detect_v1() -> Layout | None:
    own = _own_groups()
    bases = {}
    for mount, fstype, opts in _mounts():
        if fstype != "cgroup":
            continue
        for c in V1_CONTROLLERS:
            if c in opts and c not in bases:
                bases[c] = _own_dir(mount, own.get(c, "/"))
    if set(bases) != set(V1_CONTROLLERS) or not all(b.is_dir() and _writable(b) for b in bases.values()):
        return None
    return Layout("cgroup-v1", bases)


def _detect_v2() -> Layout | None:
    own = _own_groups().get("", "/")
    for mount, fstype, _ in _mounts():
        if fstype != "cgroup2":
            continue
        base = _own_dir(mount, own)
        try:
            available = (base / "cgroup.controllers").read_text().split()
        except OSError:
            continue
        if not set(V2_CONTROLLERS) <= set(available) or not _writable(base):
            continue
        # our groups sit below `base`: it must hand the controllers down (possible where it holds
        # no process itself, or is the root; otherwise v2 has no place for us and v1 is tried)
        try:
            _write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in V2_CONTROLLERS))
        except OSError:
            pass
        try:
            enabled = set((base / "cgroup.subtree_control").read_text().split())
        except OSError:
            continue
        if set(V2_CONTROLLERS) <= enabled:
            return Layout("cgroup-v2", {c: base for c in V2_CONTROLLERS})
    return None


@functools.cache
def detect() -> Layout | None:
    """The hierarchy to use here (v2 when it holds every controller, else v1), or None."""
    if os.geteuid() != 0:
        return None
    try:
        return _detect_v2() or _detect_v1()
    except OSError as e:
        log.debug("cgroup detection failed: %s", e)
        return None


def _read(path: Path) -> str:
    with open(path) as f:
        return f.read()


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _kv(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def _sweep_stale(parent: Path) -> None:
    """Remove the groups of evaluator processes that are gone (a crash leaves them behind)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        if not name.startswith("microcoder-") or not name[11:].isdigit():
            continue
        if os.path.exists(f"/proc/{name[11:]}"):
            continue
        top = parent / name
        for child in (top.iterdir() if top.is_dir() else ()):
            if child.is_dir():
                _remove_group(child)
        try:
            top.rmdir()
        except OSError:
            pass


def _remove_group(path: Path, timeout_s: float = 5.0) -> bool:
    """rmdir a group, killing what is still in it (a box that was killed leaves its processes
    dying for a moment)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            pass
        try:
            pids = [int(p) for p in _read(path / "cgroup.procs").split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if time.monotonic() > deadline:
            log.warning("cgroup %s could not be removed", path)
            return False
        time.sleep(0.02)


class RunGroup:
    """The run group of one box (one directory per hierarchy; v2: one directory)."""

    def __init__(self, layout: Layout, name: str):
        self.layout = layout
        self.version = layout.version
        self.dirs: dict[str, Path] = {}
        n = next(_seq)
        try:
            for base in dict.fromkeys(layout.bases.values()):
                top = base / f"microcoder-{os.getpid()}"
                if not top.exists():
                    _sweep_stale(base)
                    top.mkdir(exist_ok=True)
                    if self.version == "cgroup-v2":
                        _write(top / "cgroup.subtree_control", " ".join(f"+{c}" for c in V2_CONTROLLERS))
                group = top / f"{name}-{n}"
                group.mkdir()
                for c, b in layout.bases.items():
                    if b == base:
                        self.dirs[c] = group
        except OSError:
            self.destroy()
            raise
        if self.version == "cgroup-v1":
            try:  # count swap too where the kernel accounts it
                self._memsw = (self.dirs["memory"] / "memory.memsw.limit_in_bytes").exists()
            except OSError:
                self._memsw = False
        self._oom0 = 0
        self._events_fd: int | None = None
        self._peak_fd: int | None = None  # (open_memory_counters) shares its open file with the judge's
        self._usage_fd: int | None = None
        self._limits: tuple[int | None, int | None] = (None, None)  # as last written (only we write them)

    @property
    def procs_files(self) -> list[Path]:
        return [d / "cgroup.procs" for d in dict.fromkeys(self.dirs.values())]

    def open_procs(self) -> list[int]:
        """Write-only descriptors of `cgroup.procs` for the judge to pass to its children."""
        fds = []
        try:
            for p in self.procs_files:
                fds.append(os.open(p, os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        return fds

    def open_memory_counters(self) -> dict[str, int]:
        """Descriptors the judge reads the run's memory with: `usage` (now), `peak` (the highest
        usage since the last `start()`) and `events` (the out-of-memory kill count). The peak is
        opened read-write and kept: on v2 a reset (a write) holds for the descriptor that wrote
        it, which the judge shares (the same open file)."""
        d = self.dirs["memory"]
        names = (("memory.current", "memory.peak", "memory.events") if self.version == "cgroup-v2"
                 else ("memory.usage_in_bytes", "memory.max_usage_in_bytes", "memory.oom_control"))
        fds: dict[str, int] = {}
        try:
            for key, name in zip(("usage", "peak", "events"), names, strict=True):
                flags = os.O_RDWR if key == "peak" else os.O_RDONLY
                fds[key] = os.open(d / name, flags | os.O_CLOEXEC)
        except OSError:
            for fd in fds.values():
                os.close(fd)
            raise
        if self._peak_fd is not None:
            os.close(self._peak_fd)
        self._peak_fd = os.dup(fds["peak"])  # the same open file: the box closes the ones it passes
        os.set_inheritable(self._peak_fd, False)
        return fds

    def open_cpu_counter(self) -> int:
        """A read-only descriptor of the CPU counter (the judge meters runs with it)."""
        if self.version == "cgroup-v2":
            return os.open(self.dirs["cpu"] / "cpu.stat", os.O_RDONLY | os.O_CLOEXEC)
        return os.open(self.dirs["cpuacct"] / "cpuacct.usage", os.O_RDONLY | os.O_CLOEXEC)

    # limits --------------------------------------------------------------------------------------------
    def set_limits(self, mem_bytes: int | None, pids: int | None) -> None:
        """Write the limits that differ from the last ones written (a request costs no write
        when its problem's limits are those of the one before)."""
        last_mem, last_pids = self._limits
        if pids is not None and pids != last_pids:
            _write(self.dirs["pids"] / "pids.max", str(int(pids)))
            self._limits = (last_mem, pids)
        if mem_bytes is None or mem_bytes == last_mem:
            return
        self._set_memory(mem_bytes)
        self._limits = (mem_bytes, self._limits[1])

    def _set_memory(self, mem_bytes: int) -> None:
        mem = str(int(mem_bytes))
        d = self.dirs["memory"]
        if self.version == "cgroup-v2":
            _write(d / "memory.max", mem)
            try:
                _write(d / "memory.swap.max", "0")
            except OSError:
                pass
            return
        # v1: memsw >= memory at every moment; one of the two orders works from any state
        files = [d / "memory.limit_in_bytes"] + ([d / "memory.memsw.limit_in_bytes"] if self._memsw else [])
        for order in (files, files[::-1]):
            try:
                for f in order:
                    _write(f, mem)
                return
            except OSError:
                continue
        raise OSError(f"cannot set the memory limit of {d}")

    def pids_max(self) -> int | None:
        text = _read(self.dirs["pids"] / "pids.max").strip()
        return None if text == "max" else int(text)

    # counters --------------------------------------------------------------------------------------------
    def cpu_s(self) -> float:
        if self.version == "cgroup-v2":
            return _kv(_read(self.dirs["cpu"] / "cpu.stat")).get("usage_usec", 0) / 1e6
        return int(_read(self.dirs["cpuacct"] / "cpuacct.usage")) / 1e9

    def oom_kills(self) -> int:
        """Out-of-memory kills in the group so far (read through a descriptor kept open: the
        judge of a functional session looks after every call)."""
        if self._events_fd is None:
            name = "memory.events" if self.version == "cgroup-v2" else "memory.oom_control"
            self._events_fd = os.open(self.dirs["memory"] / name, os.O_RDONLY | os.O_CLOEXEC)
        # read after every call: the one line, not the whole file through _kv
        text = b"\n" + os.pread(self._events_fd, 4096, 0)
        at = text.find(b"\noom_kill ")
        if at < 0:
            return 0
        end = text.find(b"\n", at + 1)
        return int(text[at + 10:end if end >= 0 else None])

    def usage_bytes(self) -> int:
        """What the group holds now (page cache a run left charged here included)."""
        if self._usage_fd is None:
            name = "memory.current" if self.version == "cgroup-v2" else "memory.usage_in_bytes"
            self._usage_fd = os.open(self.dirs["memory"] / name, os.O_RDONLY | os.O_CLOEXEC)
        return int(os.pread(self._usage_fd, 64, 0))

    def reclaim(self) -> None:
        """Drop the page cache an earlier run left charged here (the group holds no process
        between requests). Left in, it is room a run could take by having it reclaimed while
        the baseline still counts it: a run that read files first would get more memory next."""
        d = self.dirs["memory"]
        try:
            if self.version == "cgroup-v2":
                _write(d / "memory.reclaim", str(max(self.usage_bytes(), 1)))
            else:
                _write(d / "memory.force_empty", "0")
        except OSError:  # (v2 answers EAGAIN when it reclaimed less than asked: what is left stays)
            pass

    def reset_peak(self) -> bool:
        """Start the peak afresh (v1: any write; v2 since Linux 6.12: a write to the descriptor
        the judge reads). False where the kernel refuses: the peak is then not the run's."""
        if self._peak_fd is None:
            return False
        try:
            os.write(self._peak_fd, b"0")
            return True
        except OSError:
            return False

    def start(self) -> bool:
        """Before a request: the baseline of the out-of-memory count and a fresh peak (whether
        it could be reset). CPU and memory are metered inside, by the judge, with this group's
        counters: `harness_state.RunGroupFds`."""
        self._oom0 = self.oom_kills()
        return self.reset_peak()

    def usage(self) -> dict[str, float | int]:
        """After a request: the run group's out-of-memory kills since `start()`."""
        return {"cg_oom_kills": self.oom_kills() - self._oom0}

    def destroy(self) -> bool:
        if getattr(self, "_events_fd", None) is not None:
            os.close(self._events_fd)
            self._events_fd = None
        for name in ("_peak_fd", "_usage_fd"):
            if getattr(self, name, None) is not None:
                os.close(getattr(self, name))
                setattr(self, name, None)
        ok = True
        for d in dict.fromkeys(self.dirs.values()):
            ok = _remove_group(d) and ok
            try:  # the process's folder, once its last box is gone
                d.parent.rmdir()
            except OSError:
                pass
        self.dirs = {}
        return ok
