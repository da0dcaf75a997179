"""SIGINT / SIGTERM (issue 27 item 4): a stage stops at once, kills every judge and what it runs,
keeps every run it finished in its cache, exits 130 / 143 with one line saying what it kept, and a
rerun resumes from the cache. Stages run as real subprocesses on tiny problems whose programs burn
CPU; the signal goes out once the first results are in the cache. The evaluator's part (`interrupt`,
a `close` that kills abandoned work) and the stage's signal handling (`StopSignals`: a second
signal, or an unwinding that hangs, exits at once) are tested on their own too.

No wall-time bound here is tight (machine speed varies): every "at once" is "within 30 s" (measured:
0.1-0.3 s; before, validate finished every stream it had started, 35 s on 4 problems x 10 runs of 1 s, and close
waited for abandoned work to end). "No process left" is checked on the pids recorded below the stage
before the signal and on every process of the judges' PID namespaces after it."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from microcoder.pipeline.evaluator import Evaluator, Submission
from microcoder.pipeline.evaluator.pool import Interrupted
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase

ROOT = Path(__file__).resolve().parents[1]
STOPPED_WITHIN_S = 30.0  # generous: the old code took 35-60 s on the problems below

# A program that burns `secs` of CPU per run, then answers (CPU, not sleep: a sleeper is judged on
# the wall clock, which a busy machine stretches)
BURN = """import time
end = time.process_time() + {secs}
while time.process_time() < end:
    pass
