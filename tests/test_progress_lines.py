"""Progress bars in a log are plain lines (pipeline/progress_lines.py): with stderr not a terminal,
every command's tqdm redraws become newline-terminated lines, at most one per bar per interval,
plus each bar's first and last state, instead of carriage-return soup."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from tqdm import tqdm

from microcoder.pipeline.io import write_problems
from microcoder.pipeline.progress_lines import ProgressLines
from microcoder.pipeline.schema import Problem, TestCase

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _bar(stream: ProgressLines, clock: Clock, steps: int, tick: float = 0.0, desc: str = "judge") -> None:
    # tqdm redraws on every update here (no minimum interval): the wrapper does the thinning
    with tqdm(total=steps, desc=desc, unit="run", file=stream, mininterval=0, miniters=1) as bar:
        for _ in range(steps):
            clock.now += tick
            bar.update(1)


def test_redraws_become_lines_first_and_last_always():
    out, clock = io.StringIO(), Clock()
    _bar(ProgressLines(out, interval_s=30, clock=clock), clock, 50)
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()
    assert len(lines) == 2, lines  # the clock never moved: the first state and the last
    assert lines[0].startswith("judge: ") and "0/50" in lines[0]
    assert lines[1].startswith("judge: 100%") and "50/50" in lines[1]


def test_each_bar_has_its_own_lines():
    out, clock = io.StringIO(), Clock()
    stream = ProgressLines(out, interval_s=30, clock=clock)
    _bar(stream, clock, 5, desc="dedup: scan")
    _bar(stream, clock, 5, desc="dedup: write")  # same clock second: still its own first line
    lines = out.getvalue().splitlines()
    assert [line.split("%")[0] for line in lines] == ["dedup: scan:   0", "dedup: scan: 100",
                                                      "dedup: write:   0", "dedup: write: 100"], lines


def test_a_line_per_interval_while_the_bar_runs():
    out, clock = io.StringIO(), Clock()
    _bar(ProgressLines(out, interval_s=30, clock=clock), clock, 10, tick=10.0)  # 100 s of work
    lines = out.getvalue().splitlines()
    assert 4 <= len(lines) <= 6, lines  # at 0, 30, 60, 90 s, and the end
    assert lines[-1].startswith("judge: 100%")


def test_other_text_passes_through_between_redraws():
    out, clock = io.StringIO(), Clock()
    stream = ProgressLines(out, clock=clock)
    stream.write("INFO start\n")
    stream.write("\rjudge:  10%|#         | 1/10")
    stream.write("WARNING a judge was slow\n")
    stream.write("\rjudge:  20%|##        | 2/10")
    stream.write("\n")  # the bar closes
    assert out.getvalue() == ("INFO start\njudge:  10%|#         | 1/10\nWARNING a judge was slow\n"
                              "judge:  20%|##        | 2/10\n")


def test_a_stage_with_stderr_to_a_file_writes_plain_progress_lines(tmp_path):
    problems = tmp_path / "raw.parquet"
    write_problems(problems, [Problem(id=f"t/{i}", source="t", style="stdio", tests=[TestCase("1", "1")],
                                      statement=f"Problem number {i}: print the number {i * 7919} on one line.")
                              for i in range(5)])
    log = tmp_path / "stderr.log"
    with log.open("w") as err:
        got = subprocess.run([str(Path(sys.executable).with_name("microcoder")), "dedup", "--params",
                              str(ROOT / "params.yaml"), "--problems", str(problems), "--out-dir", str(tmp_path / "out")],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True, timeout=300,
                             env={**os.environ, "COLUMNS": "120"})
    raw = log.read_bytes()  # bytes: reading text would turn every carriage return into a newline
    text = raw.decode()
    assert got.returncode == 0, text
    assert b"\r" not in raw
    assert any(line.startswith("dedup: scan") and "5/5" in line for line in text.splitlines()), text
