"""Validate stage: run every reference solution on every test, keep the tests they agree with.

A test is *valid* when the references that compiled and ran accept its expected output under the
problem's checker (policy `all`: every one of them; `majority`: more than half). A test that every
reference fails is *broken* (their actual outputs go to the report); one the references disagree
on is *ambiguous*. Then the caps of METHOD.md apply: at most `max_tests` (all public tests, then
the largest private inputs), at most `max_test_bytes` per test and `max_total_bytes` per problem.
Every dropped test is counted, by reason, in the problem's `validation` column and in stats.json.

Runs go through the sandboxed evaluator; results are cached per (problem, reference, test) hash,
so a rerun after a kill or a params change re-executes only what changed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from pipeline.config import settings_record
from pipeline.schema import Problem, TestCase
from pipeline.sources.judging import needs_checker_program

STAGE = "validate"
_OUTPUT_KEEP = 400  # characters of actual / expected output kept in the report


@dataclass
class ValidateConfig:
    policy: str = field(default="all", metadata={"help": "all: every reference must accept a test; majority: more than half."})
    max_tests: int = field(default=32, metadata={"help": "Keep at most this many valid tests (public first, then the largest private inputs)."})
    max_test_bytes: int = field(default=1_000_000, metadata={"help": "Drop a test whose input + output exceeds this many bytes."})
    max_total_bytes: int = field(default=8_000_000, metadata={"help": "Drop the largest private tests until a problem's tests fit."})
    min_tests: int = field(default=5, metadata={"help": "Reject a problem left with fewer valid tests."})
    unverified: str = field(default="keep", metadata={"help": "Problems without references: keep (marked unverified) or reject."})
    multiple_answers: str = field(default="reject", metadata={
        "help": "Problems whose statement accepts any of several answers but that have no checker program: "
                "reject (their fixed expected outputs mark other correct answers wrong) or keep."})
    slow_fraction: float = field(default=0.5, metadata={"help": "Flag a test whose slowest reference run exceeds this fraction of the time limit."})
    check_determinism: bool = field(default=False, metadata={"help": "Run references twice; drop tests whose outputs differ."})
    workers: int | None = field(default=None, metadata={"help": "Evaluator worker processes (default: all cores)."})
    timeout_scale: float = field(default=1.0, metadata={"help": "Multiply every problem's time limit (slow machines, Python references)."})
    cache_path: str = field(default=".cache/microcoder/validate.sqlite", metadata={"help": "Result cache (not a DVC output)."})

    def __post_init__(self) -> None:
        if self.policy not in ("all", "majority"):
            raise ValueError(f"policy must be 'all' or 'majority', got {self.policy!r}")
        if self.unverified not in ("keep", "reject"):
            raise ValueError(f"unverified must be 'keep' or 'reject', got {self.unverified!r}")
        if self.multiple_answers not in ("keep", "reject"):
            raise ValueError(f"multiple_answers must be 'keep' or 'reject', got {self.multiple_answers!r}")
        if self.max_tests < 1 or self.min_tests < 0:
            raise ValueError("max_tests must be >= 1 and min_tests >= 0")


def _sha(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:32]


def is_interactive(p: Problem) -> bool:
    """Interactive problems need an interactor, which the evaluator does not run."""
    return bool(p.meta.get("interactive")) or "interactive" in (p.tags or [])


def problem_hash(p: Problem, timeout_scale: float) -> str:
    """What, besides the code and the test, decides a run's verdict."""
    checker = json.dumps(p.checker.__dict__ if p.checker else None, sort_keys=True)
    return _sha(p.style, p.entry_point or "", p.starter_code or "", checker, repr(p.time_limit_s),
                repr(p.memory_limit_mb), repr(timeout_scale))


def test_hash(t: TestCase) -> str:
    return _sha(t.input, t.output)


class ResultCache:
    """(problem hash, reference hash, test hash, run) -> {status, time_s, output} in SQLite."""

    def __init__(self, path: str | Path):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path))
        self.db.execute("CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def get(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT value FROM runs WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_many(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO runs VALUES (?, ?)", [(k, json.dumps(v)) for k, v in items])
        self.db.commit()

    def close(self) -> None:
        self.db.close()


