"""The judge process that runs *inside* the sandbox (stdlib only; shipped as a file, run as a script).

One harness process lives per sandbox and serves requests from `pipeline.evaluator.box.Box` for
many submissions: it forks a fresh child per test (Python stdio programs run in the forked,
pre-warmed interpreter; C++ binaries and checkers are exec'd), or one "session" child per
functional submission that loads the code once and answers one call per test. The session's
rules are in `harness_child.py`: a bare entry point is `Solution.<name>` when the submission's
`class Solution` has that method, else the callable of that name in the submission's module (its
own definition beats a name the LeetCode prelude star-imports, e.g. `heapq.merge`); node-typed
arguments and results follow their annotations, nesting included (`harness_types.py`).

When the sandbox has its own PID namespace the harness is PID 1 of it. The kernel then refuses
every signal a sandboxed process sends it (no handlers are installed), and after each run the
harness SIGKILLs every other process in the namespace (`kill(-1)`), reaps them and wipes the
private writable directories, so nothing a submission starts outlives its test and nothing it
writes is seen by the next one.

Every forked program gets the seccomp filter of `syscall_filter.py`, inherited from the judge,
which installs it on itself once (a program could otherwise lower this process's limits, which
later programs inherit); if the filter is missing and a program
managed it anyway, the next run/open request is answered `retire` and the parent starts a fresh
judge. CPU time is counted over the whole namespace (`CpuMeter`), so work left to children the
program never waits for still counts.

Protocol over the harness's stdin/stdout: one JSON request per line; one response = a JSON header
line whose `sizes` list gives the lengths of the binary blobs that follow it. A `calls` request
(the inputs of a session's remaining tests) gets one response per call it ran (sent in groups,
see DEFER_FRAMES), then an `end` response; a `stop` request ends such a batch early and gets no
response of its own. Expected outputs
never enter the sandbox: the parent process compares. Program output and submission code never
enter this process's heap either (`harness_pipes.py`): every program is forked from it and would
find there what earlier submissions printed.
"""

import gc
import json
import math
import os
import resource
import select
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_zygote  # noqa: E402 - the sibling file, found through the line above
from harness_child import leetcode_prelude, write_all  # noqa: E402 - siblings, as above
from harness_pipes import FRAME_SLACK, Sink, drain, take_frame  # noqa: E402 - siblings, as above
from harness_state import RunGroupFds, clear_ipc, wipe  # noqa: E402 - siblings, as above
from syscall_filter import Installer  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
STDERR_KEEP = 16 * 1024
# A session's call replies go to the parent in batches (`Harness.defer`): at most this many,
# this many payload bytes, or this old. The parent wakes once per batch instead of once per call;
# the age bound keeps its `stop` at a first failure prompt.
DEFER_FRAMES = 32
DEFER_BYTES = 256 * 1024
DEFER_AGE_S = 0.002
# A session's inputs go to its child in windows (`Harness.run_calls`): one call first, then twice
# as many while a whole window uses under an eighth of one call's CPU limit, up to WINDOW_MAX
# calls and WINDOW_BYTES of input (half a pipe: writing a window never waits on the child).
WINDOW_MAX = 32
WINDOW_BYTES = 32 * 1024
PID1 = os.getpid() == 1

# Modules submissions typically import (and the LeetCode prelude / argument conversion need):
# loaded once in the judge process so every forked child starts with them warm. None of them
# starts threads at import. Measured: forking this warm process costs ~1 ms, importing the same
# modules in each child ~60 ms.
PREIMPORT = (
    "array atexit bisect cmath collections copy dataclasses datetime decimal enum fractions functools "
    "heapq inspect io itertools json math numbers operator queue random re statistics string struct "
    "threading traceback types typing sortedcontainers"
).split()

