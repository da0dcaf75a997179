"""One program run at a time: stdio programs, checkers, compilers (stdlib only; imported by
harness.py in the sandbox). The fork server forks the program with the descriptors made here (its
stdin: a private copy of its test's input the parent sent, or a named file; a checker's or an
interactor's files: extra descriptors the parent sent, at fixed numbers from EXTRA_FD_BASE); the
judge watches it to its end, kills whatever is left, empties the writable folders and replies.
"""

import os
import signal
import time

import harness_procs as procs
from harness_pipes import Sink, drain
from harness_procs import PID1, CpuMeter, describe_status, kill_everything, watch
from harness_state import clear_ipc, wipe
from harness_zygote import MAX_FDS

STDERR_KEEP = 16 * 1024
# A program's descriptors: stdin, stdout, stderr, the status pipe (3), then the extras the parent
# sent (`extra_fds`), from 4 on; the fork server takes MAX_FDS descriptors per program at most.
EXTRA_FD_BASE = 4
EXTRA_FDS_MAX = MAX_FDS - EXTRA_FD_BASE


def child_request(req, cwd, **changes):
    """What the fork server is told of a run: the program's kind, files by path and limits.
    Never data (no input, output or code): the server's memory is every program's."""
    out = {k: req[k] for k in CHILD_KEYS if req.get(k) is not None}
    out["cwd"] = cwd
    out.update(changes)
    return out


CHILD_KEYS = ("kind", "argv", "code", "entry", "prelude", "mem_bytes", "cpu_s", "rlimit_cpu_s", "stack_bytes",
              "fsize_bytes", "nofile", "int_max_str_digits", "sigpipe")


class Runs:
    """`run` requests and the clean-up after every program (state: config, server, dirty)."""

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
        (`stdin_fd`: its own copy of the test's input, nothing else of the problem; or, in an
        interactive test, a pipe from the other side), else /dev/null or a file named in the
        request. `stdout_fd`: its stdout is a descriptor the parent sent too (a pipe to the
        other side of an interactive test), which the judge does not read: the stdout sink then
        sees nothing; stderr is captured as always. `extra_fds: n`: n more descriptors the parent
        sent (a checker's or an interactor's files, sealed memory files), which the program gets
        as EXTRA_FD_BASE, EXTRA_FD_BASE + 1, ... (its argv names them /proc/self/fd/N): its
        files are never on a disk another box could reach."""
        self.close_session()
        stdin_fd, stdout_fd, extras = self.passed_fds(req)
        readers, writers = [], []
        try:
            cwd = self.scratch_dir()
            for d in req.get("mkdirs", []):
                os.makedirs(os.path.join(cwd, d), exist_ok=True)
            argv = [a.replace("{cwd}", cwd) for a in req.get("argv", [])]
            if stdin_fd is None:
                stdin_fd = os.open(req.get("stdin") or os.devnull, os.O_RDONLY)
            for _ in range(3):  # stdout, stderr, status
                r, w = os.pipe()
                readers.append(r)
                writers.append(w)
            out_w, err_w, st_w = writers
            python_child = req["kind"] == "python"
            meter = CpuMeter()
            mark = self.memory_mark(req)
            t0 = time.monotonic()
            program_stdout = out_w if stdout_fd is None else stdout_fd
            self.server.spawn(child_request(req, cwd, argv=argv), [stdin_fd, program_stdout, err_w, st_w, *extras])
        except BaseException:
            for fd in readers:
                os.close(fd)
            raise
        finally:  # the program holds its own copies now: a passed pipe ends when the program does
            for fd in (stdin_fd, stdout_fd, *extras, *writers):
                if fd is not None:
                    os.close(fd)
        out_r, err_r, st_r = readers
        sinks = (Sink(out_r, int(req.get("out_bytes", 1 << 24)), "head"),
                 Sink(err_r, int(req.get("err_bytes", STDERR_KEEP)), req.get("err_mode", "tail")),
                 Sink(st_r, 8192, "head"))
        try:
            self.finish_run(req, meter, mark, t0, cwd, python_child, *sinks)
        finally:  # the output is dropped, whatever happened
            for sink in sinks:
                sink.close()

    def passed_fds(self, req):
        """(stdin, stdout, [extras]): the descriptors the parent sent with a `run` request, in
        that order; None for stdin or stdout when not announced (`stdin_fd`, `stdout_fd`)."""
        extra = req.get("extra_fds") or 0
        if type(extra) is not int or not 0 <= extra <= EXTRA_FDS_MAX:
            # its descriptors stay queued on the socket, for the next request to take: retire then
            self.dirty = "a request sent descriptors the judge could not take"
            raise ValueError(f"extra_fds must be an int from 0 to {EXTRA_FDS_MAX}, got {extra!r}")
        wanted = [bool(req.get("stdin_fd")), bool(req.get("stdout_fd"))]
        count = sum(wanted) + extra
        fds = iter(self.receive_fds(count) if count else [])
        stdin, stdout = (next(fds) if w else None for w in wanted)
        return stdin, stdout, list(fds)

    def memory_mark(self, req):
        """The run group's memory before a program starts, when the parent reset its peak for
        this request (`group_peak`); None otherwise (no figures are reported then)."""
        group = procs.RUN_GROUP
        return group.mark() if group is not None and req.get("group_peak") else None

    def memory_figures(self, mark):
        return procs.RUN_GROUP.figures(mark) if mark is not None else {}

    def finish_run(self, req, meter, mark, t0, cwd, python_child, out, err, st):
        """Watch the forked run to its end, clean up, reply."""
        why, status, ru = watch(None, self.server, [out, err, st], t0 + float(req["wall_s"]),
                                req.get("cpu_s"), meter, stop_on_overflow=(out,))
        wall = time.monotonic() - t0
        pid = self.server.resolve()
        if why != "exit":
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            status, ru = self.server.wait(pid)
        kill_everything(self.server, pid)  # every writer of the pipes is gone after this: drain to EOF
        total_cpu = meter.used() if PID1 else None  # all reaped now: the exact total
        memory = self.memory_figures(mark)  # (all gone: the peak is final)
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
            "stdout_total": out.total, "stderr_total": err.total, "clean": clean, **memory,
        }, [out.data(), err.data(), *collected])

    # functional sessions
