"""Testgen stage: add generated tests to problems that have a reference solution and fewer tests
than `target_tests`; pass every other problem through unchanged.

Per problem: candidate inputs (functional: from the signature and the Constraints section; stdio:
from a generator program run in the sandbox), expected outputs from the references in the
sandbox (an input on which a reference crashes, runs out of time or disagrees with another is
dropped), then mutants of the reference judged on the examples alone and on examples + generated
tests. Provenance of each generated test (method, generator, seed, input hash) goes into
`meta["testgen"]`; the per-problem figures into report.jsonl and stats.json.

Runs go through the judge of the params' `evaluator:` section (`make_evaluator`), whose settings
that can change a verdict are part of the cache key. Results are cached per problem by content
hash (SQLite), so a killed run resumes where it stopped and a rerun with the same inputs and params
re-executes nothing. `run_testgen` is the stage: read (tolerantly), generate, write problems,
rejects, report and stats.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from pipeline.evaluator.config import EvaluatorConfig
from pipeline.evaluator.verdict_key import verdict_key
from pipeline.io import content_hash
from pipeline.schema import Problem, TestCase
from pipeline.stage import StageStats
from pipeline.testgen.functional import Candidate, case_seed, example_values, generate_inputs
from pipeline.testgen.mutants import make_mutants
from pipeline.testgen.runner import Job, collect, judge
from pipeline.testgen.space import Space
from pipeline.testgen.stdio import Generator, authored_generators, model_generators, tier_plan
from pipeline.testgen.types import Unsupported, signature_of

STAGE = "testgen"
VERSION = "2"  # bump when generation changes: cached results of older versions are not reused


@dataclass
class GeneratorModelConfig:
    """The model that writes generator programs for stdio problems without an authored one."""

    backend: str | None = field(default=None, metadata={
        "help": "Rollout backend that writes stdio generators (hf | vllm | openai); null: none."})
    model: str = field(default="models/tiny", metadata={"help": "Model for the stdio generator programs."})
    backend_options: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "The backend's constructor options (as rollout.backend_options)."})
    max_tokens: int = field(default=2048, metadata={"help": "Token budget of a generator answer."})
    temperature: float = field(default=0.0, metadata={"help": "Sampling temperature of the generator answer."})

    def __post_init__(self) -> None:
        from pipeline.rollout.backends import BACKENDS, check_temperature

        if self.backend is not None and self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {list(BACKENDS)} or null, got {self.backend!r}")
        check_temperature(self.temperature)
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")


@dataclass
class TestgenConfig:
    __test__ = False  # not a pytest test class
    target_tests: int = field(default=32, metadata={"help": "Add generated tests until a problem has this many."})
    seed: int = field(default=0, metadata={"help": "Seed of every random draw (same seed, same tests)."})
    max_elements: int = field(default=10_000, metadata={"help": "Most numbers / characters in one generated input (caps the stated maxima)."})
    max_input_bytes: int = field(default=100_000, metadata={"help": "Most bytes of one generated input."})
    max_output_bytes: int = field(default=1_000_000, metadata={"help": "Drop an input whose reference output is longer."})
    overgenerate: float = field(default=1.5, metadata={"help": "Candidates per missing test (some are dropped)."})
    slow_fraction: float = field(default=0.5, metadata={"help": "Drop an input on which a reference takes more than this fraction of the time limit."})
    time_budget_s: float = field(default=20.0, metadata={"help": "Most reference CPU seconds a problem's generated tests may take together (the largest, last, go first)."})
    mutants: int = field(default=8, metadata={"help": "Mutants of the first reference per problem for the strength figure (0: off)."})
    batch_size: int = field(default=32, metadata={"help": "Problems per evaluator batch (and per cache commit)."})
    limit: int | None = field(default=None, metadata={"help": "Generate for at most this many problems (the rest pass through, counted)."})
    cache_path: str = field(default=".cache/microcoder/testgen.sqlite", metadata={"help": "Result cache (not a DVC output)."})
    stdio_generators: str | None = field(default=None, metadata={"help": "jsonl of authored {id, generator, validator?} programs for stdio problems."})
    generator_model: GeneratorModelConfig = field(default_factory=GeneratorModelConfig, metadata={
        "help": "The model that writes stdio generator programs (where stdio_generators has none)."})

    def __post_init__(self) -> None:
        if self.target_tests < 1 or self.overgenerate < 1 or self.max_elements < 1:
            raise ValueError("target_tests and max_elements must be >= 1, overgenerate >= 1")


def judge_config(cfg: TestgenConfig, evaluator: EvaluatorConfig | None) -> EvaluatorConfig:
    """The evaluator section, keeping whole outputs: a reference's output becomes a test's expected
    output, and a generator's output its input."""
    ev = evaluator or EvaluatorConfig()
    return replace(ev, keep_output_bytes=max(ev.keep_output_bytes, cfg.max_output_bytes, cfg.max_input_bytes) + 1)


