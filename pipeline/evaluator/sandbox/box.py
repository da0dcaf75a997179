"""A sandboxed, long-lived judge process (`inside/harness.py`) and the parent's side of its protocol
(`inside/PROTOCOL.md`).

A box is started once and reused for many submissions (the harness cleans up after every run);
it is restarted when it dies, times out or is killed (batch deadline). Killing a box takes the
whole sandbox down: the outer bwrap process, the namespace's PID 1 (by its parent-death signal
and directly), hence every process inside.

Where the machine has control groups (`cgroups.py`), each start of a box gets a run group of its
own: the evaluator sets its memory and process limits before each run / open request (the stated
memory limit on top of what the group already holds) and resets the group's memory peak, adds the
group's out-of-memory kills during it (`cg_oom_kills`) to the reply; the judge meters CPU with
the group's counter and reads the run's memory peak and out-of-memory kills through its own
descriptors (`group_peak_kb`, `group_oom_kills`, per run and per functional call); `accounting` says which accounting is in force (cgroup-v1, cgroup-v2,
or rlimit when the box has no group).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microcoder.pipeline.evaluator.sandbox import cgroups
from microcoder.pipeline.evaluator.sandbox import launch as sb

START_TIMEOUT_S = 60.0
MB = 1 << 20
HEADER_MAX = 1 << 20
GROUP_OPS = ("run", "open")
# An earlier run's page cache is dropped from the run group above this much: below it, at most this
# much room a run could take by having it reclaimed (a reclaim per request cost ~1 ms: 19% of the
# RL-shaped bench's wall time); above it, no room at all.
RECLAIM_ABOVE = 4 * MB
# `Box.slowdown`: the limits a request gives, divided by it; the times a reply measures, multiplied.
SCALED_LIMITS = ("cpu_s", "wall_s", "rlimit_cpu_s")
SCALED_TIMES = ("cpu_s", "total_cpu_s", "kernel_cpu_s", "wall_s")


class BoxError(RuntimeError):
    """The judge process failed (not the submission): died, timed out, or broke the protocol."""


class BoxKilled(BoxError):
    """The box was killed on purpose (cancellation)."""


@dataclass
class Reply:
    header: dict[str, Any]
    blobs: list[bytes] = field(default_factory=list)


class Box:
    def __init__(self, spec: sb.BoxSpec, binds: list[sb.Bind], workdir: Path, name: str):
        self.spec, self.name = spec, name
        self.binds = [sb.Bind(sb.HARNESS_DIR, sb.inside_path("judge")), *binds]
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.workdir / f"{name}.log"
        self.scratch = self.workdir / f"{name}-scratch"
        self.proc: subprocess.Popen | None = None
        self.info: dict[str, Any] = {}
        self._buf = bytearray()
        self._lock = threading.Lock()
        self._killed = False
        self._starting = False  # launched, init reply not read yet
        self._stage: Path | None = None  # unshare only: where closed directories' binds are staged
        self.cgroup: cgroups.RunGroup | None = None  # this start's run group (None: rlimits only)
        self.accounting = "rlimit"
        self._group_fds: list[int] = []
        self._fd_socket: socket.socket | None = None  # sends a run its own descriptors (stdin)
        self.slowdown = 1.0  # EvaluatorConfig.slowdown: a slower machine by construction

    # paths -----------------------------------------------------------------------------------
    def inside(self, host: str | os.PathLike) -> str:
        """Where a host path under one of the binds appears inside the sandbox."""
        host = os.path.abspath(host)
        for b in self.binds:
            root = os.path.abspath(b.host)
            if host == root or host.startswith(root + os.sep):
                return b.inside + host[len(root):] if self.spec.kind == "bwrap" else host
        raise ValueError(f"{host} is not visible inside box {self.name}")

    def _command(self) -> tuple[list[str], dict[str, str], dict[str, Any]]:
        kind = self.spec.kind
        if kind == "bwrap":
            home, wipe = "/tmp", ["/tmp", "/dev/shm"]
            cmd = sb.bwrap_args(self.spec, self.binds)
        else:
            self.scratch.mkdir(exist_ok=True)
            os.chmod(self.scratch, 0o1777)
            home, wipe = str(self.scratch), [str(self.scratch)]
            cmd = []
            if kind == "unshare":
                if self.spec.drop_uid is not None and self._stage is None:
                    self._stage = sb.staging_dir(self.workdir / f".{self.name}-stage")
                cmd = sb.unshare_args(self.spec, self.scratch, shm=os.path.isdir("/dev/shm"),
                                      reach=[*(b.host for b in self.binds), self.scratch], stage=self._stage,
                                      writable=[b.host for b in self.binds if b.writable])
                if os.path.isdir("/dev/shm"):
                    wipe.append("/dev/shm")
        harness = self.inside(sb.HARNESS_DIR / "harness.py")
        cmd += sb.drop_args(self.spec) + sb.limit_args(self.spec) + sb.harness_command(harness)
        init = {"op": "init", "scratch": home, "wipe": wipe, "syscall_filter": self.spec.syscall_filter,
                "cgroup": self._make_group()}
        # A run's stdin travels as a descriptor of its own (a private copy of its test's input):
        # no input file of the problem is visible in the box.
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        if self._fd_socket is not None:
            self._fd_socket.close()
        self._fd_socket = ours
        self._group_fds.append(theirs.detach())
        init["fd_socket"] = self._group_fds[-1]
        return cmd, sb.sandbox_env(home), init

    def _make_group(self) -> dict[str, Any] | None:
        """A run group for this start and the descriptors the judge gets on it (see cgroups.py)."""
        layout = cgroups.detect() if self.spec.cgroups and self.spec.kind != "none" else None
        if layout is None:
            return None
        try:
            group = cgroups.RunGroup(layout, self.name)
        except OSError as e:
            with open(self.log_path, "ab") as log:
                log.write(f"no run group: {e}\n".encode())
            return None
        try:
            procs = group.open_procs()
            cpu = group.open_cpu_counter()
            memory = group.open_memory_counters()
        except OSError:
            group.destroy()
            return None
        self.cgroup, self._group_fds = group, [*procs, cpu, *memory.values()]
        return {"version": group.version, "procs": procs, "cpu": cpu, "memory": memory}

    # lifecycle ---------------------------------------------------------------------------------
    @property
    def killed(self) -> bool:
        return self._killed

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        self.launch()
        self.await_start()

    def launch(self) -> None:
        """Spawn the judge process and send its init request without waiting for the reply
        (`await_start`, or the next `ensure`): several boxes can start at once. bwrap's
        --die-with-parent follows the spawning *thread*: it must outlive the box."""
        with self._lock:
            if self._killed:
                raise BoxKilled(f"box {self.name} was killed")
            cmd, env, init = self._command()
            self._buf.clear()
            try:
                with open(self.log_path, "ab") as log:
                    self.proc = subprocess.Popen(
                        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                        cwd=self.workdir, start_new_session=True, close_fds=True, bufsize=0,
                        pass_fds=self._group_fds)
            finally:  # the judge holds them now
                for fd in self._group_fds:
                    os.close(fd)
                self._group_fds = []
        self._starting = True
        try:
            self.send(init)
        except BaseException:
            self._starting = False
            raise

    def await_start(self) -> None:
        """The init reply of a launched box; BoxError (the box killed) when it did not start."""
        self._starting = False
        reply = self._receive(START_TIMEOUT_S)
        if not reply.header.get("ok"):
            self.kill()
            raise BoxError(f"box {self.name} did not start: {reply.header}")
        if not reply.header.get("untraceable"):  # its memory holds every input and output: fail closed
            self.kill()
            raise BoxError(f"box {self.name}: the judge process could not make itself non-dumpable")
        if self.spec.syscall_filter and not reply.header.get("syscall_filter"):  # fail closed
            self.kill()
            raise BoxError(f"box {self.name}: the syscall filter could not be installed "
                           f"({reply.header.get('syscall_filter_error')}); set evaluator.syscall_filter: false "
                           "only to debug the sandbox")
        self.info = reply.header
        if self.cgroup is not None and reply.header.get("cgroup"):
            self.accounting = self.cgroup.version
        else:
            self.accounting = "rlimit"
            if self.cgroup is not None:
                with open(self.log_path, "ab") as log:
                    log.write(f"run group not used: {reply.header.get('cgroup_error')}\n".encode())

    def ensure(self) -> Box:
        if self._starting:
            self.await_start()
        elif not self.alive:
            self.close()
            self.start()
        return self

    def send(self, req: dict[str, Any]) -> None:
        """Send a request without waiting (for requests that have no reply, e.g. reply=False)."""
        proc = self.proc
        if proc is None:
            raise BoxError(f"box {self.name} is not running")
        if self.slowdown != 1.0:
            req = {k: v / self.slowdown if k in SCALED_LIMITS and isinstance(v, int | float) else v
                   for k, v in req.items()}
        data = json.dumps(req).encode() + b"\n"
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(proc.stdin.fileno(), view):]
        except (OSError, ValueError):
            raise self._failure("the judge process is gone") from None

    def request(self, req: dict[str, Any], timeout: float, fds: tuple[int, ...] = ()) -> Reply:
        """Send one request and wait (at most `timeout` s) for its reply; BoxError on failure.
        `fds`: descriptors for the run (its stdin), sent with it. A judge that finds itself
        tampered with (`retire`) is replaced and the request resent."""
        reply = self._exchange(req, timeout, fds)
        if reply.header.get("retire"):
            with open(self.log_path, "ab") as log:
                log.write(f"restarting: {reply.header['retire']}\n".encode())
            self.close()
            self.start()
            reply = self._exchange(req, timeout, fds)
            if reply.header.get("retire"):
                raise self._failure("a fresh judge process retired at once")
        return reply

    def send_fds(self, fds: tuple[int, ...]) -> None:
        """Descriptors for the next request (it says how many: the judge takes them first)."""
        if self._fd_socket is None:
            raise BoxError(f"box {self.name} is not running")
        try:
            socket.send_fds(self._fd_socket, [b"F"], list(fds))
        except OSError:
            raise self._failure("the judge process is gone") from None

    def _exchange(self, req: dict[str, Any], timeout: float, fds: tuple[int, ...] = ()) -> Reply:
        group = self.cgroup if self.accounting != "rlimit" and req.get("op") in GROUP_OPS else None
        if group is not None:
            # The run as a whole gets the stated limit on top of what the group still holds once
            # an earlier run's page cache is dropped (whole MBs, so the limit is rarely rewritten),
            # no more: its peak above that held is what the judge reports (group_peak_kb).
            stated = int(req.get("group_mem_bytes") or req.get("mem_bytes") or 0)
            try:
                if group.usage_bytes() > RECLAIM_ABOVE:
                    group.reclaim()
                held = -(-group.usage_bytes() // MB) * MB
                group.set_limits(stated + held, self.spec.nproc)
                req = {**req, "group_peak": group.start()}
            except (OSError, ValueError) as e:
                raise self._failure(f"cannot set the run group's limits: {e}") from None
        if fds:
            self.send_fds(fds)
        self.send(req)
        reply = self._receive(timeout)
        if group is not None and group is self.cgroup:
            try:
                reply.header.update(group.usage())
            except (OSError, ValueError):
                pass
        return reply

    def oom_kills(self) -> int:
        """Out-of-memory kills in this start's run group so far (0 without one): a session's
        calls stream back without a request each, so their judge reads this itself."""
        if self.cgroup is None or self.accounting == "rlimit":
            return 0
        try:
            return self.cgroup.oom_kills()
        except (OSError, ValueError):
            return 0

    def _receive(self, timeout: float) -> Reply:
        deadline = time.monotonic() + timeout
        line = self._read_until(lambda: self._buf.find(b"\n"), deadline, header=True)
        try:
            header = json.loads(bytes(self._buf[:line]))
        except ValueError:
            raise self._failure("malformed reply from the judge process") from None
        del self._buf[: line + 1]
        sizes = header.pop("sizes", [])
        need = sum(sizes)
        self._read_until(lambda: 0 if len(self._buf) >= need else -1, deadline)
        blobs, pos = [], 0
        for n in sizes:
            blobs.append(bytes(self._buf[pos:pos + n]))
            pos += n
        del self._buf[:need]
        if self.slowdown != 1.0:
            scale_times(header, self.slowdown)
        return Reply(header, blobs)

    def _read_until(self, found, deadline: float, header: bool = False) -> int:
        fd = self.proc.stdout.fileno()
        while True:
            pos = found()
            if pos >= 0:
                return pos
            if header and len(self._buf) > HEADER_MAX:
                raise self._failure("oversized reply header")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill(on_purpose=False)
                raise BoxError(f"box {self.name}: the judge process did not answer in time")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            try:
                data = os.read(fd, 1 << 20)
            except OSError:
                data = b""
            if not data:
                raise self._failure("the judge process exited")
            self._buf += data

    def _failure(self, what: str) -> BoxError:
        killed = self._killed
        self.kill(on_purpose=killed)
        if killed:
            return BoxKilled(f"box {self.name} was killed")
        return BoxError(f"box {self.name}: {what}. Log tail: {self.log_tail()!r}")

    def log_tail(self, n: int = 800) -> str:
        try:
            return self.log_path.read_bytes()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def kill(self, on_purpose: bool = True) -> None:
        """SIGKILL the sandbox: the namespace's PID 1 directly and the outer process (whose death
        also reaches PID 1 through --die-with-parent). Safe to call from any thread."""
        if on_purpose:
            self._killed = True
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        for pid in _children(proc.pid) + [proc.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def reset(self) -> None:
        """Allow a restart after a deliberate kill."""
        self.close()
        self._killed = False

    def close(self) -> None:
        self._starting = False
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                proc.stdin.close()  # EOF: the harness cleans up and exits
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            self.proc = proc
            self.kill(on_purpose=False)
            self.proc = None
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except (OSError, AttributeError):
                pass
        stage, self._stage = self._stage, None
        if stage is not None and not stage.is_relative_to(self.workdir):  # a temp folder of its own
            shutil.rmtree(stage, ignore_errors=True)
        group, self.cgroup, self.accounting = self.cgroup, None, "rlimit"
        if group is not None:
            group.destroy()
        sock, self._fd_socket = self._fd_socket, None
        if sock is not None:
            sock.close()


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def scale_times(header: dict[str, Any], factor: float) -> None:
    """Multiply the times a reply measured (and a frame's own CPU figure) by `factor`."""
    frame = header.get("frame")
    for d in (header, frame if isinstance(frame, dict) else {}):
        for k in SCALED_TIMES:
            if isinstance(d.get(k), int | float) and not isinstance(d.get(k), bool):
                d[k] = d[k] * factor
