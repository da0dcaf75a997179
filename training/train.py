"""The train entry: problems -> prompt dataset -> model -> MicroCoderGRPOTrainer -> metrics, curves, checkpoint.

Outputs (under `output_dir`, default `data/train/`):
- `metrics.json`: DVC metrics (last generation's reward, pass rate, masked fraction, diversity,
  temperature...; means over the run; problem accounting; temperature changes);
- `curves.csv`: one row per generation step (DVC plots: reward, length, diversity, temperature,
  masked fraction...);
- `checkpoint/`: the trained model and tokenizer (`save_pretrained`), replaced atomically;
- `rejects.jsonl`: problems that could not be trained on, with the reason.
"""

from __future__ import annotations

import contextlib
import csv
import io
import logging
import math
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.inputs import InputError, check_model_path
from pipeline.io import write_json, write_jsonl, write_text_atomic

log = logging.getLogger(__name__)


def _cpu_grpo_defaults() -> dict[str, Any]:
    # A few seconds on 2 CPU cores with the tiny model; the GPU run overrides these (docs/training.md).
    return {
        "max_steps": 4,
        "per_device_train_batch_size": 8,
        "num_generations": 4,
        "max_completion_length": 32,
        "repetition_window": 8,
        "learning_rate": 1e-4,
        "temperature": 1.0,
        "logging_steps": 1,
        "bf16": False,
        "gradient_checkpointing": False,
        "save_strategy": "no",
        "report_to": "none",
        "reward_deadline_s": 60.0,
    }


@dataclass
class TrainConfig:
    model: str = field(default="models/tiny", metadata={"help": "Policy model: local directory or Hub id."})
    input: str = field(default="data/curated", metadata={
        "help": "Training problems: curated shards (Hub layout data/train-*.parquet), a Problem parquet file or "
                "shard directory, or our jsonl."})
    fallback_input: str | None = field(default="data/validated/problems.parquet", metadata={
        "help": "Used only when `input` does not exist (before the first build); an empty input is an error."})
    output_dir: str = field(default="data/train", metadata={"help": "Where metrics, curves and the checkpoint go."})
    preset: str = field(default="microcoder", metadata={"help": "Recipe: microcoder | dapo | grpo."})
    max_problems: int | None = field(default=None, metadata={"help": "Train on at most this many problems."})
    thinking: bool = field(default=False, metadata={"help": "Chat-template thinking switch (Qwen3)."})
    system_prompt: str | None = field(default=None, metadata={
        "help": "System prompt (None: the rollout default; '' for none)."})
    use_dataset_prompts: bool = field(default=True, metadata={
        "help": "Use the curated rows' own `prompt` column when present (else build prompts with the settings here)."})
    dtype: str = field(default="float32", metadata={"help": "Model weights dtype: float32 | bfloat16 | float16."})
    seed: int = field(default=0, metadata={"help": "Seed for data order, sampling and the mask's draws."})
    torch_threads: int | None = field(default=None, metadata={
        "help": "CPU threads for torch (None: torch's default). 1 avoids thread thrashing on a busy small CPU box."})
    grpo: dict[str, Any] = field(default_factory=_cpu_grpo_defaults, metadata={
        "help": "MicroCoderGRPOConfig fields (TRL GRPOConfig + MicroCoder knobs), applied over the preset."})


@dataclass
class TrainResult:
    metrics: dict[str, Any]
    curves: list[dict[str, float]]
    checkpoint: Path


def build_grpo_config(cfg: TrainConfig, scratch_dir: Path):
    from training.config import preset

    grpo = {**_cpu_grpo_defaults(), **(cfg.grpo or {})}
    # YAML reads an unquoted `no` as False: `save_strategy: no` means the strategy "no".
    grpo = {k: ("no" if k.endswith("_strategy") and v is False else v) for k, v in grpo.items()}
    for key in ("output_dir", "seed"):
        if key in grpo:
            raise ValueError(f"set `{key}` at the top of the train params, not under `grpo`")
    return preset(cfg.preset, output_dir=str(scratch_dir), seed=cfg.seed, data_seed=cfg.seed,
                  chat_template_kwargs={"enable_thinking": cfg.thinking}, **grpo)