def problem_key(p: Problem, cfg: TestgenConfig, generator: Generator | None, evaluator: EvaluatorConfig) -> str:
    """What decides this problem's generated tests: its content, the generation params and the
    judge's code and settings (`verdict_key`)."""
    knobs = {k: getattr(cfg, k) for k in ("target_tests", "seed", "max_elements", "max_input_bytes", "max_output_bytes",
                                          "overgenerate", "slow_fraction", "time_budget_s", "mutants")}
    knobs["evaluator"] = verdict_key(evaluator)
    return content_hash(VERSION, p.id, p.style, p.statement, p.entry_point or "", p.starter_code or "",
                json.dumps([[t.input, t.output] for t in p.tests]),
                json.dumps([[r.language, r.code] for r in p.reference_solutions]),
                json.dumps(p.checker.__dict__ if p.checker else None, sort_keys=True),
                repr(p.time_limit_s), repr(p.memory_limit_mb), json.dumps(knobs, sort_keys=True),
                json.dumps(generator.__dict__ if generator else None, sort_keys=True))


class Cache:
    def __init__(self, path: str | Path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path))
        self.db.execute("CREATE TABLE IF NOT EXISTS problems (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def get(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT value FROM problems WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_many(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO problems VALUES (?, ?)", [(k, json.dumps(v)) for k, v in items])
        self.db.commit()

    def close(self) -> None:
        self.db.close()


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
    if p.meta.get("interactive") or "interactive" in (p.tags or []):
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
    space = Space(sig, p.statement, example_values(sig, [t.input for t in p.tests]))
    w.info["constraints_parsed"] = len(space.c.lines) - len(space.c.unparsed)
    w.info["constraints_unparsed"] = len(space.c.unparsed)
    w.info["bounds_dropped_by_examples"] = space.dropped
    count = int(w.need * cfg.overgenerate) + 2
    w.candidates = generate_inputs(space, p.id, count, seed=cfg.seed, max_elements=cfg.max_elements,
                                   max_input_bytes=cfg.max_input_bytes, existing={t.input for t in p.tests})


def _json_lines(text: str) -> bool:
    try:
        for x in text.split("\n"):
            if x.strip():
                json.loads(x)
    except ValueError:
        return False
    return True


