"""How strong a problem's tests are, measured on known solutions, and the wrong-solution-guided
search for tests that make them stronger (issue 25; CodeContests-O's feedback loop, without a model).

The solutions (`solutions_of`): the references that run (the *correct* side of TPR), the known-wrong
solutions the source ships and mutants of the first Python reference (the *incorrect* side: two
separate TNRs, never mixed). `measure` judges them on the problem's own tests, then the ones those
do not catch on the generated tests. A known-wrong solution or mutant that passes both *survives*.

`search` then looks for inputs that separate survivors from the references, per problem, for up to
`search_rounds` rounds within `search_budget_s` reference CPU seconds:

- round 1: fresh inputs of the random and hack tiers (functional) or the generator with new seeds
  (stdio);
- later rounds: local mutations (`mutate_input`) of the inputs already known valid: the last
  round's candidates the references agreed on and the problem's tests, taken alternately from the
  smallest and the largest (stdio: the generator with new seeds again). "Closest to separating" is
  not observable deterministically: a survivor passes every test it is judged on, and the one
  graded signal, its running time, changes from machine to machine; the seeds are instead the
  inputs whose neighbourhoods hold the bugs that survive (boundaries in the small ones, time in
  the large ones), so that the same seed gives the same search anywhere.

A candidate goes through the same gates as every generated input (validators, expected output by
the references' agreement); the survivors run on the ones that remain, and the tests are chosen
greedily: the one that fails most open survivors first, ties to the earlier candidate, until none
separates one more or `search_max_tests` tests were added. A chosen test is tier `hack` with its
`search_round` in the provenance (method `search`; `generator` says where it came from: a plan
label, the generator's label, `mutation of <parent input_sha>`). Every candidate not chosen is
counted with its reason.

`strength_records` turns it all into `microcoder.pipeline.strength` records: before (own tests) and after (own +
generated + searched), for known-wrong solutions and mutants.

Held out (issue 36): a seeded share of each kind (`held_out`: the last of `held_out_folds` folds of
`strength.folds_of`, by problem id and code) plays no part: its references do not vote on outputs
(`voters`), its wrong solutions and mutants are not hunted. They are judged like the others on
every test, the search's included, and reported apart (`held_out` records; the search's
`held_out_*` counts): the figure on code the tests were not fitted to.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from microcoder.pipeline import strength
from microcoder.pipeline.io import content_hash
from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.testgen.functional import Candidate, case_seed, generate_inputs, mutate_input
from microcoder.pipeline.testgen.mutants import make_mutants
from microcoder.pipeline.testgen.runner import (
    FAILS,
    Expected,
    judge,
    judge_each,
    reference_outputs,
    references_of,
)
from microcoder.pipeline.testgen.space import Space
from microcoder.pipeline.testgen.stdio import Generator, Plan, keep_valid, run_generators, tier_plan

if TYPE_CHECKING:
    from microcoder.pipeline.testgen.config import TestgenConfig

NOT_RUN = ("CE", "SE")  # the solution did not build, or our harness failed: not measured
INCORRECT = ("known_wrong", "mutant")


@dataclass
class Solution:
    role: str  # reference | known_wrong | mutant
    label: str
    language: str
    code: str
    held_out: bool = False  # measured only: no vote on outputs, not hunted by the search


@dataclass
class Kept:
    """A generated test: its candidate, expected output and how many references agreed on it."""

    candidate: Candidate
    output: str
    agreeing: int
    search_round: int | None = None
    voted: frozenset[tuple[str, str]] = frozenset()  # (language, code) of the references that agreed on it


@dataclass
class Trial:
    """One problem's solutions on its tests, and the search for tests that fail its survivors."""

    key: str  # unique within a batch
    problem: Problem  # with its own tests
    generated: list[TestCase]
    solutions: list[Solution]
    space: Space | None = None  # functional: where search inputs are drawn
    generator: Generator | None = None  # stdio: what writes search inputs
    validators: list = field(default_factory=list)  # stdio: what every search input must pass
    ran: set[int] = field(default_factory=set)  # solutions that built and ran (the measured ones)
    failed_own: set[int] = field(default_factory=set)
    failed_new: dict[int, str] = field(default_factory=dict)  # solution -> "generated" | "search"
    searched: list[Kept] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    dropped: Counter = field(default_factory=Counter)  # search candidates not added, by why
    spent_s: float = 0.0  # reference seconds the search used
    tried: list[str] = field(default_factory=list)  # the last round's inputs the references agreed on
    voted_on_all: frozenset[tuple[str, str]] = frozenset()  # references whose own outputs every generated test holds
    passed_by_vote: int = 0  # references not judged again on the generated tests (`measure`)

    def survivors(self, held_out: bool = False) -> list[int]:
        """The incorrect solutions passing every test so far: those the search hunts, or (`held_out`)
        the held-out ones, which it never sees."""
        return [i for i in sorted(self.ran) if self.solutions[i].role in INCORRECT
                and self.solutions[i].held_out == held_out and i not in self.failed_own and i not in self.failed_new]

    def generated_bytes(self) -> int:
        return sum(len(x.input.encode()) for x in self.generated) + sum(_size(k.candidate) for k in self.searched)

    def inputs(self) -> set[str]:
        return {t.input for t in self.problem.tests + self.generated} | {k.candidate.input for k in self.searched}


