"""Validate stage: run the reference solutions on the tests, keep the tests they agree with.

Steps (one function each, in `validate_problems` order):

1. `set_aside`: interactive problems without an interactor program and any-answer problems
   without a checker program are rejected unrun. An interactive problem with its interactor
   (`checker.kind == "interactor"`) is validated like any problem judged by a checker program:
   its references and known-wrong solutions run through the evaluator, which runs the
   interactor; its tests' `output` (the interactor's answer file, possibly empty) is never
   compared with nor rewritten from a run's stdout, and `check_determinism` compares no outputs
   there (an interactive run has no comparable stdout).
2. `run_references`: the *voters* (at most `vote_references`, chosen by content: `voter_order`)
   on every test, at the problem's *run limit*: its time limit, or, when the source did not state
   one (`meta["time_limit_stated"] is False`), the generous `probe_time_limit_s` (at most the
   ceiling below), so that the references' real times can be measured. The other references run
   only where the measurement needs them (docs/validate.md, "Who runs on what"): on the largest
   tests while a derived limit is open (`run_timing`), on the tests the voters did not settle
   (`run_unsettled`), and, after step 5, on the kept tests to their first failure
   (`run_reference_strength`; a held-out one also on its fold's kept tests) for the TPR.
3. `settle_time_limit`: a limit the source did not state is derived from the references' measured
   times with the Kattis problemtools rule (see `derive_time_limit`) and the problem's own factors
   where it states them (`time_multipliers`: a Kattis package's `limits`), at most
   `max_time_limit` (`max_time_limit_s`, else the platform's); runs are then read at the final
   limit (a run slower than it is a TLE there).
4. `vote_tests`: only references that *finished* a test vote on it (a TLE or MLE of a reference
   means the reference is too slow there, not that the expected output is wrong; a non-voter
   votes only where it ran to vote: the unsettled and the timed tests). A test is
   *valid* when the voters accept it (policy `all`: every one; `majority`: more than half),
   *broken* when none does, *ambiguous* otherwise, *unverified_slow* when no reference finished it
   (kept or dropped by `unverified_slow`), *unverified* when the problem has no reference.
5. `run_wrong_solutions`: the source's known-wrong solutions on the candidate tests (usable and
   under `max_test_bytes`), at the final limit; a wrong solution is *caught* by a test it fails,
   and stops at its first failure (cheapest deciding tests first: `wrong_stream`). Where the caps
   choose, `confirm_catches` makes the choice and runs the solutions it lost on the kept tests.
6. `choose_tests`: the caps of METHOD.md: at most `max_tests` (a greedy cover of the caught wrong
   solutions first, then one test of each test group the cover leaves out, then public tests, then
   the largest private inputs; at each step a test that fewer finishing references fail is
   preferred) and `max_total_bytes`. Tests keep their `group`; a grouped problem's validation
   record says how many tests each group kept (`test_groups`) and which groups the caps or the
   votes left empty (`groups_emptied`).
7. `judge_problem`: the `validation` column (counts, per-reference too-slow counts, the time-limit
   rule and figures, the dropped tests with their reasons, the wrong solutions caught, the test
   strength (TPR/TNR, `pipeline/strength.py`) of the kept tests and of every candidate, i.e. what
   the caps cost) and the reject reason, if any; `decide` does it for every problem and `summarise`
   adds it all up for stats.json (steps 2-5 are `run_programs`, through one cache and one judge).

A reference far over the limit on the smaller tests is not run on the larger ones: tests run in
increasing input size, and after `presume_slow_after` consecutive too-slow results (one, under a
probe limit: over it is far over any limit that could be derived) the rest are *presumed* too slow
(reported as such, never cached).

Runs go through the judge of the params' `evaluator:` section (`make_evaluator`: local sandboxed
pool or Ray, `executor`), scheduled and cached by `microcoder.pipeline.evaluator.programs` (`Runner`,
`ResultCache`: per (problem and limit, evaluator code and settings, code, test) hash), so a rerun
after a kill or a params change re-executes only what changed. This module holds the rules;
report.parquet's rows and stats.json's figures are built in `microcoder.pipeline.validate_report`.
`Validate` is the stage: read (tolerantly), validate, write problems, rejects, report and
stats. See docs/validate.md for the rules and the figures behind them.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

from microcoder.pipeline import strength
from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.evaluator.programs import (
    CATCHES,
    NOT_RUN,
    TOO_SLOW,
    ResultCache,
    Runner,
    Stream,
    at_limit,
)
from microcoder.pipeline.executor import ExecutionFields
from microcoder.pipeline.pinned_limits import pin_key, read_pins, write_rows
from microcoder.pipeline.schema import Problem, TestCase, WrongSolution
from microcoder.pipeline.sources.judging import has_interactor, is_interactive, needs_checker_program
from microcoder.pipeline.stage import ConfigError, Stage, StageContext, StageInterrupted, StageStats
from microcoder.pipeline.validate_heldout import empty_records, measure_held_out
from microcoder.pipeline.validate_report import (
    judge_seconds,
    judge_time_figures,
    reference_run_figures,
    report_rows,
    report_schema,
    summarise,
)

# Run statuses (microcoder.pipeline.evaluator.programs): a reference TLE/MLE did not finish the test (TOO_SLOW); a
# wrong solution failing a test with one of CATCHES is caught by it; NOT_RUN: no verdict on the test.


@dataclass
class ValidateConfig(ExecutionFields):
    policy: str = field(default="all", metadata={"help": "all: every reference that finished a test must accept it; majority: more than half."})
    max_tests: int = field(default=32, metadata={"help": "Keep at most this many valid tests (a cover of the caught wrong solutions, then by `cap_choice`)."})
    cap_choice: str = field(default="diverse", metadata={
        "help": "What max_tests keeps after the cover of the caught known-wrong solutions: diverse (each group's "
                "hardest, then inputs of every size, magnitude, sign and tier, then public, then the largest: power "
                "on code not yet seen) or cover (public, then the largest private inputs: before issue 36)."})
    max_test_bytes: int = field(default=5_000_000, metadata={"help": "Drop a test whose input + output exceeds this many bytes (testgen's full-size inputs reach ~4 MB)."})
    max_total_bytes: int = field(default=16_000_000, metadata={"help": "Drop the largest private tests until a problem's tests fit."})
    min_tests: int = field(default=5, metadata={"help": "Reject a problem left with fewer valid tests."})
    unverified: str = field(default="reject", metadata={
        "help": "Problems without references (nobody verified their tests): reject, or keep (marked unverified)."})
    unverified_slow: str = field(default="keep", metadata={
        "help": "Tests that no reference finished within the limit (every reference TLE/MLE): keep (their "
                "expected output is the source's, unverified) or drop."})
    multiple_answers: str = field(default="reject", metadata={
        "help": "Problems whose statement accepts any of several answers but that have no checker program: "
                "reject (their fixed expected outputs mark other correct answers wrong) or keep."})
    slow_fraction: float = field(default=0.5, metadata={"help": "Flag a test whose slowest finishing reference run exceeds this fraction of the time limit."})
    presume_slow_after: int = field(default=2, metadata={
        "help": "Tests run in increasing input size; after this many consecutive TLE/MLE of one solution the "
                "remaining (larger) tests are presumed too slow for it and not run (0: run everything)."})
    derive_time_limit: str = field(default="unstated", metadata={
        "help": "Derive the time limit from the references' measured times (problemtools rule): unstated (only "
                "where the source stated none), all (never below a stated limit), never."})
    time_multiplier: float = field(default=5.0, metadata={
        "help": "Derived limit = this x the slowest accepted reference run, rounded to whole seconds "
                "(problemtools legacy `time_multiplier`, default 5; `ac_to_time_limit` 2.0 in the 2023-07 format). "
                "A problem that states its own (meta `time_multipliers`, from a Kattis package's limits) uses that."})
    time_safety_margin: float = field(default=2.0, metadata={
        "help": "problemtools `time_safety_margin` (2023-07: `time_limit_to_tle`, 1.5): recorded as the TLE "
                "margin of the derived limit; a problem's own (meta `time_multipliers`) comes first."})
    min_time_limit_s: float = field(default=1.0, metadata={"help": "A derived limit is at least this (problemtools: 1 s)."})
    max_time_limit_s: float | None = field(default=None, metadata={
        "help": "A derived limit is at most this, and references probing for it run under at most this (a stated "
                "limit is the source's and stays); null: the platform's (PLATFORM_MAX_TIME_LIMIT_S, else 15 s)."})
    probe_time_limit_s: float = field(default=10.0, metadata={
        "help": "The generous limit the references run under when the limit is to be derived (problemtools: 300 s)."})
    pinned_limits: str | None = field(default=None, metadata={
        "help": "Committed derived limits (`microcoder pin-limits`): a problem whose pin key still matches (same "
                "references, test inputs and rule settings) takes its pinned limit instead of one derived from "
                "this machine's times, so rows do not move with the machine's speed (pipeline/pinned_limits.py)."})
    run_wrong_solutions: bool = field(default=True, metadata={"help": "Run the problems' known-wrong solutions to measure the kept tests."})
    min_wrong_caught: float = field(default=0.0, metadata={
        "help": "Reject a problem whose kept tests catch less than this share of its known-wrong solutions "
                "that ran (0: never; problems without wrong solutions are not judged by this)."})
    check_determinism: bool = field(default=False, metadata={"help": "Run references twice; drop tests whose outputs differ."})
    vote_references: int = field(default=3, metadata={
        "help": "References that run on every test and vote on it (chosen by content: the held-out folds' seeded "
                "order); the others run only where the measurement needs them: tests the voters did not settle, "
                "the largest tests for a derived limit, the kept tests for strength (docs/validate.md). 0: every "
                "reference on every test."})
    held_out_folds: int = field(default=2, metadata={
        "help": "Held-out strength (validate_heldout.py): each problem's references and known-wrong solutions are "
                "dealt into this many folds, each measured on the tests chosen without it (votes, limit, caps); "
                "the kept tests are still chosen with all of them. 0 or 1: off."})
    held_out_seed: int = field(default=0, metadata={"help": "Seed of the held-out folds (with the problem id and "
                                                            "each solution's code: never timing or order)."})
    cache_path: str = field(default=".cache/microcoder/validate.sqlite", metadata={"help": "Result cache (not a DVC output)."})

    def __post_init__(self) -> None:
        super().__post_init__()
        choices = {"policy": ("all", "majority"), "unverified": ("keep", "reject"), "unverified_slow": ("keep", "drop"),
                   "multiple_answers": ("keep", "reject"), "derive_time_limit": ("unstated", "all", "never"),
                   "cap_choice": ("diverse", "cover")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {getattr(self, name)!r}")
        if self.vote_references < 0:
            raise ValueError(f"vote_references must be >= 0 (0: every reference votes), got {self.vote_references}")
        if self.held_out_folds < 0:
            raise ValueError(f"held_out_folds must be >= 0, got {self.held_out_folds}")
        if self.max_tests < 1 or self.min_tests < 0:
            raise ValueError("max_tests must be >= 1 and min_tests >= 0")
        if not 0.0 <= self.min_wrong_caught <= 1.0:
            raise ValueError(f"min_wrong_caught must be a share in [0, 1], got {self.min_wrong_caught}")
        if self.time_multiplier <= 0 or self.probe_time_limit_s <= 0 or self.presume_slow_after < 0:
            raise ValueError("time_multiplier and probe_time_limit_s must be > 0, presume_slow_after >= 0")
        if self.max_time_limit_s is not None and self.max_time_limit_s < self.min_time_limit_s:
            raise ValueError(f"max_time_limit_s must be null or >= min_time_limit_s ({self.min_time_limit_s:g}), "
                             f"got {self.max_time_limit_s!r}")


# --- step 1: set aside what cannot be judged -------------------------------------------------------
def set_aside(problems: list[Problem], cfg: ValidateConfig) -> tuple[list[Problem], list[tuple[Problem, str, str]]]:
    """(problems to run, [(problem, reason, reason key)] rejected unrun)."""
    run, aside = [], []
    for p in problems:
        if is_interactive(p) and not has_interactor(p):
            aside.append((p, "interactive problem: it has no interactor program, and only an interactor can "
                             "judge it (its samples are transcripts, not stdin/stdout pairs)", "interactive"))
        elif cfg.multiple_answers == "reject" and needs_checker_program(p) and not has_interactor(p):
            # an interactor judges the answers itself: several correct ones are no problem there
            aside.append((p, "any of several answers is accepted (as the statement or the source says) and no checker "
                             "program judges them: fixed expected outputs would mark other correct answers wrong "
                             "(multiple_answers: reject)", "multiple_answers"))
        else:
            run.append(p)
    return run, aside


# --- step 2: references ----------------------------------------------------------------------------
def limit_is_stated(p: Problem) -> bool:
    return p.meta.get("time_limit_stated") is not False


def derives_limit(p: Problem, cfg: ValidateConfig) -> bool:
    if not p.reference_solutions or cfg.derive_time_limit == "never":
        return False
    return cfg.derive_time_limit == "all" or not limit_is_stated(p)


# The most a derived limit may be, by platform (about the longest limits their problems state). A limit
# derived from one slow accepted submission has no other ceiling (25 s seen on an ICPC package), and every
# too-slow run then costs that much.
PLATFORM_MAX_TIME_LIMIT_S = {"codeforces": 15.0, "atcoder": 15.0, "codechef": 15.0, "leetcode": 10.0,
                             "humaneval": 10.0}
DEFAULT_MAX_TIME_LIMIT_S = 15.0


def max_time_limit(p: Problem, cfg: ValidateConfig) -> tuple[float, str]:
    """(the ceiling of a derived limit, where it comes from): `max_time_limit_s`, else the platform's."""
    if cfg.max_time_limit_s is not None:
        return float(cfg.max_time_limit_s), "validate.max_time_limit_s"
    platform = (p.platform or "").lower()
    if platform in PLATFORM_MAX_TIME_LIMIT_S:
        return PLATFORM_MAX_TIME_LIMIT_S[platform], f"platform {platform}"
    return DEFAULT_MAX_TIME_LIMIT_S, "default (platform without its own)"


