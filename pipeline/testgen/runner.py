"""Run programs on generated inputs in the evaluator's sandbox and read back what they printed or
returned. Used for the references (expected outputs, by agreement), for generator programs (their
stdout is a test input) and for the solutions that measure the tests (known-wrong ones, mutants:
failed or not, per test).

Outputs come from the evaluator's run mode (`microcoder.pipeline.evaluator.programs.run_outputs`): status AC
means "ran to completion"; what testgen adds is its own reading of an output (cut at a byte limit:
OLE; a functional result that is not plain JSON: RE).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from microcoder.pipeline.evaluator.programs import judge_runs, run_outputs
from microcoder.pipeline.schema import PROGRAM_KINDS, Problem

RAN = ("AC",)  # ran to completion: its output is valid
FAILS = ("WA", "RE", "TLE", "MLE", "OLE")  # a solution failing a test this way is caught by it
NO_VOTE = ("TLE", "MLE", "CE", "SE")  # a reference that did not finish (or build) does not vote


@dataclass
class Run:
    status: str  # AC = ran (output valid); RE / TLE / MLE / OLE / CE / SE otherwise (WA: judged runs only)
    output: str | None
    time_s: float
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in RAN and self.output is not None


@dataclass
class Job:
    """One program on several inputs of one problem."""

    key: Any  # the caller's handle
    problem: Problem
    language: str
    code: str
    inputs: list[str]


def collect(evaluator, jobs: list[Job], keep_output_bytes: int) -> dict[Any, list[Run]]:
    """{job.key: one Run per input}; an output as long as `keep_output_bytes` (cut) is not ok."""
    got = run_outputs(evaluator, [(job.key, job.problem, job.language, job.code, job.inputs) for job in jobs])
    out: dict[Any, list[Run]] = {}
    for job in jobs:
        runs = []
        for o in got[job.key]:
            status, output = o.status, o.output
            if output is not None and len(output.encode()) >= keep_output_bytes:
                status, output = "OLE", None
            if status in RAN and job.problem.style == "functional" and not _plain_json(output):
                status = "RE"  # an unserialisable or unsupported return value
            runs.append(Run(status, output, o.time_s, o.message))
        out[job.key] = runs
    return out


def _plain_json(text: str | None) -> bool:
    if text is None:
        return False
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return not (isinstance(value, dict) and "__repr__" in value)


def judge(evaluator, problems: dict[str, Problem], subs: list[tuple[str, str, str, str]]) -> dict[str, str]:
    """{submission id: verdict status} for (submission id, problem id, language, code), first failure."""
    items = [(sid, problems[pid], lang, code) for sid, pid, lang, code in subs
             if problems.get(pid) is not None and problems[pid].tests]
    return {sid: status for sid, (status, _reason, _tests) in judge_runs(evaluator, items, "first-failure").items()}


def judge_each(evaluator, problems: dict[str, Problem], subs: list[tuple[str, str, str, str]]) -> dict[str, list[Run]]:
    """{submission id: one Run (status, time) per test} for (submission id, problem id, language,
    code), every test run (mode `all`): which test fails which solution. A solution that did not
    build has no per-test runs: each test reads as its verdict's status (CE / SE)."""
    items = [(sid, problems[pid], lang, code) for sid, pid, lang, code in subs
             if problems.get(pid) is not None and problems[pid].tests]
    out: dict[str, list[Run]] = {}
    for sid, (status, reason, tests) in judge_runs(evaluator, items, "all").items():
        out[sid] = [Run(status, None, 0.0, reason) if r is None else Run(r["status"], None, float(r["time_s"] or 0.0), r["diff"])
                    for r in tests]
    return out


# --- expected outputs by agreement ------------------------------------------------------------------
def agree(p: Problem, a: str, b: str) -> bool:
    """Two outputs the problem's comparison accepts as the same answer (its checker, unless a program)."""
    from microcoder.pipeline.evaluator import compare_functional, compare_stdio

    checker = p.checker if p.checker is not None and p.checker.kind not in PROGRAM_KINDS else None
    try:
        if p.style == "functional":
            return compare_functional(a, b, checker).ok
        return compare_stdio(a, b, checker).ok
    except ValueError:
        return False


