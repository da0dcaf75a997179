"""Progress bars as plain lines when stderr is not a terminal (a log file, a pipe, `dvc repro > log`).

tqdm redraws its bar in place: a carriage return, the bar, padding, ten times a second. On a
terminal that is one line that moves; in a log it is carriage-return soup. `ProgressLines` wraps
stderr once (`install`, called by the CLI before any command runs, so every bar of every module
goes through it without touching them): a redraw becomes a newline-terminated line, at most one
per bar every `interval_s` seconds, plus the bar's first and last states. Every other write passes
through unchanged.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

INTERVAL_S = 30.0  # at most one line per bar this often; its first and last states always show
# tqdm's cursor moves for stacked bars (`position=`): up a line, clear to the end of the line
CURSOR_MOVES = re.compile(r"\x1b\[\d*[AK]")


BAR_LABEL = re.compile(r"^(.*?): +\d")  # tqdm draws `{desc}: {percentage}%|...` or `{desc}: {n}{unit} ...`


def _label(text: str) -> str:
    """The bar a redraw belongs to: its desc (`dedup: write` in `dedup: write:  40%|...`)."""
    found = BAR_LABEL.match(text)
    return found.group(1) if found else ""


class ProgressLines:
    """A text stream over `stream` that turns tqdm's in-place redraws into plain lines."""

    def __init__(self, stream: TextIO, interval_s: float = INTERVAL_S, clock: Callable[[], float] = time.monotonic):
        self.stream = stream
        self.interval_s = interval_s
        self.clock = clock
        self._lock = threading.RLock()
        self._last_shown: dict[str, float] = {}  # bar label -> when its last line was written
        self._pending: dict[str, str] = {}  # bar label -> its newest redraw not written yet
        self._last_label: str | None = None  # the bar of the newest redraw, while no other text followed

    def write(self, text: str) -> int:
        with self._lock:
            if "\r" not in text and "\x1b[" not in text and self._last_label is None:
                return self.stream.write(text)
            plain = CURSOR_MOVES.sub("", text.replace("\r\n", "\n"))
            if plain:
                self._write(plain)
            else:  # the cursor moved (stacked bars): the next newline does not close a bar
                self._last_label = None
            return len(text)

    def _write(self, text: str) -> None:
        head, *redraws = text.split("\r")
        if head:
            if self._last_label is not None and not head.strip("\n"):
                # the newline tqdm writes when a bar closes (or moves down to a stacked bar): the
                # bar's line is done, so its last state shows
                self._flush(self._last_label)
            else:
                self.stream.write(head)
            if not redraws:
                self._last_label = None
        for redraw in redraws:
            self._redraw(redraw.rstrip())

    def _redraw(self, text: str) -> None:
        if not text:  # a bar cleared (leave=False, or around tqdm.write): nothing to show
            return
        label, now = _label(text), self.clock()
        self._last_label = label
        shown = self._last_shown.get(label)
        if shown is None or now - shown >= self.interval_s:
            self.stream.write(text + "\n")
            self._last_shown[label] = now
            self._pending.pop(label, None)
        else:
            self._pending[label] = text

    def _flush(self, label: str) -> None:
        text = self._pending.pop(label, None)
        if text:
            self.stream.write(text + "\n")
            self._last_shown[label] = self.clock()

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, buffer, ...: the stream's own
        return getattr(self.stream, name)


def install(interval_s: float = INTERVAL_S) -> None:
    """Once per process: wrap sys.stderr in ProgressLines unless it is a terminal (or already wrapped)."""
    stream = sys.stderr
    if stream is None or isinstance(stream, ProgressLines) or stream.isatty():
        return
    sys.stderr = ProgressLines(stream, interval_s)  # type: ignore[assignment]