def run_limit(p: Problem, cfg: ValidateConfig) -> float:
    """The limit references run under: the problem's, or a generous probe where it is to be derived
    (never below a stated limit). The probe stops at the ceiling: a run over it is too slow under
    any limit that could be derived."""
    if not derives_limit(p, cfg):
        return p.time_limit_s
    probe = min(cfg.probe_time_limit_s, max_time_limit(p, cfg)[0])
    return max(probe, p.time_limit_s) if limit_is_stated(p) else probe


@dataclass
class Case:
    """One problem's way through the steps."""

    p: Problem
    ref_runs: dict[tuple[int, int], dict[int, dict[str, Any]]] = field(default_factory=dict)  # (ref, run) -> test -> result
    ref_status: dict[int, str] = field(default_factory=dict)  # ok | CE | SE
    limit: dict[str, Any] = field(default_factory=dict)  # the time-limit record
    timing: dict[str, Any] | None = None  # a derived limit's measurement (pinned_limits.write_rows)
    final_limit_s: float = 0.0
    judged_limit_s: float = 0.0  # final_limit_s x the evaluator's timeout_scale: what runs are read at
    classes: list[str] = field(default_factory=list)
    slow: list[bool] = field(default_factory=list)
    candidates: list[int] = field(default_factory=list)
    oversize: list[int] = field(default_factory=list)
    wrong_runs: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)  # wrong index -> test -> result
    wrong_status: dict[int, str] = field(default_factory=dict)
    choice: Choice | None = None  # made before the run where the caps' choice decides what else runs
    held_out_runs: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)  # wrong index -> test -> result
    held_out: dict[str, Any] | None = None  # validate_heldout.held_out_records
    # Non-voting references (`vote_references`): per reference, the tests whose runs vote (the ones the
    # voters did not settle, and its timing runs) and those whose times count for a derived limit; a
    # reference in neither dict votes on every test. Its other runs (strength) measure only.
    voted: dict[int, set[int]] = field(default_factory=dict)
    timed: dict[int, set[int]] = field(default_factory=dict)
    strength_tests: dict[int, set[int]] = field(default_factory=dict)  # non-voter -> tests strength needs
    limit_known: bool = False  # stated, pinned or capped by the voters alone: no timing runs

    def non_voters(self) -> list[int]:
        return sorted(self.voted)

    def vote_runs(self, ri: int) -> dict[int, dict[str, Any]]:
        """The runs of reference `ri` that vote (and say which tests it fails for the choice)."""
        runs = self.ref_runs[(ri, 0)]
        allowed = self.voted.get(ri)
        return runs if allowed is None else {ti: r for ti, r in runs.items() if ti in allowed}

    def timed_runs(self, ri: int) -> list[dict[str, Any]]:
        """The runs of reference `ri` whose times a derived limit reads."""
        runs = self.ref_runs[(ri, 0)]
        allowed = self.timed.get(ri)
        return list(runs.values()) if allowed is None else [r for ti, r in runs.items() if ti in allowed]