def held_out(p: Problem, programs: list[tuple[str, str]], folds: int, seed: int, keep_one: bool = False) -> list[bool]:
    """Per (language, code), whether it is held out: in the last of `folds` seeded folds (at most 1/k of
    them; with `keep_one`, references, never a lone one: someone must vote)."""
    return [f == folds - 1 for f in strength.folds_of(seed, p.id, programs, folds, keep_one)]


def voters(p: Problem, folds: int, seed: int) -> Problem:
    """The problem with only the references that vote on generated outputs (the held-out ones removed)."""
    refs = references_of(p)
    out = held_out(p, [(r.language, r.code) for r in refs], folds, seed, keep_one=True)
    if not any(out):
        return p
    kept = [r for r, h in zip(refs, out, strict=True) if not h]
    return replace(p, reference_solutions=[r for r in p.reference_solutions if r not in refs or r in kept])


def voted_by(p: Problem, e: Expected) -> frozenset[tuple[str, str]]:
    """(language, code) of the references of `p` (the voting problem) that agreed on `e`."""
    refs = references_of(p)
    return frozenset((refs[k].language, refs[k].code) for k in e.voters)


def solutions_of(p: Problem, mutants: int, seed: int, folds: int = 0, held_seed: int = 0) -> list[Solution]:
    """The references that run, the known-wrong solutions that can run (Python only for functional
    problems, as the evaluator judges them), and up to `mutants` mutants of the first Python reference;
    a seeded share of each kind held out (`held_out`, `folds` < 2: none)."""
    refs = [Solution("reference", f"reference {i}", r.language, r.code) for i, r in enumerate(references_of(p))]
    wrong = [Solution("known_wrong", w.label, w.language, w.code) for w in p.wrong_solutions
             if p.style == "stdio" or w.language == "python"]
    first = next((r for r in p.reference_solutions if r.language == "python"), None)
    made = make_mutants(first.code, mutants, case_seed(seed, p.id, -1)) if first and mutants > 0 else []
    muts = [Solution("mutant", m.label, "python", m.code) for m in made]
    for group, keep_one in ((refs, True), (wrong, False), (muts, False)):
        for s, h in zip(group, held_out(p, [(s.language, s.code) for s in group], folds, held_seed, keep_one), strict=True):
            s.held_out = h
    return refs + wrong + muts


