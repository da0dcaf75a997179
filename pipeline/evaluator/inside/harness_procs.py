"""The judge's processes: the CPU meter, watching a running program, the end-of-run clean-up,
and the judge's side of the fork server (stdlib only; imported by harness.py in the sandbox).

CPU time is counted over the run as a whole (`CpuMeter`): with the box's run group, its counter;
as PID 1 without one, every process of the namespace (what was reaped included); otherwise the
program's own. Every program is forked by the fork server (`harness_zygote.py`), which reaps
it and reports how it ended (`ForkServer`); the clean-up kills everything else in the namespace
by pid (`kill_everything`), sparing only the fork server. Processes are listed and read through
the judge's own /proc (`PROC_FD`): the box's /proc hides from it what a program made non-dumpable.
"""

import json
import math
import os
import resource
import select
import signal
import socket
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
PID1 = os.getpid() == 1
# The judge's view of the namespace's processes: a descriptor of a /proc that shows all of them
# (take_process_view), where the box's own /proc hides what the judge may not ptrace-read (a
# program that made itself non-dumpable); None: /proc.
PROC_FD = None


def take_process_view():
    """At start: a box that hides processes in its /proc starts the judge in a /proc of its own
    (launch.PROC_STEPS: a procfs instance of this namespace, detached): keep a descriptor of it
    and leave it. Anything else (no such box): /proc, as it is."""
    global PROC_FD
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        ours = os.readlink("self", dir_fd=fd) == str(os.getpid())
    except OSError:
        ours = False
    if not ours:
        os.close(fd)
        return
    PROC_FD = fd
    os.chdir("/")


def sees(pid):
    """Whether the judge's view shows process `pid` (a non-dumpable one included)."""
    return str(pid) in proc_list()


def proc_list():
    return os.listdir(PROC_FD if PROC_FD is not None else "/proc")


def proc_read(pid, part):
    """/proc/<pid>/<part> (one read: a short file), through the judge's view."""
    if PROC_FD is None:
        fd = os.open(f"/proc/{pid}/{part}", os.O_RDONLY | os.O_CLOEXEC)
    else:
        fd = os.open(f"{pid}/{part}", os.O_RDONLY | os.O_CLOEXEC, dir_fd=PROC_FD)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def proc_cpu_s(pid, own=True):
    """CPU seconds of `pid` and its reaped children, from /proc (None if it is gone); with
    own=False its reaped children's only."""
    try:
        fields = proc_read(pid, "stat").rsplit(b")", 1)[1].split()
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
        names = proc_list()
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
    for name in proc_list():
        if not name.isdigit() or int(name) in spare:
            continue
        try:
            state = proc_read(name, "stat").rsplit(b")", 1)[1].split()[0]
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
        self.pending, self.last_pid, self.spawn_error = False, None, None  # the last spawn's answer
        self.taken = set()  # pids whose end was taken (since the last spawn)
        self.dead = False

    def spawn(self, req, fds):
        """Ask for a program with descriptors `fds` as its 0, 1, 2, ...; no wait: its pid comes
        later (`known_pid`, `resolve`), while this process goes on to watch its pipes."""
        self.exits.clear()  # any report here is an earlier run's (cleaned up already)
        self.taken.clear()
        self.resume()
        try:
            socket.send_fds(self.sock, [json.dumps(req).encode()], fds)
        except OSError as e:
            self.dead = True
            raise RuntimeError(f"the fork server is gone: {e}") from None
        self.pending, self.last_pid, self.spawn_error = True, None, None

    def known_pid(self):
        """The pid of the program asked for last, if its answer is here (never waits)."""
        while self.pending and not self.dead and select.select([self.fd], [], [], 0)[0]:
            self._receive(None)
        return self.last_pid

    def resolve(self):
        """The pid of the program asked for last (waits for the answer)."""
        while self.pending:
            if self._receive(None) is None:
                raise RuntimeError("the fork server is gone")
        if self.last_pid is None:
            raise RuntimeError(f"the fork server could not start the program: {self.spawn_error}")
        return self.last_pid

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
        elif "pid" in msg:
            self.pending, self.last_pid, self.start_rss_kb = False, msg["pid"], msg.get("rss_kb", 0)
        elif "error" in msg:
            self.pending, self.spawn_error = False, msg["error"]
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


def watch(pid, server, sinks, deadline, cpu_limit, meter, until=None, stop_on_overflow=(), wake_fds=(),
          wake_at=None, window=None):
    """Drain `sinks` while program `pid` runs. Returns (why, wait_status, rusage) where why is
    'exit', 'until' (`until(woke)` became true; woke: a fd of `wake_fds` was readable), 'wall',
    'cpu' (`meter` over `cpu_limit`), 'window' (`meter` since the reading `window` over
    `cpu_limit`, see Harness.run_calls) or 'ole'. `wake_at()`: a time to wake up by (for
    `until` to act on), or None. Few syscalls per wake-up (a functional session goes through here once
    per call): the meter is first read 20 ms in (it was just started), and the program's end
    is looked for only when the fork server (`server`, its parent) has sent something. `pid`
    None: the program was just asked for; its pid is read once the server's answer is there."""
    next_cpu_check = time.monotonic() + 0.02
    woke, check_exit = False, pid in server.exits or server.dead  # (a new report wakes the select below)
    while True:
        if until is not None and until(woke):
            return "until", None, None
        if pid is None:  # asked for, not answered yet: its pipes wake this loop meanwhile
            pid = server.known_pid()
            if pid is not None and meter is not None and meter.pid is None:
                meter.pid = pid
            check_exit = pid is not None
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
        if not server.dead and pid is not None:
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