def _stdio_candidates(works: list[_Work], cfg: TestgenConfig, ev) -> None:
    """Run each generator (and validator) in the sandbox for its (tier, seed) plan."""
    jobs, plans = [], {}
    for w in works:
        plan = tier_plan(int(w.need * cfg.overgenerate) + 2)
        plans[w.problem.id] = plan
        seeds = [f"{tier} {case_seed(cfg.seed, w.problem.id, i) % 10**9}\n" for i, (tier, _) in enumerate(plan)]
        gen_problem = replace(w.problem, checker=None, time_limit_s=max(w.problem.time_limit_s, 5.0))
        jobs.append(Job(("gen", w.problem.id), gen_problem, "python", w.generator.code, seeds))
    out = collect(ev, jobs, cfg.max_input_bytes)
    vjobs = []
    for w in works:
        runs = out[("gen", w.problem.id)]
        existing = {t.input for t in w.problem.tests}
        for i, ((tier, _), run) in enumerate(zip(plans[w.problem.id], runs, strict=True)):
            if not run.ok or not run.output or not run.output.strip():
                w.dropped[f"generator {run.status if not run.ok else 'empty output'}"] += 1
                continue
            text = run.output if run.output.endswith("\n") else run.output + "\n"
            if text in existing:
                w.dropped["duplicate input"] += 1
                continue
            existing.add(text)
            seed = case_seed(cfg.seed, w.problem.id, i) % 10**9
            w.candidates.append(Candidate(text, "generator", f"{w.generator.source}:{tier}", seed))
        if w.generator.validator and w.candidates:
            vjobs.append(Job(("val", w.problem.id), w.problem, "python", w.generator.validator,
                             [c.input for c in w.candidates]))
    if vjobs:
        vout = collect(ev, vjobs, cfg.max_output_bytes)
        for w in works:
            runs = vout.get(("val", w.problem.id))
            if runs is None:
                continue
            kept = []
            for c, run in zip(w.candidates, runs, strict=True):
                if run.ok:
                    kept.append(c)
                else:
                    w.dropped["validator rejected the input"] += 1
            w.candidates = kept


def _agree(p: Problem, a: str, b: str) -> bool:
    from pipeline.evaluator import compare_functional, compare_stdio

    checker = p.checker if p.checker is not None and p.checker.kind != "program" else None
    try:
        if p.style == "functional":
            return compare_functional(a, b, checker).ok
        return compare_stdio(a, b, checker).ok
    except ValueError:
        return False


def _expected_outputs(works: list[_Work], cfg: TestgenConfig, ev) -> dict[str, list[tuple[Candidate, str]]]:
    """(candidate, expected output) per problem, in candidate order, at most `need` each."""
    jobs = []
    for w in works:
        refs = [r for r in w.problem.reference_solutions if w.problem.style == "stdio" or r.language == "python"]
        # an input on which a reference needs more than slow_fraction of the limit is dropped anyway:
        # stop it there instead of waiting out the whole limit
        fast = replace(w.problem, time_limit_s=w.problem.time_limit_s * cfg.slow_fraction)
        for ri, r in enumerate(refs):
            jobs.append(Job((w.problem.id, ri), fast, r.language, r.code, [c.input for c in w.candidates]))
    out = collect(ev, jobs, cfg.max_output_bytes)
    accepted: dict[str, list[tuple[Candidate, str]]] = {}
    for w in works:
        p = w.problem
        runs = [out[k] for k in sorted(k for k in out if k[0] == p.id)]
        limit = cfg.slow_fraction * p.time_limit_s * ev.timeout_scale
        got: list[tuple[Candidate, str]] = []
        spent = 0.0
        for i, c in enumerate(w.candidates):
            per_ref = [r[i] for r in runs if i < len(r)]
            if not per_ref:
                w.dropped["no reference ran"] += 1
                continue
            bad = next((r for r in per_ref if not r.ok), None)
            if bad is not None:
                w.dropped[f"reference {bad.status}"] += 1
            elif any(r.time_s > limit for r in per_ref):
                w.dropped["reference too slow"] += 1
            elif not all(_agree(p, per_ref[0].output, r.output) for r in per_ref[1:]):
                w.dropped["references disagree"] += 1
            elif len(got) >= w.need:
                w.dropped["surplus"] += 1
            elif spent + max(r.time_s for r in per_ref) > cfg.time_budget_s:
                w.dropped["over the time budget"] += 1
            else:
                spent += max(r.time_s for r in per_ref)
                got.append((c, per_ref[0].output))
        accepted[p.id] = got
    return accepted