@dataclass
class _Job:
    problem_idx: int
    ref_idx: int
    run: int  # 0, or 1 for the determinism re-run
    test_indices: list[int]


def _run_references(problems: list[Problem], cfg: ValidateConfig, cache: ResultCache, progress: bool):
    """results[(problem_idx, ref_idx, run)][test_idx] = {status, time_s, output}; compile status per ref."""
    from pipeline.evaluator import Evaluator, Submission

    results: dict[tuple[int, int, int], dict[int, dict[str, Any]]] = {}
    ref_status: dict[tuple[int, int], str] = {}
    runs = 2 if cfg.check_determinism else 1
    jobs: list[_Job] = []
    keys: dict[tuple[int, int, int, int], str] = {}
    for pi, p in enumerate(problems):
        ph = problem_hash(p, cfg.timeout_scale)
        for ri, ref in enumerate(p.reference_solutions):
            rh = _sha(ref.language, ref.code)
            for run in range(runs):
                got = results.setdefault((pi, ri, run), {})
                todo = []
                for ti, t in enumerate(p.tests):
                    key = _sha(ph, rh, test_hash(t), str(run))
                    keys[(pi, ri, run, ti)] = key
                    hit = cache.get(key)
                    if hit is None:
                        todo.append(ti)
                    else:
                        got[ti] = hit
                if todo:
                    jobs.append(_Job(pi, ri, run, todo))
                elif not any(v.get("status") == "CE" for v in got.values()):
                    ref_status.setdefault((pi, ri), "ok")
    if not jobs:
        return results, _compile_status(results, ref_status)

    sub_problems: dict[str, Problem] = {}
    submissions = []
    by_sid: dict[str, _Job] = {}
    for j, job in enumerate(jobs):
        p = problems[job.problem_idx]
        sid = f"job{j}"
        sub_problems[sid] = replace(p, id=sid, tests=[p.tests[i] for i in job.test_indices])
        ref = p.reference_solutions[job.ref_idx]
        submissions.append(Submission(problem_id=sid, submission_id=sid, language=ref.language, code=ref.code))
        by_sid[sid] = job

    start = time.monotonic()
    n_tests = sum(len(j.test_indices) for j in jobs)
    bar = tqdm(total=n_tests, desc="validate: reference runs", unit="test", disable=not progress, mininterval=1.0)
    with Evaluator(workers=cfg.workers, timeout_scale=cfg.timeout_scale) as ev:
        for verdict in ev.evaluate(sub_problems, submissions, mode="all", keep_outputs=True, progress=False):
            job = by_sid[verdict.submission_id]
            got = results[(job.problem_idx, job.ref_idx, job.run)]
            fresh = []
            for k, ti in enumerate(job.test_indices):
                if k < len(verdict.tests):
                    tr = verdict.tests[k]
                    value = {"status": tr.status, "time_s": tr.time_s, "output": tr.output, "diff": tr.diff}
                else:  # compile error or harness failure: no per-test results
                    value = {"status": verdict.status, "time_s": 0.0, "output": None, "diff": verdict.reason}
                got[ti] = value
                if value["status"] != "SE":  # never cache our own failures
                    fresh.append((keys[(job.problem_idx, job.ref_idx, job.run, ti)], value))
            cache.put_many(fresh)
            bar.update(len(job.test_indices))
            bar.set_postfix(tests_per_s=f"{bar.n / max(time.monotonic() - start, 1e-9):.1f}", refresh=False)
    bar.close()
    return results, _compile_status(results, ref_status)


def _compile_status(results, ref_status):
    status = dict(ref_status)
    for (pi, ri, _run), tests in results.items():
        values = list(tests.values())
        if values and all(v["status"] == "CE" for v in values):
            status[(pi, ri)] = "CE"
        elif values and all(v["status"] == "SE" for v in values):
            status[(pi, ri)] = "SE"
        else:
            status.setdefault((pi, ri), "ok")
    return status