def run_references(cases: list[Case], cfg: ValidateConfig, runner: Runner, tally: Counter,
                   timeout_scale: float = 1.0, pins: dict[str, dict[str, Any]] | None = None) -> None:
    """Steps 2-4: the voters on every test, the limit, the other references where the limit or the
    votes need them (`vote_references`, docs/validate.md), the votes."""
    run_voters(cases, cfg, runner, tally)
    for c in cases:
        settle_time_limit(c, cfg, timeout_scale, pins)
        c.limit_known = limit_known(c, cfg)
    run_timing(cases, cfg, runner, tally)
    for c in cases:
        settle_time_limit(c, cfg, timeout_scale, pins)
    run_unsettled(cases, cfg, runner, tally)
    for c in cases:
        vote_tests(c, cfg)


def limit_known(c: Case, cfg: ValidateConfig) -> bool:
    """No run can move the final limit: it is stated (not derived), pinned, or the voters' times
    already put it at its ceiling (a derived limit only rises with slower runs, and stops there)."""
    if not derives_limit(c.p, cfg) or (c.timing or {}).get("pinned"):
        return True
    return bool(c.limit["derived"]) and c.final_limit_s >= c.limit["max_s"]


def voter_order(p: Problem, cfg: ValidateConfig) -> list[int]:
    """References in the held-out folds' seeded order (content only: never timing or input order):
    the first `vote_references` vote, and since the folds deal this order round-robin, the voters
    are spread over the folds, so every fold's choice still has voters that ran every test."""
    refs = p.reference_solutions
    return sorted(range(len(refs)), key=lambda ri: (strength.fold_rank_key(cfg.held_out_seed, p.id, refs[ri].language,
                                                                          refs[ri].code), ri))


def run_voters(cases: list[Case], cfg: ValidateConfig, runner: Runner, tally: Counter) -> None:
    """The voters on every test at the run limit; a voter that did not build or run is replaced by
    the next reference in `voter_order`, until `vote_references` voters ran or none is left."""
    order = {id(c): voter_order(c.p, cfg) for c in cases}
    started: dict[int, list[int]] = {id(c): [] for c in cases}
    while True:
        streams: dict[tuple[int, int, int], Stream] = {}
        for ci, c in enumerate(cases):
            mine = started[id(c)]
            want = cfg.vote_references or len(c.p.reference_solutions)
            short = want - sum(c.ref_status.get(ri) == "ok" for ri in mine)
            new = sorted([ri for ri in order[id(c)] if ri not in mine][:max(short, 0)])
            mine += new
            probe = replace(c.p, time_limit_s=run_limit(c.p, cfg))
            for ri in new:
                ref = c.p.reference_solutions[ri]
                for run in range(2 if compares_outputs(c.p, cfg) else 1):
                    streams[(ci, ri, run)] = runner.stream(f"p{ci}r{ri}x{run}", probe, ref.language, ref.code,
                                                           list(range(len(c.p.tests))), run,
                                                           presume_after=probe_presume(c.p, cfg))
        if not streams:
            break
        run_tallied(runner, list(streams.values()), "validate: reference runs", tally, "voters")
        for (ci, ri, run), s in streams.items():
            cases[ci].ref_runs[(ri, run)] = s.results
            cases[ci].ref_status[ri] = program_status(cases[ci].ref_runs[(ri, 0)])
    for c in cases:
        for ri in range(len(c.p.reference_solutions)):
            if ri not in started[id(c)]:
                c.ref_runs[(ri, 0)], c.voted[ri], c.timed[ri] = {}, set(), set()
        update_statuses(c)


def probe_presume(p: Problem, cfg: ValidateConfig) -> int:
    # Over the generous probe limit is far over any limit we would derive: one such run is enough.
    return min(cfg.presume_slow_after, 1) if derives_limit(p, cfg) else cfg.presume_slow_after


def update_statuses(c: Case) -> None:
    """ok, CE / SE (no verdict on any test), or not_run (a non-voter nothing needed)."""
    for ri in range(len(c.p.reference_solutions)):
        runs = c.ref_runs.get((ri, 0))
        c.ref_status[ri] = program_status(runs) if runs or ri not in c.voted else "not_run"


TIMING_LARGEST = 3  # the largest inputs a non-voter is timed on (with each test group's largest)


def limit_tests(p: Problem) -> list[int]:
    """The tests that decide a derived limit ("the slowest that matters"): the largest inputs, and
    each test group's largest (a group may stress what the largest input does not)."""
    by_size = sorted(range(len(p.tests)), key=lambda i: (-len(p.tests[i].input), i))
    largest: dict[str, int] = {}
    for i in by_size:
        if p.tests[i].group is not None:
            largest.setdefault(p.tests[i].group, i)
    return sorted(set(by_size[:TIMING_LARGEST]) | set(largest.values()))


def run_timing(cases: list[Case], cfg: ValidateConfig, runner: Runner, tally: Counter) -> None:
    """Non-voters on `limit_tests`, at the run limit, where the limit is still to be derived (not
    stated, pinned, or already at its ceiling from the voters' times: more runs cannot change it)."""
    streams: dict[tuple[int, int], Stream] = {}
    for ci, c in enumerate(cases):
        if c.limit_known or not c.voted:
            continue
        probe = replace(c.p, time_limit_s=run_limit(c.p, cfg))
        tests = limit_tests(c.p)
        for ri in c.non_voters():
            ref = c.p.reference_solutions[ri]
            c.voted[ri].update(tests)
            c.timed[ri].update(tests)
            streams[(ci, ri)] = runner.stream(f"p{ci}r{ri}t", probe, ref.language, ref.code, tests, 0,
                                              presume_after=probe_presume(c.p, cfg))
    run_reference_streams(runner, cases, streams, "validate: references timed on the largest tests", tally)


def unsettled_tests(c: Case) -> list[int]:
    """Tests the voters did not settle: some voter did not finish it with AC at the final limit
    (a disagreement, a broken test, or a voter too slow there)."""
    eff = c.judged_limit_s
    voters = [ri for ri in ok_refs(c) if ri not in c.voted]
    return [ti for ti in range(len(c.p.tests)) if any(at_limit(c.ref_runs[(ri, 0)][ti], eff) != "AC" for ri in voters)]


def run_unsettled(cases: list[Case], cfg: ValidateConfig, runner: Runner, tally: Counter) -> None:
    """Non-voters on the tests the voters did not settle, at the final limit: votes there are as
    if every reference had run."""
    streams: dict[tuple[int, int], Stream] = {}
    for ci, c in enumerate(cases):
        if not c.voted:
            continue
        todo = unsettled_tests(c)
        final = replace(c.p, time_limit_s=c.final_limit_s)
        for ri in c.non_voters():
            c.voted[ri].update(todo)
            unrun = [ti for ti in todo if ti not in c.ref_runs[(ri, 0)]]
            if unrun and c.ref_status[ri] not in NOT_RUN:
                ref = c.p.reference_solutions[ri]
                streams[(ci, ri)] = runner.stream(f"p{ci}r{ri}u", final, ref.language, ref.code, unrun, 0)
    run_reference_streams(runner, cases, streams, "validate: references on tests the voters did not settle", tally)


def strength_stream(runner: Runner, name: str, c: Case, ri: int, tests: list[int], limit_s: float) -> Stream | None:
    """Non-voter `ri` on `tests` at the final limit, to its first failure (all a pass/fail count
    needs); None when it did not run at all, or its runs already fail one of them at `limit_s`."""
    runs = c.ref_runs[(ri, 0)]
    if c.ref_status[ri] in NOT_RUN or any(ti in runs and at_limit(runs[ti], limit_s) != "AC" for ti in tests):
        return None
    unrun = [ti for ti in tests if ti not in runs]
    if not unrun:
        return None
    ref = c.p.reference_solutions[ri]
    return runner.stream(name, replace(c.p, time_limit_s=c.final_limit_s), ref.language, ref.code, unrun, 0,
                         stop_at_failure=True)


