"""The judge process that runs *inside* the sandbox (stdlib only; run as `import harness; harness.main()`).

One judge lives per box and serves the parent's requests (`microcoder.pipeline.evaluator.sandbox.box.Box`,
PROTOCOL.md) for many submissions, by job:
- `harness_protocol.py`: reading requests, writing replies, grouping a session's call replies;
- `harness_runs.py`: one program run (stdio, checker, compiler) and the clean-up after it;
- `harness_sessions.py`: a functional submission's session child and its windows of calls;
- `harness_procs.py`: the CPU meter, watching a program, killing what is left, the fork server's
  judge side; `harness_zygote.py`: the fork server itself; `harness_child.py`: what a program
  runs before its own code.

Programs are never forked from this process: it holds requests, inputs, outputs and frames. At
init it forks the fork server, before any request has arrived, and every program comes from
there, so a program's memory holds nothing of another test, submission or program.

When the box has its own PID namespace the judge is PID 1 of it: the kernel refuses every signal
a program sends it (no handlers are installed), and after each run the judge kills every other
process but the fork server and wipes the private writable folders, so nothing a submission
starts outlives its test and nothing it writes is seen by the next one. Every program runs
under the seccomp filter of `syscall_filter.py`, which the judge installs on itself once (the
fork server and every program inherit it); if the filter is missing and a program changed the
judge's limits anyway, or killed the fork server, the next run/open request is answered
`retire` and the parent starts a fresh judge. Expected outputs never enter the box: the parent
compares.
"""

import gc
import os
import resource
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_procs as procs  # noqa: E402 - the sibling files, found through the line above
import harness_zygote  # noqa: E402
from harness_child import leetcode_prelude, write_all  # noqa: E402
from harness_procs import PID1, ForkServer  # noqa: E402
from harness_protocol import DEFER_AGE_S, Protocol  # noqa: E402
from harness_runs import Runs  # noqa: E402
from harness_sessions import Sessions  # noqa: E402
from harness_state import RunGroupFds  # noqa: E402
from syscall_filter import Installer  # noqa: E402

# Modules submissions typically import (and the LeetCode prelude / argument conversion need):
# loaded once in the judge process so every forked child starts with them warm. None of them
# starts threads at import. Measured: forking this warm process costs ~1 ms, importing the same
# modules in each child ~60 ms.
PREIMPORT = (
    "array atexit bisect cmath collections copy dataclasses datetime decimal enum fractions functools "
    "heapq inspect io itertools json math numbers operator queue random re statistics string struct "
    "threading traceback types typing sortedcontainers"
).split()


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


def disable_tracing():
    """Make this process non-dumpable so a same-uid program cannot ptrace or read its memory (it
    holds every request, input and output). Whether it worked: the parent refuses a judge that
    stays readable."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
        return libc.prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE
    except Exception:  # noqa: BLE001 - no ctypes: reported, the box does not start
        return False


class Harness(Protocol, Runs, Sessions):
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
        untraceable = disable_tracing()
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
        self.respond({"ok": True, "pid1": PID1, "pid": os.getpid(), "uid": os.getuid(), "untraceable": untraceable,
                      "python": sys.version.split()[0], "clean": clean,
                      "syscall_filter": self.filter is not None, "syscall_filter_error": why,
                      "cgroup": procs.RUN_GROUP is not None, "cgroup_error": group_error})

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
        if fd_socket is not None:
            self.fd_socket = socket.socket(fileno=int(fd_socket))
        set_child_subreaper()  # orphans of programs come here when the server is not their parent
        own = [self.rfd, self.wfd, *([int(fd_socket)] if fd_socket is not None else []),
               *([procs.PROC_FD] if procs.PROC_FD is not None else [])]
        pid, sock = harness_zygote.start(self.child_filter, self.child_group_fds(), own)
        self.server = procs.FORK_SERVER = ForkServer(pid, sock)
        procs.FORK_SERVER_PID = pid
        if PID1 and not procs.sees(pid):  # it is non-dumpable: a view that hides it would hide programs too
            raise RuntimeError("the judge's /proc does not show the fork server: it could not kill every process")

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
        if not spec:
            return "no run group"
        group = RunGroupFds(spec)
        why = group.probe()
        if why is None:
            procs.RUN_GROUP = group
        return why

    def child_group_fds(self):
        return procs.RUN_GROUP.procs if procs.RUN_GROUP is not None else ()

    def op_ping(self, req):
        self.respond({"ok": True})


def set_child_subreaper():
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass


def main():
    procs.take_process_view()  # first: the box may start the judge in it (launch.PROC_STEPS)
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

