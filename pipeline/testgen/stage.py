"""Testgen stage: add generated tests to problems that have a reference solution and fewer tests
than `target_tests`; pass every other problem through unchanged. The rules and figures are in
docs/testgen.md. Interactive problems (marked so, or judged by an interactor) pass through with
reason `interactive`: a generated expected output is a reference's stdout, which an interactive
run does not have. A generated test of a problem whose tests are grouped gets group "generated"
(`generated_group`).

Per problem: candidate inputs in tiers (edge, random, max, hack) within a per-problem byte budget
(functional: from the signature and the Constraints section, checked against the parsed
constraints; stdio: from a generator program run in the sandbox, checked by every input validator
the problem ships and the generator's own); expected outputs by the agreement of the references
that finish in the sandbox (an input on which a reference crashes, on which none finishes, or on
which the finishing ones disagree is dropped; one resting on a single reference is marked). Then
the problem's known-wrong solutions and mutants of its reference are judged on its own tests and
on the generated ones, the wrong-solution-guided search (`microcoder.pipeline.testgen.search`) looks for
tests that fail the survivors, and TPR / TNR before and after go into the report (per problem)
and stats.json (totals, per source, per difficulty). Each generated test's provenance (method,
tier, generator, seed, input hash, references agreeing, search round) goes into `meta["testgen"]`.

Runs go through the judge of the params' `evaluator:` section (`make_evaluator`, local or Ray per
`executor`), whose settings that can change a verdict are part of the cache key. Results are
cached per problem by content hash (`problem_cache`: the evaluator's `ResultCache`, one SQLite
table), so a killed run resumes where it stopped and a rerun with the same inputs and params
re-executes nothing; the program runs behind them are cached per run in the same file
(`microcoder.pipeline.evaluator.programs.run_outputs`: the cache validate's runs use). `Testgen` is the stage: read
(tolerantly), generate, write problems, rejects, report and stats.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from tqdm import tqdm

from microcoder.pipeline import strength
from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.evaluator.programs import CachedEvaluator, ResultCache
from microcoder.pipeline.evaluator.verdict_key import verdict_key
from microcoder.pipeline.io import content_hash
from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.sources.judging import is_interactive
from microcoder.pipeline.stage import Stage, StageContext, StageStats, settings_record
from microcoder.pipeline.testgen import search as hunt
from microcoder.pipeline.testgen.config import TestgenConfig
from microcoder.pipeline.testgen.functional import Candidate, case_seed, example_values, generate_inputs
from microcoder.pipeline.testgen.runner import reference_outputs
from microcoder.pipeline.testgen.search import Kept, Trial
from microcoder.pipeline.testgen.space import UNIQUE_ANSWER, UNMODELLED, Space
from microcoder.pipeline.testgen.stdio import (
    Generator,
    Plan,
    authored_generators,
    input_validators,
    keep_valid,
    model_generators,
    run_generators,
    tier_plan,
)
from microcoder.pipeline.testgen.types import Unsupported, signature_of

_BLOCKED = {UNIQUE_ANSWER, UNMODELLED}  # a space that draws nothing, and why (testgen.space)
VERSION = "15"  # bump when generation changes: cached results of older versions are not reused


def judge_config(cfg: TestgenConfig, evaluator: EvaluatorConfig | None) -> EvaluatorConfig:
    """The evaluator section, keeping whole outputs: a reference's output becomes a test's expected
    output, and a generator's output its input."""
    ev = evaluator or EvaluatorConfig()
    return replace(ev, keep_output_bytes=max(ev.keep_output_bytes, cfg.max_output_bytes, cfg.max_input_bytes) + 1)


# the params that decide a problem's generated tests (the executor, batch size and cache path do not)
KNOBS = ("target_tests", "seed", "max_elements", "max_input_bytes", "max_problem_bytes", "max_output_bytes",
         "overgenerate", "slow_fraction", "time_budget_s", "mutants", "search_rounds", "search_inputs",
         "search_budget_s", "search_max_tests", "held_out_folds", "held_out_seed", "unmodelled_constraints")


