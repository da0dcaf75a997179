"""Validate's held-out test strength (issue 36): TPR/TNR on solutions that played no part in
choosing the tests, by k-fold cross-validation of validate's own choice.

The in-sample figures (`validation.strength`) measure the kept tests on the very references that
voted on them and set the time limit, and on the known-wrong solutions the caps' cover was fitted
to: with policy `all` every finishing reference passes by construction. Here each problem's
references that ran and known-wrong solutions that ran are dealt into `held_out_folds` folds
(`strength.folds_of`: a seeded order by problem id and content, never by timing). For each fold
the choice is made again without it, by the stage's own rules and functions on the runs already
made (`settle_time_limit`, `vote_tests`, `choose_tests`): the fold's references have no vote and no
say in the limit, its wrong solutions none in the caps. The fold is then measured on the tests so
chosen, at the limit so derived: a held-out reference passes when it is AC on every one; a
held-out wrong solution is caught when it fails one. Summed over the folds, every solution is
measured once, on a choice it did not shape.

The problem's own kept tests are still chosen with every solution (the dataset loses nothing to the
measurement); the held-out figure estimates how that choice does on code it has not seen, a little
pessimistically (each fold's choice sees (k-1)/k of the solutions). A lone reference cannot be held
out (someone must vote): such a problem has no held-out TPR (`held_out.no_tpr`), never 100%.

Runs: the voting references (validate's `vote_references`) already ran on every test, the others
where they vote (tests the voters did not settle, the largest tests timed for a limit) and on the
production kept tests; a held-out one of those also runs on its fold's kept tests, to its first
failure (so its pass/fail there is exact; it counts as passing candidates it never ran, in
`before_caps`). A fold's shadow counts each non-voter's votes and times on the same tests as
production does, so the voters, spread over the folds by the same seeded order, settle the rest.
Known-wrong solutions ran to their first failure on
the production candidates; only what a fold needs is added, each to its first failure: a wrong
solution not yet caught, on the tests a fold makes candidates that production did not (`extra`),
and a held-out one no kept test of its fold is seen to catch, on those kept tests it has not run.
These runs are kept apart from `Case.wrong_runs` (the production figures and report rows are
unchanged by them).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from microcoder.pipeline import strength
from microcoder.pipeline.evaluator.programs import CATCHES, Runner, Stream, at_limit

Case = Any  # validate.Case (not imported: validate imports this module)
ValidateConfig = Any  # validate.ValidateConfig


HELD_OUT = "held_out"  # a reference's status in a fold that holds it out: not `ok`, so it has no say


@dataclass
class Fold:
    """One fold's choice without its solutions."""

    refs: set[int]  # held-out references (indices into reference_solutions)
    wrong: set[int]  # held-out known-wrong solutions
    shadow: Case  # the problem's runs as seen without them: votes, limit, candidates
    kept: list[int] = field(default_factory=list)


def wrong_results(c: Case, wi: int) -> dict[int, dict[str, Any]]:
    """A known-wrong solution's runs, production's and the held-out measurement's together."""
    return {**c.wrong_runs.get(wi, {}), **c.held_out_runs.get(wi, {})}


def catches_at(c: Case, wi: int, limit_s: float, tests: set[int]) -> set[int]:
    """The tests of `tests` seen to catch wrong solution `wi` when its runs are read at `limit_s`
    (a fold's limit is never above the final one its runs were judged at; presumed runs never catch)."""
    return {ti for ti, r in wrong_results(c, wi).items()
            if ti in tests and not r.get("presumed") and at_limit(r, limit_s) in CATCHES}


def make_folds(c: Case, cfg: ValidateConfig, timeout_scale: float, steps: Any) -> list[Fold]:
    Case, ok_refs, settle_time_limit, vote_tests = steps.Case, steps.ok_refs, steps.settle_time_limit, steps.vote_tests
    p = c.p
    refs = ok_refs(c)
    wrong = sorted(wi for wi, st in c.wrong_status.items() if st == "ok")
    ref_folds = strength.folds_of(cfg.held_out_seed, p.id, [(p.reference_solutions[ri].language,
                                                             p.reference_solutions[ri].code) for ri in refs],
                                  cfg.held_out_folds, keep_one=True)
    wrong_folds = strength.folds_of(cfg.held_out_seed, p.id, [(p.wrong_solutions[wi].language,
                                                               p.wrong_solutions[wi].code) for wi in wrong],
                                    cfg.held_out_folds)
    folds = []
    for f in range(max(cfg.held_out_folds, 0)):
        out_refs = {ri for ri, k in zip(refs, ref_folds, strict=True) if k == f}
        out_wrong = {wi for wi, k in zip(wrong, wrong_folds, strict=True) if k == f}
        if not out_refs and not out_wrong:
            continue
        status = {ri: HELD_OUT if ri in out_refs else st for ri, st in c.ref_status.items()}
        # non-voters (validate.vote_references) vote and are timed on the same tests as in production
        shadow = Case(p, ref_runs=c.ref_runs, ref_status=status, voted=c.voted, timed=c.timed)
        settle_time_limit(shadow, cfg, timeout_scale)  # the fold's references alone set its limit...
        if shadow.judged_limit_s > c.judged_limit_s:  # (a pinned final limit: wrong runs were cut there)
            shadow.final_limit_s, shadow.judged_limit_s = c.final_limit_s, c.judged_limit_s
        vote_tests(shadow, cfg)  # ...and vote
        folds.append(Fold(out_refs, out_wrong, shadow))
    return folds