# --- the first pass ---------------------------------------------------------------------------------
def measure(evaluator, trials: list[Trial]) -> None:
    """Every solution on the problem's own tests (first failure), then the ones still passing on the
    generated tests. A solution's first judging says whether it ran at all (CE / SE: not measured)."""
    problems, first = {}, []
    for t in trials:
        problems[f"{t.key}#own"] = t.problem
        problems[f"{t.key}#gen"] = replace(t.problem, tests=t.generated)
        suite = "own" if t.problem.tests else "gen"
        first += [(f"{t.key}#{suite}#{i}", f"{t.key}#{suite}", s.language, s.code) for i, s in enumerate(t.solutions)]
    status = judge(evaluator, problems, first)
    second = []
    for t in trials:
        for i in range(len(t.solutions)):
            s = status.get(f"{t.key}#own#{i}") if t.problem.tests else status.get(f"{t.key}#gen#{i}")
            if s is None or s in NOT_RUN:
                continue
            t.ran.add(i)
            if not t.problem.tests:
                if s != "AC":
                    t.failed_new[i] = "generated"
            elif s != "AC":
                t.failed_own.add(i)
            elif _voted_on_all(t, i):
                t.passed_by_vote += 1
            elif t.generated:
                second.append((f"{t.key}#gen#{i}", f"{t.key}#gen", t.solutions[i].language, t.solutions[i].code))
    status = judge(evaluator, problems, second)
    for t in trials:
        for i in t.ran:
            if status.get(f"{t.key}#gen#{i}") in FAILS:
                t.failed_new[i] = "generated"


def _voted_on_all(t: Trial, i: int) -> bool:
    """A voting reference whose own output, within slow_fraction of the limit, is every generated
    test's expected output passes them by construction: judging it again there cost a quarter of
    testgen's program time and could only repeat it."""
    s = t.solutions[i]
    return bool(t.generated) and s.role == "reference" and not s.held_out and (s.language, s.code) in t.voted_on_all


def measure_searched(evaluator, trials: list[Trial]) -> None:
    """The references still passing, on the searched tests: one failing a searched test lowers the
    TPR after; and the held-out wrong solutions and mutants still passing, which the search never saw
    (the hunted ones were judged on the searched tests in the search already)."""
    problems, subs = {}, []
    for t in trials:
        if not t.searched:
            continue
        problems[t.key] = replace(t.problem, tests=[TestCase(k.candidate.input, k.output, "generated") for k in t.searched])
        subs += [(f"{t.key}#{i}", t.key, t.solutions[i].language, t.solutions[i].code) for i in sorted(t.ran)
                 if (t.solutions[i].role == "reference" or t.solutions[i].held_out)
                 and i not in t.failed_own and i not in t.failed_new]
    status = judge(evaluator, problems, subs)
    for t in trials:
        for i in t.ran:
            if status.get(f"{t.key}#{i}") in FAILS:
                t.failed_new[i] = "search"


# --- the search -------------------------------------------------------------------------------------
def search(evaluator, trials: list[Trial], cfg: TestgenConfig) -> None:
    """Up to `cfg.search_rounds` rounds over the trials that still have survivors, budget and room."""
    for rnd in range(1, cfg.search_rounds + 1):
        active = [t for t in trials if t.survivors() and (t.space is not None or t.generator is not None)
                  and t.spent_s < cfg.search_budget_s and len(t.searched) < cfg.search_max_tests]
        if not active:
            return
        proposed = propose(evaluator, active, rnd, cfg)
        expected = reference_outputs(evaluator, [(t.key, t.problem, [c.input for c in proposed[t.key]]) for t in active],
                                     cfg.slow_fraction, cfg.max_output_bytes)
        agreed = {t.key: _agreed(t, proposed[t.key], expected[t.key]) for t in active}
        kills = _kills(evaluator, active, agreed)
        for t in active:
            _choose(t, rnd, agreed[t.key], kills[t.key], cfg)


def propose(evaluator, trials: list[Trial], rnd: int, cfg: TestgenConfig) -> dict[str, list[Candidate]]:
    """{trial key: candidate inputs for round `rnd`} (stdio ones already through the validators)."""
    out = {t.key: _functional_proposals(t, rnd, cfg) for t in trials if t.space is not None}
    stdio = [t for t in trials if t.space is None]
    if stdio:
        plans = [Plan(t.key, t.problem, t.generator, _search_runs(cfg, t.problem.id, rnd), t.inputs()) for t in stdio]
        made = run_generators(evaluator, plans, cfg.max_input_bytes)
        for t in stdio:
            t.dropped.update(made[t.key][1])
        valid = keep_valid(evaluator, [(t.problem, t.validators, made[t.key][0]) for t in stdio])
        for t, (cands, dropped) in zip(stdio, valid, strict=True):
            t.dropped.update(dropped)
            out[t.key] = cands
    return out