def classify_test(statuses: list[str], policy: str) -> str:
    """valid | broken | ambiguous from the statuses of the references that ran on one test."""
    passed = sum(s == "AC" for s in statuses)
    if passed == len(statuses):
        return "valid"
    if passed == 0:
        return "broken"
    if policy == "majority" and passed * 2 > len(statuses):
        return "valid"
    return "ambiguous"


def cap_tests(tests: list[TestCase], indices: list[int], cfg: ValidateConfig) -> tuple[list[int], int, int]:
    """Apply max_test_bytes, max_tests (public first, then largest private inputs) and max_total_bytes.

    Returns (kept indices in original order, dropped as oversize, dropped by the count/total caps).
    """
    def size(i: int) -> int:
        return len(tests[i].input.encode()) + len(tests[i].output.encode())

    fitting = [i for i in indices if size(i) <= cfg.max_test_bytes]
    oversize = len(indices) - len(fitting)
    public = [i for i in fitting if tests[i].kind == "public"]
    private = sorted((i for i in fitting if tests[i].kind != "public"), key=lambda i: (-len(tests[i].input), i))
    chosen = (public + private)[: cfg.max_tests]
    total = sum(size(i) for i in chosen)
    # Over the byte budget: drop the largest non-public tests first.
    for i in sorted((i for i in chosen if tests[i].kind != "public"), key=lambda i: (-size(i), i)):
        if total <= cfg.max_total_bytes:
            break
        chosen.remove(i)
        total -= size(i)
    return sorted(chosen), oversize, len(fitting) - len(chosen)


@dataclass
class ValidateResult:
    kept: list[Problem]
    rejects: list[tuple[Problem, str]]
    report: list[dict[str, Any]]
    stats: dict[str, Any]


