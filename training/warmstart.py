"""Warm start: supervised fine-tuning (TRL `SFTTrainer`) of the policy on reference solutions.

A cold-start SFT before RL: the policy sees each validated training problem in exactly the
format rollout, training and evaluation use (the shared prompt builder rendered by the tokenizer's
chat template, thinking off by default) and learns to answer with the problem's reference
solution in one fenced code block, ended by the tokenizer's EOS. The loss is on the answer only.

Data rules:
- Only problems with a reference solution in the answer language are used; the shortest one is
  the answer (docstrings stripped, `ast.unparse` style) so a small model sees compact, uniform code.
- Benchmark problems are never trained on: a problem whose id, statement, reference code or
  word 13-grams (half of either side's) match a benchmark problem is rejected, and the final set is
  asserted clean before any training step.
- Every problem not trained on is in `rejects.jsonl` with its reason (never a silent drop).

Disabled (`enabled: false`, e.g. a real Qwen3 that already codes), the output is a copy of the base
model, so the downstream paths stay the same; a Hub id cannot be copied and is recorded as skipped.
The same seed, data and settings give the same weights on the same machine (CPU, fixed threads).
It trains and never judges code (no evaluator). Paths (problems, base model, benchmarks, outputs)
are the stage's options, the rest is `WarmStartConfig`; stats.json counts problems in the shared
vocabulary (read, kept = trained on, rejected by kind), settings.json records the settings.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import logging
import math
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microcoder.pipeline.inputs import InputError, load_problems
from microcoder.pipeline.schema import Problem
from microcoder.pipeline.stage import Stage, StageContext

log = logging.getLogger(__name__)

STAGE = "warmstart"
NGRAM_N = 13
NGRAM_MIN_OVERLAP = 0.5


@dataclass
class WarmStartConfig:
    enabled: bool = field(default=True, metadata={"help": "false: the output is a copy of the base model."})
    max_steps: int = field(default=300, metadata={"help": "Optimizer steps, at most (max_epochs may stop it sooner)."})
    max_epochs: float | None = field(default=60.0, metadata={
        "help": "Passes over the examples, at most: a handful of short answers is learnt in a few dozen steps, "
                "not max_steps (one example: 60 steps, not 300); null: max_steps alone."})
    learning_rate: float = field(default=3e-3, metadata={"help": "Peak learning rate."})
    lr_scheduler_type: str = field(default="cosine", metadata={"help": "transformers scheduler name."})
    warmup_steps: int = field(default=10, metadata={"help": "Linear warm-up steps."})
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay."})
    batch_size: int = field(default=8, metadata={"help": "Examples per optimizer step."})
    max_answer_tokens: int | None = field(default=128, metadata={
        "help": "Answers (fenced code + EOS) longer than this are not trained on; null: no limit."})
    max_length: int | None = field(default=2048, metadata={
        "help": "Prompt + answer tokens; longer examples are not trained on (never truncated)."})
    max_problems: int | None = field(default=None, metadata={
        "help": "Train on at most this many problems: those with the shortest answers (ties by id); null: all."})
    strip_docstrings: bool = field(default=True, metadata={"help": "Answer with the reference minus docstrings."})
    language: str = field(default="python", metadata={"help": "Answer language (the fence tag)."})
    thinking: bool = field(default=False, metadata={"help": "Chat-template thinking switch (as rollout)."})
    system_prompt: str | None = field(default=None, metadata={"help": "As rollout: null = built-in, '' = none."})
    seed: int = field(default=0, metadata={"help": "Training seed (data order, dropout)."})
    dtype: str = field(default="float32", metadata={"help": "Weights dtype."})
    torch_threads: int | None = field(default=2, metadata={
        "help": "torch CPU threads (null: unchanged). The warm start runs alone in its stage: 2 threads take 0.69x "
                "the time of 1 on the 2-core box, the weights bit for bit the same (checked on the default run's and the "
                "real sources' examples)."})
    sft: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "Extra trl.SFTConfig fields (trl's own typed config: names checked against it)."})

    def __post_init__(self) -> None:
        if self.dtype not in ("float32", "bfloat16", "float16"):
            raise ValueError(f"dtype must be float32, bfloat16 or float16, got {self.dtype!r}")
        if self.max_steps < 1 or self.batch_size < 1:
            raise ValueError("max_steps and batch_size must be >= 1")
        if self.max_epochs is not None and self.max_epochs <= 0:
            raise ValueError(f"max_epochs must be > 0 or null, got {self.max_epochs!r}")
        if self.sft:  # trl is heavy: only imported when extra fields are given
            import dataclasses

            from trl import SFTConfig

            unknown = sorted(set(self.sft) - {f.name for f in dataclasses.fields(SFTConfig)})
            if unknown:
                raise ValueError(f"sft: {unknown} are not trl.SFTConfig fields")


@dataclass
class WarmStartResult:
    stats: dict[str, Any]
    model_dir: Path
    rejects: list[dict[str, Any]]


# --- data -----------------------------------------------------------------------------------------
def _norm_text(text: str) -> str:
    return " ".join((text or "").lower().split())


def _digest(text: str) -> str:
    return hashlib.sha256(_norm_text(text).encode("utf-8")).hexdigest()


def _ngrams(text: str, n: int = NGRAM_N) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", (text or "").lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


class BenchmarkGuard:
    """Ids, statement and code digests and word n-grams of benchmark problems."""

    def __init__(self, problems: list[Problem]):
        self.ids = {p.id for p in problems}
        self.statements = {_digest(p.statement) for p in problems}
        self.codes = {_digest(r.code) for p in problems for r in p.reference_solutions}
        self.ngrams = [(p.id, _ngrams(p.statement)) for p in problems]

    @classmethod
    def from_files(cls, paths: list[str]) -> BenchmarkGuard:
        problems: list[Problem] = []
        for path in paths:
            loaded = load_problems(path, "benchmark")
            problems += loaded.problems
            # A benchmark row we cannot read could still be in the training data: refuse to guess.
            if loaded.rejects:
                raise InputError(f"benchmark {path}: {len(loaded.rejects)} unreadable rows "
                                 f"(first: {loaded.rejects[0].reason}); cannot guarantee they are excluded")
        return cls(problems)

    def match(self, problem: Problem) -> str | None:
        """Why `problem` is a benchmark problem, or None."""
        if problem.id in self.ids:
            return "benchmark id"
        if _digest(problem.statement) in self.statements:
            return "benchmark statement"
        if any(_digest(r.code) in self.codes for r in problem.reference_solutions):
            return "benchmark reference solution"
        grams = _ngrams(problem.statement)
        for bid, bgrams in self.ngrams:
            shared = len(grams & bgrams)
            if shared and shared >= NGRAM_MIN_OVERLAP * min(len(grams), len(bgrams)):
                return f"benchmark statement overlap ({bid}: {shared} shared {NGRAM_N}-grams)"
        return None


def strip_docstrings(code: str) -> str:
    """`code` without module/class/function docstrings, in `ast.unparse` style; unchanged when it
    does not parse (parsing only: the code never runs here)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def answer_text(code: str, language: str = "python") -> str:
    """The answer the policy learns: one fenced block, as `microcoder.pipeline.generation.extract` reads it."""
    return f"```{language}\n{code.strip(chr(10))}\n```"  # the prompt's fence tag is the language name