def search_seed(seed: int, rnd: int) -> int:
    """The seed of round `rnd`'s draws: derived from the stage's seed, distinct from the first pass's."""
    return case_seed(seed, "search", rnd)


def _search_runs(cfg: TestgenConfig, problem_id: str, rnd: int) -> list[tuple[str, int]]:
    base = search_seed(cfg.seed, rnd)
    return [(tier, case_seed(base, problem_id, i) % 10**9) for i, (tier, _) in enumerate(tier_plan(cfg.search_inputs))]


def _functional_proposals(t: Trial, rnd: int, cfg: TestgenConfig) -> list[Candidate]:
    existing = t.inputs()
    if rnd == 1:
        return generate_inputs(t.space, t.problem.id, cfg.search_inputs, seed=search_seed(cfg.seed, rnd),
                               max_elements=cfg.max_elements, max_input_bytes=cfg.max_input_bytes, existing=existing,
                               max_problem_bytes=cfg.max_problem_bytes, tiers=("random", "hack"))
    seeds = _mutation_seeds(t.tried + [x.input for x in t.problem.tests + t.generated])
    if not seeds:
        return []
    rng = random.Random(case_seed(search_seed(cfg.seed, rnd), t.problem.id, 0))
    out: list[Candidate] = []
    for i in range(cfg.search_inputs):
        parent = seeds[i % len(seeds)]
        text = mutate_input(t.space, parent, rng, cfg.max_input_bytes)
        if text is None or text in existing:
            t.dropped["mutation gave no new valid input"] += 1
            continue
        existing.add(text)
        out.append(Candidate(text, "search", f"mutation of {content_hash(parent)[:16]}", search_seed(cfg.seed, rnd),
                             tier="hack"))
    return out


def _mutation_seeds(inputs: list[str]) -> list[str]:
    """Distinct inputs, alternately the smallest and the largest left (deterministic)."""
    by_size = sorted(dict.fromkeys(inputs), key=lambda x: (len(x), x))
    out = []
    while by_size:
        out.append(by_size.pop(0))
        if by_size:
            out.append(by_size.pop())
    return out


def _agreed(t: Trial, cands: list[Candidate], expected: list[Expected]) -> list[tuple[Candidate, Expected]]:
    out = []
    for c, e in zip(cands, expected, strict=True):
        t.spent_s += e.time_s
        if e.output is None:
            t.dropped[e.reason] += 1
        else:
            out.append((c, e))
    t.tried = [c.input for c, _ in out]
    return out


def _kills(evaluator, trials: list[Trial], agreed: dict[str, list[tuple[Candidate, Expected]]]) -> dict[str, list[set[int]]]:
    """{trial key: per agreed candidate, the survivors it fails}: every survivor on every candidate
    (the whole matrix, for the greedy choice; at most survivors x `search_inputs` runs a round)."""
    problems, subs = {}, []
    for t in trials:
        if not agreed[t.key]:
            continue
        problems[t.key] = replace(t.problem, tests=[TestCase(c.input, e.output, "generated") for c, e in agreed[t.key]])
        subs += [(f"{t.key}#{i}", t.key, t.solutions[i].language, t.solutions[i].code) for i in t.survivors()]
    runs = judge_each(evaluator, problems, subs)
    out = {}
    for t in trials:
        sets: list[set[int]] = [set() for _ in agreed[t.key]]
        for i in t.survivors():
            for ci, run in enumerate(runs.get(f"{t.key}#{i}", [])):
                if run.status in FAILS:
                    sets[ci].add(i)
        out[t.key] = sets
    return out