"""


# --- processes ----------------------------------------------------------------------------------
def _stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], fields[19]


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    kids = [int(x) for x in f.read().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def descendants_one_level(pid: int) -> list[int]:
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            continue
    return out


def _pid_namespace(pid: int | str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:  # gone, or not ours to read (a non-dumpable judge when not root)
        return None


class Judges:
    """Every process below a stage (its judges' sandboxes and the programs they run), recorded while
    it runs; `survivors` lists those still alive later (a zombie is dead, only not yet reaped), and
    every live process of the judges' PID namespaces, including programs started after the record."""

    def __init__(self, stage_pid: int, roots: list[int] | None = None):
        pids = descendants(stage_pid) if roots is None else [p for r in roots for p in [r, *descendants(r)]]
        self.procs = {p: st for p in pids if (st := _stat(p)) is not None}
        own = _pid_namespace("self")
        self.namespaces = {ns for p in self.procs if (ns := _pid_namespace(p)) not in (None, own)}

    @classmethod
    def started_since(cls, children_before: set[int]) -> Judges:
        """The processes below the children this (pytest) process started since `children_before`:
        an in-process test shares pytest with other tests' judges and a session Ray cluster (whose
        workers come and go), none of them this test's."""
        return cls(os.getpid(), roots=sorted(set(descendants_one_level(os.getpid())) - children_before))

    def survivors(self, grace_s: float = 5.0) -> list[int]:
        """The processes still alive `grace_s` after the call at the latest (a SIGKILL takes effect
        asynchronously: a namespace's PID 1 exits after the last of its processes)."""
        end = time.monotonic() + grace_s
        while (alive := self._alive()) and time.monotonic() < end:
            time.sleep(0.1)
        return alive

    def _alive(self) -> list[int]:
        alive = {p for p, (_, start) in self.procs.items() if (st := _stat(p)) and st[1] == start and st[0] != "Z"}
        for entry in os.listdir("/proc"):
            if entry.isdigit() and _pid_namespace(entry) in self.namespaces and (_stat(int(entry)) or "Z")[0] != "Z":
                alive.add(int(entry))
        return sorted(alive)


def wait_for_rows(proc: subprocess.Popen, db: Path, table: str, timeout: float = 300.0) -> int:
    """Poll the stage's cache until it holds a row (not a fixed sleep: machine speed varies)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        n = count_rows(db, table)
        if n:
            return n
        assert proc.poll() is None, f"the stage ended (rc {proc.returncode}) before it cached anything"
        time.sleep(0.1)
    raise AssertionError(f"nothing cached in {timeout:.0f} s")


def count_rows(db: Path, table: str) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    try:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not made yet
        return 0
    finally:
        con.close()


def microcoder(args: list[str], out: Path) -> subprocess.Popen:
    """`microcoder ARGS` as the user runs it (its own process), stdout / stderr to files."""
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "microcoder.pipeline.cli", *args], cwd=ROOT,
                            stdout=open(out / "stdout", "w"), stderr=open(out / "stderr", "w"))


def interrupt(proc: subprocess.Popen, sig: signal.Signals) -> tuple[int, float]:
    """Send `sig`; the exit status and the seconds it took."""
    start = time.monotonic()
    proc.send_signal(sig)
    try:
        rc = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"still running 120 s after {sig.name}") from None
    return rc, time.monotonic() - start


def last_line(path: Path) -> str:
    lines = path.read_text().strip().splitlines()
    return lines[-1] if lines else ""


# --- the stages ---------------------------------------------------------------------------------
def slow_stdio(n_problems: int, n_tests: int, secs: float) -> list[Problem]:
    code = BURN.format(secs=secs) + "a, b = map(int, input().split())\nprint(a + b)\n"
    return [Problem(id=f"slow/{p}", source="t", statement="Print a + b.", style="stdio", time_limit_s=10.0,
                    tests=[TestCase(f"{p} {i}\n", f"{p + i}\n", "public" if i == 0 else "private")
                           for i in range(n_tests)],
                    reference_solutions=[ReferenceSolution("python", code)]) for p in range(n_problems)]


def slow_functional(n_problems: int, secs: float) -> list[Problem]:
    statement = ("Return the largest element of nums that is at most k, or -1.\n\nConstraints:\n\n"
                 "1 <= nums.length <= 20\n-50 <= nums[i] <= 50\n-50 <= k <= 50\n")
    starter = "class Solution:\n    def best(self, nums: List[int], k: int) -> int:\n"
    code = ("from typing import *\nimport time\n\n" + starter
            + textwrap.indent(BURN.format(secs=secs), " " * 8)
            + "        return max([x for x in nums if x <= k] + [-1])\n")
    return [Problem(id=f"slow/{p}", source="t", statement=statement, style="functional", starter_code=starter,
                    entry_point="Solution().best", tests=[TestCase(f"[1,5,{p}]\n4", str(max(x for x in (1, 5, p, -1) if x <= 4)))],
                    reference_solutions=[ReferenceSolution("python", code)], time_limit_s=5.0)
            for p in range(n_problems)]


def write_jsonl(path: Path, problems: list[Problem]) -> Path:
    path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in problems))
    return path


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_validate_stops_at_once_kills_its_judges_and_a_rerun_resumes_from_what_it_kept(tmp_path, sig):
    cache = tmp_path / "validate.sqlite"
    args = ["validate", "--problems", str(write_jsonl(tmp_path / "in.jsonl", slow_stdio(3, 6, 0.4))),
            "--out-dir", str(tmp_path / "out"), "--no-progress",
            "--set", f"cache_path={cache}", "--set", "evaluator.workers=2"]
    proc = microcoder(args, tmp_path / "first")
    wait_for_rows(proc, cache, "runs")
    judges = Judges(proc.pid)
    assert judges.procs, "no judge process found below the stage"
    at_signal = count_rows(cache, "runs")
    rc, took = interrupt(proc, sig)

    assert rc == 128 + sig, (rc, (tmp_path / "first" / "stderr").read_text()[-2000:])
    assert took < STOPPED_WITHIN_S
    assert judges.survivors() == []
    line = last_line(tmp_path / "first" / "stderr")
    assert line.startswith(f"validate: interrupted by {sig.name}; its judges were stopped; kept ")
    assert "a rerun resumes" in line
    kept = int(re.search(r"kept (\d+) finished run", line).group(1))
    assert kept == count_rows(cache, "runs") >= 1  # every run it finished, and only those, committed
    # it stopped judging: at most the chunks in flight at the signal (4 streams, <= 2 runs of 0.4 s
    # each) finished after it, not the rest of the 18 runs
    assert kept - at_signal <= 8

    rerun = microcoder(args, tmp_path / "rerun")
    assert rerun.wait(timeout=600) == 0, (tmp_path / "rerun" / "stderr").read_text()[-2000:]
    figures = re.search(r"(\d+) runs executed, (\d+) cached", (tmp_path / "rerun" / "stdout").read_text())
    executed, cached = map(int, figures.groups())
    assert cached == kept and executed + cached == 3 * 6


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_testgen_stops_at_once_kills_its_judges_and_a_rerun_resumes_from_what_it_kept(tmp_path, sig):
    cache = tmp_path / "testgen.sqlite"
    args = ["testgen", "--problems", str(write_jsonl(tmp_path / "in.jsonl", slow_functional(3, 0.2))),
            "--out-dir", str(tmp_path / "out"), "--no-progress", "--set", f"cache_path={cache}",
            "--set", "evaluator.workers=2", "--set", "batch_size=1", "--set", "target_tests=4",
            "--set", "mutants=0", "--set", "search_rounds=0"]
    proc = microcoder(args, tmp_path / "first")
    wait_for_rows(proc, cache, "problems")
    judges = Judges(proc.pid)
    at_signal = count_rows(cache, "problems")
    rc, took = interrupt(proc, sig)

    assert rc == 128 + sig, (rc, (tmp_path / "first" / "stderr").read_text()[-2000:])
    assert took < STOPPED_WITHIN_S
    assert judges.survivors() == []
    line = last_line(tmp_path / "first" / "stderr")
    assert line.startswith(f"testgen: interrupted by {sig.name}; its judges were stopped; kept ")
    assert "a rerun resumes" in line
    kept = int(re.search(r"generated tests of (\d+) finished problem", line).group(1))
    assert kept == count_rows(cache, "problems") >= 1
    assert kept - at_signal <= 1  # the batch in flight (batch_size 1) at most, not the other problems

    rerun = microcoder(args, tmp_path / "rerun")
    assert rerun.wait(timeout=600) == 0, (tmp_path / "rerun" / "stderr").read_text()[-2000:]
    assert f"{kept} of 3 problems to generate for are in the cache" in (tmp_path / "rerun" / "stderr").read_text()
    assert count_rows(cache, "problems") == 3


# --- the stage's signal handling, without judges -------------------------------------------------
STUCK_STAGE = """
import time
from microcoder.pipeline.stage import run_stage

def body():
    print("running", flush=True)
    try:
        time.sleep(300)
    except KeyboardInterrupt:
        print("unwinding", flush=True)
        time.sleep(300)  # an unwinding that hangs (a close waiting for work that never ends)

run_stage("stuck", body)
"""


def _stuck_stage(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / "stdout"
    proc = subprocess.Popen([sys.executable, "-c", STUCK_STAGE], cwd=ROOT, stdout=open(out, "w"),
                            stderr=subprocess.PIPE, text=True)
    _wait_for_line(proc, out, "running")
    return proc, out


def _wait_for_line(proc: subprocess.Popen, path: Path, text: str) -> None:
    end = time.monotonic() + 60
    while text not in path.read_text():
        assert proc.poll() is None and time.monotonic() < end, f"no {text!r} from the stage"
        time.sleep(0.05)


def test_a_second_signal_exits_at_once(tmp_path):
    proc, out = _stuck_stage(tmp_path)
    proc.send_signal(signal.SIGINT)
    _wait_for_line(proc, out, "unwinding")
    rc, took = interrupt(proc, signal.SIGINT)
    assert rc == 130 and took < STOPPED_WITHIN_S
    assert "stuck: interrupted by SIGINT, then a second SIGINT: exited at once" in proc.stderr.read()


def test_an_unwinding_that_hangs_is_cut_short(tmp_path):
    proc, _ = _stuck_stage(tmp_path)
    rc, took = interrupt(proc, signal.SIGTERM)
    assert rc == 143 and took < STOPPED_WITHIN_S
    assert "stuck: interrupted by SIGTERM, then still stopping after 5 s: exited at once" in proc.stderr.read()


# --- the evaluator's part -----------------------------------------------------------------------
def _burner(pid: str, secs: float) -> tuple[Problem, Submission]:
    problem = Problem(id=pid, source="t", statement="", style="stdio", time_limit_s=120.0,
                      tests=[TestCase("1\n", "1\n")])
    return problem, Submission(pid, pid, "python", BURN.format(secs=secs) + "print(input())\n")


def _wait_for_program(baseline: int, more: int = 1) -> None:
    """Until a program runs below this process (its judge's processes beyond `baseline`)."""
    end = time.monotonic() + 60
    while len(descendants(os.getpid())) < baseline + more:
        assert time.monotonic() < end, "no program started"
        time.sleep(0.05)


def test_close_kills_work_a_caller_abandoned():
    """An `evaluate` iterator left open (the consumer stopped by an exception) must not make close
    wait for its jobs: they are killed."""
    slow, slow_sub = _burner("slow", 90.0)
    fast, fast_sub = _burner("fast", 0.0)
    before = set(descendants_one_level(os.getpid()))
    ev = Evaluator(workers=2)
    verdicts = ev.evaluate([slow, fast], [slow_sub, fast_sub], progress=False)
    assert next(verdicts).submission_id == "fast"  # the slow one still runs
    running = Judges.started_since(before)
    start = time.monotonic()
    ev.close()
    assert time.monotonic() - start < STOPPED_WITHIN_S
    assert running.procs and running.survivors() == []
    verdicts.close()


def test_interrupt_kills_the_judges_and_the_calls_in_progress_raise():
    slow, slow_sub = _burner("slow", 90.0)
    before = set(descendants_one_level(os.getpid()))
    with Evaluator(workers=1) as ev:
        baseline = len(descendants(os.getpid()))
        errors: list[BaseException] = []

        def call() -> None:
            try:
                ev.evaluate_batch([slow], [slow_sub])
            except BaseException as e:  # noqa: BLE001 - what the call raised is the point
                errors.append(e)

        caller = threading.Thread(target=call)
        caller.start()
        _wait_for_program(baseline)
        judges = Judges.started_since(before)
        start = time.monotonic()
        ev.interrupt()
        caller.join(STOPPED_WITHIN_S)
        assert not caller.is_alive() and time.monotonic() - start < STOPPED_WITHIN_S
        assert [type(e) for e in errors] == [Interrupted]
        assert judges.survivors() == []
        with pytest.raises(Interrupted):  # nothing starts again
            ev.evaluate_batch([slow], [slow_sub])


def test_an_interrupted_ray_evaluator_kills_its_actors_judges_and_the_call_raises(ray_cluster):
    from microcoder.pipeline.evaluator.factory import make_evaluator

    slow, slow_sub = _burner("slow", 90.0)
    with make_evaluator(None, executor="ray", workers=1, ray_actor_cpus=1) as ev:
        actor_pid = ray_cluster.get(ev.actors()[0].ready.remote())["pid"]
        errors: list[BaseException] = []

        def call() -> None:
            try:
                ev.evaluate_batch([slow], [slow_sub])
            except BaseException as e:  # noqa: BLE001 - what the call raised is the point
                errors.append(e)

        baseline = len(descendants(actor_pid))
        caller = threading.Thread(target=call)
        caller.start()
        end = time.monotonic() + 60
        while len(descendants(actor_pid)) <= baseline:  # the actor's judge runs the program
            assert time.monotonic() < end, "no program started in the actor"
            time.sleep(0.05)
        judges = Judges(actor_pid)
        ev.interrupt()
        caller.join(STOPPED_WITHIN_S)
        assert not caller.is_alive() and [type(e) for e in errors] == [Interrupted]
        assert judges.survivors() == []