def run_reference_strength(cases: list[Case], cfg: ValidateConfig, runner: Runner, tally: Counter,
                           rejected: Callable[[Case], bool]) -> None:
    """Non-voters on the kept tests (the choice is made here, as `judge_problem` would), so that the
    in-sample TPR counts them: each passes every kept test or fails one."""
    streams: dict[tuple[int, int], Stream] = {}
    for ci, c in enumerate(cases):
        if not c.voted or rejected(c):
            continue
        c.choice = c.choice or choose_tests(c.p.tests, c.candidates, cfg, catch_sets(c), reference_failures(c),
                                            testgen_tiers(c.p))
        for ri in c.non_voters():
            c.strength_tests[ri] = c.strength_tests.get(ri, set()) | set(c.choice.kept)
            if (s := strength_stream(runner, f"p{ci}r{ri}s", c, ri, c.choice.kept, c.judged_limit_s)) is not None:
                streams[(ci, ri)] = s
    run_reference_streams(runner, cases, streams, "validate: references on the kept tests", tally)


def run_reference_streams(runner: Runner, cases: list[Case], streams: dict[tuple[int, int], Stream], desc: str,
                          tally: Counter) -> None:
    """Non-voters' streams ((case index, reference) -> stream): run, merged into their runs."""
    if not streams:
        return
    run_tallied(runner, list(streams.values()), desc, tally, "non_voters")
    for (ci, ri), s in streams.items():
        c = cases[ci]
        c.ref_runs[(ri, 0)] = {**c.ref_runs[(ri, 0)], **s.results}
    for ci in {ci for ci, _ri in streams}:
        update_statuses(cases[ci])


def run_tallied(runner: Runner, streams: list[Stream], desc: str, tally: Counter, role: str) -> None:
    """`runner.run`, with its executed / cached / presumed runs added to `tally` under `role`."""
    before = (runner.executed, runner.cached, runner.presumed)
    runner.run(streams, desc)
    for name, b, a in zip(("executed", "cached", "presumed"), before, (runner.executed, runner.cached, runner.presumed),
                          strict=True):
        tally[f"{role}_runs_{name}"] += a - b


def compares_outputs(p: Problem, cfg: ValidateConfig) -> bool:
    """check_determinism compares two runs' outputs: an interactive run's stdout went to the
    interactor, and an adaptive interactor may answer differently each run, so not there."""
    return cfg.check_determinism and not is_interactive(p)


def program_status(results: dict[int, dict[str, Any]]) -> str:
    """ok, or CE / SE when the program produced no verdict on any test."""
    values = list(results.values())
    for bad in NOT_RUN:
        if values and all(v["status"] == bad for v in values):
            return bad
    return "ok"


# --- step 3: the time limit --------------------------------------------------------------------------
@dataclass(frozen=True)
class TimeMultipliers:
    """problemtools' two factors (2023-07 names; legacy: `time_multiplier`, `time_safety_margin`) and
    where they come from (`validation.time_limit.multipliers_from`)."""

    ac_to_time_limit: float
    time_limit_to_tle: float
    source: str


def time_multipliers(p: Problem, cfg: ValidateConfig) -> TimeMultipliers:
    """The problem's own factors (meta `time_multipliers`: a Kattis package's `limits`, normalised by
    the adapter, with `time_multipliers_from` naming the keys), else validate's settings. Factors that
    are not positive numbers are not used, and the record says so."""
    settings = TimeMultipliers(cfg.time_multiplier, cfg.time_safety_margin, "validate.time_multiplier")
    own = p.meta.get("time_multipliers")
    if own is None:
        return settings
    try:
        ac = float(own.get("ac_to_time_limit", cfg.time_multiplier))
        tle = float(own.get("time_limit_to_tle", cfg.time_safety_margin))
    except (AttributeError, TypeError, ValueError):
        ac = tle = math.nan
    if not (0 < ac < math.inf and 0 < tle < math.inf):
        return replace(settings, source=f"validate.time_multiplier (the problem's time_multipliers {own!r:.80} "
                                        "are not positive numbers)")
    return TimeMultipliers(ac, tle, f"problem: {p.meta.get('time_multipliers_from') or 'meta time_multipliers'}")


def derive_time_limit(slowest_s: float, cfg: ValidateConfig, timeout_scale: float = 1.0,
                      multipliers: TimeMultipliers | None = None) -> dict[str, float]:
    """The Kattis problemtools rule (problemtools/verifyproblem.py, `Submissions.check`; defaults in
    problemtools/metadata.py: legacy `time_multiplier` 5.0, `time_safety_margin` 2.0; 2023-07
    `time_multipliers.ac_to_time_limit` 2.0, `time_limit_to_tle` 1.5):

        exact_timelim = max_runtime * time_multiplier
        timelim = max(1, int(0.5 + exact_timelim))
        timelim_margin = max(timelim + 1, int(0.5 + exact_timelim * safety_margin))

    with max_runtime the slowest accepted run and the factors the problem's (`time_multipliers`;
    None: the settings'). Our measured times are this machine's, and `timeout_scale` (the
    evaluator's) says how much slower it is than the judge the limits are for, so the runtime is
    divided by it (the evaluator multiplies the stored limit by it again). No ceiling here: see
    `settle_time_limit`."""
    m = multipliers or TimeMultipliers(cfg.time_multiplier, cfg.time_safety_margin, "validate.time_multiplier")
    exact = slowest_s / timeout_scale * m.ac_to_time_limit
    limit = max(cfg.min_time_limit_s, float(int(0.5 + exact)))
    margin = max(limit + 1, float(int(0.5 + exact * m.time_limit_to_tle)))
    return {"exact_s": round(exact, 4), "derived_s": min(limit, 600.0), "tle_margin_s": min(margin, 600.0)}


def settle_time_limit(c: Case, cfg: ValidateConfig, timeout_scale: float = 1.0,
                      pins: dict[str, dict[str, Any]] | None = None) -> None:
    """The final time limit and its record (`validation.time_limit`); `judged_limit_s` is the CPU
    limit the evaluator applies to it (x the evaluator's timeout_scale). A derived limit is at most
    `max_time_limit` (`capped: true` where that binds: a reference slower than the ceiling on a test
    is then too slow there); a stated one is the source's and is never capped. The record holds
    nothing measured (rows must not move with the machine's speed): the measurement and whether a
    pin (`pins`, pipeline/pinned_limits.py) gave the limit are `c.timing`, written beside."""
    p = c.p
    stated = limit_is_stated(p)
    accepted = [r["time_s"] or 0.0 for ri, st in c.ref_status.items() if st == "ok"
                for r in c.timed_runs(ri) if r["status"] == "AC"]
    slowest = round(max(accepted), 4) if accepted else 0.0
    m = time_multipliers(p, cfg)
    ceiling, ceiling_from = max_time_limit(p, cfg)
    rec = {"stated": stated, "source_s": float(p.time_limit_s), "run_s": float(run_limit(p, cfg)),
           "rule": "stated by the source" if stated else "not stated: the source's default",
           "derived": False, "multiplier": m.ac_to_time_limit, "safety_margin": m.time_limit_to_tle,
           "multipliers_from": m.source, "max_s": ceiling, "max_from": ceiling_from, "capped": False,
           "final_s": float(p.time_limit_s), "memory_stated": p.meta.get("memory_limit_stated") is not False}
    c.timing = None
    if derives_limit(p, cfg) and accepted:
        d = derive_time_limit(slowest, cfg, timeout_scale, m)
        bounded = min(d["derived_s"], ceiling)
        final = max(bounded, p.time_limit_s) if stated else bounded
        rule = {"multipliers": [m.ac_to_time_limit, m.time_limit_to_tle], "min_s": cfg.min_time_limit_s,
                "max_s": ceiling, "stated_s": float(p.time_limit_s) if stated else None, "timeout_scale": timeout_scale}
        key = pin_key(p, rule)
        pin = (pins or {}).get(p.id)
        pinned = pin is not None and pin["key"] == key
        if pinned:
            final, capped = pin["final_s"], pin["capped"]
        else:
            capped = final < d["derived_s"]  # the ceiling bound (a stated limit may still be above it)
        rec.update(derived=True, final_s=final, capped=capped,
                   rule=(f"problemtools: max({cfg.min_time_limit_s:g}, round({m.ac_to_time_limit:g} x slowest accepted "
                         f"reference run / timeout_scale)), at most {ceiling:g} s"
                         + (", never below the stated limit" if stated else "")))
        c.timing = {"id": p.id, "key": key, "final_s": final, "capped": capped, "pinned": pinned,
                    "slowest_reference_s": slowest, **d}
    elif derives_limit(p, cfg):
        rec["rule"] += " (no reference run was accepted, so none could be derived)"
    c.limit = rec
    c.final_limit_s = rec["final_s"]
    c.judged_limit_s = rec["final_s"] * timeout_scale


