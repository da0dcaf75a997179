"""Model evaluation: pass@1 and unbiased pass@k on a benchmark split, overall and by platform and
difficulty, for several models side by side (the base model and the trained checkpoint).

Samples come from the rollout backends (`pipeline.rollout.backends`), prompts from the shared
prompt builder, and every sample is judged by the sandboxed evaluator through the same scoring
as the training reward (`training.rewards.EvaluatorReward.score`: extraction, first-failure
judging, a hard per-batch deadline). A sample the judge did not finish (`deadline`: still queued
or running at the batch deadline) or could not run (`error`: a harness failure) is *unjudged*: it
is the judge's failure, not the model's, so it is left out of pass@k (never counted as a failure)
and counted per model and group (`unjudged_samples`, `samples.deadline`, `samples.error`).

Outputs (`output_dir`): `metrics.json`, `table.md`, `samples.jsonl` (one row per sample) and
`rejects.jsonl`: every benchmark record not evaluated (unreadable, invalid, a duplicate id, outside
the date window, over `max_problems`, not promptable) with its reason; in `metrics.json`,
`benchmark.read = benchmark.problems + benchmark.rejected`.

pass@k per problem is the unbiased estimator of Chen et al. (2021):
`1 - C(n - c, k) / C(n, k)` for n *judged* samples with c correct; a group's value is the mean over
its problems with at least k judged samples (`pass@k_problems` says how many: fewer than
`problems` only when the judge left samples unjudged).
"""

from __future__ import annotations

import gc
import logging
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.difficulty.passrate import pass_at_k as estimate_pass_at_k
from pipeline.inputs import (
    DUPLICATE,
    InputError,
    Reject,
    check_model_path,
    load_problems,
    require_input,
)
from pipeline.schema import Problem

log = logging.getLogger(__name__)

PLATFORMS = ("atcoder", "leetcode", "codeforces")
DIFFICULTIES = ("easy", "medium", "hard")
BENCHMARK_FORMATS = ("auto", "problems", "livecodebench")


@dataclass
class EvalModelConfig:
    benchmark: str = field(default="data/seed/benchmark.jsonl", metadata={
        "help": "Benchmark problems: our jsonl, a Problem parquet file/directory, or LiveCodeBench "
                "code_generation_lite jsonl(.gz) rows."})
    benchmark_format: str = field(default="auto", metadata={
        "help": "problems | livecodebench | auto (jsonl whose first row has `question_content` is LiveCodeBench)."})
    date_from: str | None = field(default=None, metadata={
        "help": "Keep problems with contest_date >= this (YYYY-MM-DD, inclusive); None: no lower bound."})
    date_to: str | None = field(default=None, metadata={
        "help": "Keep problems with contest_date <= this (YYYY-MM-DD, inclusive); None: no upper bound."})
    models: dict[str, str] = field(default_factory=lambda: {"base": "models/tiny", "trained": "data/train/checkpoint"},
                                   metadata={"help": "name -> model directory or Hub id, evaluated side by side."})
    backend: str = field(default="hf", metadata={"help": "Generation backend: hf | vllm | openai."})
    backend_options: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "Extra backend constructor options (batch_size, dtype, tensor_parallel_size, base_url...)."})
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
    workers: int | None = field(default=None, metadata={"help": "Evaluator worker processes (None: default)."})
    timeout_scale: float = field(default=1.0, metadata={"help": "Multiplier on each problem's time limit."})
    torch_threads: int | None = field(default=None, metadata={
        "help": "CPU threads for torch (None: torch's default); applies to the hf backend."})
    output_dir: str = field(default="data/eval", metadata={"help": "Where metrics.json, table.md, samples.jsonl go."})

    def __post_init__(self) -> None:
        if self.n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {self.n_samples}")
        from pipeline.rollout.backends import SamplingParams
        from pipeline.rollout.budget import resolve_budget

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
        if not self.models:
            raise ValueError("models is empty: name at least one model to evaluate")
        for name in ("date_from", "date_to"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, _date(value, name))


def _date(value: Any, what: str) -> str:
    text = str(value)[:10]
    if len(text) != 10 or text[4] != "-" or text[7] != "-" or not (text[:4] + text[5:7] + text[8:]).isdigit():
        raise ValueError(f"{what}: expected a YYYY-MM-DD date, got {value!r}")
    return text


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (the shared estimator), where k <= n is required: a score needs k samples."""
    value = estimate_pass_at_k(n, c, k)
    if value is None:
        raise ValueError(f"need 1 <= k <= n, got n={n} k={k}")
    return value


def platform_of(problem: Problem) -> str:
    p = (problem.platform or "").strip().lower()
    return p if p in PLATFORMS else ("other" if p else "unknown")


def difficulty_of(problem: Problem) -> str:
    d = (problem.difficulty or "").strip().lower()
    return d if d in DIFFICULTIES else "unknown"


def benchmark_format(path: str | Path) -> str:
    """`livecodebench` for jsonl(.gz) whose first record has LiveCodeBench's `question_content`."""
    from pipeline.sources.base import iter_json_lines

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
    from pipeline.sources import livecodebench
    from pipeline.sources.base import SourceContext

    problems, rejects = [], []
    for item in livecodebench.read(livecodebench.Options(path=str(path)), SourceContext(name="livecodebench")):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            rejects.append(Reject(item.id, f"unreadable LiveCodeBench row ({item.code}): {item.detail}", item.record))
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
            excluded.append(Reject(p.id, reason, p))
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