def problem_key(p: Problem, cfg: TestgenConfig, generator: Generator | None, evaluator: EvaluatorConfig) -> str:
    """What decides this problem's generated tests: its content (its known-wrong solutions and input
    validators too), the generation params and the judge's code and settings (`verdict_key`)."""
    knobs = {k: getattr(cfg, k) for k in KNOBS}
    knobs["evaluator"] = verdict_key(evaluator)
    return content_hash(VERSION, p.id, p.style, p.statement, p.entry_point or "", p.starter_code or "",
                json.dumps([[t.input, t.output] for t in p.tests]),
                json.dumps([[r.language, r.code] for r in p.reference_solutions]),
                json.dumps([[w.language, w.code, w.label] for w in p.wrong_solutions]),
                json.dumps(p.meta.get("input_validators"), sort_keys=True),
                json.dumps(p.checker.__dict__ if p.checker else None, sort_keys=True),
                repr(p.time_limit_s), repr(p.memory_limit_mb), json.dumps(knobs, sort_keys=True),
                json.dumps(generator.__dict__ if generator else None, sort_keys=True))


def problem_cache(cfg: TestgenConfig) -> ResultCache:
    """Generated tests per problem (`problem_key` -> the problem's record), in the evaluator's result
    cache (`ResultCache`, table `problems`). The program runs behind them are cached per run in the
    same file (table `runs`, through `CachedEvaluator`: the key scheme validate's runs use), so a
    batch cut short by an interrupt, or a problem whose params changed, runs again only the programs
    on tests not judged before. This table stays beside them because a problem's runs depend on one
    another's results (expected outputs decide what the known solutions and the search run on, each
    search round on the rounds before): one hit replaces the drawing of inputs, the agreement and
    the search at once."""
    return ResultCache(cfg.cache_path, table="problems", max_mb=cfg.cache_max_mb)


@dataclass
class TestgenResult:
    __test__ = False
    kept: list[Problem]
    report: list[dict[str, Any]]
    stats: StageStats  # unit problems: every problem read is kept (augmented or passed through)


def skip_reason(p: Problem, cfg: TestgenConfig, generators: dict[str, Generator]) -> str | None:
    """Why a problem passes through without generated tests (None: generate)."""
    if len(p.tests) >= cfg.target_tests:
        return "enough tests already"
    if not p.reference_solutions:
        return "no reference solution"
    if is_interactive(p):  # an expected output from a reference's stdout means nothing there
        return "interactive"
    if p.style == "functional":
        if not any(r.language == "python" for r in p.reference_solutions):
            return "no python reference (functional problems run python)"
        return None
    if p.id not in generators:
        return "stdio without a generator program"
    return None


@dataclass
class _Work:
    """One problem's generation in flight."""

    problem: Problem
    key: str
    need: int
    candidates: list[Candidate] = field(default_factory=list)
    generator: Generator | None = None
    space: Space | None = None  # functional: the input space (the search draws from it too)
    validators: list = field(default_factory=list)  # stdio: every input must pass each
    dropped: Counter = field(default_factory=Counter)
    info: dict[str, Any] = field(default_factory=dict)


def _functional_candidates(w: _Work, cfg: TestgenConfig) -> None:
    p = w.problem
    ref = next(r for r in p.reference_solutions if r.language == "python")
    raw = [[json.loads(x) for x in t.input.split("\n") if x.strip()] for t in p.tests if _json_lines(t.input)]
    try:
        sig = signature_of(p.entry_point or "", p.starter_code, ref.code, raw)
    except Unsupported as e:
        w.info["unsupported"] = str(e)
        return
    w.space = Space(sig, p.statement, example_values(sig, [t.input for t in p.tests]),
                    draw_unmodelled=cfg.unmodelled_constraints == "draw")
    w.info["constraints_parsed"] = len(w.space.c.lines) - len(w.space.c.unparsed)
    w.info["constraints_unparsed"] = len(w.space.c.unparsed)
    w.info["bounds_dropped_by_examples"] = w.space.dropped
    w.info["inferred_from_examples"] = w.space.inferred  # what the examples were taken to show (no stated bound)
    if w.space.unmodelled:
        w.info["unmodelled_constraints"] = w.space.unmodelled
    count = int(w.need * cfg.overgenerate) + 2
    skipped: Counter[str] = Counter()  # plans that gave no input (a draw breaking a constraint is redrawn)
    w.candidates = generate_inputs(w.space, p.id, count, seed=cfg.seed, max_elements=cfg.max_elements,
                                   max_input_bytes=cfg.max_input_bytes, existing={t.input for t in p.tests},
                                   max_problem_bytes=cfg.max_problem_bytes, skipped=skipped)
    w.info["plans_without_input"] = dict(sorted(skipped.items()))


