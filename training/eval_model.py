"""The eval-model stage: pass@1 and unbiased pass@k on a benchmark split, overall and by platform
and difficulty, for several models side by side (the base model and the trained checkpoint).

Samples come from the rollout backends (`microcoder.pipeline.generation.backends`), prompts from the shared
prompt builder, and every sample is scored by the one scoring path (`microcoder.pipeline.scoring`:
extraction, first-failure judging, a hard per-batch deadline) with the judge of the params'
`evaluator:` section. A sample the judge did not finish (`deadline`: still queued or running at the
batch deadline) or could not run (`error`: a harness failure) is *unjudged*: it is the judge's
failure, not the model's, so it is left out of pass@k (never counted as a failure) and counted per
model and group (`unjudged_samples`, `samples.deadline`, `samples.error`).

Outputs (`out_dir`): `metrics.json` (pass@k per model and group, sample statuses), `table.md`,
`samples.jsonl` (one row per sample), `rejects.jsonl` (every benchmark record not evaluated:
unreadable, invalid, a duplicate id, outside the date window, over `max_problems`, not promptable,
over the prompt budget, with its reason), `stats.json` (the stage contract's vocabulary, counted in
benchmark problems: `read = kept + rejected`) and `settings.json`.

pass@k per problem is the one unbiased estimator (`microcoder.pipeline.difficulty.passrate.pass_at_k`) over
the *judged* samples; a group's value is the mean over its problems with at least k judged samples
(`pass@k_problems` says how many: fewer than `problems` only when the judge left samples unjudged).
"""

from __future__ import annotations

import gc
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.executor import ExecutionFields
from microcoder.pipeline.inputs import (
    DUPLICATE,
    InputError,
    LoadedProblems,
    Reject,
    check_model_path,
    load_problems,
    require_input,
)
from microcoder.pipeline.schema import Problem, iso_date
from microcoder.pipeline.scoring import JUDGED, UNJUDGED, Scorer
from microcoder.pipeline.stage import Stage, StageContext

log = logging.getLogger(__name__)

PLATFORMS = ("atcoder", "leetcode", "codeforces")
DIFFICULTIES = ("easy", "medium", "hard")
BENCHMARK_FORMATS = ("auto", "problems", "livecodebench")
STAGE = "eval-model"