def _mutant_kills(works: list[_Work], added: dict[str, list[TestCase]], cfg: TestgenConfig, ev) -> dict[str, dict[str, Any]]:
    """Per problem: mutants, killed by the examples alone, killed by examples + generated tests."""
    if cfg.mutants <= 0:
        return {}
    problems: dict[str, Problem] = {}
    first: list[tuple[str, str, str, str]] = []
    mutants_of: dict[str, list] = {}
    for w in works:
        p = w.problem
        refs = [r for r in p.reference_solutions if r.language == "python"]
        if not refs or not p.tests or not added.get(p.id):
            continue
        ms = make_mutants(refs[0].code, cfg.mutants, case_seed(cfg.seed, p.id, -1))
        mutants_of[p.id] = ms
        problems[f"{p.id}#ex"] = p
        problems[f"{p.id}#gen"] = replace(p, tests=added[p.id])
        first += [(f"{p.id}#m{k}", f"{p.id}#ex", "python", m.code) for k, m in enumerate(ms)]
    ex_status = judge(ev, problems, first)
    second = [(sid.replace("#m", "#g"), pid.replace("#ex", "#gen"), lang, code) for sid, pid, lang, code in first
              if ex_status.get(sid) == "AC"]
    gen_status = judge(ev, problems, second)
    out = {}
    for pid, ms in mutants_of.items():
        killed_ex = killed_all = 0
        survivors = []
        for k, m in enumerate(ms):
            s1 = ex_status.get(f"{pid}#m{k}")
            if s1 is None or s1 in ("CE", "SE"):
                continue
            if s1 != "AC":
                killed_ex += 1
                killed_all += 1
            elif gen_status.get(f"{pid}#g{k}", "AC") not in ("AC", "CE", "SE"):
                killed_all += 1
            else:
                survivors.append(m.label)
        judged = killed_all + len(survivors)
        out[pid] = {"mutants": judged, "killed_by_examples": killed_ex, "killed_with_generated": killed_all,
                    "survivors": survivors[:8]}
    return out


