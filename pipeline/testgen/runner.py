"""Run programs on generated inputs in the evaluator's sandbox and read back what they printed or
returned. Used for the references (expected outputs), for generator programs (their stdout is a
test input) and for mutants (killed or not).

The evaluator judges against an expected output; to *collect* outputs, each input is judged
against a placeholder with the comparison left to the tolerant cascade, and the actual output
(`keep_outputs`) is what we keep: statuses AC and WA both mean "ran to completion".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from pipeline.schema import Problem, TestCase

PLACEHOLDER = {"functional": "null", "stdio": ""}
RAN = ("AC", "WA")


@dataclass
class Run:
    status: str  # AC/WA = ran (output valid); RE / TLE / MLE / OLE / CE / SE otherwise
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
    from pipeline.evaluator import Submission

    problems: dict[str, Problem] = {}
    subs = []
    by_sid: dict[str, Job] = {}
    for j, job in enumerate(jobs):
        if not job.inputs:
            continue
        sid = f"run{j}"
        placeholder = PLACEHOLDER.get(job.problem.style, "")
        problems[sid] = replace(job.problem, id=sid, checker=None,
                                tests=[TestCase(x, placeholder, "generated") for x in job.inputs])
        subs.append(Submission(problem_id=sid, submission_id=sid, language=job.language, code=job.code))
        by_sid[sid] = job
    out: dict[Any, list[Run]] = {job.key: [] for job in jobs}
    for verdict in evaluator.evaluate(problems, subs, mode="all", keep_outputs=True, progress=False):
        job = by_sid[verdict.submission_id]
        runs = []
        for k in range(len(job.inputs)):
            if k < len(verdict.tests):
                tr = verdict.tests[k]
                output = tr.output
                status = tr.status
                if output is not None and len(output.encode()) >= keep_output_bytes:
                    status, output = "OLE", None
                if status in RAN and job.problem.style == "functional" and not _plain_json(output):
                    status = "RE"  # an unserialisable or unsupported return value
                runs.append(Run(status, output, float(tr.time_s or 0.0), tr.diff))
            else:
                runs.append(Run(verdict.status, None, 0.0, verdict.reason))
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
    from pipeline.evaluator import Submission

    items = [Submission(problem_id=pid, submission_id=sid, language=lang, code=code) for sid, pid, lang, code in subs
             if problems.get(pid) is not None and problems[pid].tests]
    return {v.submission_id: v.status for v in evaluator.evaluate(problems, items, mode="first-failure", progress=False)}