def validate_problems(problems: list[Problem], cfg: ValidateConfig, *, progress: bool = True) -> ValidateResult:
    interactive = [p for p in problems if is_interactive(p)]
    problems = [p for p in problems if not is_interactive(p)]
    unjudgeable = {id(p) for p in problems if cfg.multiple_answers == "reject" and needs_checker_program(p)}
    any_answer = [p for p in problems if id(p) in unjudgeable]
    problems = [p for p in problems if id(p) not in unjudgeable]
    cache = ResultCache(cfg.cache_path)
    try:
        results, ref_status = _run_references(problems, cfg, cache, progress)
    finally:
        cache.close()

    kept: list[Problem] = []
    rejects: list[tuple[Problem, str]] = []
    report: list[dict[str, Any]] = []
    totals: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for pi, p in enumerate(problems):
        n_refs = len(p.reference_solutions)
        ok_refs = [ri for ri in range(n_refs) if ref_status.get((pi, ri)) == "ok"]
        counts = Counter(tests_in=len(p.tests))
        classes: list[str] = []
        for ti, t in enumerate(p.tests):
            statuses = [results[(pi, ri, 0)][ti]["status"] for ri in ok_refs]
            cls = classify_test(statuses, cfg.policy) if ok_refs else "unverified"
            if cls == "valid" and cfg.check_determinism:
                outs = {(results[(pi, ri, 0)][ti]["output"], results[(pi, ri, 1)][ti]["output"]) for ri in ok_refs}
                if any(a != b for a, b in outs):
                    cls = "nondeterministic"
            slowest = max((results[(pi, ri, 0)][ti]["time_s"] for ri in ok_refs), default=0.0)
            slow = bool(ok_refs) and slowest > cfg.slow_fraction * p.time_limit_s * cfg.timeout_scale
            counts["tests_slow"] += slow
            classes.append(cls)
            counts[f"tests_{cls}"] += 1
            for ri in range(n_refs):
                r = results[(pi, ri, 0)][ti]
                report.append({
                    "problem_id": p.id, "test_index": ti, "test_hash": test_hash(t), "test_kind": t.kind,
                    "reference_index": ri, "language": p.reference_solutions[ri].language,
                    "reference_status": ref_status.get((pi, ri), "missing"), "status": r["status"],
                    "time_s": float(r["time_s"] or 0.0), "test_class": cls, "slow": slow,
                    "expected": t.output[:_OUTPUT_KEEP],
                    "actual": None if r["output"] is None else str(r["output"])[:_OUTPUT_KEEP],
                    "message": None if r.get("diff") is None else str(r["diff"])[:_OUTPUT_KEEP],
                })
        usable = [ti for ti, c in enumerate(classes) if c in ("valid", "unverified")]
        keep_idx, oversize, capped = cap_tests(p.tests, usable, cfg)
        counts["tests_oversize"] = oversize
        counts["tests_capped"] = capped
        status = "verified" if ok_refs else "unverified"
        validation = {
            "status": status,
            "tests_in": len(p.tests),
            "tests_valid": counts["tests_valid"],
            "tests_broken": counts["tests_broken"],
            "tests_ambiguous": counts["tests_ambiguous"],
            "tests_nondeterministic": counts["tests_nondeterministic"],
            "tests_unverified": counts["tests_unverified"],
            "tests_oversize": oversize,
            "tests_capped": capped,
            "tests_kept": len(keep_idx),
            "tests_slow": counts["tests_slow"],
            "references_total": n_refs,
            "references_ok": len(ok_refs),
            "references_failed_to_run": n_refs - len(ok_refs),
        }
        out = replace(p, tests=[p.tests[i] for i in keep_idx], extra={**p.extra, "validation": validation})
        reason = None
        if n_refs and not ok_refs:
            bad = sorted({ref_status.get((pi, ri), "?") for ri in range(n_refs)})
            reason = f"no reference solution compiled and ran (statuses: {', '.join(bad)})"
        elif not ok_refs and cfg.unverified == "reject":
            reason = "no reference solution to verify the tests (unverified: reject)"
        elif len(keep_idx) < cfg.min_tests:
            reason = (f"only {len(keep_idx)} valid tests after validation and caps (min_tests={cfg.min_tests}; "
                      f"broken={validation['tests_broken']}, ambiguous={validation['tests_ambiguous']}, "
                      f"oversize={oversize}, nondeterministic={validation['tests_nondeterministic']})")
        if reason:
            rejects.append((out, reason))
            reasons[reason.split(" (")[0]] += 1
        else:
            kept.append(out)
            totals["output_tests"] += len(keep_idx)
        for k, v in validation.items():
            if k.startswith(("tests_", "references_")):
                totals[k] += v
        totals[status] += 1

    for p in interactive:
        rejects.append((p, "interactive problem: it needs an interactor, which the evaluator does not run"))
        reasons["interactive problem"] += 1
        totals["tests_in"] += len(p.tests)
        totals["tests_interactive"] += len(p.tests)
    for p in any_answer:
        rejects.append((p, "any of several answers is accepted (as the statement or the source says) and no checker "
                           "program judges them: fixed expected outputs would mark other correct answers wrong "
                           "(multiple_answers: reject)"))
        reasons["multiple answers without a checker program"] += 1
        totals["tests_in"] += len(p.tests)
        totals["tests_multiple_answers"] += len(p.tests)
    stats = {
        "problems_in": len(problems) + len(interactive) + len(any_answer),
        "problems_kept": len(kept),
        "problems_rejected": len(rejects),
        "problems_unverified_kept": sum(1 for p in kept if p.extra["validation"]["status"] == "unverified"),
        "rejected_by_reason": dict(reasons),
        # Over all problems: tests_in = valid + broken + ambiguous + nondeterministic + unverified
        # (+ interactive / multiple_answers: tests of problems rejected unrun),
        # and valid + unverified = kept + oversize + capped. output_tests: tests in kept problems.
        "tests": {k: v for k, v in sorted(totals.items()) if k.startswith("tests_")},
        "output_tests": totals["output_tests"],
        "references": {k: v for k, v in sorted(totals.items()) if k.startswith("references_")},
        "config": settings_record(cfg),  # the effective settings (`--set` included), for the dataset card
    }
    return ValidateResult(kept, rejects, report, stats)
