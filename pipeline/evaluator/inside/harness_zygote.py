"""The fork server: the one process every program is forked from (stdlib only; runs in the sandbox).

The judge (`harness.py`) handles what programs must never see: requests, test inputs, program
output, frames, compile messages. A program forked from it would inherit all of that in its own
memory, freed blocks included, and could scan it (later tests' inputs, an earlier sample's
correct output). So the judge forks this server once, at init, after the warm imports and before
any request has arrived, and every program is forked from here instead. This process holds
nothing but the warm interpreter: it is told only a program's kind, its limits, its argv and
files by path, and it gets the program's descriptors (stdin, pipes) ready-made from the judge.

Protocol (a SOCK_SEQPACKET socket; one message each):
  judge -> server  a spawn request (JSON: kind, cwd, limits, argv, entry, ...) with the child's
                   descriptors attached (SCM_RIGHTS), in the order they get numbers 0, 1, 2, ...
  server -> judge  {"pid": N} for each spawn, in order; then, whenever one of its children ends,
                   {"exit": N, "status": wait status, "utime", "stime", "maxrss"} (its rusage).
The judge meters and kills programs itself; this server only forks, reaps and reports. Like the
judge it is non-dumpable, so under the box's hidepid /proc no program sees it (each child is made
dumpable again: a program sees its own children). Programs run under the judge's uid and could
signal this process by pid: every catchable signal is blocked here, a stop is undone by the
judge (SIGCONT after each clean-up), and if it is killed the judge reaps the orphans itself and
retires before the next run (`Harness.tampered`), so it costs a restart, never a verdict.
"""

import json
import os
import select
import signal
import socket
import sys

from harness_child import (
    HARNESS_FAIL_EXIT,
    child_setup,
    exec_child,
    run_python_child,
    send_frame,
    session_child,
    write_all,
)

MAX_FDS = 8
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
PROGRAM_NAME = b"python3"  # the judge's own name, which programs keep
MESSAGE_MAX = 1 << 16
# Blocked here (a program may send them: they stay pending, never acted on); unblocked in every
# child (a child starts with no pending signal). SIGKILL and SIGSTOP cannot be: see the docstring.
CHILD_MASK = ()
IGNORED = tuple(getattr(signal, n) for n in (
    "SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGTSTP", "SIGTTIN",
    "SIGTTOU", "SIGIO", "SIGVTALRM", "SIGPROF", "SIGXCPU", "SIGWINCH", "SIGURG", "SIGTRAP") if hasattr(signal, n))


SERVER_NAME = b"fork-server"


def _prctl():
    try:
        import ctypes

        return ctypes.CDLL(None).prctl
    except Exception:  # noqa: BLE001 - no ctypes: names stay as they are
        return None


PRCTL = _prctl()  # looked up once, here: not in every forked child


def set_name(name):
    """The process name (`comm`) that /proc shows."""
    if PRCTL is not None:
        PRCTL(15, name[:15], 0, 0, 0)  # PR_SET_NAME


def set_dumpable(flag):
    """PR_SET_DUMPABLE: under the box's /proc (hidepid=ptraceable) a process of this uid sees
    another only while that one is dumpable."""
    if PRCTL is not None:
        PRCTL(4, flag, 0, 0, 0)


def own_name():
    with open("/proc/self/comm", "rb") as f:
        return f.read().strip()


def start(child_filter, group_fds, close_fds):
    """Fork the server from the judge (call before any request data has been read). Returns
    (pid, the judge's end of the socket). `close_fds`: the judge's own descriptors, closed in
    the server (its parent link, the parent's descriptor socket)."""
    global PROGRAM_NAME
    PROGRAM_NAME = own_name()
    judge_end, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        try:
            judge_end.close()
            for fd in close_fds:
                os.close(fd)
            set_name(SERVER_NAME)  # (its programs get the judge's name back)
            set_dumpable(0)  # (as the judge already is): hidden from programs, its memory unreadable
            serve(server_end, child_filter, group_fds)
        finally:
            os._exit(HARNESS_FAIL_EXIT)
    server_end.close()
    return pid, judge_end


def serve(sock, child_filter, group_fds):
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the select below through wake_w
    global CHILD_MASK
    CHILD_MASK = signal.pthread_sigmask(signal.SIG_BLOCK, IGNORED)  # held here, never acted on
    while True:
        ready, _, _ = select.select([sock, wake_r], [], [])
        if wake_r in ready:
            try:
                while os.read(wake_r, 4096):
                    pass
            except BlockingIOError:
                pass
        reap(sock)
        if sock in ready:
            msg, fds, _flags, _addr = socket.recv_fds(sock, MESSAGE_MAX, MAX_FDS)
            if not msg:  # the judge is gone
                os._exit(0)
            try:
                req = json.loads(msg)
                base = rss_kb(os.getpid())  # read before the fork: nothing the program does moves it
                pid = spawn(req, fds, child_filter, group_fds, (sock.fileno(), wake_r, wake_w))
                reply = b'{"pid":%d,"rss_kb":%d}' % (pid, base)
            except Exception as e:  # noqa: BLE001 - the judge reports it
                reply = json.dumps({"error": repr(e)[:500]}).encode()
            finally:
                for fd in fds:
                    os.close(fd)
            sock.send(reply)


def rss_kb(pid):
    """RSS of `pid` in KB. This process's, read before each fork, is what a child starts from at
    most (it maps a subset of these pages; the interpreter's file pages it touches later count in
    both), and unlike the child's own it cannot grow with what the program does meanwhile."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE_KB
    except (OSError, IndexError, ValueError):
        return 0


def reap(sock):
    """Report every child that ended (its wait status and rusage)."""
    while True:
        try:
            pid, status, ru = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        sock.send(b'{"exit":%d,"status":%d,"utime":%r,"stime":%r,"maxrss":%d}' % (
            pid, status, ru.ru_utime, ru.ru_stime, ru.ru_maxrss))


def spawn(req, fds, child_filter, group_fds, own_fds):
    kind = req["kind"]
    if kind not in ("python", "exec", "session"):
        raise ValueError(f"unknown kind {kind!r}")
    pid = os.fork()
    if pid:
        return pid
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, CHILD_MASK)
        set_name(PROGRAM_NAME)
        for fd in own_fds:  # (child_setup closes every other descriptor too; these first, by name)
            os.close(fd)
        digits = req.get("int_max_str_digits")
        if digits is not None:  # checker programs: the interpreter's default (a contestant's huge
            sys.set_int_max_str_digits(int(digits))  # number must not make a checker fail: SE)
        python = kind != "exec"
        child_setup(list(fds), req["cwd"], req, python, child_filter, group_fds)
        set_dumpable(1)  # alone now, holding nothing of the server's: it sees its own children
        if kind == "session":
            session_child(req, 3, 4)
        elif kind == "python":
            run_python_child(req, 3)
        else:
            exec_child(req, 3, dict(os.environ))
    except BaseException as e:  # noqa: BLE001
        try:
            if kind == "session":
                send_frame(3, {"event": "harness_error"}, repr(e).encode()[:2000])
            else:
                write_all(3, b"H" + repr(e).encode()[:2000])
        finally:
            os._exit(HARNESS_FAIL_EXIT)
    os._exit(HARNESS_FAIL_EXIT)
