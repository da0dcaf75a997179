"""What the tests of the real sandbox (tests/test_sandbox_*.py) share: skip marks, evaluator
settings, the one-test ECHO problem, and helpers that judge one submission. `run` also checks,
when we are root, that no sandboxed process of ours outlives the run."""

from __future__ import annotations

import os
import shutil
import textwrap
import time

import pytest

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.sandbox import cgroups as cg
from microcoder.pipeline.evaluator.sandbox.launch import UID_BASE
from microcoder.pipeline.schema import Problem, TestCase

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
needs_cgroups = pytest.mark.skipif(cg.detect() is None,
                                   reason="no writable cgroup hierarchy with cpuacct, memory and pids here "
                                          "(not root, or no cgroup v1/v2 controllers mounted)")
needs_unshare_root = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "setpriv")),
    reason="the unshare fallback drops to its own uid only as root with unshare and setpriv")

FAST = dict(wall_factor=1.5, wall_slack_s=0.5)
# Generous wall limits: a loaded machine must not turn what these tests judge into a wall-clock TLE.
SLOW_OK = dict(wall_factor=4.0, wall_slack_s=20.0)
ECHO = Problem(id="echo", source="test", statement="", style="stdio", time_limit_s=1.0,
               tests=[TestCase("41\n", "42\n")])
GOOD = "print(int(input()) + 1)\n"


def evaluator_fixture(name: str, workers: int, sandbox: str = "bwrap", **settings):
    """A module-scoped fixture `name`: one Evaluator (`workers` judges, `sandbox`, EvaluatorConfig
    `settings`) for the module's tests. `ev`: two judges; `solo`: one, so that consecutive
    submissions share the judge and its /tmp."""

    @pytest.fixture(scope="module", name=name)
    def fixture():
        with Evaluator(workers=workers, sandbox=sandbox, config=EvaluatorConfig(**settings)) as e:
            yield e

    return fixture


def sub(problem: Problem, code: str, lang: str = "python", sid: str = "s") -> Submission:
    return Submission(problem.id, sid, lang, textwrap.dedent(code))


def judge(evaluator, problem, submission, **kw):
    return evaluator.evaluate_batch([problem], [submission], **kw)[0]


def _descends_from_us(parents: dict[str, str], pid: str) -> bool:
    """Whether `pid` is in this test process's tree: other sessions on the machine run sandboxes
    of their own under the same uid range, and theirs are not ours to count."""
    me, seen = str(os.getpid()), set()
    while pid in parents and pid not in seen:
        seen.add(pid)
        pid = parents[pid]
        if pid == me:
            return True
    return False


def leftover_processes() -> list[str]:
    """Sandboxed processes of ours alive now other than the judge processes themselves (PID 1
    inside, and its fork server)."""
    found, parents = [], {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parents[pid] = fields.get("PPid", "0").strip()
        uid = int(fields["Uid"].split()[1])
        inner_pid = fields.get("NSpid", "").split()[-1:]
        fork_server = fields.get("Name", "").strip() == "fork-server"  # the judge's, forks every program
        if uid >= UID_BASE and inner_pid != ["1"] and not fork_server:
            found.append((pid, f"{pid} uid={uid} {cmd}"))
    return [line for pid, line in found if _descends_from_us(parents, pid)]


def settled_leftovers(timeout_s: float = 30.0) -> list[str]:
    """leftover_processes() once it settles: a judge of an earlier Evaluator may still be exiting
    (returns as soon as none is left; the bound is generous because a loaded machine, with another
    test suite beside this one, can take seconds to finish a SIGKILLed sandbox off)."""
    deadline = time.monotonic() + timeout_s
    found = leftover_processes()
    while found and time.monotonic() < deadline:
        time.sleep(0.05)
        found = leftover_processes()
    return found


def run(ev, code: str, problem: Problem = ECHO, **kw):
    v = ev.evaluate_batch([problem], [Submission(problem.id, "adv", "python", textwrap.dedent(code))], **kw)[0]
    if os.geteuid() == 0:  # sandboxed code runs under its own uids only when we are root
        assert settled_leftovers() == []
    return v


def assert_pool_still_judges(ev):
    assert run(ev, GOOD).status == "AC"
