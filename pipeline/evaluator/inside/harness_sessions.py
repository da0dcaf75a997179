"""Functional sessions: one child per submission answers one call per test (stdlib only;
imported by harness.py in the sandbox). The calls' inputs go to the child in windows whose calls
together stay under one call's CPU limit (`run_calls`); each call is metered from the frame before
it; a window over the limit is answered `rewind` (PROTOCOL.md).
"""

import os
import signal
import time

import harness_procs as procs
from harness_child import write_all
from harness_pipes import FRAME_SLACK, Sink, drain, take_frame
from harness_procs import CpuMeter, describe_status, frame_cpu, watch
from harness_protocol import DEFER_AGE_S, DEFER_BYTES
from harness_runs import STDERR_KEEP, child_request

# A session's inputs go to its child in windows (`Sessions.run_calls`): one call first, then twice
# as many while a whole window uses under an eighth of one call's CPU limit, up to WINDOW_MAX
# calls and WINDOW_BYTES of input (half a pipe: writing a window never waits on the child).
WINDOW_MAX = 32
WINDOW_BYTES = 32 * 1024


class Sessions:
    """`open`, `calls`, `stop` and `close` requests (state: session, server, deferred)."""

    def op_open(self, req):
        """Fork the session child for a functional submission and wait until it is loaded."""
        self.close_session()
        cwd = self.scratch_dir()
        res_r, res_w = os.pipe()
        cmd_r, cmd_w = os.pipe()
        err_r, err_w = os.pipe()
        null = os.open(os.devnull, os.O_RDWR)
        meter = CpuMeter()
        mark = self.memory_mark(req)
        t0 = time.monotonic()
        try:
            self.server.spawn(child_request(req, cwd, kind="session"), [null, null, err_w, res_w, cmd_r])
        except BaseException:
            for fd in (res_r, cmd_w, err_r):
                os.close(fd)
            raise
        finally:
            for fd in (res_w, cmd_r, err_w, null):
                os.close(fd)
        self.session = {
            "pid": None, "cmd": cmd_w,  # (known once the fork server answers: await_frame)
            "res": Sink(res_r, int(req.get("out_bytes", 1 << 24)) + FRAME_SLACK + DEFER_BYTES, "head"),
            "frame_cap": int(req.get("out_bytes", 1 << 24)) + FRAME_SLACK,
            "err": Sink(err_r, STDERR_KEEP, "tail"),
            # the group's memory before the child: each reply's figures are the session's so far
            "mark": mark, "mem_limit": int(req.get("group_mem_bytes") or req.get("mem_bytes") or 0), "oom_seen": 0,
        }
        reply, payload, finished = self.await_frame(t0 + float(req["wall_s"]), req.get("cpu_s"), meter)
        self.session["pid"] = self.server.resolve()  # (here by now: the child has written or ended)
        reply["wall_s"] = time.monotonic() - t0
        reply["base_rss_kb"] = self.server.start_rss_kb  # the child's RSS before the program (the warm interpreter's)
        reply.update(self.memory_figures(mark))
        self.session["oom_seen"] = reply.get("group_oom_kills", 0)
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
            elif self.memory_over(reply, s) and sent > k + 1 and not reply.get("rewind"):
                # over the memory limit, maybe in a later call of the window the child went on
                # to: no verdict here, the parent reruns from this call alone, where it is exact
                reply, payload, finished = {"ok": True, "rewind": True, "kernel_cpu_s": reply.get("kernel_cpu_s", 0.0)}, b"", True
            t0 = time.monotonic()  # the child goes on to the window's next call (metered from the lap)
            # the payload stays valid: the next read comes later, or the buffer stays pinned
            self.respond_call(reply, payload, defer=reply.get("frame", {}).get("ok") is True)
            ran += 1
            k += 1
            if finished:
                self.close_session()
                break
        self.respond({"ok": True, "end": True, "ran": ran, "stopped": stopped})

    def memory_over(self, reply, s):
        """Add the session's memory figures so far to a call's reply; whether they show an
        out-of-memory kill since the last call or a peak over the limit."""
        if s["mark"] is None:
            return False
        figures = procs.RUN_GROUP.figures(s["mark"], s["mem_limit"], s["oom_seen"])
        reply.update(figures)
        killed, s["oom_seen"] = figures["group_oom_kills"] > s["oom_seen"], figures["group_oom_kills"]
        return killed or figures["group_peak_kb"] * 1024 > s["mem_limit"]

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
        if s["pid"] is None:  # (open failed before the fork server answered)
            s["pid"] = self.server.known_pid()
        if not s.get("reaped") and s["pid"] is not None:
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