def _json_lines(text: str) -> bool:
    try:
        for x in text.split("\n"):
            if x.strip():
                json.loads(x)
    except ValueError:
        return False
    return True


def _stdio_candidates(works: list[_Work], cfg: TestgenConfig, ev) -> None:
    """Run each generator in the sandbox for its (tier, seed) plan; keep what every validator accepts."""
    ready = []
    for w in works:
        try:
            w.validators = input_validators(w.problem, w.generator)
        except ValueError as e:  # malformed meta.input_validators: no input could be confirmed valid
            w.info["input_validators_unreadable"] = str(e)
            w.generator = None  # nothing generated, nothing searched
            continue
        ready.append(w)
    plans = []
    for w in ready:
        runs = [(tier, case_seed(cfg.seed, w.problem.id, i) % 10**9)
                for i, (tier, _) in enumerate(tier_plan(int(w.need * cfg.overgenerate) + 2))]
        plans.append(Plan(w.problem.id, w.problem, w.generator, runs, {t.input for t in w.problem.tests}))
    made = run_generators(ev, plans, cfg.max_input_bytes)
    for w in ready:
        w.candidates, dropped = made[w.problem.id]
        w.dropped.update(dropped)
    valid = keep_valid(ev, [(w.problem, w.validators, w.candidates) for w in ready])
    for w, (kept, dropped) in zip(ready, valid, strict=True):
        w.candidates = kept
        w.dropped.update(dropped)


def _expected_outputs(works: list[_Work], cfg: TestgenConfig, ev) -> dict[str, list[Kept]]:
    """Kept tests per problem, in candidate order, at most `need` each, within the time and byte
    budgets. The references run on as many candidates as are still missing, round after round,
    not on all of them at once: a third of the candidates (`overgenerate`) used to be run and then
    dropped as surplus. The kept tests are the same either way (the first `need` that pass, in
    order); a candidate never run is counted as surplus."""
    accepted: dict[str, list[Kept]] = {w.problem.id: [] for w in works}
    budget = {w.problem.id: [0.0, 0] for w in works}  # reference seconds and bytes spent
    done = {w.problem.id: 0 for w in works}  # candidates run so far
    voting = {w.problem.id: hunt.voters(w.problem, cfg.held_out_folds, cfg.held_out_seed) for w in works}
    pending = list(works)
    while pending:
        take = {w.problem.id: w.candidates[done[w.problem.id]:done[w.problem.id] + w.need - len(accepted[w.problem.id])]
                for w in pending}
        expected = reference_outputs(ev, [(w.problem.id, voting[w.problem.id], [c.input for c in take[w.problem.id]])
                                          for w in pending], cfg.slow_fraction, cfg.max_output_bytes)
        for w in pending:
            pid, got, spent = w.problem.id, accepted[w.problem.id], budget[w.problem.id]
            done[pid] += len(take[pid])
            for c, e in zip(take[pid], expected[pid], strict=True):
                n = len(c.input.encode())
                if e.output is None:
                    w.dropped[e.reason] += 1
                elif spent[0] + e.time_s > cfg.time_budget_s:
                    w.dropped["over the time budget"] += 1
                elif spent[1] + n > cfg.max_problem_bytes:
                    w.dropped["over the problem byte budget"] += 1
                else:
                    spent[0], spent[1] = spent[0] + e.time_s, spent[1] + n
                    got.append(Kept(c, e.output, e.agreeing, voted=hunt.voted_by(voting[pid], e)))
        pending = [w for w in pending if len(accepted[w.problem.id]) < w.need and done[w.problem.id] < len(w.candidates)]
    for w in works:
        if len(w.candidates) > done[w.problem.id]:
            w.dropped["surplus"] += len(w.candidates) - done[w.problem.id]
    return accepted


