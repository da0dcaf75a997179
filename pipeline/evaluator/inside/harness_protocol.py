"""The judge's side of its link to the parent (stdlib only; imported by harness.py in the sandbox).

Requests are JSON lines; a reply is a JSON header line whose `sizes` list gives the lengths of
the blobs after it (PROTOCOL.md). Blobs are written from where they lie (views of a Sink's
buffer: program output never enters this process's heap). A session's usual call replies wait
for the next ones and go in groups (`defer`): the parent wakes once per group.
"""

import json
import math
import os
import select
import time

# A session's call replies go to the parent in batches (`Protocol.defer`): at most this many,
# this many payload bytes, or this old. The parent wakes once per batch instead of once per call;
# the age bound keeps its `stop` at a first failure prompt.
DEFER_FRAMES = 32
DEFER_BYTES = 256 * 1024
DEFER_AGE_S = 0.002


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


class Protocol:
    """Reading requests and writing replies (state: rfd, wfd, inbuf, eof, deferred, session)."""

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
