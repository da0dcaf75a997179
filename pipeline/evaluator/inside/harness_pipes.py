"""How the judge process reads its children's pipes (stdlib only; imported by harness.py in the sandbox).

Programs are forked from the fork server (`harness_zygote.py`), never from the judge, so nothing
the judge holds is in a program's memory. Program output (stdout, stderr, functional results) is
still kept out of the judge's Python heap, as a second line: it is read with `readv` straight into
a private anonymous mapping marked MADV_WIPEONFORK (a forked child sees zeros there), sent to the
parent from that mapping, and discarded (MADV_DONTNEED, unmap) after the reply.
"""

import json
import math
import mmap
import os
import select
import time

FRAME_HEADER_MAX = 4096  # a real frame header is ~150 bytes
FRAME_SLACK = 64 * 1024  # room in a frame beyond the output limit: its header, an error's traceback
# What a frame header may hold (harness_child writes them). The program can write frames too, and
# the header is parsed in this process's heap, which later programs are forked with: only these
# keys, and as strings only an event of this set and a short exception type name, so no program
# can leave its output there for the next submission to find.
FRAME_KEYS = frozenset(("event", "ok", "converted", "cpu_s", "maxrss_kb", "n", "error_type"))
FRAME_EVENTS = frozenset(("ready", "result", "compile_error", "load_error", "entry_error", "harness_error"))
ERROR_TYPE_MAX = 64
CHUNK = 1 << 16


class Buffer:
    """A private anonymous mapping that forked children cannot see."""

    def __init__(self, size):
        self.size = max(int(size), 1)
        self.mm = mmap.mmap(-1, self.size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        try:
            self.mm.madvise(mmap.MADV_WIPEONFORK)  # type: ignore[attr-defined]  # Linux only: not in typeshed
        except (AttributeError, OSError):  # Linux < 4.14: discard() before every fork still holds
            pass
        self.view = memoryview(self.mm)

    def discard(self):
        """Drop the contents now (zero pages) and unmap."""
        self.view.release()
        try:
            self.mm.madvise(mmap.MADV_DONTNEED)
        except (AttributeError, OSError):
            self.mm[:] = bytes(len(self.mm))
        try:
            self.mm.close()
        except BufferError:  # a view is still referenced somewhere: the contents are gone already
            pass


class Sink:
    """Reads one pipe into a Buffer. mode 'head' keeps the first `limit` bytes (more = overflow,
    the output limit), 'tail' keeps the last `limit` bytes (diagnostics), 'frames' is the
    functional session's result channel (head, consumed from the front by take_frame)."""

    def __init__(self, fd, limit, mode):
        self.fd, self.limit, self.mode = fd, max(int(limit), 0), mode
        self.buf = Buffer(2 * self.limit if mode == "tail" else self.limit)
        self.spill = None  # where bytes beyond a head limit are read (and dropped)
        self.start = 0  # tail: where the kept bytes begin
        self.len = 0
        self.consumed = 0  # frames: bytes already handed out, dropped before the next read
        self.total = 0
        self.eof = False
        self.overflow = False
        self.pinned = False  # frames: handed-out frames still referenced (not yet sent on): do not move

    def pump(self):
        self.compact()
        target, spilled = self._room()
        try:
            n = os.readv(self.fd, [target])
        except BlockingIOError:
            return
        except OSError:
            n = 0
        finally:
            target.release()
        if n == 0:
            self.eof = True
            return
        self.total += n
        if spilled:
            self.overflow = True
            return
        self.len += n
        if self.mode == "tail" and self.len - self.start > self.limit:
            self.start = self.len - self.limit

    def _room(self):
        """(view, spilled): where the next read goes; spilled = beyond the head limit."""
        if self.mode == "tail" and self.len + CHUNK > self.buf.size:
            keep = self.len - self.start  # slide the kept tail to the front
            self.buf.mm.move(0, self.start, keep)
            self.start, self.len = 0, keep
        room = self.buf.size - self.len
        if self.mode == "tail":
            room = min(room, CHUNK)
        if room > 0:
            return self.buf.view[self.len:self.len + min(room, CHUNK)], False
        if self.spill is None:
            self.spill = Buffer(CHUNK)
        return self.spill.view[:], True

    def data(self):
        """A view of what is kept (valid until close)."""
        return self.buf.view[self.start:self.len]

    def truncate(self, n):
        self.len = min(self.len, self.start + n)

    def compact(self):
        if self.consumed and not self.pinned:
            rest = self.len - self.consumed
            self.buf.mm.move(0, self.consumed, rest)
            self.len, self.consumed = rest, 0

    def find(self, needle):
        """Offset of `needle` in the kept bytes, or -1."""
        pos = self.buf.mm.find(needle, self.start + self.consumed, self.len)
        return pos if pos < 0 else pos - self.start

    def close(self):
        try:
            os.close(self.fd)
        except OSError:
            pass
        for b in (self.buf, self.spill):
            if b is not None:
                b.discard()


def drain(sinks, seconds=0.2):
    """Read what is left after every writer is dead (or give up after `seconds`)."""
    end = time.monotonic() + seconds
    while True:
        fds = [s.fd for s in sinks if not s.eof and not s.overflow]
        remaining = end - time.monotonic()
        if not fds or remaining <= 0:
            return
        ready, _, _ = select.select(fds, [], [], remaining)
        for s in sinks:
            if s.fd in ready:
                s.pump()


def frame_header(raw):
    """The program writes the frame header, so it is checked before anything reads it: a flat
    JSON object of scalars (no nesting to recurse on, no huge or non-finite numbers) with only
    the keys, events and short strings of FRAME_KEYS."""
    try:
        header = json.loads(raw)
    except (ValueError, RecursionError):
        raise ValueError("malformed frame header") from None
    if not isinstance(header, dict) or not header.keys() <= FRAME_KEYS:
        raise ValueError("malformed frame header")
    for key, value in header.items():
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, str):
            if key == "event" and value in FRAME_EVENTS or key == "error_type" and len(value) <= ERROR_TYPE_MAX:
                continue
            raise ValueError("malformed frame header")
        if isinstance(value, int) and abs(value) < 1 << 63:
            continue
        if isinstance(value, float) and math.isfinite(value):
            continue
        raise ValueError("malformed frame header")
    n = header.get("n")
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError("malformed frame header")
    return header


def take_frame(sink, capacity):
    """The next complete frame (header, payload view, the header's checked JSON text) of a
    'frames' sink, or None if incomplete. Frames are taken from where the last one ended; the
    buffer is compacted first unless the sink is pinned (earlier payload views are still to be
    sent), so every view stays valid until the next unpinned pump / take_frame. Raises
    ValueError on a malformed stream (the program wrote into the judge's channel),
    OverflowError when the frame (header line and payload) is over `capacity` bytes."""
    sink.compact()
    at = sink.consumed
    nl = sink.find(b"\n")
    if nl < 0:
        if sink.len - at > FRAME_HEADER_MAX:
            raise ValueError("oversized frame header")
        if sink.overflow:
            raise OverflowError("result larger than the output limit")
        return None
    if nl - at > FRAME_HEADER_MAX:  # checked before the line is copied out of the buffer
        raise ValueError("oversized frame header")
    raw = bytes(sink.buf.view[at:nl])
    header = frame_header(raw)
    end = nl + 1 + header["n"]
    if end - at > capacity:
        raise OverflowError("result larger than the output limit")
    if sink.len < end:
        if sink.overflow or end > sink.buf.size:
            raise OverflowError("result larger than the output limit")
        return None
    sink.consumed = end
    return header, sink.buf.view[nl + 1:end], raw