def _trial(k: int, w: _Work, kept: list[Kept], cfg: TestgenConfig) -> Trial:
    p = w.problem
    return Trial(f"t{k}", hunt.voters(p, cfg.held_out_folds, cfg.held_out_seed),
                 [TestCase(x.candidate.input, x.output, "generated") for x in kept],
                 hunt.solutions_of(p, cfg.mutants, cfg.seed, cfg.held_out_folds, cfg.held_out_seed),
                 space=w.space, generator=w.generator, validators=w.validators,
                 voted_on_all=frozenset.intersection(*(x.voted for x in kept)) if kept else frozenset())


def _provenance(x: Kept) -> dict[str, Any]:
    c = x.candidate
    prov = {"input_sha": content_hash(c.input)[:16], "method": c.method, "tier": c.tier, "generator": c.generator,
            "seed": c.seed, "references_agreeing": x.agreeing, "single_reference": x.agreeing == 1}
    if x.search_round is not None:
        prov["search_round"] = x.search_round
    return prov


def _draw(problems: list[tuple[Problem, int]], cfg: TestgenConfig) -> list[tuple[list[Candidate], Space | None, dict]]:
    """The functional problems' candidate inputs (problem, tests missing): pure Python, no program
    runs; in the look-ahead process (`_DrawAhead`) or here."""
    out = []
    for p, need in problems:
        w = _Work(p, "", need)
        _functional_candidates(w, cfg)
        out.append((w.candidates, w.space, w.info))
    return out