def _process_batch(batch: list[_Work], cfg: TestgenConfig, ev) -> list[tuple[str, dict[str, Any]]]:
    func = [w for w in batch if w.problem.style == "functional"]
    for w in func:
        _functional_candidates(w, cfg)
    stdio = [w for w in batch if w.problem.style == "stdio"]
    if stdio:
        _stdio_candidates(stdio, cfg, ev)
    accepted = _expected_outputs([w for w in batch if w.candidates], cfg, ev)
    added = {pid: [TestCase(c.input, out, "generated") for c, out in got] for pid, got in accepted.items()}
    kills = _mutant_kills(batch, added, cfg, ev)
    results = []
    for w in batch:
        got = accepted.get(w.problem.id, [])
        prov = [{"input_sha": content_hash(c.input)[:16], "method": c.method, "generator": c.generator, "seed": c.seed}
                for c, _ in got]
        results.append((w.key, {
            "tests": [[c.input, out] for c, out in got], "provenance": prov,
            "candidates": len(w.candidates), "dropped": dict(w.dropped), "info": w.info,
            "mutants": kills.get(w.problem.id),
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

    cache = Cache(cfg.cache_path)
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
    bar = tqdm(total=len(todo), initial=len(todo) - len(works), desc="testgen", unit="problem",
               disable=not progress, mininterval=1.0)
    try:
        if works:
            from pipeline.evaluator.factory import make_evaluator

            with make_evaluator(evaluator) as ev:
                for b in range(0, len(works), cfg.batch_size):
                    chunk = works[b:b + cfg.batch_size]
                    fresh = _process_batch([w for _, w in chunk], cfg, ev)
                    cache.put_many(fresh)
                    for (i, _), (_, value) in zip(chunk, fresh, strict=True):
                        results[i] = value
                    bar.update(len(chunk))
    finally:
        bar.close()
        cache.close()
    return _assemble(problems, skips, results, cfg, time.monotonic() - start)


testgen_problems.__test__ = False  # not a pytest test


def _assemble(problems: list[Problem], skips: dict[int, str], results: dict[int, dict[str, Any]],
              cfg: TestgenConfig, wall_s: float) -> TestgenResult:
    kept, report = [], []
    skipped: Counter[str] = Counter()
    by_method: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    per_problem: list[int] = []
    mut = Counter()
    for i, p in enumerate(problems):
        if i in skips:
            skipped[skips[i]] += 1
            kept.append(p)
            report.append({"id": p.id, "style": p.style, "status": "skipped", "reason": skips[i],
                           "tests_before": len(p.tests), "tests_added": 0})
            continue
        r = results[i]
        tests = [TestCase(x, y, "generated") for x, y in r["tests"]]
        for prov in r["provenance"]:
            by_method[prov["method"]] += 1
        dropped.update(r["dropped"])
        per_problem.append(len(tests))
        m = r.get("mutants")
        if m:
            mut["problems"] += 1
            for k in ("mutants", "killed_by_examples", "killed_with_generated"):
                mut[k] += m[k]
        meta = {**p.meta, "testgen": {"version": VERSION, "seed": cfg.seed, "tests": r["provenance"]}}
        kept.append(replace(p, tests=p.tests + tests, meta=meta))
        status = "augmented" if tests else "unchanged"
        if not tests:
            skipped["no generated input survived" if not r.get("info", {}).get("unsupported")
                    else "signature not supported"] += 1
        report.append({"id": p.id, "style": p.style, "status": status,
                       "reason": r.get("info", {}).get("unsupported"), "tests_before": len(p.tests),
                       "tests_added": len(tests), "candidates": r["candidates"], "dropped": r["dropped"],
                       "by_method": dict(Counter(x["method"] for x in r["provenance"])),
                       "mutants": m, "info": r.get("info", {})})

    def rate(k: str) -> float | None:
        return round(mut[k] / mut["mutants"], 4) if mut["mutants"] else None

    figures = {
        "problems_augmented": sum(1 for n in per_problem if n),
        "passed_through_by_reason": dict(sorted(skipped.items())),
        "tests_added": sum(per_problem),
        "tests_added_by_method": dict(sorted(by_method.items())),
        "tests_added_per_problem": _distribution(per_problem),
        "inputs_dropped_by_reason": dict(sorted(dropped.items())),
        "mutants": {"problems": mut["problems"], "mutants": mut["mutants"],
                    "killed_by_examples": mut["killed_by_examples"],
                    "killed_with_generated": mut["killed_with_generated"],
                    "kill_rate_examples": rate("killed_by_examples"),
                    "kill_rate_with_generated": rate("killed_with_generated")},
        "wall_s": round(wall_s, 1),
    }
    return TestgenResult(kept, report, StageStats(unit="problems", read=len(problems), kept=len(kept), figures=figures))


def _distribution(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"problems": 0}
    return {"problems": len(values), "min": min(values), "median": statistics.median(values), "max": max(values),
            "mean": round(sum(values) / len(values), 2), "zero": sum(1 for v in values if v == 0)}


# --- the stage ----------------------------------------------------------------------------------------
def run_testgen(cfg: TestgenConfig, problems_path: str | Path, out_dir: str | Path, *,
                evaluator: EvaluatorConfig | None = None, progress: bool = True) -> dict[str, Any]:
    """The stage: read `problems_path` (a record that is not a usable problem becomes a reject),
    generate, write problems.parquet, rejects.jsonl, report.jsonl, stats.json and settings.json to
    `out_dir`; returns the stats as written."""
    from pipeline import io
    from pipeline.config import settings_record
    from pipeline.inputs import load_problems
    from pipeline.stage import write_stats

    out_dir = Path(out_dir)
    loaded = load_problems(problems_path, "testgen input problems")
    result = testgen_problems(loaded.problems, cfg, evaluator=evaluator, progress=progress)
    result.stats.read += len(loaded.rejects)
    io.write_problems(out_dir / "problems.parquet", result.kept)
    with io.RejectsWriter(out_dir / "rejects.jsonl", STAGE) as rejects:
        for r in loaded.rejects:
            rejects.add(r.id, r.reason, r.record)
            result.stats.reject(r.reason)
    io.write_jsonl(out_dir / "report.jsonl", result.report)
    settings = {**settings_record(cfg), "evaluator": settings_record(judge_config(cfg, evaluator))}
    return write_stats(out_dir, result.stats, settings=settings, stage=STAGE)