def pick_reference(problem: Problem, cfg: WarmStartConfig) -> str | None:
    codes = [r.code for r in problem.reference_solutions if r.language == cfg.language and r.code.strip()]
    if not codes:
        return None
    if cfg.strip_docstrings and cfg.language == "python":
        codes = [strip_docstrings(c) for c in codes]
    return min(codes, key=lambda c: (len(c), c))


@dataclass
class SFTData:
    rows: list[dict[str, Any]]  # problem_id, input_ids, labels (prompt tokens -100)
    rejects: list[dict[str, Any]]
    read: int


def build_sft_data(problems: list[Problem], tokenizer: Any, cfg: WarmStartConfig, guard: BenchmarkGuard,
                   ) -> SFTData:
    """Tokenised prompt + answer examples; the prompt tokens are exactly the rollout's."""
    from microcoder.pipeline.generation.prompts import build_messages, render_prompt
    from microcoder.pipeline.io import reject_row

    rows: list[dict[str, Any]] = []
    rejects: list[dict[str, Any]] = []

    def reject(p: Problem, reason: str) -> None:
        rejects.append(reject_row(p.id, STAGE, reason, p))

    for p in problems:
        if (why := guard.match(p)) is not None:
            reject(p, f"{why}: never trained on")
            continue
        code = pick_reference(p, cfg)
        if code is None:
            reject(p, f"no {cfg.language} reference solution")
            continue
        try:
            messages = build_messages(p, thinking=cfg.thinking, language=cfg.language, system_prompt=cfg.system_prompt)
        except ValueError as e:
            reject(p, f"no prompt: {e}")
            continue
        prompt = render_prompt(messages, tokenizer, thinking=cfg.thinking)
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        answer_ids = tokenizer(answer_text(code, cfg.language) + tokenizer.eos_token,
                               add_special_tokens=False)["input_ids"]
        if cfg.max_answer_tokens is not None and len(answer_ids) > cfg.max_answer_tokens:
            reject(p, f"answer of {len(answer_ids)} tokens > max_answer_tokens={cfg.max_answer_tokens}")
            continue
        if cfg.max_length is not None and len(prompt_ids) + len(answer_ids) > cfg.max_length:
            reject(p, f"{len(prompt_ids) + len(answer_ids)} tokens > max_length={cfg.max_length}")
            continue
        rows.append({"problem_id": p.id, "input_ids": prompt_ids + answer_ids,
                     "labels": [-100] * len(prompt_ids) + answer_ids, "_problem": p, "_answer": len(answer_ids)})
    if cfg.max_problems is not None and len(rows) > cfg.max_problems:
        # The shortest answers: a small policy memorises them in the fewest steps, whatever the
        # upstream stages let through.
        keep = {r["problem_id"] for r in sorted(rows, key=lambda r: (r["_answer"], r["problem_id"]))[:cfg.max_problems]}
        for r in rows:
            if r["problem_id"] not in keep:
                reject(r["_problem"], f"over max_problems={cfg.max_problems} (its answer of {r['_answer']} tokens "
                                      "is longer than theirs)")
        rows = [r for r in rows if r["problem_id"] in keep]
    for r in rows:
        del r["_problem"], r["_answer"]
    leaked = {r["problem_id"] for r in rows} & guard.ids
    assert not leaked, f"benchmark problems in the warm-start data: {sorted(leaked)}"
    return SFTData(rows=rows, rejects=rejects, read=len(problems))