# --- small utilities -----------------------------------------------------------------------
def proc_cpu_s(pid, own=True):
    """CPU seconds of `pid` and its reaped children, from /proc (None if it is gone); with
    own=False its reaped children's only."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return sum(int(x) for x in fields[11 if own else 13:15]) / CLK_TCK


def children_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def namespace_cpu_s():
    """CPU seconds of every process in the namespace but the judge, dead or alive: what the judge
    has reaped, plus what each remaining (live or zombie) process used and reaped itself. Can
    count a process twice if its parent reaps it during the scan (only a program that is still
    reaping children while it is measured)."""
    total = children_cpu_s()
    try:
        names = os.listdir("/proc")
    except OSError:
        return total
    server = str(FORK_SERVER_PID)
    for name in names:
        if name.isdigit() and name != "1":  # the fork server's own CPU (its forks) is not a program's
            total += proc_cpu_s(name, own=name != server) or 0.0
    return total


# The box's run group (cgroups.py, harness_state.py), when it has one: every forked child moves
# itself into it, and its CPU counter is what CpuMeter reads.
RUN_GROUP = None
FORK_SERVER_PID = None  # harness_zygote's process, once started
FORK_SERVER = None  # and the judge's side of it (ForkServer)


class CpuMeter:
    """CPU used by a run since the meter was made. With a run group: by every process the run
    started, however it ended (children the kernel reaped by itself included). Else as PID 1:
    by every process of the namespace that is still there or was reaped by a waiting parent;
    otherwise by `pid` and the children it reaped."""

    def __init__(self, pid=None):
        self.pid = pid
        self.base = self.now() or 0.0
        self.last = self.base  # the latest reading

    def now(self):
        if RUN_GROUP is not None:
            return RUN_GROUP.cpu_s()
        if PID1:
            return namespace_cpu_s()
        if not self.pid:
            return 0.0
        cpu = proc_cpu_s(self.pid)
        if cpu is None and FORK_SERVER is not None:  # reaped by the fork server: its report has the total
            cpu = FORK_SERVER.cpu_of(self.pid)
        return cpu

    def used(self):
        """None when, outside PID 1 mode, the process is gone."""
        now = self.now()
        return None if now is None else now - self.base

    def mark(self):
        """A reading to measure a window of calls from (`used_since`)."""
        now = self.now()
        return self.base if now is None else now

    def lap(self, upto=None):
        """used(), and the meter restarts from here (one reading: the pipelined calls of a
        session are metered back to back, so CPU spent between two calls counts for the next).
        `upto`: take at most that much, leaving the rest for the next lap (frames that waited
        together for this process: the CPU since the last lap is several calls')."""
        now = self.now()
        if now is None:
            return None
        self.last = now
        used = now - self.base
        if upto is not None and 0 <= upto < used:
            used = upto
        self.base += used
        return used

    def after_exit(self, ru):
        """Right after `pid` was reaped with rusage `ru`."""
        if PID1 or RUN_GROUP is not None:
            return self.used()
        return ru.ru_utime + ru.ru_stime - self.base


RLIMITS = tuple(getattr(resource, n) for n in sorted(dir(resource)) if n.startswith("RLIMIT_"))


def judge_state():
    """What a process of the judge's uid could change about the judge from outside (the syscall
    filter prevents it; this detects it where the filter is missing): its limits, which every
    forked program inherits, and its scheduling. Read before every submission."""
    limits = tuple(resource.getrlimit(r) for r in RLIMITS)
    return (limits, os.getpriority(os.PRIO_PROCESS, 0), tuple(sorted(os.sched_getaffinity(0))),
            os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)


def load_syscall_filter():
    """(installer, None) when the syscall filter works here, else (None, why): built, then tried
    in a throwaway child so a kernel that refuses it is found now, not in every run."""
    try:
        installer = Installer()
    except Exception as e:  # noqa: BLE001 - no ctypes, unknown architecture
        return None, repr(e)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            installer.install()
            os._exit(0)
        except BaseException as e:  # noqa: BLE001
            try:
                write_all(w, repr(e).encode()[:500])
            finally:
                os._exit(1)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    why = os.read(r, 1000).decode("utf-8", "replace")
    os.close(r)
    if os.waitstatus_to_exitcode(status) != 0:
        return None, why or f"test child ended with status {status}"
    return installer, None


def writev_all(fd, parts):
    """Write every part in order, in as few syscalls as the pipe allows (no joined copy: a
    part may be a view of program output, which must not enter this process's heap)."""
    views = [memoryview(p) for p in parts if len(p)]
    while views:
        n = os.writev(fd, views)
        while views and n >= len(views[0]):
            n -= len(views[0])
            views.pop(0)
        if n:
            views[0] = views[0][n:]


def reap_children():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def live_pids(spare):
    """Processes of the namespace other than `spare` that have not ended (a zombie has: it runs
    nothing and holds nothing; its parent, the fork server or this process, reaps it)."""
    live = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in spare:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            live.append(int(name))
    return live


def await_end(pid, timeout):
    """Wait (at most `timeout` s) until process `pid` has ended."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        select.select([], [], [], min(timeout, 0.0005))
        return
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def kill_everything(server, child_pid):
    """Kill the child and everything it started, sparing the fork server. As PID 1 that is every
    other process in the namespace (including daemonised grandchildren), killed by pid until
    none is left running (the fork server reaps its children, this process the orphans).
    Otherwise the child's process group."""
    if PID1:
        deadline = time.monotonic() + 10
        spare = (1, server.pid if server is not None else 1)
        while time.monotonic() < deadline:
            live = live_pids(spare)
            if not live:
                reap_children()
                return True
            for pid in live:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            reap_children()
            await_end(live[0], 0.01)
        return False
    if child_pid:
        try:
            os.killpg(child_pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if server is not None and child_pid not in server.taken:
            server.wait(child_pid)
    reap_children()
    return True


class Rusage:
    def __init__(self, utime, stime, maxrss):
        self.ru_utime, self.ru_stime, self.ru_maxrss = utime, stime, maxrss


class ForkServer:
    """The judge's side of the fork server (`harness_zygote.py`): spawn a program, learn when
    it ended (wait status and rusage, which its parent, the server, reads)."""

    def __init__(self, pid, sock):
        self.pid, self.sock = pid, sock
        self.fd = sock.fileno()
        self.start_rss_kb = 0  # the last program's RSS right after its fork (the server's pages)
        self.exits = {}  # pid -> (wait status, Rusage) reported and not yet taken
        self.taken = set()  # pids whose end was taken (since the last spawn)
        self.dead = False

    def spawn(self, req, fds):
        """Fork a program with descriptors `fds` as its 0, 1, 2, ...; its pid."""
        self.exits.clear()  # any report here is an earlier run's (cleaned up already)
        self.taken.clear()
        self.resume()
        try:
            socket.send_fds(self.sock, [json.dumps(req).encode()], fds)
        except OSError as e:
            self.dead = True
            raise RuntimeError(f"the fork server is gone: {e}") from None
        while True:
            msg = self._receive(None)
            if msg is None:
                raise RuntimeError("the fork server is gone")
            if "pid" in msg:
                self.start_rss_kb = msg.get("rss_kb", 0)
                return msg["pid"]
            if "error" in msg:
                raise RuntimeError(f"the fork server could not start the program: {msg['error']}")

    def _receive(self, timeout):
        """One message (reports are filed in `exits` and returned too); None at EOF or when
        `timeout` passed without one."""
        if self.dead:
            return None
        if timeout is not None and not select.select([self.fd], [], [], timeout)[0]:
            return None
        try:
            data = self.sock.recv(4096)
        except OSError:
            data = b""
        if not data:
            self.dead = True
            return None
        msg = json.loads(data)
        if "exit" in msg:
            self.exits[msg["exit"]] = (msg["status"], Rusage(msg["utime"], msg["stime"], msg["maxrss"]))
        return msg

    def cpu_of(self, pid):
        """CPU seconds of ended program `pid` (and the children it waited for), from the server's
        report (it is on its way once the process is gone); None if none comes."""
        deadline = time.monotonic() + 1.0
        while pid not in self.exits and not self.dead and time.monotonic() < deadline:
            self._receive(0.05)
        if pid not in self.exits:
            return None
        ru = self.exits[pid][1]
        return ru.ru_utime + ru.ru_stime

    def poll(self, pid):
        """(status, rusage) once `pid` ended and was reported, else None; never blocks."""
        while pid not in self.exits and self._receive(0) is not None:
            pass
        if pid in self.exits:
            self.taken.add(pid)
            return self.exits.pop(pid)
        if self.dead:  # the server died: its children are this process's now (PID 1 / subreaper)
            return self._wait_orphan(pid, os.WNOHANG)
        return None

    def wait(self, pid):
        """(status, rusage) of `pid`, which is ending (it was killed)."""
        self.resume()
        deadline = time.monotonic() + 10
        while pid not in self.exits and not self.dead and time.monotonic() < deadline:
            self._receive(0.5)
            self.resume()
        self.taken.add(pid)
        if pid in self.exits:
            return self.exits.pop(pid)
        return self._wait_orphan(pid, 0) or (None, Rusage(0.0, 0.0, 0))

    def _wait_orphan(self, pid, flags):
        try:
            wpid, status, ru = os.wait4(pid, flags)
        except ChildProcessError:
            return None
        return (status, ru) if wpid else None

    def resume(self):
        """Undo a stop a program sent it (it ignores every catchable signal)."""
        try:
            os.kill(self.pid, signal.SIGCONT)
        except ProcessLookupError:
            self.dead = True

    def alive(self):
        """Whether it still runs (it is this process's child: dead, it is a zombie or reaped)."""
        if not self.dead:
            try:
                self.dead = os.waitpid(self.pid, os.WNOHANG)[0] != 0
            except ChildProcessError:
                self.dead = True
        return not self.dead


def disable_tracing():
    """Make this process non-dumpable so a same-uid child cannot ptrace or read its memory."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:
        pass


# --- children ---------------------------------------------------------------------------------
def watch(pid, server, sinks, deadline, cpu_limit, meter, until=None, stop_on_overflow=(), wake_fds=(),
          wake_at=None, window=None):
    """Drain `sinks` while program `pid` runs. Returns (why, wait_status, rusage) where why is
    'exit', 'until' (`until(woke)` became true; woke: a fd of `wake_fds` was readable), 'wall',
    'cpu' (`meter` over `cpu_limit`), 'window' (`meter` since the reading `window` over
    `cpu_limit`, see Harness.run_calls) or 'ole'. `wake_at()`: a time to wake up by (for
    `until` to act on), or None. Few syscalls per wake-up (a functional session goes through here once
    per call): the meter is first read 20 ms in (it was just started), and the program's end
    is looked for only when the fork server (`server`, its parent) has sent something."""
    next_cpu_check = time.monotonic() + 0.02
    woke, check_exit = False, pid in server.exits or server.dead  # (a new report wakes the select below)
    while True:
        if until is not None and until(woke):
            return "until", None, None
        if check_exit:
            ended = server.poll(pid)
            if ended is not None:
                # what it wrote before it ended comes first (its last frame: a compile error)
                pump_ready(sinks)
                if until is not None and until(False):
                    return "until", None, None
                return "exit", ended[0], ended[1]
        now = time.monotonic()
        if now >= deadline:
            return "wall", None, None
        if cpu_limit is not None and now >= next_cpu_check:
            used = meter.used()
            over = used is not None and (used > cpu_limit or window is not None and used + meter.base - window > cpu_limit)
            if over:
                # This process may not have run for a while: a frame waiting in the pipe ends
                # the call before the meter does (with a window, its CPU since the last frame
                # can be several calls': the caller sorts that out).
                ready, _, _ = select.select([s.fd for s in sinks if not s.eof], [], [], 0)
                for s in sinks:
                    if s.fd in ready:
                        s.pump()
                if until is not None and until(False):
                    return "until", None, None
                return ("cpu" if used > cpu_limit else "window"), None, None
            next_cpu_check = now + 0.02
        fds = [s.fd for s in sinks if not s.eof]
        fds.extend(wake_fds)
        if not server.dead:
            fds.append(server.fd)
        timeout = max(0.0, min(deadline - now, 0.05 if not server.dead else 0.005))
        wake = wake_at() if wake_at is not None else None
        if wake is not None:
            timeout = max(0.0, min(timeout, wake - now))
        ready, _, _ = select.select(fds, [], [], timeout)
        woke = any(fd in ready for fd in wake_fds)
        check_exit = server.dead or server.fd in ready or pid in server.exits  # (read by CpuMeter)
        for s in sinks:
            if s.fd in ready:
                s.pump()
                if s.overflow and s in stop_on_overflow:
                    return "ole", None, None


def pump_ready(sinks, seconds=0.02):
    """Read what is in the pipes now (not waiting for their writers to close)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        fds = [s.fd for s in sinks if not s.eof and not s.overflow]
        ready = select.select(fds, [], [], 0)[0] if fds else []
        if not ready:
            return
        for s in sinks:
            if s.fd in ready:
                s.pump()


def frame_cpu(reply):
    """The CPU seconds a result frame says its call used (the program can write anything there:
    None unless a finite number >= 0)."""
    value = reply.get("frame", {}).get("cpu_s")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def describe_status(status):
    if status is None:
        return None, None
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status), None


# --- the server --------------------------------------------------------------------------------
class Harness:
    def __init__(self, rfd, wfd):
        self.rfd, self.wfd = rfd, wfd
        self.inbuf = bytearray()
        self.eof = False
        self.config = {}
        self.session = None  # dict with the functional session child's state
        self.filter = None  # syscall_filter.Installer for every forked program
        self.child_filter = None  # the same, for a child to install (None: the judge has it)
        self.state = None  # judge_state() after init
        self.dirty = None  # why the last clean-up failed: the judge retires before the next run
        self.server = None  # ForkServer: every program is forked there
        self.fd_socket = None  # descriptors from the parent (a run's stdin)
        self.deferred = []  # call replies not yet sent: header bytes and views of the session's buffer
        self.deferred_frames = 0
        self.flush_at = 0.0
        self.defer_age_s = DEFER_AGE_S

    # protocol
    def read_request(self):
        while b"\n" not in self.inbuf:
            if self.eof:
                return None
            data = os.read(self.rfd, 1 << 16)
            if not data:
                return None
            self.inbuf += data
        nl = self.inbuf.index(b"\n")
        line = bytes(self.inbuf[:nl])
        del self.inbuf[: nl + 1]
        return json.loads(line)

    def respond(self, header, blobs=()):
        """Header line, then the blobs written from where they are (views of a Sink's buffer:
        program output is never copied into this process's heap, see harness_pipes)."""
        header["sizes"] = [len(b) for b in blobs]
        self.flush()
        writev_all(self.wfd, [json.dumps(header).encode() + b"\n", *blobs])

    def respond_call(self, reply, payload, defer=False):
        """`respond` for one call's reply. A frame's header goes as the JSON text it came in
        (`take_frame` parsed and checked it: a flat object of finite scalars, on one line)
        instead of being encoded again. `defer`: the usual reply may wait for the next ones
        (`defer`); anything else is sent now, after those waiting."""
        raw = reply.pop("_raw", None)
        # the program wrote these bytes: forwarded only as printable ASCII (json.loads also takes
        # UTF-16/32, whose NUL bytes the parent's reader would refuse: its verdict would be SE)
        if raw is None or not raw.isascii() or not raw.decode("ascii").isprintable():
            self.respond(reply, [payload])
            return
        if (reply.keys() == {"ok", "frame", "wall_s", "kernel_cpu_s"}  # the usual reply, formatted directly
                and math.isfinite(reply["wall_s"]) and math.isfinite(reply["kernel_cpu_s"])):
            tail = b',"ok":true,"wall_s":%r,"kernel_cpu_s":%r,"sizes":[%d]}\n' % (
                float(reply["wall_s"]), float(reply["kernel_cpu_s"]), len(payload))
        else:
            del reply["frame"]
            reply["sizes"] = [len(payload)]
            tail = b"," + json.dumps(reply).encode()[1:] + b"\n"
        parts = [b'{"frame":', raw, tail, payload]
        if defer:
            self.defer(parts, len(payload))
        else:
            self.flush()
            writev_all(self.wfd, parts)

    def defer(self, parts, size):
        """Keep a call's reply to send with the next ones. Its payload is a view of the session's
        result buffer, which stays pinned (not compacted) until `flush`; the buffer has
        DEFER_BYTES of room beyond a full frame for them."""
        if not self.deferred:
            self.flush_at = time.monotonic() + self.defer_age_s
        self.deferred += parts
        self.deferred_frames += 1
        res = self.session["res"]
        res.pinned = True
        if self.deferred_frames >= DEFER_FRAMES or res.consumed >= DEFER_BYTES:
            self.flush()

    def flush(self):
        """Send the deferred replies (in one writev) and unpin the result buffer."""
        if self.deferred:
            parts, self.deferred, self.deferred_frames = self.deferred, [], 0
            writev_all(self.wfd, parts)
        if self.session is not None:
            self.session["res"].pinned = False

    def flush_due(self):
        return self.flush_at if self.deferred else None

    def stop_requested(self):
        """Whether the parent sent `stop` (it found a failing test: the batch of calls ends).
        Reads what the parent sent without blocking; any other request stays queued."""
        while not self.eof and select.select([self.rfd], [], [], 0)[0]:
            data = os.read(self.rfd, 1 << 16)
            if not data:
                self.eof = True  # the parent is gone or closing: nothing more to run for it
                break
            self.inbuf += data
        if self.eof:
            return True
        nl = self.inbuf.find(b"\n")
        if nl < 0:
            return False
        try:
            first = json.loads(bytes(self.inbuf[:nl]))
        except ValueError:
            return False
        if not isinstance(first, dict) or first.get("op") != "stop":
            return False
        del self.inbuf[: nl + 1]
        return True

    def serve(self):
        while True:
            req = self.read_request()
            if req is None:
                self.close_session()
                return
            op = req.get("op")
            if op in ("run", "open") and self.tampered():
                return
            try:
                handler = getattr(self, "op_" + str(op))
            except AttributeError:
                self.respond({"ok": False, "harness_error": f"unknown op {op!r}"})
                continue
            try:
                handler(req)
            except Exception as e:  # noqa: BLE001 - report, keep serving
                import traceback

                self.respond({"ok": False, "harness_error": "".join(traceback.format_exception(e))[-4000:]})

    def tampered(self):
        """Before a new run: if a program changed the judge's limits or scheduling, reply
        `retire` and quit; the parent starts a fresh judge and sends the request again."""
        self.close_session()
        if self.dirty is not None:
            self.respond({"ok": False, "retire": self.dirty})
            return True
        if self.server is not None and not self.server.alive():
            # a program killed it (it runs under the same uid): a fresh judge, never a verdict
            self.respond({"ok": False, "retire": "the fork server is gone"})
            return True
        if self.state is None or judge_state() == self.state:
            return False
        self.respond({"ok": False, "retire": "a program changed the judge process's limits or priority"})
        return True

    # ops
    def op_init(self, req):
        self.config = req
        for name in req.get("preimport", PREIMPORT):
            try:
                __import__(name)
            except Exception:
                pass
        leetcode_prelude()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as PID 1, a handler would let children in
        disable_tracing()
        why = "disabled"
        if req.get("syscall_filter", True):
            self.filter, why = load_syscall_filter()
            self.child_filter = self.filter
        gc.freeze()  # children do not rescan (and copy-on-write) everything imported above
        group_error = self.join_run_group(req.get("cgroup"))
        clean = self.cleanup(None)
        self.filter_self()
        self.start_fork_server(req.get("fd_socket"))
        self.state = judge_state()
        self.respond({"ok": True, "pid1": PID1, "pid": os.getpid(), "uid": os.getuid(),
                      "python": sys.version.split()[0], "clean": clean,
                      "syscall_filter": self.filter is not None, "syscall_filter_error": why,
                      "cgroup": RUN_GROUP is not None, "cgroup_error": group_error})

    def filter_self(self):
        """Install the syscall filter on the judge itself, once: every child it forks inherits
        it (seccomp filters survive fork and exec), instead of each child attaching its own copy
        (~0.3 ms per run here, the kernel translating and compiling the program each time). The
        judge needs nothing the filter refuses (its limits and scheduling it only reads; forks
        without new namespaces). If the kernel refuses, each child installs it as before."""
        if self.filter is None:
            return
        try:
            self.filter.install()
        except OSError:
            return
        self.child_filter = None

    def start_fork_server(self, fd_socket):
        """Fork the process every program will be forked from, now: it has seen no request but
        this init (the parent sends nothing else before the init reply)."""
        global FORK_SERVER_PID, FORK_SERVER
        if fd_socket is not None:
            self.fd_socket = socket.socket(fileno=int(fd_socket))
        set_child_subreaper()  # orphans of programs come here when the server is not their parent
        pid, sock = harness_zygote.start(self.child_filter, self.child_group_fds(),
                                         [self.rfd, self.wfd, *([int(fd_socket)] if fd_socket is not None else [])])
        self.server = FORK_SERVER = ForkServer(pid, sock)
        FORK_SERVER_PID = pid

    def receive_fds(self, n):
        """`n` descriptors the parent sent for the request at hand (on its descriptor socket,
        just before the request)."""
        if self.fd_socket is None:
            raise RuntimeError("descriptors announced but the judge has no descriptor socket")
        _msg, fds, _flags, _addr = socket.recv_fds(self.fd_socket, 16, n)
        if len(fds) != n:
            for fd in fds:
                os.close(fd)
            raise RuntimeError(f"expected {n} descriptors from the parent, got {len(fds)}")
        return fds

    def join_run_group(self, spec):
        """Use the box's run group when a forked child can move itself into it (else None and
        why not: the box judges with rlimits only)."""
        global RUN_GROUP
        if not spec:
            return "no run group"
        group = RunGroupFds(spec)
        why = group.probe()
        if why is None:
            RUN_GROUP = group
        return why

    def child_group_fds(self):
        return RUN_GROUP.procs if RUN_GROUP is not None else ()

    def op_ping(self, req):
        self.respond({"ok": True})

    def scratch_dir(self):
        d = os.path.join(self.config["scratch"], "run")
        os.makedirs(d, exist_ok=True)
        return d

    def cleanup(self, child_pid):
        """Kill what is left, empty the writable dirs, drop IPC objects; False if not clean."""
        killed = kill_everything(self.server, child_pid)
        files = wipe(self.config.get("wipe", []))
        ipc = clear_ipc() if PID1 else True
        if not (killed and files and ipc):
            what = [w for w, ok in (("processes", killed), ("files", files), ("IPC objects", ipc)) if not ok]
            self.dirty = f"a run left {', '.join(what)} the clean-up could not remove"
        return killed and files and ipc

    def op_run(self, req):
        """One program run, forked by the fork server: a Python stdio program or checker in the
        warm interpreter, or a binary exec'd. Its stdin is a descriptor the parent sent
        (`stdin_fd`: its own copy of the test's input, nothing else of the problem), else
        /dev/null or a file named in the request (a checker's)."""
        self.close_session()
        stdin_fd = self.receive_fds(1)[0] if req.get("stdin_fd") else None
        cwd = self.scratch_dir()
        for d in req.get("mkdirs", []):
            os.makedirs(os.path.join(cwd, d), exist_ok=True)
        argv = [a.replace("{cwd}", cwd) for a in req.get("argv", [])]
        if stdin_fd is None:
            stdin_fd = os.open(req.get("stdin") or os.devnull, os.O_RDONLY)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        st_r, st_w = os.pipe()
        python_child = req["kind"] == "python"
        meter = CpuMeter()
        t0 = time.monotonic()
        try:
            pid = self.server.spawn(child_request(req, cwd, argv=argv), [stdin_fd, out_w, err_w, st_w])
        finally:
            for fd in (stdin_fd, out_w, err_w, st_w):
                os.close(fd)
        sinks = (Sink(out_r, int(req.get("out_bytes", 1 << 24)), "head"),
                 Sink(err_r, int(req.get("err_bytes", STDERR_KEEP)), req.get("err_mode", "tail")),
                 Sink(st_r, 8192, "head"))
        try:
            self.finish_run(req, pid, meter, t0, cwd, python_child, *sinks)
        finally:  # the output is dropped, whatever happened
            for sink in sinks:
                sink.close()

    def finish_run(self, req, pid, meter, t0, cwd, python_child, out, err, st):
        """Watch the forked run to its end, clean up, reply."""
        meter.pid = pid
        why, status, ru = watch(pid, self.server, [out, err, st], t0 + float(req["wall_s"]),
                                req.get("cpu_s"), meter, stop_on_overflow=(out,))
        wall = time.monotonic() - t0
        if why != "exit":
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            status, ru = self.server.wait(pid)
        kill_everything(self.server, pid)  # every writer of the pipes is gone after this: drain to EOF
        total_cpu = meter.used() if PID1 else None  # all reaped now: the exact total
        drain([out, err, st])
        collected = []
        for rel in req.get("collect", []):
            try:
                with open(os.path.join(cwd, rel), "rb") as f:
                    collected.append(f.read(64 * 1024))
            except OSError:
                collected.append(b"")
        if why == "ole":  # the verdict is decided: do not ship megabytes back
            out.truncate(1 << 16)
        clean = self.cleanup(pid)
        exit_code, sig = describe_status(status)
        # "S<rss>" (a Python program started), "E<peak>\n" (a binary about to be exec'd), then
        # possibly the harness's own message (a SyntaxError, a failed exec)
        status_bytes = bytes(st.data())
        base = b""
        if status_bytes[:1] == b"E":
            base, _, status_bytes = status_bytes[1:].partition(b"\n")
        elif status_bytes[:1] == b"S":
            base, status_bytes = status_bytes[1:], b"S"
        tag, note = status_bytes[:1], status_bytes[1:].decode("utf-8", "replace")
        self.respond({
            "ok": True, "why": why, "exit": exit_code, "signal": sig, "wall_s": wall,
            "cpu_s": ru.ru_utime + ru.ru_stime, "total_cpu_s": total_cpu, "maxrss_kb": ru.ru_maxrss,
            "ole": why == "ole", "started": tag == b"S" or (not python_child and tag == b""),
            "compile_error": note if tag == b"C" else None,
            "harness_error": note if tag == b"H" else None,
            "exec_enomem": note if tag == b"M" else None,
            # a Python child's RSS before the program ran (the warm interpreter's pages), which
            # its peak includes; written before any of the program's code ran
            "base_rss_kb": int(base) if base.isdigit() else 0,
            "stdout_total": out.total, "stderr_total": err.total, "clean": clean,
        }, [out.data(), err.data(), *collected])

    # functional sessions
    def op_open(self, req):
        """Fork the session child for a functional submission and wait until it is loaded."""
        self.close_session()
        cwd = self.scratch_dir()
        res_r, res_w = os.pipe()
        cmd_r, cmd_w = os.pipe()
        err_r, err_w = os.pipe()
        null = os.open(os.devnull, os.O_RDWR)
        meter = CpuMeter()
        t0 = time.monotonic()
        try:
            pid = self.server.spawn(child_request(req, cwd, kind="session"), [null, null, err_w, res_w, cmd_r])
        except BaseException:
            for fd in (res_r, cmd_w, err_r):
                os.close(fd)
            raise
        finally:
            for fd in (res_w, cmd_r, err_w, null):
                os.close(fd)
        self.session = {
            "pid": pid, "cmd": cmd_w,
            "res": Sink(res_r, int(req.get("out_bytes", 1 << 24)) + FRAME_SLACK + DEFER_BYTES, "head"),
            "frame_cap": int(req.get("out_bytes", 1 << 24)) + FRAME_SLACK,
            "err": Sink(err_r, STDERR_KEEP, "tail"),
        }
        meter.pid = pid
        reply, payload, finished = self.await_frame(t0 + float(req["wall_s"]), req.get("cpu_s"), meter)
        reply["wall_s"] = time.monotonic() - t0
        reply["base_rss_kb"] = self.server.start_rss_kb  # the child's RSS before the program (the warm interpreter's)
        reply.pop("_raw", None)
        self.respond(reply, [payload])
        if finished or reply.get("frame", {}).get("event") != "ready":
            self.close_session()

    def op_calls(self, req):
        """The calls of the open session, pipelined (`run_calls`). They come in their own request,
        after the session child was forked: it inherits this process's memory, and must not find
        the inputs of tests it has not been called on yet."""
        if self.session is None:
            self.respond({"ok": True, "end": True, "ran": 0, "stopped": False})
            return
        self.run_calls(req)

    def op_stop(self, req):
        """A `stop` that arrived after its batch ended: nothing to stop (no reply)."""

    def run_calls(self, req):
        """Pipelined calls (the `inputs` of a `calls` request): one reply per call, streamed in
        groups as they finish (`defer`), then an `end` reply. The parent sends `stop` at the first
        failure, which ends the batch and cuts short a call in progress.

        The inputs go to the child in windows: the first call alone, then twice as many each time
        a whole window used under an eighth of the CPU limit, back to one call when not (at most
        WINDOW_MAX calls, WINDOW_BYTES of input and the request's `window_max`). The child runs a
        window's calls back to back without waiting for this process, which meters each call from
        the frame before it and kills it over the limit, as with one call at a time. A program
        holding a window's inputs could do a later call's work during the earlier ones, each
        under the limit; so the calls of a window together must stay under one call's limit too.
        When they do not (seen while the calls run, or from a frame that waited while this
        process was busy elsewhere), the session is killed and the call at hand answered
        `rewind`, with no verdict: the parent reruns the rest in a fresh session, one call at a
        time. Every call judged from a window thus used, with all the work done for it after its
        input was available, under its limit; programs whose calls are fast, the common case,
        never see a rewind.
        """
        ran, stopped = 0, False
        inputs = req["inputs"]
        self.defer_age_s = float(req.get("defer_age_s", DEFER_AGE_S))  # (tests hold replies longer)
        cpu_limit = req.get("cpu_s")
        window_max = max(1, min(int(req.get("window_max", WINDOW_MAX)), WINDOW_MAX)) if cpu_limit is not None else 1
        s = self.session
        meter = CpuMeter(s["pid"]) if s is not None else None
        window, sent, first, mark, t0 = 1, 0, 0, None, None
        k = 0
        while s is not None and k < len(inputs):
            if k == sent:  # the window's calls are all answered: adapt, send the next window
                if mark is not None:
                    used = meter.mark() - mark
                    window = min(window * 2, window_max) if used * 8 < float(cpu_limit) else 1
                first, mark = k, meter.mark()
                sent, t0 = self.send_window(inputs, k, window), time.monotonic()
            several = k > first or sent > k + 1
            reply, payload, finished = self.await_call(t0, req, meter, window=mark if k > first else None,
                                                       several=several)
            if reply is None:  # stopped in the middle of the call: its result no longer matters
                stopped = True
                self.close_session()
                break
            if several and not finished and meter.last - mark > float(cpu_limit):
                # the window went over while this process was not looking (frames waited for it):
                # this call's own share is unknown, so it has no verdict either
                reply, payload, finished = {"ok": True, "rewind": True, "kernel_cpu_s": meter.last - mark}, b"", True
            t0 = time.monotonic()  # the child goes on to the window's next call (metered from the lap)
            # the payload stays valid: the next read comes later, or the buffer stays pinned
            self.respond_call(reply, payload, defer=reply.get("frame", {}).get("ok") is True)
            ran += 1
            k += 1
            if finished:
                self.close_session()
                break
        self.respond({"ok": True, "end": True, "ran": ran, "stopped": stopped})

    def send_window(self, inputs, k, window):
        """Send calls k, k+1, ... of `inputs` to the session child (at least one; at most `window`
        of them and WINDOW_BYTES in all); returns the index after the last one sent."""
        parts, size, end = [], 0, k
        while end < len(inputs) and end - k < window:
            data = inputs[end].encode("utf-8", "surrogatepass")
            if end > k and size + len(data) > WINDOW_BYTES:
                break
            parts.append(b"%d\n%s" % (len(data), data))
            size += len(data)
            end += 1
        try:
            write_all(self.session["cmd"], b"".join(parts))
        except OSError:
            pass  # the child is gone; await_frame reports how it died
        return end

    def await_call(self, t0, limits, meter, window=None, several=False):
        """The frame of the call the child started at `t0`: (reply, payload, finished), or
        (None, b"", True) when the parent sent `stop` meanwhile. `window`: the meter reading its
        window of calls started at (the window's limit applies too); `several`: the window has
        more calls than this one."""
        reply, payload, finished = self.await_frame(t0 + float(limits["wall_s"]), limits.get("cpu_s"), meter,
                                                    stoppable=True, window=window)
        if reply is None:
            return None, b"", True
        reply["wall_s"] = time.monotonic() - t0
        # The kernel's count, in case the program tampered with its own clock. The meter then
        # restarts: CPU a thread the program left running uses between calls counts for the next.
        # When the next call's frame is here already (this process was busy elsewhere while the
        # child went on through its window), the CPU since the last lap is that call's too: this
        # call takes what its frame says it used, the rest stays for the next. (Only within a
        # window, whose calls together run_calls holds to the limit with the meter's own
        # readings: a call alone could otherwise fake a queue and report its own time.)
        res = self.session["res"] if self.session is not None else None
        queued = several and res is not None and res.len > res.consumed
        used = None if finished else meter.lap(upto=frame_cpu(reply) if queued else None)
        if used is not None:
            reply["kernel_cpu_s"] = used
        return reply, payload, finished

    def op_close(self, req):
        clean = self.close_session()
        if req.get("reply", True):
            self.respond({"ok": True, "clean": clean})

    def await_frame(self, deadline, cpu_limit, meter, stoppable=False, window=None):
        """(reply, payload, finished): the payload is a view of the session's buffers, valid until
        the next read; finished = the session child is dead or must be killed (after replying).
        (None, b"", True) when `stoppable` and the parent sent `stop` before the frame came."""
        s = self.session
        res, err = s["res"], s["err"]
        frame, stopped = [], []

        def have_frame(woke):
            if self.deferred and time.monotonic() >= self.flush_at:
                self.flush()
            got = take_frame(res, s["frame_cap"])
            if got is not None:
                frame.append(got)
            elif stoppable and (woke or self.inbuf) and self.stop_requested():
                stopped.append(True)
            return bool(frame or stopped)

        try:
            why, status, ru = watch(s["pid"], self.server, [res, err], deadline, cpu_limit, meter,
                                    until=have_frame, wake_fds=(self.rfd,) if stoppable else (),
                                    wake_at=self.flush_due, window=window)
        except (ValueError, OverflowError) as e:
            kind = "ole" if isinstance(e, OverflowError) else "protocol"
            return {"ok": True, "killed": kind, "message": str(e)}, b"", True
        if stopped and not frame:
            return None, b"", True
        if why == "until":  # the frame is the program's to write: it travels under "frame" only
            header, payload, raw = frame[0]
            return {"ok": True, "frame": header, "_raw": raw}, payload, False
        if why == "exit":  # died between frames: report how, with its stderr
            drain([res, err], 0.05)
            exit_code, sig = describe_status(status)
            s["reaped"] = True
            return {"ok": True, "died": True, "exit": exit_code, "signal": sig, "maxrss_kb": ru.ru_maxrss,
                    "kernel_cpu_s": meter.after_exit(ru)}, err.data(), True
        if why == "window":  # no verdict on this call: the parent reruns it, one call at a time
            return {"ok": True, "rewind": True, "kernel_cpu_s": meter.used() or 0.0}, b"", True
        return {"ok": True, "killed": why, "kernel_cpu_s": meter.used() or 0.0}, b"", True

    def close_session(self):
        self.flush()  # deferred replies point into the session's buffers
        s, self.session = self.session, None
        if s is None:
            return True
        if not s.get("reaped"):
            try:
                os.kill(s["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass
        clean = self.cleanup(s["pid"])
        try:
            os.close(s["cmd"])
        except OSError:
            pass
        s["res"].close()
        s["err"].close()
        return clean


def child_request(req, cwd, **changes):
    """What the fork server is told of a run: the program's kind, files by path and limits.
    Never data (no input, output or code): the server's memory is every program's."""
    out = {k: req[k] for k in CHILD_KEYS if req.get(k) is not None}
    out["cwd"] = cwd
    out.update(changes)
    return out


CHILD_KEYS = ("kind", "argv", "code", "entry", "prelude", "mem_bytes", "cpu_s", "rlimit_cpu_s", "stack_bytes",
              "fsize_bytes", "nofile", "int_max_str_digits")


def set_child_subreaper():
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass


def main():
    # Move the parent link off fds 0/1 so no child can inherit or reach it by number.
    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    sys.set_int_max_str_digits(0)
    Harness(rfd, wfd).serve()
    # Served and cleaned up (serve closes the last session on EOF): skip the interpreter's
    # teardown of every preimported module, which only delays Evaluator.close.
    os._exit(0)


if __name__ == "__main__":
    main()