# --- step 4: votes ------------------------------------------------------------------------------------
def classify_test(statuses: list[str], policy: str) -> str:
    """valid | broken | ambiguous from the statuses of the references that finished one test."""
    passed = sum(s == "AC" for s in statuses)
    if passed == len(statuses):
        return "valid"
    if passed == 0:
        return "broken"
    if policy == "majority" and passed * 2 > len(statuses):
        return "valid"
    return "ambiguous"


def ok_refs(c: Case) -> list[int]:
    return [ri for ri, st in sorted(c.ref_status.items()) if st == "ok"]


def vote_tests(c: Case, cfg: ValidateConfig) -> None:
    eff = c.judged_limit_s
    refs = ok_refs(c)
    votes = {ri: c.vote_runs(ri) for ri in refs}
    for ti in range(len(c.p.tests)):
        runs = {ri: votes[ri][ti] for ri in refs if ti in votes[ri]}  # a non-voter votes where it ran to vote
        voters = [ri for ri in runs if at_limit(runs[ri], eff) not in TOO_SLOW]
        if not refs:
            cls = "unverified"
        elif not voters:
            cls = "unverified_slow"
        else:
            cls = classify_test([at_limit(runs[ri], eff) for ri in voters], cfg.policy)
        if cls == "valid" and compares_outputs(c.p, cfg):
            if any(runs[ri]["output"] != c.ref_runs[(ri, 1)][ti]["output"] for ri in voters if (ri, 1) in c.ref_runs):
                cls = "nondeterministic"
        slowest = max((runs[ri]["time_s"] or 0.0 for ri in voters), default=0.0)
        c.slow.append(bool(voters) and slowest > cfg.slow_fraction * eff)
        c.classes.append(cls)
    usable = ("valid", "unverified") + (("unverified_slow",) if cfg.unverified_slow == "keep" else ())
    for ti, cls in enumerate(c.classes):
        if cls in usable:
            (c.candidates if test_bytes(c.p.tests[ti]) <= cfg.max_test_bytes else c.oversize).append(ti)


def test_bytes(t: TestCase) -> int:
    return len(t.input.encode()) + len(t.output.encode())


def too_slow_counts(c: Case) -> list[int]:
    """Per reference: on how many tests it ran out of time or memory at the final limit."""
    eff = c.judged_limit_s
    return [sum(at_limit(r, eff) in TOO_SLOW for r in c.ref_runs[(ri, 0)].values()) if c.ref_status[ri] == "ok" else 0
            for ri in range(len(c.p.reference_solutions))]


# --- step 5: wrong solutions ---------------------------------------------------------------------------
def cap_needed(c: Case, cfg: ValidateConfig) -> bool:
    return (len(c.candidates) > cfg.max_tests
            or sum(test_bytes(c.p.tests[i]) for i in c.candidates) > cfg.max_total_bytes)


def run_wrong_solutions(cases: list[Case], cfg: ValidateConfig, runner: Runner,
                        rejected: Callable[[Case], bool]) -> None:
    """Wrong solutions on the candidates at the final limit, each stopping at its first failure (one
    catch is all there is to know, and a TLE costs a whole limit; order: `wrong_stream`). Where the
    caps must choose, `confirm_catches` then runs those the choice lost on the kept tests."""
    streams: dict[tuple[int, int], Stream] = {}
    for ci, c in enumerate(cases):
        if not (cfg.run_wrong_solutions and c.p.wrong_solutions and c.candidates) or rejected(c):
            continue
        final = replace(c.p, time_limit_s=c.final_limit_s)
        for wi, w in enumerate(c.p.wrong_solutions):
            streams[(ci, wi)] = wrong_stream(runner, f"p{ci}w{wi}", final, w, c.candidates)
    runner.run(list(streams.values()), "validate: wrong-solution runs")
    for (ci, wi), s in streams.items():
        cases[ci].wrong_runs[wi] = s.results
        cases[ci].wrong_status[wi] = program_status(s.results)
    confirm_catches([c for c in cases if c.wrong_runs and cap_needed(c, cfg)], cfg, runner)


def confirm_catches(cases: list[Case], cfg: ValidateConfig, runner: Runner) -> None:
    """Where the caps choose: the choice is made (`Case.choice`) and a wrong solution whose only
    known catches it dropped runs on the kept tests it has not run, stopping at its first failure,
    so that the kept tests' TNR is measured, not guessed from one catch per solution."""
    streams: dict[tuple[int, int], Stream] = {}
    for ci, c in enumerate(cases):
        catches = catch_sets(c)
        c.choice = choose_tests(c.p.tests, c.candidates, cfg, catches, reference_failures(c), testgen_tiers(c.p))
        kept = set(c.choice.kept)
        final = replace(c.p, time_limit_s=c.final_limit_s)
        for wi, caught_by in catches.items():
            unrun = [ti for ti in c.choice.kept
                     if ti not in c.wrong_runs[wi] or c.wrong_runs[wi][ti].get("presumed")]
            if caught_by and not caught_by & kept and unrun:
                streams[(ci, wi)] = wrong_stream(runner, f"p{ci}w{wi}k", final, c.p.wrong_solutions[wi], unrun)
    runner.run(list(streams.values()), "validate: wrong solutions the caps lost, on the kept tests")
    for (ci, wi), s in streams.items():
        cases[ci].wrong_runs[wi] = {**cases[ci].wrong_runs[wi], **s.results}


def wrong_stream(runner: Runner, name: str, final: Problem, w: WrongSolution, tests: list[int]) -> Stream:
    """A known-wrong solution's stream: stops at its first failure; smallest input first, but a
    `time_limit_exceeded` one largest first (one limit spent where it is meant to fail, not a slow
    pass on every smaller test before it)."""
    s = runner.stream(name, final, w.language, w.code, tests, 0, stop_at_failure=True)
    if w.label == "time_limit_exceeded":
        s.order.reverse()
    return s


def catch_sets(c: Case) -> dict[int, set[int]]:
    """Per wrong solution that ran: the candidate tests seen to catch it (presumed runs do not count)."""
    return {wi: {ti for ti, r in runs.items() if r["status"] in CATCHES and not r.get("presumed")}
            for wi, runs in c.wrong_runs.items() if c.wrong_status.get(wi) == "ok"}


def reference_failures(c: Case) -> dict[int, set[int]]:
    """Per candidate test: the references that ran (`ok_refs`) and do not pass it, i.e. whose run
    there is not AC at the final limit (too slow there, or outvoted under policy `majority`)."""
    eff, refs = c.judged_limit_s, ok_refs(c)
    votes = {ri: c.vote_runs(ri) for ri in refs}
    return {ti: {ri for ri in refs if ti in votes[ri] and at_limit(votes[ri][ti], eff) != "AC"} for ti in c.candidates}


def measured_failures(c: Case) -> dict[int, set[int]]:
    """As `reference_failures`, from every run (a non-voter's strength runs too): what in-sample TPR
    counts. A non-voter counts as passing a candidate it was not run on; on the kept tests it ran to
    its first failure, so there it is exact."""
    eff, refs = c.judged_limit_s, ok_refs(c)
    runs = {ri: c.ref_runs[(ri, 0)] for ri in refs}
    return {ti: {ri for ri in refs if ti in runs[ri] and at_limit(runs[ri][ti], eff) != "AC"} for ti in c.candidates}


def strength_of(tests: set[int], n_correct: int, ref_fails: dict[int, set[int]],
                catches: dict[int, set[int]]) -> dict[str, Any]:
    """TPR/TNR of a set of candidate tests: the correct solutions (the `n_correct` references that
    ran; no source ships other accepted submissions) passing every one of them, and the known-wrong
    solutions that ran failing at least one (`strength.record`)."""
    failing_refs = set().union(*(ref_fails[ti] for ti in tests))
    return strength.record(correct=n_correct, correct_passing=n_correct - len(failing_refs),
                           incorrect=len(catches), incorrect_failing=sum(bool(s & tests) for s in catches.values()))