def run_training(cfg: TrainConfig, *, judge: Any = None) -> TrainResult:
    """Train and write the outputs; `judge` replaces the evaluator (tests)."""
    with torch_threads(cfg.torch_threads):
        return _run_training(cfg, judge)


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Run with `n` torch CPU threads (None: unchanged), restoring the previous count after."""
    import torch

    previous = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _run_training(cfg: TrainConfig, judge: Any) -> TrainResult:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.data import load_training_problems, prompt_dataset, resolve_input
    from training.rewards import EvaluatorReward
    from training.trainer import MicroCoderGRPOTrainer

    out_dir = Path(cfg.output_dir)
    source = resolve_input(cfg.input, cfg.fallback_input)
    check_model_path(cfg.model, "train model")
    out_dir.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(out_dir)
    scratch = Path(tempfile.mkdtemp(prefix=".trainer-", dir=out_dir))
    try:
        try:
            args = build_grpo_config(cfg, scratch)
        except (ValueError, TypeError) as e:  # an unknown preset or GRPO field, a bad value
            raise InputError(f"params `train`: {e}") from e
        loaded = load_training_problems(source, language=args.reward_language, max_problems=cfg.max_problems)
        if not loaded.problems:
            write_jsonl(out_dir / "rejects.jsonl", loaded.rejects)
            raise InputError(f"{source}: none of {loaded.read} problems can be trained on (see "
                             f"{out_dir / 'rejects.jsonl'})")
        log.info("training on %d problems from %s (%d rejected)", len(loaded.problems), source, len(loaded.rejects))
        dataset = prompt_dataset(loaded.problems, language=args.reward_language, thinking=cfg.thinking,
                                 system_prompt=cfg.system_prompt, use_dataset_prompts=cfg.use_dataset_prompts)
        tokenizer = AutoTokenizer.from_pretrained(cfg.model)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        model = AutoModelForCausalLM.from_pretrained(cfg.model, dtype=getattr(torch, cfg.dtype))
        reward = EvaluatorReward(
            loaded.problems, judge=judge, language=args.reward_language, deadline_s=args.reward_deadline_s,
            workers=args.reward_workers, timeout_scale=args.reward_timeout_scale, reward_pass=args.reward_pass,
            reward_fail=args.reward_fail, reward_no_code=args.reward_no_code,
        )
        with reward:
            trainer = MicroCoderGRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=[reward],
                                            args=args, train_dataset=dataset)
            trainer.train()
        checkpoint = out_dir / "checkpoint"
        if trainer.accelerator.is_main_process:
            _save_checkpoint(trainer, tokenizer, checkpoint)
        curves = trainer.generation_log
        metrics = summarise(cfg, trainer, loaded, source, reward)
        if trainer.accelerator.is_main_process:
            # Written with the other outputs, so a killed run leaves the previous run's set whole.
            write_jsonl(out_dir / "rejects.jsonl", loaded.rejects)
            write_json(out_dir / "metrics.json", metrics)
            write_text_atomic(out_dir / "curves.csv", curves_csv(curves))
        return TrainResult(metrics=metrics, curves=curves, checkpoint=checkpoint)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _remove_leftovers(out_dir: Path) -> None:
    """Scratch and half-saved checkpoint folders of a run that was killed (a finished or failed run
    removes its own). A run killed in the middle of the checkpoint swap left the previous
    checkpoint as `.checkpoint.old`: it is put back, not deleted."""
    checkpoint, retired = out_dir / "checkpoint", out_dir / ".checkpoint.old"
    if retired.is_dir() and not checkpoint.exists():
        log.warning("restoring %s from %s (a run was killed while replacing it)", checkpoint, retired)
        retired.rename(checkpoint)
    for leftover in [*out_dir.glob(".trainer-*"), *out_dir.glob(".checkpoint-*"), out_dir / ".checkpoint.old"]:
        if leftover.is_dir():
            log.warning("removing %s, left by an interrupted run", leftover)
            shutil.rmtree(leftover, ignore_errors=True)


def _save_checkpoint(trainer: Any, tokenizer: Any, path: Path) -> None:
    """save_pretrained into a temp dir next to `path`, then swap it in."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    try:
        tmp.chmod(0o755)  # mkdtemp makes it private; a checkpoint is an ordinary output directory
        trainer.save_model(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        for leftover in ("training_args.bin",):  # pickled TrainingArguments: not needed to load the model
            (tmp / leftover).unlink(missing_ok=True)
        old = path.with_name(f".{path.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        if path.exists():
            path.rename(old)
        tmp.rename(path)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _mean(rows: list[dict[str, float]], key: str) -> float | None:
    values = [r[key] for r in rows if not math.isnan(r[key])]
    return sum(values) / len(values) if values else None


def _clean(x: Any) -> Any:
    return None if isinstance(x, float) and math.isnan(x) else x


def summarise(cfg: TrainConfig, trainer: Any, loaded: Any, source: Path, reward: Any) -> dict[str, Any]:
    from training.trainer import GENERATION_FIELDS

    rows = trainer.generation_log
    last = rows[-1] if rows else {}
    keys = [k for k in GENERATION_FIELDS if k not in ("step", "generation")]
    args = trainer.args
    return {
        "preset": cfg.preset,
        "model": cfg.model,
        "input": str(source),
        "problems": {"read": loaded.read, "used": len(loaded.problems), "rejected": len(loaded.rejects)},
        "steps": trainer.state.global_step,
        "generations": len(rows),
        "final": {k: _clean(last.get(k, math.nan)) for k in keys},
        "mean": {k: _mean(rows, k) for k in keys},
        "reward_statuses": dict(sorted(reward.stats.items())),
        "temperature_changes": trainer.temperature_changes,
        "temperature_probe": {str(t): d for t, d in sorted(trainer.probe_results.items())},
        "settings": {
            "num_generations": args.num_generations, "max_completion_length": args.max_completion_length,
            "truncation_mask_rho": args.truncation_mask_rho, "repetition_window": args.repetition_window,
            "beta": args.beta, "epsilon": args.epsilon, "epsilon_high": args.epsilon_high,
            "loss_type": args.loss_type, "mask_truncated_completions": args.mask_truncated_completions,
            "temperature": args.temperature, "temperature_schedule": args.temperature_schedule,
        },
    }


def curves_csv(rows: list[dict[str, float]]) -> str:
    from training.trainer import GENERATION_FIELDS

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(GENERATION_FIELDS), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
    return buf.getvalue()