@dataclass
class EvalModelConfig(ExecutionFields):
    benchmark_format: str = field(default="auto", metadata={
        "help": "problems | livecodebench | auto (jsonl whose first row has `question_content` is LiveCodeBench)."})
    date_from: str | None = field(default=None, metadata={
        "help": "Keep problems with contest_date >= this (YYYY-MM-DD, inclusive); None: no lower bound."})
    date_to: str | None = field(default=None, metadata={
        "help": "Keep problems with contest_date <= this (YYYY-MM-DD, inclusive); None: no upper bound."})
    backend: str = field(default="hf", metadata={"help": "Generation backend: hf | vllm | openai."})
    backend_options: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "Extra backend arguments, checked by the chosen backend (batch_size, dtype, tensor_parallel_size, "
                "base_urls, max_model_len, tokenizer...): a mapping because each backend has its own."})
    n_samples: int = field(default=4, metadata={"help": "Samples per problem (n of pass@k)."})
    pass_at: list[int] = field(default_factory=lambda: [1], metadata={
        "help": "k values to report (each <= n_samples); pass@1 is always reported."})
    temperature: float = field(default=0.6, metadata={"help": "Sampling temperature."})
    top_p: float = field(default=0.95, metadata={"help": "Nucleus sampling top-p."})
    max_tokens: int = field(default=64, metadata={"help": "Maximum completion tokens (the paper: 4K or 8K)."})
    max_prompt_tokens: int | None = field(default=None, metadata={
        "help": "Most prompt tokens (chat template included); longer ones go to rejects. None: "
                "backend_options.max_model_len - max_tokens, else each model's context length - max_tokens."})
    seed: int = field(default=0, metadata={"help": "Sampling seed."})
    thinking: bool = field(default=False, metadata={"help": "Chat-template thinking switch (Qwen3)."})
    language: str = field(default="python", metadata={"help": "Answer language."})
    system_prompt: str | None = field(default=None, metadata={"help": "System prompt (None: the default)."})
    max_problems: int | None = field(default=None, metadata={"help": "Evaluate at most this many problems."})
    judge_batch_size: int = field(default=256, metadata={"help": "Submissions per evaluator batch."})
    deadline_s: float = field(default=300.0, metadata={"help": "Hard deadline per evaluator batch (seconds)."})
    torch_threads: int | None = field(default=None, metadata={
        "help": "CPU threads for torch (None: torch's default); applies to the hf backend."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {self.n_samples}")
        from microcoder.pipeline.generation.backends import SamplingParams
        from microcoder.pipeline.generation.budget import resolve_budget

        # What vLLM refuses (temperature > 2, a budget with no room), refused before any model loads.
        SamplingParams(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens, seed=self.seed)
        resolve_budget(self.max_tokens, max_prompt_tokens=self.max_prompt_tokens,
                       max_model_len=self.backend_options.get("max_model_len"))
        self.pass_at = sorted({1, *self.pass_at})
        bad = [k for k in self.pass_at if not 1 <= k <= self.n_samples]
        if bad:
            raise ValueError(f"pass_at values {bad} must lie in [1, n_samples={self.n_samples}]")
        if self.benchmark_format not in BENCHMARK_FORMATS:
            raise ValueError(f"benchmark_format must be one of {list(BENCHMARK_FORMATS)}, got {self.benchmark_format!r}")
        for name in ("date_from", "date_to"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, _date(value, name))


def _date(value: Any, what: str) -> str:
    try:
        date = iso_date(value)
    except ValueError:
        date = None
    if date is None:
        raise ValueError(f"{what}: expected a YYYY-MM-DD date, got {value!r}")
    return date


def platform_of(problem: Problem) -> str:
    p = (problem.platform or "").strip().lower()
    return p if p in PLATFORMS else ("other" if p else "unknown")


def difficulty_of(problem: Problem) -> str:
    d = (problem.difficulty or "").strip().lower()
    return d if d in DIFFICULTIES else "unknown"


def benchmark_format(path: str | Path) -> str:
    """`livecodebench` for jsonl(.gz) whose first record has LiveCodeBench's `question_content`."""
    from microcoder.pipeline.sources.base import iter_json_lines

    path = Path(path)
    if path.is_file() and path.name.endswith((".jsonl", ".jsonl.gz")):
        for _, rec, _reject in iter_json_lines(path):
            if rec is not None:
                return "livecodebench" if "question_content" in rec else "problems"
    return "problems"


def load_benchmark(path: str | Path, fmt: str = "auto") -> tuple[list[Problem], list[Reject]]:
    """Benchmark problems, and every record that could not be used (with the reason)."""
    require_input(path, "benchmark")
    fmt = benchmark_format(path) if fmt == "auto" else fmt
    if fmt == "problems":
        loaded = load_problems(path, "benchmark")
        return loaded.problems, loaded.rejects
    from microcoder.pipeline.sources import livecodebench
    from microcoder.pipeline.sources.base import SourceContext

    problems, rejects = [], []
    for item in livecodebench.read(livecodebench.Options(path=str(path)), SourceContext(name="livecodebench")):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            rejects.append(Reject.of(item.id, f"unreadable LiveCodeBench row ({item.code}): {item.detail}", item.record))
    return problems, rejects


def select_problems(problems: list[Problem], date_from: str | None, date_to: str | None,
                    max_problems: int | None = None) -> tuple[list[Problem], list[Reject]]:
    """Problems inside the date window (and the cap), plus every other one with its reason."""
    kept: list[Problem] = []
    excluded: list[Reject] = []
    seen: set[str] = set()
    for p in problems:
        reason = _exclusion(p, date_from, date_to, seen)
        if reason is None and max_problems is not None and len(kept) >= max_problems:
            reason = f"over max_problems={max_problems}"
        if reason is not None:
            excluded.append(Reject.of(p.id, reason, p))
            continue
        seen.add(p.id)
        kept.append(p)
    return kept, excluded


def _exclusion(p: Problem, date_from: str | None, date_to: str | None, seen: set[str]) -> str | None:
    if p.id in seen:
        return DUPLICATE
    if date_from or date_to:
        if not p.contest_date:
            return "no contest_date (a date window is set)"
        try:
            day = _date(p.contest_date, "contest_date")
        except ValueError:
            return f"bad contest_date {p.contest_date!r} (a date window is set)"
        if date_from and day < date_from:
            return f"before {date_from}"
        if date_to and day > date_to:
            return f"after {date_to}"
    if not p.tests:
        return "no test cases"
    return None


def model_metrics(rows: list[dict[str, Any]], problems: list[Problem], ks: list[int]) -> dict[str, Any]:
    """pass@k overall, by platform, by difficulty and by platform/difficulty, plus sample statuses,
    from one model's per-sample rows (`problem_id`, `status`: a `microcoder.pipeline.scoring` outcome)."""
    import polars as pl

    from microcoder.pipeline.difficulty.passrate import per_problem

    meta = pl.DataFrame({"problem_id": [p.id for p in problems], "platform": [platform_of(p) for p in problems],
                         "difficulty": [difficulty_of(p) for p in problems]})
    samples = (pl.DataFrame(rows).select("problem_id", "status")
               .join(meta, on="problem_id", how="left", maintain_order="left")
               .with_columns(judged=pl.col("status").is_in(list(JUDGED)), correct=pl.col("status") == "pass"))
    scores = per_problem(samples, ks, keys=["problem_id", "platform", "difficulty"]).with_columns(
        platform_difficulty=pl.col("platform") + "/" + pl.col("difficulty"))

    def group(items: pl.DataFrame) -> dict[str, Any]:
        out: dict[str, Any] = {"problems": items.height}
        for k in ks:
            # a problem needs k judged samples for a pass@k (null otherwise); summed in Python, as before
            values = [v for v in items[f"pass@{k}"].to_list() if v is not None]
            out[f"pass@{k}"] = sum(values) / len(values) if values else None
            out[f"pass@{k}_problems"] = len(values)
        out["unjudged_samples"] = int(items["unjudged"].sum())
        return out

    result: dict[str, Any] = {"overall": group(scores)}
    for name, column in (("by_platform", "platform"), ("by_difficulty", "difficulty"),
                         ("by_platform_difficulty", "platform_difficulty")):
        result[name] = {key: group(scores.filter(pl.col(column) == key)) for key in sorted(scores[column].unique())}
    counts = dict(samples.group_by("status").len().iter_rows())
    result["samples"] = {s: counts.get(s, 0) for s in (*JUDGED, *UNJUDGED)}
    return result


def generate_samples(path: str, problems: list[Problem], cfg: EvalModelConfig, backend_factory: Any = None):
    """`n_samples` samples per problem from the model at `path` (list per problem, in order)."""
    from microcoder.pipeline.generation.backends import SamplingParams, get_backend
    from microcoder.pipeline.generation.prompts import build_messages

    factory = backend_factory or get_backend
    backend = factory(cfg.backend, model=path, thinking=cfg.thinking, executor=cfg.executor,
                      ray_address=cfg.ray_address, **cfg.backend_options)
    try:
        prompts = [build_messages(p, thinking=cfg.thinking, language=cfg.language, system_prompt=cfg.system_prompt)
                   for p in problems]
        sampling = SamplingParams(temperature=cfg.temperature, top_p=cfg.top_p, max_tokens=cfg.max_tokens,
                                  seed=cfg.seed)
        samples = backend.generate(prompts, cfg.n_samples, sampling)
    finally:
        close = getattr(backend, "close", None)
        if callable(close):
            close()
        del backend
        _free_accelerator_memory()
    if len(samples) != len(problems) or any(len(s) != cfg.n_samples for s in samples):
        raise RuntimeError(f"backend returned {[len(s) for s in samples]} samples for {len(problems)} problems "
                           f"x {cfg.n_samples}")
    return samples


def _free_accelerator_memory() -> None:
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass


def score_samples(problems: list[Problem], samples: list[list[Any]], scorer: Scorer, batch_size: int,
                  model_name: str, progress: bool = True) -> list[dict[str, Any]]:
    """Score every sample (in judge batches) through the one scoring path; one row per sample."""
    from tqdm.auto import tqdm

    flat = [(p, si, sample) for p, group in zip(problems, samples, strict=True) for si, sample in enumerate(group)]
    rows: list[dict[str, Any]] = []
    with tqdm(total=len(flat), desc=f"judging {model_name}", unit="sample", disable=not progress) as bar:
        for start in range(0, len(flat), batch_size):
            chunk = flat[start:start + batch_size]
            scored = scorer.score([sample.text for _, _, sample in chunk], [p.id for p, _, _ in chunk])
            for (p, si, sample), result in zip(chunk, scored, strict=True):
                v = result.verdict
                rows.append({"model": model_name, "problem_id": p.id, "sample": si, "status": result.outcome,
                             "verdict": v.status if v is not None else None,
                             "reason": v.reason if v is not None else None,
                             "tokens": sample.token_count, "truncated": sample.truncated})
            bar.update(len(chunk))
    return rows


def render_table(models: dict[str, dict[str, Any]], ks: list[int]) -> str:
    """Markdown: one row per group (All, platforms, difficulties), pass@k per model, deltas vs the first."""
    names = list(models)
    first = models[names[0]]
    rows = [("All", "overall", None)]
    rows += [(k, "by_platform", k) for k in first["by_platform"]]
    rows += [(k, "by_difficulty", k) for k in first["by_difficulty"]]
    header = ["group", "problems"]
    for k in ks:
        header += [f"{n} pass@{k} (%)" for n in names]
        if len(names) > 1:
            header += [f"{n} - {names[0]} (pp)" for n in names[1:]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, section, key in rows:
        cells = []
        entry0 = first[section] if key is None else first[section][key]
        cells += [label, str(entry0["problems"])]
        for k in ks:
            values = []
            for n in names:
                entry = models[n][section] if key is None else models[n][section].get(key, {})
                values.append(entry.get(f"pass@{k}"))
            cells += [_pct(v) for v in values]
            if len(names) > 1:
                cells += [_pct(v - values[0], signed=True) if v is not None and values[0] is not None else "-"
                          for v in values[1:]]
        lines.append("| " + " | ".join(cells) + " |")
    unjudged = {n: models[n].get("overall", {}).get("unjudged_samples", 0) for n in names}
    if any(unjudged.values()):
        lines += ["", "Samples the judge did not finish (left out of pass@k, not counted as failures): "
                  + ", ".join(f"{n} {u}" for n, u in unjudged.items()) + "."]
    return "\n".join(lines) + "\n"


def _pct(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "-"
    return f"{100 * v:+.1f}" if signed else f"{100 * v:.1f}"


@dataclass
class EvalResult:
    stats: dict[str, Any]  # stats.json: benchmark problems read / kept / rejected, sample figures
    metrics: dict[str, Any]  # metrics.json: {"models": {name: pass@k by group, sample statuses}}


class EvalModel(Stage):
    """Evaluate every model of input `models` (name -> model directory or Hub id) on the benchmark
    (the stage's problems input, read by `load_benchmark`); write the outputs to `out_dir`.
    `evaluator`: the params' `evaluator:` section (None: defaults); inputs `judge` and
    `backend_factory` replace the evaluator and the backends (tests)."""

    name = STAGE
    section = "eval_model"
    config = EvalModelConfig
    evaluator_config = EvaluatorConfig
    evaluator_settings = False  # settings.json records the config, the benchmark and the models

    def load(self, benchmark: str | Path, ctx: StageContext) -> LoadedProblems:
        models = dict(ctx.inputs.get("models") or {})
        if not models:
            raise InputError("no models to evaluate: pass --model name=path")
        for path in models.values():
            check_model_path(path)
        ctx.settings = {"benchmark": str(Path(benchmark)), "models": models}
        problems, unusable = load_benchmark(benchmark, ctx.cfg.benchmark_format)
        return LoadedProblems(Path(benchmark), problems, unusable, read=len(problems) + len(unusable))

    def process(self, problems: list[Problem], ctx: StageContext) -> None:
        from microcoder.training.train import torch_threads

        with torch_threads(ctx.cfg.torch_threads):
            ctx.result["metrics"] = _evaluate(ctx, problems)

    def finish(self, stats: dict[str, Any], ctx: StageContext) -> EvalResult:
        return EvalResult(stats=stats, metrics=ctx.result["metrics"])


def _evaluate(ctx: StageContext, loaded: list[Problem]) -> dict[str, Any]:
    """Select, prompt, sample and judge; the outputs besides the base's; returns the metrics."""
    from microcoder.pipeline.evaluator.factory import make_evaluator
    from microcoder.pipeline.generation.prompts import build_messages
    from microcoder.pipeline.io import write_json, write_jsonl, write_text_atomic

    cfg, out, evaluator, progress = ctx.cfg, ctx.out_dir, ctx.evaluator, ctx.progress
    models, judge, backend_factory = ctx.inputs["models"], ctx.inputs.get("judge"), ctx.inputs.get("backend_factory")
    selected, outside = select_problems(loaded, cfg.date_from, cfg.date_to, cfg.max_problems)
    for r in outside:
        ctx.reject(r.id, r.reason, r.record)
    problems = []
    prompts = {}
    for p in selected:
        try:
            prompts[p.id] = build_messages(p, thinking=cfg.thinking, language=cfg.language,
                                           system_prompt=cfg.system_prompt)
        except ValueError as e:
            ctx.reject(p.id, f"cannot prompt: {e}", p)
            continue
        problems.append(p)
    over = _over_budget(cfg, models, prompts)  # counted with every model's tokenizer: the same problems for all
    for p in problems:
        if p.id in over:
            ctx.reject(p.id, over[p.id], p)
    problems = [p for p in problems if p.id not in over]
    ctx.stats.kept = len(problems)
    excluded = dict(sorted(ctx.stats.rejected_by_reason.items()))
    if not problems:
        ctx.rejects.close()
        raise InputError(f"{ctx.problems_path}: no problems left to evaluate (excluded: {excluded}; "
                         f"see {out / 'rejects.jsonl'})")
    log.info("evaluating %d models on %d problems (%s excluded)", len(models), len(problems), excluded)
    results: dict[str, dict[str, Any]] = {}
    sample_rows: list[dict[str, Any]] = []

    def make_judge():
        return make_evaluator(evaluator, executor=cfg.executor, ray_address=cfg.ray_address)

    with Scorer(problems, language=cfg.language, judge=judge, make_judge=make_judge,
                deadline_s=cfg.deadline_s) as scorer:
        for name, path in models.items():
            samples = generate_samples(path, problems, cfg, backend_factory)
            rows = score_samples(problems, samples, scorer, cfg.judge_batch_size, name, progress)
            results[name] = model_metrics(rows, problems, cfg.pass_at)
            unjudged = {s: results[name]["samples"][s] for s in UNJUDGED}
            if any(unjudged.values()):
                log.warning("%s: %s samples were not judged (left out of pass@k; raise evaluator.workers or "
                            "deadline_s)", name, unjudged)
            sample_rows.extend(rows)
    ctx.stats.figures = {"models": len(models), "samples": len(sample_rows),
                         "unjudged_samples": {name: m["overall"]["unjudged_samples"] for name, m in results.items()}}
    metrics = {"models": results}
    # With the other outputs (the base writes rejects.jsonl and the stats next): a killed run leaves
    # the previous set whole.
    write_json(out / "metrics.json", metrics)
    write_text_atomic(out / "table.md", render_table(results, cfg.pass_at))
    write_jsonl(out / "samples.jsonl", sample_rows)
    return metrics


def _over_budget(cfg: EvalModelConfig, models: dict[str, str], prompts: dict[str, list[dict[str, str]]]) -> dict[str, str]:
    """{problem id: reason} for prompts that leave less than max_tokens in the context (rollout's check)."""
    from microcoder.pipeline.generation.budget import budget_rejects

    options = cfg.backend_options
    return budget_rejects(prompts.items(), models=models.values(), max_tokens=cfg.max_tokens,
                          thinking=cfg.thinking, max_prompt_tokens=cfg.max_prompt_tokens,
                          max_model_len=options.get("max_model_len"), tokenizer=options.get("tokenizer"),
                          what="eval-model")