def excluded_counts(rejects: list[Reject]) -> dict[str, int]:
    """Rejects counted by kind (the reason up to its first colon; the details are in rejects.jsonl)."""
    return dict(sorted(Counter(r.reason.split(":")[0] for r in rejects).items()))


# Sample statuses the judge decided; `error` and `deadline` are the judge's own failures (unjudged).
JUDGED = ("pass", "fail", "no_code")
UNJUDGED = ("error", "deadline")


@dataclass
class ProblemScore:
    problem_id: str
    platform: str
    difficulty: str
    n: int  # judged samples (the n of pass@k)
    correct: int
    statuses: dict[str, int]  # every sample, judged or not

    @property
    def unjudged(self) -> int:
        return sum(self.statuses.get(s, 0) for s in UNJUDGED)


def aggregate(scores: list[ProblemScore], ks: list[int]) -> dict[str, Any]:
    """pass@k overall, by platform, by difficulty and by platform/difficulty, plus sample statuses."""
    def group(items: list[ProblemScore]) -> dict[str, Any]:
        out: dict[str, Any] = {"problems": len(items)}
        for k in ks:
            scored = [s for s in items if s.n >= k]  # a problem needs k judged samples for a pass@k
            out[f"pass@{k}"] = sum(pass_at_k(s.n, s.correct, k) for s in scored) / len(scored) if scored else None
            out[f"pass@{k}_problems"] = len(scored)
        out["unjudged_samples"] = sum(s.unjudged for s in items)
        return out

    by: dict[str, dict[str, list[ProblemScore]]] = {"by_platform": defaultdict(list), "by_difficulty": defaultdict(list),
                                                   "by_platform_difficulty": defaultdict(list)}
    for s in scores:
        by["by_platform"][s.platform].append(s)
        by["by_difficulty"][s.difficulty].append(s)
        by["by_platform_difficulty"][f"{s.platform}/{s.difficulty}"].append(s)
    statuses: Counter[str] = Counter()
    for s in scores:
        statuses.update(s.statuses)
    result: dict[str, Any] = {"overall": group(scores)}
    for name, groups in by.items():
        result[name] = {key: group(items) for key, items in sorted(groups.items())}
    result["samples"] = {s: statuses.get(s, 0) for s in (*JUDGED, *UNJUDGED)}
    return result


def generate_samples(path: str, problems: list[Problem], cfg: EvalModelConfig, backend_factory: Any = None):
    """`n_samples` samples per problem from the model at `path` (list per problem, in order)."""
    from pipeline.rollout.backends import SamplingParams, get_backend
    from pipeline.rollout.prompts import build_messages

    factory = backend_factory or get_backend
    backend = factory(cfg.backend, model=path, thinking=cfg.thinking, **cfg.backend_options)
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


def score_samples(problems: list[Problem], samples: list[list[Any]], scorer: Any, batch_size: int,
                  model_name: str) -> tuple[list[ProblemScore], list[dict[str, Any]]]:
    """Judge every sample (in evaluator batches); per-problem scores and per-sample rows."""
    from tqdm.auto import tqdm

    flat = [(pi, si) for pi in range(len(problems)) for si in range(len(samples[pi]))]
    statuses: dict[tuple[int, int], str] = {}
    verdicts: dict[tuple[int, int], Any] = {}
    with tqdm(total=len(flat), desc=f"judging {model_name}", unit="sample") as bar:
        for start in range(0, len(flat), batch_size):
            chunk = flat[start:start + batch_size]
            texts = [samples[pi][si].text for pi, si in chunk]
            ids = [problems[pi].id for pi, _ in chunk]
            st, vs = scorer.score(texts, ids)
            statuses.update(zip(chunk, st, strict=True))
            verdicts.update(zip(chunk, vs, strict=True))
            bar.update(len(chunk))
    scores, rows = [], []
    for pi, p in enumerate(problems):
        per = [statuses[(pi, si)] for si in range(len(samples[pi]))]
        scores.append(ProblemScore(p.id, platform_of(p), difficulty_of(p), n=sum(s in JUDGED for s in per),
                                   correct=sum(s == "pass" for s in per), statuses=dict(Counter(per))))
        for si, sample in enumerate(samples[pi]):
            v = verdicts[(pi, si)]
            rows.append({"model": model_name, "problem_id": p.id, "sample": si, "status": statuses[(pi, si)],
                         "verdict": v.status if v is not None else None, "reason": v.reason if v is not None else None,
                         "tokens": sample.token_count, "truncated": sample.truncated})
    return scores, rows


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


