"""One program run in its box, as the judge sees it: the job it belongs to, its limits, and how the
box's reply becomes a TestResult and a failure status (SE when it could not start, MLE, TLE, OLE,
RE). Shared by stdio tests (`judge.py`) and interactive tests (`interactive.py`), which both
import it; it imports neither."""

from __future__ import annotations

import math
import signal
import threading
from dataclasses import dataclass
from typing import Any

from microcoder.pipeline.evaluator.config import EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.sandbox.workspace import MB, Worker
from microcoder.pipeline.evaluator.verdict.compile import Compiler
from microcoder.pipeline.schema import Problem, TestResult

REPLY_GRACE_S = 15.0  # on top of a run's wall limit before the judge process is declared stuck


class Cancelled(Exception):
    """The batch deadline passed: stop judging this submission."""


@dataclass
class Limits:
    cpu_s: float
    wall_s: float
    mem_bytes: int
    out_bytes: int


@dataclass
class Job:
    problem: Problem
    sub: Submission
    worker: Worker
    cfg: EvaluatorConfig
    compiler: Compiler
    mode: str
    keep_outputs: bool
    cancel: threading.Event
    limits: Limits | None = None


def run_limits(job: Job, native: bool) -> dict[str, Any]:
    lim = job.limits
    mem = lim.mem_bytes + (job.cfg.memory_slack_mb * MB if native else 0)
    # mem_bytes: the address-space rlimit (native code maps more than it uses); group_mem_bytes:
    # the stated limit, on the run group as a whole
    return {"cpu_s": lim.cpu_s, "wall_s": lim.wall_s, "mem_bytes": mem, "group_mem_bytes": lim.mem_bytes,
            "stack_bytes": lim.mem_bytes,
            "fsize_bytes": job.cfg.file_size_mb * MB, "nofile": job.cfg.nofile, "out_bytes": lim.out_bytes}


def checkpoint(job: Job) -> None:
    if job.cancel.is_set():
        raise Cancelled()


def tail(text: str, lines: int = 4, chars: int = 400) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])[-chars:]


def signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def memory_exceeded(stderr: str, maxrss_kb: float, mem_bytes: int) -> bool:
    return ("MemoryError" in stderr or "bad_alloc" in stderr or "Cannot allocate memory" in stderr
            or maxrss_kb * 1024 >= 0.95 * mem_bytes)


def peak_over(maxrss_kb: Any, base_rss_kb: Any, mem_bytes: int, native: bool,
              group_peak_kb: Any = None) -> str | None:
    """The MLE diff when the program's own peak is over the problem's limit, else None.
    `group_peak_kb` (the judge's reply, with a run group): the run group's peak less what it
    held before the program started: every process of the run, its files in /tmp and
    /dev/shm, an exec'd image, all at once. That is the rule wherever it is given. Without it
    (rlimit accounting) the process's own peak RSS: `base_rss_kb` is, for a Python program
    forked from the warm judge, its RSS before the program started, which its peak includes
    (without it the peak is not the program's: no verdict from it); for an exec'd binary, the
    forked judge's peak before the exec, which the kernel keeps as the binary's starting peak (a
    peak not above it is not the binary's own; absent: 0)."""
    peak, base, limit_kb = num(maxrss_kb), num(base_rss_kb), mem_bytes / 1024
    what = "peak memory"
    if group_peak_kb is not None:
        own, what = num(group_peak_kb), "the run's processes and files together peaked at"
    elif native:
        own = peak if peak > base else 0.0
    else:
        own = peak - base if base > 0 else 0.0
    if own <= limit_kb:
        return None
    return f"{what} {own / 1024:.1f} MB > limit {mem_bytes >> 20} MB"


def tle_diff(cpu: float, limit: float, why: str | None) -> str:
    if why == "wall":
        return f"wall-clock limit exceeded ({cpu:.2f} s CPU)"
    return f"CPU time {cpu:.2f} s > limit {limit:.2f} s"


def run_result(h: dict[str, Any]) -> TestResult:
    """A TestResult (SE until judged) with the run's CPU time and peak memory. total_cpu_s:
    every process of the run, including children it never waited for (with a run group, from
    its counter: children the kernel reaped by itself included; see cgroups.py)."""
    cpu = max(h["cpu_s"], num(h.get("total_cpu_s")))
    return TestResult("SE", time_s=round(cpu, 4), memory_mb=memory_mb(h))


def memory_mb(h: dict[str, Any]) -> float:
    """The run's memory as judged: the run group's peak when the judge read it, else the
    process's peak RSS."""
    kb = h.get("group_peak_kb")
    return round(num(kb if kb is not None else h.get("maxrss_kb")) / 1024, 2)


def run_failure(job: Job, h: dict[str, Any], stderr: str, native: bool) -> tuple[str, str] | None:
    """(status, diff) of a stdio run that did not end cleanly (SE when the judge could not
    start it, MLE, TLE, OLE, RE), or None when it exited 0 within its limits."""
    cpu, lim, sig = max(h["cpu_s"], num(h.get("total_cpu_s"))), job.limits, h["signal"]
    if h.get("harness_error"):
        return "SE", f"judge failed to start the program: {h['harness_error']}"[:500]
    if num(h.get("cg_oom_kills")) > 0 or num(h.get("group_oom_kills")) > 0:  # the run as a whole, whatever each process held
        # (first: a program whose helper was killed for memory often waits for it until the wall)
        return "MLE", f"the run's processes together exceeded {lim.mem_bytes >> 20} MB"
    if h["why"] in ("cpu", "wall") or cpu > lim.cpu_s or sig == signal.SIGXCPU:
        return "TLE", tle_diff(cpu, lim.cpu_s, h["why"])
    if peak := peak_over(h["maxrss_kb"], h.get("base_rss_kb"), lim.mem_bytes, native, h.get("group_peak_kb")):
        return "MLE", peak  # it may have finished, even printed the right answer
    if h["ole"]:
        return "OLE", f"output exceeded {lim.out_bytes} bytes"
    if h.get("exec_enomem"):
        return "MLE", "the program's static memory exceeds the limit"
    if sig is None and h["exit"] == 0:
        return None
    if memory_exceeded(stderr, h["maxrss_kb"], lim.mem_bytes):
        return "MLE", tail(stderr) or f"peak memory {round(h['maxrss_kb'] / 1024, 2)} MB"
    if sig == signal.SIGXFSZ:
        return "RE", "file size limit exceeded"
    what = f"killed by {signal_name(sig)}" if sig is not None else f"exit code {h['exit']}"
    return "RE", (f"{what}: {tail(stderr)}" if stderr.strip() else what)[:500]


def num(x: Any) -> float:
    """A number from a reply (frame values come from the program): 0.0 unless finite."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return 0.0
    return float(x) if math.isfinite(x) else 0.0