@dataclass
class Expected:
    """One input's expected output by the references' agreement, or why there is none."""

    output: str | None  # None: the input is dropped for `reason`
    reason: str | None
    agreeing: int  # references that finished in time and agreed on `output`
    time_s: float  # the slowest reference's run (what the test costs)
    voters: tuple[int, ...] = ()  # which references those were (indices into `references_of`)


def by_agreement(p: Problem, per_ref: list[Run], slow_limit_s: float, index: list[int] | None = None) -> Expected:
    """The references' runs on one input, read as validate reads them: a reference that ran out of
    time or memory (or over `slow_limit_s`) or did not build does not vote; the input is dropped
    when a reference crashed on it (the input is suspect), when no reference finished, or when
    the references that finished disagree."""
    cost = max((r.time_s for r in per_ref), default=0.0)
    if not per_ref:
        return Expected(None, "no reference ran", 0, cost)
    crashed = next((r for r in per_ref if not r.ok and r.status not in NO_VOTE), None)
    if crashed is not None:
        return Expected(None, f"reference {crashed.status}", 0, cost)
    index = list(range(len(per_ref))) if index is None else index
    voting = [(k, r) for k, r in zip(index, per_ref, strict=True) if r.ok and r.time_s <= slow_limit_s]
    voters = [r for _, r in voting]
    if not voters:
        silent = next((r for r in per_ref if not r.ok), None)
        return Expected(None, f"reference {silent.status}" if silent else "reference too slow", 0, cost)
    if not all(agree(p, voters[0].output, r.output) for r in voters[1:]):
        return Expected(None, "references disagree", 0, cost)
    if _float_from_int_function(p, voters[0].output):
        return Expected(None, FLOAT_FOR_INT, 0, cost)
    return Expected(voters[0].output, None, len(voters), cost, tuple(k for k, _ in voting))


# A reference whose `-> int` function returns a float computed it in floats (LeetCodeDataset's
# prompt does `from math import *`, so `pow` is math.pow): inexact past 2^53, and no reason to trust.
FLOAT_FOR_INT = "reference returned a float from a function declared to return int"


def _float_from_int_function(p: Problem, output: str | None) -> bool:
    if p.style != "functional" or not output or len(output) > 64:  # a float scalar is short: no big parse
        return False
    try:
        value = json.loads(output)
    except (ValueError, RecursionError):
        return False
    if not isinstance(value, float):
        return False
    name = re.escape((p.entry_point or "").rsplit(".", 1)[-1].replace("()", "").strip())
    declared = rf"def\s+{name}\s*\((?:[^()]|\([^()]*\))*\)\s*->\s*int\s*:"  # one level of parentheses inside
    return bool(name) and any(re.search(declared, code or "", re.S)
                              for code in (p.starter_code, *(r.code for r in references_of(p))))


def references_of(p: Problem) -> list:
    """The references that run: every one (stdio), the Python ones (functional problems run Python)."""
    return [r for r in p.reference_solutions if p.style == "stdio" or r.language == "python"]


def reference_outputs(evaluator, items: list[tuple[Any, Problem, list[str]]], slow_fraction: float,
                      max_output_bytes: int) -> dict[Any, list[Expected]]:
    """{key: one Expected per input} for (key, problem, inputs): every reference on every input, cut
    at `slow_fraction` of the time limit (an input on which a reference needs more is one where it
    does not vote anyway: stop it there instead of waiting out the whole limit)."""
    jobs = []
    for key, p, inputs in items:
        fast = replace(p, time_limit_s=p.time_limit_s * slow_fraction)
        jobs += [Job((key, ri), fast, r.language, r.code, inputs) for ri, r in enumerate(references_of(p))]
    out = collect(evaluator, jobs, max_output_bytes)
    scale = getattr(evaluator, "timeout_scale", 1.0)
    result: dict[Any, list[Expected]] = {}
    for key, p, inputs in items:
        runs = [out[(key, ri)] for ri in range(len(references_of(p)))]
        limit = slow_fraction * p.time_limit_s * scale
        result[key] = [by_agreement(p, [r[i] for r in runs if i < len(r)], limit,
                                    [ri for ri, r in enumerate(runs) if i < len(r)]) for i in range(len(inputs))]
    return result