def exit_with_parent(parent: int) -> None:
    """A pool worker's initializer: the worker ends once `parent` has (a testgen killed by a signal
    left its drawing process waiting on its queue for good: the queue holds a write end of its own
    pipe, so no EOF ever comes)."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


class _DrawAhead:
    """Draws the next batch's functional inputs in a second process while this one judges the
    current batch: on real sources the draws were a third of testgen's CPU, run while the judges
    waited (a thread held the GIL the judging needs: no gain, measured). The draws depend on the
    problem and the seed only, so the inputs are the ones a serial run draws. The first chunk has
    nothing to overlap: the second process draws its first half while this one draws the rest.
    `spawn`: this process runs judge threads, which a fork would copy mid-flight."""

    def __init__(self, chunks: list[list[_Work]], cfg: TestgenConfig):
        self.chunks, self.cfg, self.futures = chunks, cfg, {}
        self.pool = None
        if len(chunks) > 1 and any(w.problem.style == "functional" for c in chunks for w in c):
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=exit_with_parent, initargs=(os.getpid(),))
            first = self._items(0)
            self.futures[0] = self.pool.submit(_draw, first[:len(first) // 2], self.cfg)

    def _items(self, i: int) -> list[tuple[Problem, int]]:
        return [(w.problem, w.need) for w in self.chunks[i] if w.problem.style == "functional"]

    def _submit(self, i: int) -> None:
        if self.pool is not None and i < len(self.chunks):
            self.futures[i] = self.pool.submit(_draw, self._items(i), self.cfg)

    def ready(self, i: int) -> list[_Work]:
        """Chunk `i` with its functional inputs drawn; the next chunk's drawing started."""
        future = self.futures.pop(i, None)
        if future is None:
            drawn = _draw(self._items(i), self.cfg)
        elif i == 0:  # the second half here, while the second process draws the first
            items = self._items(0)
            rest = _draw(items[len(items) // 2:], self.cfg)
            drawn = future.result() + rest
        else:
            drawn = future.result()
        self._submit(i + 1)
        functional = [w for w in self.chunks[i] if w.problem.style == "functional"]
        for w, (candidates, space, info) in zip(functional, drawn, strict=True):
            w.candidates, w.space, w.info = candidates, space, info
        return self.chunks[i]

    def close(self) -> None:
        if self.pool is not None:  # an interrupted stage does not wait for a draw in progress
            for proc in list(getattr(self.pool, "_processes", {}).values()):
                proc.kill()
            self.pool.shutdown(wait=False, cancel_futures=True)


def _process_batch(batch: list[_Work], cfg: TestgenConfig, ev) -> list[tuple[str, dict[str, Any]]]:
    """Expected outputs (the functional candidates drawn already: `_DrawAhead`; the stdio ones
    from their generators here), the first pass of the known solutions, the search, the records."""
    stdio = [w for w in batch if w.problem.style == "stdio"]
    if stdio:
        _stdio_candidates(stdio, cfg, ev)
    accepted = _expected_outputs([w for w in batch if w.candidates], cfg, ev)
    trials = [_trial(k, w, accepted.get(w.problem.id, []), cfg) for k, w in enumerate(batch)]
    hunt.measure(ev, trials)
    at_start = [(len(t.survivors()), len(t.survivors(held_out=True))) for t in trials]
    hunt.search(ev, trials, cfg)
    hunt.measure_searched(ev, trials)
    results = []
    for w, t, (n, held) in zip(batch, trials, at_start, strict=True):
        kept = accepted.get(w.problem.id, []) + t.searched
        measured = bool(t.ran)
        results.append((w.key, {
            "tests": [[x.candidate.input, x.output] for x in kept], "provenance": [_provenance(x) for x in kept],
            "candidates": len(w.candidates), "dropped": dict(w.dropped), "info": w.info,
            "mutants": hunt.mutant_kills(t), "strength": hunt.strength_records(t) if measured else None,
            "search": hunt.search_record(t, n, held) if measured else None,
            "references_passing_by_vote": t.passed_by_vote,
        }))
    return results


def testgen_problems(problems: list[Problem], cfg: TestgenConfig, *, evaluator: EvaluatorConfig | None = None,
                     progress: bool = True, generators: dict[str, Generator] | None = None) -> TestgenResult:
    """Generated tests for `problems`, judged with `evaluator` (the params' `evaluator:` section;
    None: its defaults)."""
    start = time.monotonic()
    evaluator = judge_config(cfg, evaluator)
    generators = dict(generators or {})
    generators.update(authored_generators(cfg.stdio_generators))
    skips: dict[int, str] = {}
    todo: list[int] = []
    for i, p in enumerate(problems):
        reason = skip_reason(p, cfg, generators if cfg.generator_model.backend is None else {**generators, p.id: None})
        if reason is None and cfg.limit is not None and len(todo) >= cfg.limit:
            reason = "over the limit param"
        if reason:
            skips[i] = reason
        else:
            todo.append(i)
    llm = cfg.generator_model
    if llm.backend:  # the model writes the generators the authored file does not have
        ask = [problems[i] for i in todo if problems[i].style == "stdio" and problems[i].id not in generators]
        generators.update(model_generators(ask, llm.backend, llm.model, llm.backend_options, llm.max_tokens,
                                           llm.temperature, cfg.seed))
        for i in list(todo):
            if problems[i].style == "stdio" and problems[i].id not in generators:
                skips[i] = "stdio: the model wrote no generator program"
                todo.remove(i)

    cache = problem_cache(cfg)
    runs = ResultCache(cfg.cache_path, max_mb=cfg.cache_max_mb)  # the program runs (references, generators, validators) of every problem
    results: dict[int, dict[str, Any]] = {}
    works = []
    for i in todo:
        p = problems[i]
        g = generators.get(p.id) if p.style == "stdio" else None
        key = problem_key(p, cfg, g, evaluator)
        hit = cache.get(key)
        if hit is not None:
            results[i] = hit
        else:
            works.append((i, _Work(p, key, cfg.target_tests - len(p.tests), generator=g)))
    if todo:
        import logging

        logging.getLogger(__name__).info("%d of %d problems to generate for are in the cache %s; %d to run",
                                         len(todo) - len(works), len(todo), cfg.cache_path, len(works))
    bar = tqdm(total=len(todo), initial=len(todo) - len(works), desc="testgen", unit="problem",
               disable=not progress, mininterval=1.0)
    done = 0  # problems of this run committed to the cache
    interrupted = False  # then the trim is left to the next run: the stage has 5 s to unwind
    try:
        if works:
            from microcoder.pipeline.evaluator.factory import make_evaluator

            with make_evaluator(evaluator, executor=cfg.executor, ray_address=cfg.ray_address) as judge:
                ev = CachedEvaluator(judge, runs, verdict_key(evaluator))  # program runs: one cache per run
                chunks = [works[b:b + cfg.batch_size] for b in range(0, len(works), cfg.batch_size)]
                ahead = _DrawAhead([[w for _, w in chunk] for chunk in chunks], cfg)
                try:
                    for k, chunk in enumerate(chunks):
                        fresh = _process_batch(ahead.ready(k), cfg, ev)
                        cache.put_many(fresh)  # each batch as it ends: an interrupt costs the batch in progress only
                        done += len(fresh)
                        for (i, _), (_, value) in zip(chunk, fresh, strict=True):
                            results[i] = value
                        bar.update(len(chunk))
                finally:
                    ahead.close()
    except KeyboardInterrupt:  # SIGINT / SIGTERM (the judges are stopped): say what a rerun starts from
        from microcoder.pipeline.stage import StageInterrupted

        interrupted = True
        raise StageInterrupted(f"kept the generated tests of {done} finished problem{'' if done == 1 else 's'} in "
                               f"the cache {cfg.cache_path} (besides the {len(todo) - len(works)} found there); a "
                               f"rerun resumes from them and redoes the batch in progress (batch_size "
                               f"{cfg.batch_size}; its finished runs are cached)") from None
    finally:
        bar.close()
        cache.close(trim_file=not interrupted)
        runs.close(trim_file=not interrupted)  # closed last: trims the file (both tables) to its bound
    return _assemble(problems, skips, results, cfg, time.monotonic() - start, cache_figures(cache, runs))


def cache_figures(problems: ResultCache, runs: ResultCache) -> dict[str, Any]:
    """The cache file's figures (size before and after the trim, rows, evicted: `runs` closed last)
    and each table's hits."""
    whole = runs.figures()
    tables = {name: {k: c.figures()[k] for k in ("hits", "misses", "hit_rate")}
              for name, c in (("problems", problems), ("runs", runs))}
    return {**{k: v for k, v in whole.items() if k not in ("hits", "misses", "hit_rate")}, **tables}


testgen_problems.__test__ = False  # not a pytest test


def _assemble(problems: list[Problem], skips: dict[int, str], results: dict[int, dict[str, Any]],
              cfg: TestgenConfig, wall_s: float, cache: dict[str, Any] | None = None) -> TestgenResult:
    kept, report = [], []
    skipped: Counter[str] = Counter()
    for i, p in enumerate(problems):
        if i in skips:
            skipped[skips[i]] += 1
            kept.append(p)
            report.append({"id": p.id, "source": p.source, "style": p.style, "status": "skipped", "reason": skips[i],
                           "tests_before": len(p.tests), "tests_added": 0})
            continue
        r = results[i]
        tests = [TestCase(x, y, "generated", generated_group(p)) for x, y in r["tests"]]
        meta = {**p.meta, "testgen": {"version": VERSION, "seed": cfg.seed, "tests": r["provenance"]}}
        kept.append(replace(p, tests=p.tests + tests, meta=meta))
        if not tests:
            skipped[_why_no_test(r.get("info", {}))] += 1
        report.append(_report_row(p, r))
    figures = {"problems_augmented": sum(1 for r in report if r["tests_added"]),
               "passed_through_by_reason": dict(sorted(skipped.items())),
               **_figures([r for r in report if r["status"] != "skipped"], results), "wall_s": round(wall_s, 1),
               "cache": cache}
    return TestgenResult(kept, report, StageStats(unit="problems", read=len(problems), kept=len(kept), figures=figures))


def _why_no_test(info: dict[str, Any]) -> str:
    """Why a problem got no generated test: its signature, a space that draws nothing (one answer
    promised, an unmodelled constraint), else every input was dropped."""
    if info.get("unsupported"):
        return "signature not supported"
    blocked = sorted(_BLOCKED & set(info.get("plans_without_input") or {}))
    return blocked[0] if blocked else "no generated input survived"


def generated_group(p: Problem) -> str | None:
    """The group of a generated test: "generated" where the source groups its tests (Kattis
    `data/secret/<group>`, Code Jam test sets), so that it is told apart from theirs and counted
    on its own (it is in no group of meta["test_groups"], so it carries no points); None where
    the source does not group them, as before."""
    return "generated" if any(t.group is not None for t in p.tests) else None


def _report_row(p: Problem, r: dict[str, Any]) -> dict[str, Any]:
    prov = r["provenance"]
    return {"id": p.id, "source": p.source, "difficulty": p.difficulty, "style": p.style,
            "status": "augmented" if r["tests"] else "unchanged", "reason": r.get("info", {}).get("unsupported"),
            "tests_before": len(p.tests), "tests_added": len(r["tests"]), "candidates": r["candidates"],
            "dropped": r["dropped"], "by_method": dict(Counter(x["method"] for x in prov)),
            "by_tier": dict(Counter(x["tier"] for x in prov)), "agreement": _agreement(prov),
            "strength": r.get("strength"), "search": r.get("search"), "mutants": r.get("mutants"),
            "references_passing_by_vote": r.get("references_passing_by_vote", 0), "info": r.get("info", {})}


def _agreement(provenance: list[dict[str, Any]]) -> dict[str, Any]:
    """How many tests rest on how many agreeing references (`single_reference`: on one alone)."""
    by = Counter(x["references_agreeing"] for x in provenance)
    return {"tests_by_references": {str(k): by[k] for k in sorted(by)},
            "single_reference": sum(x["single_reference"] for x in provenance)}


def _figures(rows: list[dict[str, Any]], results: dict[int, dict[str, Any]]) -> dict[str, Any]:
    prov = [x for r in results.values() for x in r["provenance"]]
    dropped: Counter[str] = Counter()
    no_input: Counter[str] = Counter()  # functional draw plans that gave no input (not inputs dropped)
    for r in rows:
        dropped.update(r["dropped"])
        no_input.update(r["info"].get("plans_without_input", {}))
    return {"tests_added": len(prov),
            "tests_added_by_method": dict(sorted(Counter(x["method"] for x in prov).items())),
            "tests_added_by_tier": dict(sorted(Counter(x["tier"] for x in prov).items())),
            "tests_added_per_problem": _distribution([r["tests_added"] for r in rows]),
            "inputs_dropped_by_reason": dict(sorted(dropped.items())),
            "plans_without_input_by_reason": dict(sorted(no_input.items())),
            "agreement": _agreement(prov), "strength": _strength_figures(rows),
            # voting references not judged again on generated tests that hold their own outputs (`search._voted_on_all`)
            "references_passing_by_vote": sum(r.get("references_passing_by_vote", 0) for r in rows),
            "search": _search_figures([r["search"] for r in rows if r.get("search")]),
            "mutants": _mutant_figures([r["mutants"] for r in rows if r.get("mutants")])}


def _strength_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """TPR / TNR summed over problems: before (own tests) and after (+ generated), and after per
    source and per difficulty; known-wrong solutions and mutants apart; over the solutions that chose
    the tests, and `held_out` over those that did not (`problems_without_held_out_tpr`: one reference,
    which cannot be held out)."""
    measured = [r for r in rows if r.get("strength")]

    def total(side: str, kind: str, held: bool = False) -> dict[str, Any]:
        return strength.add((r["strength"].get("held_out") or {}).get(side, {}).get(kind) if held
                            else r["strength"][side][kind] for r in measured)

    def grouped(field_: str) -> dict[str, dict[str, Any]]:
        kinds = {kind: strength.by_group((r.get(field_), r["strength"]["after"][kind]) for r in measured)
                 for kind in ("known_wrong", "mutants")}
        groups = sorted(set(kinds["known_wrong"]) | set(kinds["mutants"]))
        return {g: {kind: kinds[kind].get(g, strength.record()) for kind in kinds} for g in groups}

    def no_tpr(r: dict[str, Any]) -> bool:
        held = (r["strength"].get("held_out") or {}).get("after", {}).get("known_wrong") or {}
        return not held.get("correct")

    return {"problems": len(measured),
            **{side: {kind: total(side, kind) for kind in ("known_wrong", "mutants")} for side in ("before", "after")},
            "held_out": {side: {kind: total(side, kind, True) for kind in ("known_wrong", "mutants")}
                         for side in ("before", "after")},
            "problems_without_held_out_tpr": sum(map(no_tpr, measured)),
            "by_source": grouped("source"), "by_difficulty": grouped("difficulty")}


def _search_figures(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per round, summed over problems: survivors before it, how many it failed, tests it added."""
    rounds: dict[int, Counter] = {}
    dropped: Counter[str] = Counter()
    for rec in records:
        dropped.update(rec["inputs_dropped_by_reason"])
        for x in rec["rounds"]:
            rounds.setdefault(x["round"], Counter()).update(
                {k: x[k] for k in ("survivors_before", "killed", "tests_added", "candidates")})
    held = {k: sum(rec.get(k, 0) for rec in records)
            for k in ("held_out_survivors_at_start", "held_out_killed_by_search", "held_out_survivors_left")}
    return {"problems_with_survivors": sum(1 for rec in records if rec["survivors_at_start"]),
            "survivors_at_start": sum(rec["survivors_at_start"] for rec in records), **held,
            "rounds": [{"round": k, **{f: rounds[k][f] for f in ("survivors_before", "killed", "tests_added", "candidates")}}
                       for k in sorted(rounds)],
            "survivors_left": sum(rec["survivors_left"] for rec in records),
            "reference_s": round(sum(rec["reference_s"] for rec in records), 1),
            "inputs_dropped_by_reason": dict(sorted(dropped.items()))}


def _mutant_figures(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The mutant kill rates as before issue 25 (the card and `microcoder testgen` read them)."""
    sums = Counter()
    for m in records:
        sums.update({k: m[k] for k in ("mutants", "killed_by_examples", "killed_with_generated", "killed_by_search")})
    return {"problems": len(records), **{k: sums[k] for k in ("mutants", "killed_by_examples", "killed_with_generated",
                                                               "killed_by_search")},
            "kill_rate_examples": strength.ratio(sums["killed_by_examples"], sums["mutants"]),
            "kill_rate_with_generated": strength.ratio(sums["killed_with_generated"], sums["mutants"])}


def _distribution(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"problems": 0}
    return {"problems": len(values), "min": min(values), "median": statistics.median(values), "max": max(values),
            "mean": round(sum(values) / len(values), 2), "zero": sum(1 for v in values if v == 0)}


# --- the stage ----------------------------------------------------------------------------------------
class Testgen(Stage):
    """Read problems (a record that is not a usable problem becomes a reject), generate, write
    problems.parquet, rejects.jsonl, report.jsonl, stats.json and settings.json (the evaluator as
    testgen judges with it: `judge_config`)."""

    name = "testgen"
    config = TestgenConfig
    evaluator_config = EvaluatorConfig
    input_label = "testgen input problems"

    def process(self, problems: list[Problem], ctx: StageContext) -> list[Problem]:
        from microcoder.pipeline.io import write_jsonl

        result = testgen_problems(problems, ctx.cfg, evaluator=ctx.evaluator, progress=ctx.progress)
        ctx.stats.figures = result.stats.figures
        write_jsonl(ctx.out_dir / "report.jsonl", result.report)
        return result.kept

    def settings(self, ctx: StageContext) -> dict[str, Any]:
        return {**super().settings(ctx), "evaluator": settings_record(judge_config(ctx.cfg, ctx.evaluator))}