def held_out_fields(c: Case, cfg: ValidateConfig) -> dict[str, Any]:
    """`strength_held_out`, `strength_held_out_before_caps` and `held_out` (folds, seed, why there is no
    held-out TPR) of the validation record."""
    why = None if cfg.held_out_folds >= 2 else "held_out_folds < 2"
    h = c.held_out or empty_records(cfg, why or "not measured (rejected before its known-wrong solutions ran)")
    return {"strength_held_out": h["strength"], "strength_held_out_before_caps": h["before_caps"], "held_out": h["info"]}


# --- step 6: the caps -------------------------------------------------------------------------------
def greedy_cover(candidates: list[int], catches: dict[int, set[int]], tests: list[TestCase], limit: int,
                 ref_fails: dict[int, set[int]] | None = None) -> list[int]:
    """Tests that catch every wrong solution the candidates catch, greedily (most newly caught first;
    ties: fewest references newly failing (`ref_fails`: test -> references that do not pass it),
    then public, then larger input, then lower index), at most `limit` of them."""
    ref_fails = ref_fails or {}
    open_ = {w for w, s in catches.items() if s}
    chosen: list[int] = []
    failing: set[int] = set()  # references the chosen tests already fail: failing them again costs nothing

    def rank(ti: int) -> tuple:
        return (gain[ti], -len(ref_fails.get(ti, set()) - failing), tests[ti].kind == "public",
                len(tests[ti].input), -ti)

    while open_ and len(chosen) < limit:
        gain = {ti: sum(ti in catches[w] for w in open_) for ti in candidates if ti not in chosen}
        best = max(gain, key=rank, default=None)
        if best is None or gain[best] == 0:
            break
        chosen.append(best)
        failing |= ref_fails.get(best, set())
        open_ = {w for w in open_ if best not in catches[w]}
    return chosen


@dataclass
class Choice:
    kept: list[int]
    dropped: dict[int, str]  # test index -> count_cap | byte_cap


def choose_tests(tests: list[TestCase], candidates: list[int], cfg: ValidateConfig,
                 catches: dict[int, set[int]] | None = None, ref_fails: dict[int, set[int]] | None = None,
                 tiers: dict[int, str] | None = None) -> Choice:
    """max_tests: the cover, then one test of each group the cover leaves out (`group_representatives`),
    then (`cap_choice: diverse`) the tests bringing input features not yet kept (`diverse_tests`),
    then public tests, then the largest private inputs; then max_total_bytes: drop the largest private
    tests outside the cover and the representatives first, then theirs (never a public test).
    At each step a test some finishing reference fails (`ref_fails`, see `reference_failures`) comes
    after those every reference passes, and is dropped first: it costs TPR. `tiers`: testgen's tier
    of a generated test (`testgen_tiers`), one of the features."""
    ref_fails = ref_fails or {}

    def fails(i: int) -> bool:
        return bool(ref_fails.get(i))

    cover = greedy_cover(candidates, catches or {}, tests, cfg.max_tests, ref_fails)
    diverse = cfg.cap_choice == "diverse"
    cover += group_representatives(tests, candidates, cover, fails, hardest=diverse)  # ungrouped problems: none
    if diverse and len(candidates) > cfg.max_tests:
        cover += diverse_tests(tests, candidates, cover, fails, tiers or {}, cfg.max_tests)
    rest = [i for i in candidates if i not in cover]
    public = sorted((i for i in rest if tests[i].kind == "public"), key=lambda i: (fails(i), i))
    private = sorted((i for i in rest if tests[i].kind != "public"), key=lambda i: (fails(i), -len(tests[i].input), i))
    ranked = cover + public + private
    chosen, dropped = ranked[: cfg.max_tests], dict.fromkeys(ranked[cfg.max_tests:], "count_cap")
    total = sum(test_bytes(tests[i]) for i in chosen)
    droppable = sorted((i for i in chosen if tests[i].kind != "public"),
                       key=lambda i: (i in cover, not fails(i), -test_bytes(tests[i]), i))
    for i in droppable:
        if total <= cfg.max_total_bytes:
            break
        chosen.remove(i)
        dropped[i] = "byte_cap"
        total -= test_bytes(tests[i])
    return Choice(sorted(chosen), dropped)


def group_representatives(tests: list[TestCase], candidates: list[int], chosen: list[int],
                          fails: Callable[[int], bool], hardest: bool = False) -> list[int]:
    """One candidate of each test group that `chosen` has none of (public first, or with `hardest`
    not; then one every reference passes, then the largest input): the caps then leave a group empty
    only where max_tests is smaller than the number of groups, or max_total_bytes drops its test."""
    have = {tests[i].group for i in chosen}
    best: dict[str, int] = {}
    for i in sorted(candidates, key=lambda i: (not hardest and tests[i].kind != "public", fails(i),
                                               -len(tests[i].input), i)):
        group = tests[i].group
        if group is not None and group not in have:
            best.setdefault(group, i)
    return sorted(best.values())


_NUMBER = re.compile(r"(?<![\w.])(-?)(\d+)")
_DIGIT_BUCKETS = (1, 4, 9, 18)  # 1 digit, up to 4, up to 9 (fits int32), up to 18 (int64), more


def input_features(t: TestCase, tier: str | None) -> set[str]:
    """What a test exercises, read off its input alone (so the same for every solution, seen or not):
    its largest number (digits: the int32 / int64 boundaries where overflow bugs live), whether it
    has a negative number or a zero, and its tier (testgen's, else the test's kind). Numbers are read
    from the first 256 kB and the last 64 kB only: enough to tell a large input's values apart, at a
    fixed cost. (Sizes are relative: `diverse_tests` marks the largest and the smallest.)"""
    text = t.input
    feats = {f"tier:{tier or t.kind}"}
    digits, negative, zero = 0, False, False
    sample = text if len(text) <= 1 << 19 else text[: 1 << 18] + " " + text[-(1 << 16):]
    for sign, num in _NUMBER.findall(sample):
        digits = max(digits, len(num.lstrip("0")) or 1)
        negative = negative or (sign == "-" and num.strip("0") != "")
        zero = zero or num.strip("0") == ""
    if digits:
        feats.add(f"digits:{sum(digits > b for b in _DIGIT_BUCKETS)}")
    feats |= {name for name, on in (("negative", negative), ("zero", zero)) if on}
    return feats


def diverse_tests(tests: list[TestCase], candidates: list[int], chosen: list[int], fails: Callable[[int], bool],
                  tiers: dict[int, str], room: int) -> list[int]:
    """Greedily, the candidates every reference passes that bring most input features
    (`input_features`, and being the largest or the smallest input) the chosen tests lack (ties: a
    public test, then the larger input), until none brings a new one or `room` tests are chosen in all: the smallest and the largest inputs, the extreme magnitudes and
    signs and every tier stay, whatever the known-wrong solutions at hand happened to need. A test a
    reference fails is not taken here (it costs TPR): it comes last, as everywhere in the choice."""
    feats = {i: input_features(tests[i], tiers.get(i)) for i in candidates}
    passing = [i for i in candidates if not fails(i)]
    if passing:  # the largest input (time, overflow) and the smallest (edge cases)
        feats[max(passing, key=lambda i: (len(tests[i].input), -i))].add("largest")
        feats[min(passing, key=lambda i: (len(tests[i].input), i))].add("smallest")
    have = set().union(*(feats[i] for i in chosen if i in feats))
    out: list[int] = []
    left = [i for i in passing if i not in chosen]
    while left and len(chosen) + len(out) < room:
        best = max(left, key=lambda i: (len(feats[i] - have), tests[i].kind == "public", len(tests[i].input), -i))
        if not feats[best] - have:
            break
        out.append(best)
        have |= feats[best]
        left.remove(best)
    return out


def testgen_tiers(p: Problem) -> dict[int, str]:
    """{test index: testgen's tier} for the problem's generated tests (meta.testgen provenance)."""
    from microcoder.pipeline.io import content_hash

    rows = ((p.meta or {}).get("testgen") or {}).get("tests") or []
    by_sha = {r.get("input_sha"): str(r.get("tier") or r.get("method")) for r in rows if isinstance(r, dict)}
    if not by_sha:
        return {}
    return {i: by_sha[h] for i, t in enumerate(p.tests)
            if t.kind == "generated" and (h := content_hash(t.input)[:16]) in by_sha}