def run_evaluation(cfg: EvalModelConfig, *, judge: Any = None, backend_factory: Any = None) -> dict[str, Any]:
    """Evaluate every model in `cfg.models`; write metrics.json, table.md and samples.jsonl."""
    from training.train import torch_threads

    with torch_threads(cfg.torch_threads):
        return _run_evaluation(cfg, judge, backend_factory)


def _run_evaluation(cfg: EvalModelConfig, judge: Any, backend_factory: Any) -> dict[str, Any]:
    from pipeline.io import write_json, write_jsonl, write_text_atomic
    from pipeline.rollout.prompts import build_messages
    from training.rewards import EvaluatorReward

    for path in cfg.models.values():
        check_model_path(path)
    loaded, unusable = load_benchmark(cfg.benchmark, cfg.benchmark_format)
    read = len(loaded) + len(unusable)
    selected, outside = select_problems(loaded, cfg.date_from, cfg.date_to, cfg.max_problems)
    rejects = unusable + outside
    problems = []
    prompts = {}
    for p in selected:
        try:
            prompts[p.id] = build_messages(p, thinking=cfg.thinking, language=cfg.language,
                                           system_prompt=cfg.system_prompt)
        except ValueError as e:
            rejects.append(Reject(p.id, f"cannot prompt: {e}", p))
            continue
        problems.append(p)
    over = _over_budget(cfg, prompts)  # counted with every model's tokenizer: the same problems for all
    rejects += [Reject(p.id, over[p.id], p) for p in problems if p.id in over]
    problems = [p for p in problems if p.id not in over]
    out = Path(cfg.output_dir)
    excluded = excluded_counts(rejects)
    if not problems:
        _write_rejects(out, rejects)
        raise InputError(f"{cfg.benchmark}: no problems left to evaluate (excluded: {excluded}; "
                         f"see {out / 'rejects.jsonl'})")
    log.info("evaluating %d models on %d problems (%s excluded)", len(cfg.models), len(problems), excluded)
    results: dict[str, dict[str, Any]] = {}
    sample_rows: list[dict[str, Any]] = []
    with EvaluatorReward(problems, judge=judge, language=cfg.language, deadline_s=cfg.deadline_s,
                         workers=cfg.workers, timeout_scale=cfg.timeout_scale) as scorer:
        for name, path in cfg.models.items():
            samples = generate_samples(path, problems, cfg, backend_factory)
            scores, rows = score_samples(problems, samples, scorer, cfg.judge_batch_size, name)
            results[name] = {"path": path, **aggregate(scores, cfg.pass_at)}
            unjudged = {s: results[name]["samples"][s] for s in UNJUDGED}
            if any(unjudged.values()):
                log.warning("%s: %s samples were not judged (left out of pass@k; raise workers or deadline_s)",
                            name, unjudged)
            sample_rows.extend(rows)
    metrics = {
        "benchmark": {"path": cfg.benchmark, "read": read, "problems": len(problems), "rejected": len(rejects),
                      "excluded": excluded, "date_from": cfg.date_from, "date_to": cfg.date_to},
        "settings": {"n_samples": cfg.n_samples, "pass_at": cfg.pass_at, "temperature": cfg.temperature,
                     "top_p": cfg.top_p, "max_tokens": cfg.max_tokens, "thinking": cfg.thinking,
                     "backend": cfg.backend, "seed": cfg.seed},
        "models": results,
    }
    _write_rejects(out, rejects)  # with the other outputs: a killed run leaves the previous set whole
    write_json(out / "metrics.json", metrics)
    write_text_atomic(out / "table.md", render_table(results, cfg.pass_at))
    write_jsonl(out / "samples.jsonl", sample_rows)
    return metrics


def _over_budget(cfg: EvalModelConfig, prompts: dict[str, list[dict[str, str]]]) -> dict[str, str]:
    """{problem id: reason} for prompts that leave less than max_tokens in the context (rollout's check)."""
    from pipeline.rollout.budget import budget_rejects

    options = cfg.backend_options
    return budget_rejects(prompts.items(), models=cfg.models.values(), max_tokens=cfg.max_tokens,
                          thinking=cfg.thinking, max_prompt_tokens=cfg.max_prompt_tokens,
                          max_model_len=options.get("max_model_len"), tokenizer=options.get("tokenizer"),
                          what="eval-model")


def _write_rejects(out: Path, rejects: list[Reject]) -> None:
    from pipeline.io import RejectsWriter

    with RejectsWriter(out / "rejects.jsonl", "evaluate") as writer:
        for r in rejects:
            writer.add(r.id, r.reason, r.record)