# --- stage ----------------------------------------------------------------------------------------
class WarmStart(Stage):
    """Fine-tune input `model` into input `model_dir` (model + tokenizer), never on a problem of
    input `benchmarks`; stats.json, settings.json and rejects.jsonl in `out_dir`. Disabled, no
    problem is read."""

    name = STAGE
    config = WarmStartConfig
    input_label = "warm-start problems"

    def load(self, problems: str | Path | None, ctx: StageContext) -> Any:
        from microcoder.pipeline.inputs import check_model_path

        ctx.inputs["benchmarks"] = list(ctx.inputs.get("benchmarks", ("data/seed/benchmark.jsonl",)))
        ctx.inputs.setdefault("model", "models/tiny")
        ctx.settings = {"model": ctx.inputs["model"], "benchmarks": ctx.inputs["benchmarks"]}
        if not ctx.cfg.enabled:
            return None
        check_model_path(ctx.inputs["model"], "warm-start model")
        ctx.inputs["guard"] = BenchmarkGuard.from_files(ctx.inputs["benchmarks"])
        return super().load(problems, ctx)

    def process(self, problems: list[Problem] | None, ctx: StageContext) -> None:
        started = time.monotonic()
        model_dir = Path(ctx.inputs["model_dir"])
        if problems is None:
            ctx.stats.figures = _copy_base(ctx.inputs["model"], model_dir)
        else:
            _train(ctx, problems, model_dir)
        ctx.stats.figures["wall_s"] = round(time.monotonic() - started, 1)
        return None

    def finish(self, stats: dict[str, Any], ctx: StageContext) -> WarmStartResult:
        return WarmStartResult(stats=stats, model_dir=Path(ctx.inputs["model_dir"]), rejects=ctx.rejects.rows)


def _copy_base(model: str, out_dir: Path) -> dict[str, Any]:
    """The figures of a disabled warm start: no problem is read."""
    base = Path(model)
    if not base.is_dir():
        log.warning("warm start disabled and %s is not a local folder: nothing copied to %s; point the "
                    "downstream model paths at %s", model, out_dir, model)
        _replace_dir(out_dir, None)
        return {"enabled": False, "status": "skipped", "copied": False}
    _replace_dir(out_dir, lambda tmp: shutil.copytree(base, tmp, dirs_exist_ok=True))
    return {"enabled": False, "status": "copied base model", "copied": True}