def group_counts(tests: list[TestCase], kept: list[int]) -> dict[str, dict[str, int]]:
    """Per test group: its tests before validation and those kept (empty for an ungrouped problem)."""
    counts: dict[str, dict[str, int]] = {}
    for t in tests:
        if t.group is not None:
            counts.setdefault(t.group, {"tests_in": 0, "tests_kept": 0})["tests_in"] += 1
    for i in kept:
        if tests[i].group is not None:
            counts[tests[i].group]["tests_kept"] += 1
    return dict(sorted(counts.items()))


def cap_tests(tests: list[TestCase], indices: list[int], cfg: ValidateConfig) -> tuple[list[int], int, int]:
    """The caps without wrong solutions: (kept indices in order, dropped as oversize, dropped by the
    count/total caps)."""
    fitting = [i for i in indices if test_bytes(tests[i]) <= cfg.max_test_bytes]
    choice = choose_tests(tests, fitting, cfg)
    return choice.kept, len(indices) - len(fitting), len(choice.dropped)


# --- step 7: the verdict on one problem ------------------------------------------------------------
Rejection = tuple[str, str | None]  # a reject: (reason, its rejected_by_reason key where not `reason_key(reason)`)


def early_reject(c: Case, cfg: ValidateConfig) -> Rejection | None:
    """A reject that holds whatever the caps and wrong solutions do."""
    n_refs = len(c.p.reference_solutions)
    if n_refs and not ok_refs(c):
        if (why := checker_build_failure(c)) is not None:
            return why, None
        bad = sorted(set(c.ref_status.values()))
        return (f"no reference solution compiled and ran (statuses: {', '.join(bad)})",
                "no reference solution compiled and ran")
    if not n_refs and cfg.unverified == "reject":
        return ("no reference solution to verify the tests (unverified: reject; --set validate.unverified=keep keeps "
                "them, marked unverified)", "no reference solution to verify the tests")
    return None


# How the judge reports a checker (or interactor) program it could not build, on every test as SE
# (evaluator/verdict/checkers.py `prepare`; an interactor's behind "the interactor failed: "): not a
# reference's failure, so its own reason. A bundle (Kattis program directory) "does not build".
_CHECKER_BUILD = ("checker does not compile: ", "checker does not build: ")


def checker_build_failure(c: Case) -> str | None:
    """The reject reason where every reference got SE because the checker or interactor program did
    not compile (with its compiler's first line), else None."""
    if any(st != "SE" for st in c.ref_status.values()):
        return None
    for runs in c.ref_runs.values():
        for r in runs.values():
            diff = str(r.get("diff") or "").removeprefix("the interactor failed: ")
            head = next((h for h in _CHECKER_BUILD if diff.startswith(h)), None)
            if head is not None:
                line = next((x.strip() for x in diff[len(head):].splitlines() if x.strip()), "(no message)")
                program = "interactor" if c.p.checker is not None and c.p.checker.kind == "interactor" else "checker"
                return f"the {program} program did not compile: {line[:300]}"
    return None


def judge_problem(c: Case, cfg: ValidateConfig) -> tuple[Problem, Rejection | None, dict[str, Any], list[int]]:
    """(the problem with its kept tests and `validation` column, the reject or None, the
    validation record, the kept test indices)."""
    p, counts = c.p, Counter(c.classes)
    catches = catch_sets(c)
    choice = c.choice or choose_tests(p.tests, c.candidates, cfg, catches, reference_failures(c), testgen_tiers(p))
    ref_fails = measured_failures(c)  # the same as the choice's where every reference votes
    kept = set(choice.kept)
    reasons = {"broken": "references disagree with the expected output", "ambiguous": "references disagree",
               "nondeterministic": "references' outputs differ between runs",
               "unverified_slow": "too slow for every reference (unverified_slow: drop)"}
    dropped = [{"index": ti, "reason": cls, "why": reasons[cls]} for ti, cls in enumerate(c.classes)
               if cls in reasons and (cls != "unverified_slow" or cfg.unverified_slow == "drop")]
    dropped += [{"index": ti, "reason": "oversize", "why": f"input + output over max_test_bytes={cfg.max_test_bytes}"}
                for ti in c.oversize]
    dropped += [{"index": ti, "reason": why, "why": "max_tests" if why == "count_cap" else "max_total_bytes"}
                for ti, why in choice.dropped.items()]
    dropped.sort(key=lambda d: d["index"])
    ran = sorted(catches)
    caught_full = [w for w in ran if catches[w]]
    caught_kept = [w for w in ran if catches[w] & kept]
    refs = ok_refs(c)
    n_refs = len(p.reference_solutions)
    validation = {
        "status": "verified" if refs else "unverified",
        "tests_in": len(p.tests),
        "tests_valid": counts["valid"],
        "tests_broken": counts["broken"],
        "tests_ambiguous": counts["ambiguous"],
        "tests_nondeterministic": counts["nondeterministic"],
        "tests_unverified": counts["unverified"],
        "tests_unverified_slow": counts["unverified_slow"],
        "tests_oversize": len(c.oversize),
        "tests_capped": len(choice.dropped),
        "tests_kept": len(choice.kept),
        "tests_dropped": dropped,
        "references_total": n_refs,
        "references_ok": len(refs),
        "references_failed_to_run": sum(st in NOT_RUN for st in c.ref_status.values()),
        "references_too_slow": too_slow_counts(c),  # per reference: tests it did not finish in time/memory
        "time_limit": c.limit,
        "wrong_total": len(p.wrong_solutions),
        "wrong_ran": len(ran),
        "wrong_caught_by_candidates": len(caught_full),
        "wrong_caught": len(caught_kept),
        "wrong_lost_to_caps": len(caught_full) - len(caught_kept),
        "wrong_uncaught_labels": sorted(p.wrong_solutions[w].label for w in ran if not catches[w] & kept),
        # TPR/TNR of the kept tests, and of every candidate: the difference is what the caps cost
        "strength": strength_of(kept, len(refs), ref_fails, catches),
        "strength_before_caps": strength_of(set(c.candidates), len(refs), ref_fails, catches),
        # the same on solutions that had no part in the choice: k-fold (validate_heldout.py), held-out first when shown
        **held_out_fields(c, cfg),
    }
    if c.voted:  # only where some references did not vote: other records stay as they were
        validation["references_voting"] = n_refs - len(c.voted)
        validation["references_not_run"] = sum(st == "not_run" for st in c.ref_status.values())
    groups = group_counts(p.tests, choice.kept)
    if groups:  # only where the source groups its tests: other records stay as they were
        validation["test_groups"] = groups
        validation["groups_emptied"] = [g for g, n in groups.items() if n["tests_kept"] == 0]
    out = replace(p, tests=[p.tests[i] for i in choice.kept], time_limit_s=c.final_limit_s,
                  extra={**p.extra, "validation": validation})
    reject = early_reject(c, cfg)
    if reject is None and count_cases(p, choice.kept) < cfg.min_tests:
        reject = (f"only {describe_count(p, choice.kept)} after validation and caps (min_tests={cfg.min_tests}; "
                  f"broken={counts['broken']}, ambiguous={counts['ambiguous']}, unverified_slow={counts['unverified_slow']}, "
                  f"oversize={len(c.oversize)}, nondeterministic={counts['nondeterministic']})",
                  "too few valid tests after validation and caps")
    if reject is None and cfg.min_wrong_caught > 0 and ran and len(caught_kept) < cfg.min_wrong_caught * len(ran):
        reject = (f"weak tests: the kept tests catch {len(caught_kept)} of {len(ran)} known-wrong solutions "
                  f"(min_wrong_caught={cfg.min_wrong_caught:g})", None)
    return out, reject, validation, choice.kept


# --- the steps in order ---------------------------------------------------------------------------
@dataclass
class ValidateResult:
    kept: list[Problem]
    rejects: list[tuple[Problem, str]]  # (the problem as judged, the reason)
    report: list[dict[str, Any]]  # report.parquet rows
    stats: StageStats  # unit problems; figures: tests, references, time limits, wrong solutions, this run
    reject_keys: list[str | None] = field(default_factory=list)  # per reject: its key (`StageContext.reject`)
    time_limits: list[dict[str, Any]] = field(default_factory=list)  # derived limits, measured (time_limits.jsonl)

    def reject(self, p: Problem, reason: str, key: str | None) -> None:
        """Counted by the stage base's rule (`StageContext.reject`): `key`, else the reason's head."""
        self.rejects.append((p, reason))
        self.reject_keys.append(key)
        self.stats.reject(key or reason)