def measure_held_out(cases: list[Case], cfg: ValidateConfig, runner: Runner, timeout_scale: float,
                     skip, steps: Any) -> None:
    """Every case's folds (`Case.held_out`), with the runs they need (see the module's docstring).
    `steps`: validate's own steps and `Case` (validate.HELD_OUT_STEPS), handed in so that this
    module never imports validate, which calls it."""
    choose_tests, reference_failures = steps.choose_tests, steps.reference_failures
    testgen_tiers, wrong_stream = steps.testgen_tiers, steps.wrong_stream

    if cfg.held_out_folds < 2:
        return
    todo = [c for c in cases if not skip(c)]
    folds = {id(c): make_folds(c, cfg, timeout_scale, steps) for c in todo}
    # 1. a wrong solution not yet caught, on candidates a fold has that production had not
    streams: dict[tuple[int, int], Stream] = {}
    for ci, c in enumerate(todo):
        extra = sorted(set().union(*(f.shadow.candidates for f in folds[id(c)])) - set(c.candidates))
        if not (extra and cfg.run_wrong_solutions):
            continue
        final = replace(c.p, time_limit_s=c.final_limit_s)
        for wi, st in c.wrong_status.items():
            if st == "ok" and not catches_at(c, wi, c.judged_limit_s, set(c.wrong_runs[wi])):
                streams[(ci, wi)] = wrong_stream(runner, f"p{ci}w{wi}h", final, c.p.wrong_solutions[wi], extra)
    _run(runner, todo, streams, "validate: wrong solutions on tests a held-out fold adds")
    # 2. each fold's choice; a held-out wrong solution its kept tests are not seen to catch runs on them,
    # and a held-out reference that did not vote on every test runs on them (it ran wherever it voted)
    streams = {}
    ref_streams: dict[tuple[int, int], Stream] = {}
    for ci, c in enumerate(todo):
        final = replace(c.p, time_limit_s=c.final_limit_s)
        tiers = testgen_tiers(c.p)
        for f in folds[id(c)]:
            s = f.shadow
            cands = set(s.candidates)
            training = {wi: catches_at(c, wi, s.judged_limit_s, cands) for wi, st in c.wrong_status.items()
                        if st == "ok" and wi not in f.wrong}
            f.kept = choose_tests(c.p.tests, s.candidates, cfg, training, reference_failures(s), tiers).kept
            for ri in sorted(f.refs & set(c.voted)):  # a held-out non-voter: to its first failure on them
                c.strength_tests[ri] = c.strength_tests.get(ri, set()) | set(f.kept)
                if (rs := steps.strength_stream(runner, f"p{ci}r{ri}h", c, ri, f.kept, s.judged_limit_s)) is not None:
                    ref_streams[(ci, ri)] = rs
            for wi in sorted(f.wrong):
                ran = wrong_results(c, wi)
                unrun = [ti for ti in f.kept if ti not in ran or ran[ti].get("presumed")]
                if not catches_at(c, wi, s.judged_limit_s, set(f.kept)) and unrun:  # in one fold only
                    streams[(ci, wi)] = wrong_stream(runner, f"p{ci}w{wi}k", final, c.p.wrong_solutions[wi], unrun)
    _run(runner, todo, streams, "validate: held-out wrong solutions on their fold's kept tests")
    steps.run_reference_streams(runner, todo, ref_streams, "validate: held-out references on their fold's kept tests")
    for c in todo:
        c.held_out = held_out_records(c, folds[id(c)], cfg)


def _run(runner: Runner, cases: list[Case], streams: dict[tuple[int, int], Stream], desc: str) -> None:
    runner.run(list(streams.values()), desc)
    for (ci, wi), s in streams.items():
        c = cases[ci]
        c.held_out_runs[wi] = {**c.held_out_runs.get(wi, {}), **s.results}


def held_out_records(c: Case, folds: list[Fold], cfg: ValidateConfig) -> dict[str, Any]:
    """The held-out records (kept tests and every candidate of each fold) summed over the folds."""
    kept, before = [], []
    for f in folds:
        s = f.shadow
        eff = s.judged_limit_s
        for tests, out in ((set(f.kept), kept), (set(s.candidates), before)):
            passing = sum(passes(c.ref_runs[(ri, 0)], tests, eff) for ri in f.refs)
            failing = sum(bool(catches_at(c, wi, eff, tests)) for wi in f.wrong)
            out.append(strength.record(len(f.refs), passing, len(f.wrong), failing))
    refs = sum(st == "ok" for st in c.ref_status.values())
    return {"strength": strength.add(kept), "before_caps": strength.add(before),
            "info": {"folds": cfg.held_out_folds, "seed": cfg.held_out_seed,
                     "no_tpr": "one reference that ran: it cannot be held out" if refs == 1 else (
                         "no reference that ran" if refs == 0 else None)}}


def passes(runs: dict[int, dict[str, Any]], tests: set[int], limit_s: float) -> bool:
    """No run of `tests` fails at `limit_s`. A reference that voted ran every test; one that did not
    ran a fold's kept tests to its first failure (exact there), and counts as passing candidates it
    was not run on."""
    return not any(ti in runs and at_limit(runs[ti], limit_s) != "AC" for ti in tests)


def empty_records(cfg: ValidateConfig, why: str | None) -> dict[str, Any]:
    """Where nothing was held out (held_out_folds < 2, a problem rejected before its wrong solutions ran)."""
    return {"strength": strength.record(), "before_caps": strength.record(),
            "info": {"folds": cfg.held_out_folds, "seed": cfg.held_out_seed, "no_tpr": why}}