def _choose(t: Trial, rnd: int, agreed: list[tuple[Candidate, Expected]], kills: list[set[int]], cfg: TestgenConfig) -> None:
    """Greedy: the candidate failing most open survivors first (ties: the earlier), while one fails
    a survivor still open and the problem has room (`search_max_tests`, `max_problem_bytes`)."""
    before = t.survivors()
    open_, chosen = set(before), []
    room = cfg.max_problem_bytes - t.generated_bytes()
    while open_ and len(t.searched) + len(chosen) < cfg.search_max_tests:
        gain = [len(k & open_) if ci not in chosen and _size(agreed[ci][0]) <= room else 0
                for ci, k in enumerate(kills)]
        best = max(range(len(gain)), key=lambda ci: (gain[ci], -ci), default=None)
        if best is None or gain[best] == 0:
            break
        chosen.append(best)
        room -= _size(agreed[best][0])
        for i in kills[best] & open_:
            t.failed_new[i] = "search"
        open_ -= kills[best]
    for ci, (c, e) in enumerate(agreed):
        if ci in chosen:
            t.searched.append(Kept(replace(c, method="search", tier="hack"), e.output, e.agreeing, rnd,
                                   voted_by(t.problem, e)))
        elif not kills[ci]:
            t.dropped["separates no survivor"] += 1
        elif not kills[ci] & open_:
            t.dropped["its survivors are failed by a chosen test"] += 1
        else:
            t.dropped["no room (search_max_tests, max_problem_bytes)"] += 1
    t.rounds.append({"round": rnd, "survivors_before": len(before), "killed": len(before) - len(open_),
                     "tests_added": len(chosen), "candidates": len(agreed)})


def _size(c: Candidate) -> int:
    return len(c.input.encode())


# --- the figures ------------------------------------------------------------------------------------
def strength_records(t: Trial) -> dict[str, Any]:
    """{"before": {"known_wrong": rec, "mutants": rec}, "after": {...}, "held_out": {"before": ..,
    "after": ..}} (`microcoder.pipeline.strength` records): before = the problem's own tests, after = own +
    generated + searched; the top-level ones over the solutions that chose (voting references, hunted
    wrong solutions and mutants), `held_out` over the others."""

    def rec(role: str, after: bool, held: bool) -> dict[str, Any]:
        failed = t.failed_own | (set(t.failed_new) if after else set())
        refs = [i for i in t.ran if t.solutions[i].role == "reference" and t.solutions[i].held_out == held]
        wrong = [i for i in t.ran if t.solutions[i].role == role and t.solutions[i].held_out == held]
        return strength.record(correct=len(refs), correct_passing=sum(i not in failed for i in refs),
                               incorrect=len(wrong), incorrect_failing=sum(i in failed for i in wrong))

    def sides(held: bool) -> dict[str, Any]:
        return {side: {"known_wrong": rec("known_wrong", side == "after", held),
                       "mutants": rec("mutant", side == "after", held)} for side in ("before", "after")}

    return {**sides(False), "held_out": sides(True)}


def mutant_kills(t: Trial) -> dict[str, Any] | None:
    """The mutant figures as before issue 25 (the card reads them): killed by the problem's own tests,
    by own + generated (+ searched), and the labels of those that survived everything."""
    ms = [i for i in sorted(t.ran) if t.solutions[i].role == "mutant"]
    if not ms:
        return None
    return {"mutants": len(ms), "killed_by_examples": sum(i in t.failed_own for i in ms),
            "killed_with_generated": sum(i in t.failed_own or i in t.failed_new for i in ms),
            "killed_by_search": sum(t.failed_new.get(i) == "search" for i in ms),
            "survivors": [t.solutions[i].label for i in ms if i not in t.failed_own and i not in t.failed_new][:8]}


def search_record(t: Trial, survivors_at_start: int, held_out_at_start: int = 0) -> dict[str, Any]:
    """The search's rounds on the survivors it hunted, and what its tests did to the held-out
    survivors it never saw (`held_out_*`: the honest measure of the search)."""
    left = len(t.survivors(held_out=True))
    return {"survivors_at_start": survivors_at_start, "rounds": t.rounds, "survivors_left": len(t.survivors()),
            "held_out_survivors_at_start": held_out_at_start, "held_out_killed_by_search": held_out_at_start - left,
            "held_out_survivors_left": left,
            "survivors_left_labels": [t.solutions[i].label for i in t.survivors()][:8],
            "reference_s": round(t.spent_s, 3), "inputs_dropped_by_reason": dict(sorted(t.dropped.items()))}