def validate_problems(problems: list[Problem], cfg: ValidateConfig, *, evaluator: EvaluatorConfig | None = None,
                      progress: bool = True) -> ValidateResult:
    """Steps 1-7 on `problems`, judged with `evaluator` (the params' `evaluator:` section; None:
    its defaults) on `cfg.executor`."""
    start = time.monotonic()
    evaluator = evaluator or EvaluatorConfig()
    runnable, aside = set_aside(problems, cfg)
    cases = [Case(p) for p in runnable]
    tally: Counter = Counter()
    this_run = run_programs(cases, cfg, evaluator, progress, tally)
    result = decide(cases, aside, cfg)
    result.stats.figures["this_run"] = {"wall_s": round(time.monotonic() - start, 2), **this_run,
                                        **{f"{role}_runs_{k}": tally[f"{role}_runs_{k}"] for role in ("voters", "non_voters")
                                           for k in ("executed", "cached", "presumed")}}
    # what ran and what was skipped, by role (judge seconds: measured, so never in the problems' records)
    result.stats.figures["reference_runs"] = reference_run_figures(cases, limit_tests)
    return result


def run_programs(cases: list[Case], cfg: ValidateConfig, evaluator: EvaluatorConfig, progress: bool,
                 tally: Counter | None = None) -> dict[str, Any]:
    """Steps 2-5 (references, time limits, votes, wrong solutions, the strength runs) through one
    cache and one judge; returns the run counts (`this_run`), and adds the references' to `tally`
    (voters_runs_ / non_voters_runs_ executed, cached, presumed)."""
    tally = Counter() if tally is None else tally
    try:
        pins = read_pins(cfg.pinned_limits)
    except ValueError as e:
        raise ConfigError(f"validate.pinned_limits: {e}") from None
    cache = ResultCache(cfg.cache_path, max_mb=cfg.cache_max_mb)
    runner = Runner(evaluator, cache, executor=cfg.executor, ray_address=cfg.ray_address,
                    presume_after=cfg.presume_slow_after, progress=progress)
    interrupted = False
    try:
        run_references(cases, cfg, runner, tally, evaluator.timeout_scale, pins)
        run_wrong_solutions(cases, cfg, runner, lambda c: hopeless(c, cfg))
        run_reference_strength(cases, cfg, runner, tally, lambda c: hopeless(c, cfg))
        measure_held_out(cases, cfg, runner, evaluator.timeout_scale, lambda c: hopeless(c, cfg),
                         held_out_steps(tally))
    except KeyboardInterrupt:  # SIGINT / SIGTERM: the runner killed the judges; say what a rerun starts from
        interrupted = True  # the cache's trim is left to the next run: the stage has 5 s to unwind
        raise StageInterrupted(runner.kept()) from None
    finally:
        runner.close()
        cache.close(trim_file=not interrupted)
    return {"runs_executed": runner.executed, "runs_cached": runner.cached, "runs_presumed_too_slow": runner.presumed,
            "cache": cache.figures()}


def held_out_steps(tally: Counter) -> SimpleNamespace:
    """The steps validate_heldout re-runs per fold, handed to it (it never imports this module)."""
    def run_refs(runner: Runner, cases: list[Case], streams: dict[tuple[int, int], Stream], desc: str) -> None:
        run_reference_streams(runner, cases, streams, desc, tally)

    return SimpleNamespace(Case=Case, ok_refs=ok_refs, settle_time_limit=settle_time_limit, vote_tests=vote_tests,
                           choose_tests=choose_tests, reference_failures=reference_failures,
                           testgen_tiers=testgen_tiers, wrong_stream=wrong_stream, strength_stream=strength_stream,
                           run_reference_streams=run_refs)


def hopeless(c: Case, cfg: ValidateConfig) -> bool:
    """Rejected whatever the wrong solutions show: they are not run."""
    return early_reject(c, cfg) is not None or count_cases(c.p, c.candidates) < cfg.min_tests


def count_cases(p: Problem, kept) -> int:
    """What min_tests counts: tests, or the cases in them where a test is a multi-case file (Code
    Jam: `meta.multi_case_tests`): the distinct case numbers of its answer's "Case #i:" lines (a
    number repeated is one case), or, for a test without an answer (an interactive judge makes its
    cases), `meta.cases_per_judge_run`; so that 2 official test sets of 100 cases each are not "2 tests"."""
    if not p.meta.get("multi_case_tests"):
        return len(kept)
    unanswered = p.meta.get("cases_per_judge_run")
    unanswered = unanswered if isinstance(unanswered, int) and unanswered > 0 else 1
    return sum(len({k.lstrip("0") for k in CASE_LINE.findall(p.tests[i].output)}) or unanswered for i in kept)


CASE_LINE = re.compile(r"^Case #(\d+):", re.MULTILINE)


def describe_count(p: Problem, kept) -> str:
    n, cases = len(kept), count_cases(p, kept)
    return f"{n} valid tests" if cases == n else f"{n} valid tests ({cases} cases)"


# rejected_by_reason keys of the problems set aside, by `set_aside`'s kind (not their reasons' heads)
ASIDE_KEYS = {"interactive": "interactive problem without an interactor program",
              "multiple_answers": "multiple answers without a checker program"}


def decide(cases: list[Case], aside: list[tuple[Problem, str, str]], cfg: ValidateConfig) -> ValidateResult:
    """Step 7 on every problem run, plus those set aside: kept problems, rejects, report rows, stats."""
    result = ValidateResult([], [], [], StageStats(unit="problems"))
    validations: list[tuple[Problem, dict[str, Any], bool]] = []
    for c in cases:
        out, reject, validation, kept_idx = judge_problem(c, cfg)
        result.report += report_rows(c, set(kept_idx))
        if c.timing is not None:
            result.time_limits.append(c.timing)
        validations.append((out, validation, reject is None))
        if reject:
            result.reject(out, *reject)
        else:
            result.kept.append(out)
    for p, reason, kind in aside:
        result.reject(p, reason, ASIDE_KEYS[kind])
    stats = result.stats
    stats.read, stats.kept = len(cases) + len(aside), len(result.kept)
    stats.figures = summarise(validations, aside)
    # measured, so kept out of the problems' records (their outputs stay the same from run to run)
    stats.figures["judge_time"] = judge_time_figures([judge_seconds(c) for c in cases])
    stats.figures["tests"]["tests_slow"] = sum(sum(c.slow) for c in cases)  # over slow_fraction of the limit: measured
    stats.figures["unverified_kept"] = sum(p.extra["validation"]["status"] == "unverified" for p in result.kept)
    return result


# --- the stage ----------------------------------------------------------------------------------------
class Validate(Stage):
    """Read problems (a record that is not a usable problem becomes a reject), validate, write
    problems.parquet, rejects.jsonl, report.parquet, time_limits.jsonl (derived limits and what they
    were derived from: measured, so not in the problems), stats.json and settings.json (the judge's
    settings beside the stage's: they decide the verdicts as much as the stage's own)."""

    name = "validate"
    config = ValidateConfig
    evaluator_config = EvaluatorConfig
    input_label = "validate input problems"

    def process(self, problems: list[Problem], ctx: StageContext) -> list[Problem]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from microcoder.pipeline.io import atomic_path

        ctx.evaluator = ctx.evaluator or EvaluatorConfig()  # settings.json records the judge used: its defaults if none given
        result = validate_problems(problems, ctx.cfg, evaluator=ctx.evaluator, progress=ctx.progress)
        for (p, reason), key in zip(result.rejects, result.reject_keys, strict=True):
            ctx.reject(p.id, reason, p, key=key)
        ctx.stats.figures = result.stats.figures
        with atomic_path(ctx.out_dir / "report.parquet", ".parquet") as tmp:
            pq.write_table(pa.Table.from_pylist(result.report, schema=report_schema()), tmp, compression="zstd")
        write_rows(result.time_limits, ctx.out_dir / "time_limits.jsonl")  # measured: `microcoder pin-limits` pins them
        ctx.stats.figures["time_limits"]["pinned"] = sum(t["pinned"] for t in result.time_limits)
        return result.kept