def _replace_dir(target: Path, fill) -> None:
    """Fill a fresh sibling folder, then swap it in (a killed run never leaves half a model)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)
    tmp.mkdir()
    if fill is not None:
        fill(tmp)
    if target.exists():
        target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def planned_steps(cfg: WarmStartConfig, examples: int) -> int:
    """max_steps, or fewer where max_epochs passes over `examples` take fewer (a pass is
    ceil(examples / batch_size) steps)."""
    if cfg.max_epochs is None:
        return cfg.max_steps
    return max(1, min(cfg.max_steps, math.ceil(math.ceil(examples / cfg.batch_size) * cfg.max_epochs)))


@contextlib.contextmanager
def score_answer_positions_only() -> Iterator[bool]:
    """TRL's fused LM head scores only the labelled positions where Triton runs (CUDA, XPU) and every
    position elsewhere, to keep tile shapes fixed for compiled backends (Neuron); CPU compiles
    nothing, and here ~93% of the positions are prompt (labels -100): scoring them all was half of
    each step. The loss is the same sum over the same positions (it differs from the all-position
    one in float rounding only). Yields whether TRL has the switch (an older or newer TRL without
    it trains as it does)."""
    import trl.trainer.utils as fused

    original = getattr(fused, "_use_triton", None)
    if original is None:
        yield False
        return
    fused._use_triton = lambda device: device.type == "cpu" or original(device)
    try:
        yield True
    finally:
        fused._use_triton = original


def _train(ctx: StageContext, problems: list[Problem], out_dir: Path) -> None:
    """Train on `problems` (the reader's rejects are already in `ctx`) into `out_dir`; the data's
    rejects and the training figures go to `ctx`."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed
    from trl import SFTConfig, SFTTrainer

    cfg, model_path, progress = ctx.cfg, ctx.inputs["model"], ctx.progress
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    data = build_sft_data(problems, tokenizer, cfg, ctx.inputs["guard"])
    for r in data.rejects:
        ctx.reject(r["id"], r["reason"], r["record"], key=reject_kind(r["reason"]))
    if not data.rows:  # nothing to learn from: the base model goes on, the rejects say why
        log.warning("warm start: none of %d problems in %s has a usable reference solution (see rejects.jsonl); "
                    "passing the base model %s through untrained", ctx.stats.read, ctx.problems_path, model_path)
        ctx.stats.figures = {**_copy_base(model_path, out_dir), "enabled": True,
                             "status": "nothing to learn: base model passed through"}
        return
    previous_threads = torch.get_num_threads()
    if cfg.torch_threads:
        torch.set_num_threads(cfg.torch_threads)
    try:
        set_seed(cfg.seed)
        model = AutoModelForCausalLM.from_pretrained(model_path, dtype=getattr(torch, cfg.dtype))
        work = out_dir.with_name(f".{out_dir.name}.trainer")
        shutil.rmtree(work, ignore_errors=True)
        args = SFTConfig(**{
            "output_dir": str(work), "max_steps": planned_steps(cfg, len(data.rows)), "learning_rate": cfg.learning_rate,
            "lr_scheduler_type": cfg.lr_scheduler_type, "warmup_steps": cfg.warmup_steps,
            "weight_decay": cfg.weight_decay, "per_device_train_batch_size": cfg.batch_size, "seed": cfg.seed,
            "data_seed": cfg.seed, "max_length": None, "packing": False, "logging_steps": 10,
            "save_strategy": "no", "report_to": "none", "use_cpu": not torch.cuda.is_available(),
            "dataloader_num_workers": 0, "disable_tqdm": not progress,
            # TRL defaults it on (memory for time); the tiny model on CPU has memory to spare and the
            # recomputation cost a sixth of each step (`sft: {gradient_checkpointing: true}` restores it)
            "gradient_checkpointing": False, **cfg.sft,
        })
        dataset = Dataset.from_list([{"input_ids": r["input_ids"], "labels": r["labels"]} for r in data.rows])
        trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
        with score_answer_positions_only():
            result = trainer.train()
        _replace_dir(out_dir, lambda tmp: (trainer.save_model(str(tmp)), tokenizer.save_pretrained(str(tmp))))
        if args.save_strategy == "no":
            shutil.rmtree(work, ignore_errors=True)
    finally:
        torch.set_num_threads(previous_threads)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    answer_tokens = sum(sum(t != -100 for t in r["labels"]) for r in data.rows)
    ctx.stats.kept = len(data.rows)
    ctx.stats.figures = {
        "enabled": True, "status": "trained", "answer_tokens": answer_tokens,
        "tokens": sum(len(r["input_ids"]) for r in data.rows),
        "steps": trainer.state.global_step, "epochs": round(trainer.state.epoch or 0.0, 2),
        "loss_first": losses[0] if losses else None, "loss_last": losses[-1] if losses else None,
        "train_loss": round(result.training_loss, 4),
        "loss_curve": [{"step": h["step"], "loss": h["loss"]} for h in trainer.state.log_history if "loss" in h],
        "problem_ids": [r["problem_id"] for r in data.rows],
    }


REJECT_KINDS = (("benchmark", "benchmark"), ("max_answer_tokens", "answer_too_long"), ("max_length", "too_long"),
                ("reference solution", "no_reference"), ("max_problems", "over_max_problems"),
                ("no prompt", "no_prompt"))


def reject_kind(reason: str) -> str:
    """A training-data reject's kind for `rejected_by_reason` (the reasons carry numbers and ids)."""
    return next((kind for needle, kind in REJECT_KINDS if needle in reason), reason)
