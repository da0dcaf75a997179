"""The train entry: problems -> prompt dataset -> model -> MicroCoderGRPOTrainer -> metrics, curves, checkpoint.

Outputs (under `output_dir`, default `data/train/`):
- `metrics.json`: DVC metrics (last generation's reward, pass rate, masked fraction, diversity,
  temperature, unjudged share...; means over the run; problem accounting; temperature changes);
- `curves.csv`: one row per generation step (DVC plots: reward, length, diversity, temperature,
  masked fraction...);
- `checkpoint/`: the trained model and tokenizer (`save_pretrained`), replaced atomically;
- `rejects.jsonl`: problems that could not be trained on, with the reason;
- `trainer/`: TRL's checkpoints (`checkpoint-<step>/`: weights, optimizer, scheduler, RNG states,
  trainer state, and MicroCoderGRPOTrainer's own state) and `run.json` (the run's settings and
  whether it finished). `resume: true` (`microcoder train --resume`) continues an interrupted run
  from its latest complete checkpoint; a new run refuses to start over an interrupted one.

Under `accelerate launch` every process runs this; only the main process touches the output folder
(cleanup, swaps, writes), the others wait for it at barriers, and every process takes part in
saving the model (FSDP / ZeRO-3 gather the weights collectively).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import logging
import math
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.inputs import InputError, check_model_path
from pipeline.io import write_json, write_jsonl, write_text_atomic

log = logging.getLogger(__name__)


TRAINER_DIR = "trainer"  # TRL's output_dir under the stage's output: checkpoints survive the run
RUN_FILE = "run.json"
# Settings a resumed run must share with the interrupted one (anything else may change, with a warning:
# max_steps to train longer, reward_workers or reward_deadline_s to fix a slow judge...).
RESUME_FIXED = ("preset", "model", "seed", "dtype", "thinking", "system_prompt", "use_dataset_prompts",
                "max_problems", "num_generations", "per_device_train_batch_size", "gradient_accumulation_steps",
                "steps_per_generation", "num_iterations", "max_completion_length", "repetition_window",
                "learning_rate", "temperature", "temperature_probe", "diversity_target", "diversity_floor",
                "diversity_patience", "beta", "epsilon", "epsilon_high", "loss_type", "scale_rewards",
                "truncation_mask_rho", "mask_truncated_completions", "temperature_schedule", "reward_pass",
                "reward_fail", "reward_no_code")


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
    resume: bool = field(default=False, metadata={
        "help": "Continue the interrupted run in output_dir/trainer from its latest complete checkpoint "
                "(`microcoder train --resume`). False: start a new run (refused over an interrupted one)."})
    grpo: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "MicroCoderGRPOConfig fields (TRL GRPOConfig + MicroCoder knobs) over the preset. An absent key takes "
                "the paper default (MicroCoderGRPOConfig); a key that contradicts the preset is an error."})
    preset_grpo: dict[str, dict[str, Any]] = field(default_factory=dict, metadata={
        "help": "Fields applied only when that preset is chosen, over `grpo`: {preset: {field: value}}. For keys a "
                "baseline pins (e.g. a temperature_schedule for microcoder only), so one params file builds "
                "every preset."})


@dataclass
class TrainResult:
    metrics: dict[str, Any]
    curves: list[dict[str, float]]
    checkpoint: Path


def build_grpo_config(cfg: TrainConfig, output_dir: Path):
    """The MicroCoderGRPOConfig of the preset with `cfg.grpo` over it (absent keys: the paper defaults)."""
    from training.config import PRESETS, preset

    unknown = sorted(set(cfg.preset_grpo or {}) - set(PRESETS))
    if unknown:
        raise ValueError(f"preset_grpo names unknown presets {unknown}; valid: {sorted(PRESETS)}")
    chosen = {**(cfg.grpo or {}), **((cfg.preset_grpo or {}).get(cfg.preset) or {})}
    # YAML reads an unquoted `no` as False: `save_strategy: no` means the strategy "no".
    grpo = {k: ("no" if k.endswith("_strategy") and v is False else v) for k, v in chosen.items()}
    for key in ("output_dir", "seed"):
        if key in grpo:
            raise ValueError(f"set `{key}` at the top of the train params, not under `grpo`")
    return preset(cfg.preset, output_dir=str(output_dir), seed=cfg.seed, data_seed=cfg.seed,
                  chat_template_kwargs={"enable_thinking": cfg.thinking}, **grpo)


def run_training(cfg: TrainConfig, *, judge: Any = None, callbacks: list[Any] | None = None) -> TrainResult:
    """Train and write the outputs; `judge` replaces the evaluator, `callbacks` go to the trainer (tests)."""
    with torch_threads(cfg.torch_threads):
        return _run_training(cfg, judge, callbacks)


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


def _run_training(cfg: TrainConfig, judge: Any, callbacks: list[Any] | None) -> TrainResult:
    import torch
    from accelerate import PartialState
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.data import load_training_problems, prompt_dataset, resolve_input
    from training.rewards import EvaluatorReward
    from training.trainer import MicroCoderGRPOTrainer

    out_dir = Path(cfg.output_dir)
    trainer_dir = out_dir / TRAINER_DIR
    source = resolve_input(cfg.input, cfg.fallback_input)
    check_model_path(cfg.model, "train model")
    try:
        args = build_grpo_config(cfg, trainer_dir)
    except (ValueError, TypeError) as e:  # an unknown preset or GRPO field, a bad value, a preset conflict
        raise InputError(f"params `train`: {e}") from e
    _warn_about_precision(cfg, args)
    state = PartialState()
    settings = run_settings(cfg, args)
    # Every process decides from the same files (read-only), then the main process alone changes them.
    resume_from = plan_run(trainer_dir, cfg.resume, settings, state.num_processes)
    prepare_output(state, out_dir, trainer_dir, resume_from, settings)
    loaded = load_training_problems(source, language=args.reward_language, max_problems=cfg.max_problems)
    if not loaded.problems:
        if state.is_main_process:
            write_jsonl(out_dir / "rejects.jsonl", loaded.rejects)
        raise InputError(f"{source}: none of {loaded.read} problems can be trained on (see "
                         f"{out_dir / 'rejects.jsonl'})")
    log.info("training on %d problems from %s (%d rejected)%s", len(loaded.problems), source, len(loaded.rejects),
             f", resuming from {resume_from}" if resume_from else "")
    dataset = prompt_dataset(loaded.problems, language=args.reward_language, thinking=cfg.thinking,
                             system_prompt=cfg.system_prompt, use_dataset_prompts=cfg.use_dataset_prompts)
    dataset = _within_prompt_budget(cfg, args, dataset, loaded, state.is_main_process, out_dir)
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
                                        args=args, train_dataset=dataset, callbacks=callbacks)
        trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
    checkpoint = out_dir / "checkpoint"
    _save_checkpoint(trainer, tokenizer, checkpoint)
    curves = trainer.generation_log
    metrics = summarise(cfg, trainer, loaded, source, reward)
    if trainer.accelerator.is_main_process:
        # Written with the other outputs, so a killed run leaves the previous run's set whole.
        write_jsonl(out_dir / "rejects.jsonl", loaded.rejects)
        write_json(out_dir / "metrics.json", metrics)
        write_text_atomic(out_dir / "curves.csv", curves_csv(curves))
        write_json(trainer_dir / RUN_FILE, {"finished": True, "settings": settings})
    trainer.accelerator.wait_for_everyone()
    return TrainResult(metrics=metrics, curves=curves, checkpoint=checkpoint)


def _within_prompt_budget(cfg: TrainConfig, args: Any, dataset: Any, loaded: Any, main: bool, out_dir: Path) -> Any:
    """Problems whose prompt leaves less than max_completion_length tokens go to rejects (vLLM server
    mode answers them with HTTP 400, which stops training; colocate mode cuts them silently). The
    budget: grpo.vllm_max_model_length (in server mode, set it to the server's --max-model-len)
    - max_completion_length, else the model's context length - max_completion_length."""
    from pipeline.io import reject_row
    from pipeline.rollout.budget import budget_rejects

    over = budget_rejects(zip(dataset["problem_id"], dataset["prompt"], strict=True), models=[cfg.model],
                          max_tokens=args.max_completion_length, thinking=cfg.thinking,
                          max_model_len=args.vllm_max_model_length if args.use_vllm else None, what="train")
    if not over:
        return dataset
    loaded.rejects += [reject_row(p.id, "train", over[p.id], p) for p in loaded.problems if p.id in over]
    loaded.problems = [p for p in loaded.problems if p.id not in over]
    if not loaded.problems:
        if main:
            write_jsonl(out_dir / "rejects.jsonl", loaded.rejects)
        raise InputError(f"every prompt is over the token budget ({next(iter(over.values()))}; see "
                         f"{out_dir / 'rejects.jsonl'})")
    return dataset.filter(lambda row: row["problem_id"] not in over)


def prepare_output(state: Any, out_dir: Path, trainer_dir: Path, resume_from: Path | None,
                   settings: dict[str, Any]) -> None:
    """The main process alone cleans and prepares the output folder while the others wait: under
    `accelerate launch` a rank must never delete what another rank is writing."""
    state.wait_for_everyone()
    if state.is_main_process:
        out_dir.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(out_dir)
        if resume_from is None:
            shutil.rmtree(trainer_dir, ignore_errors=True)  # a finished run's checkpoints (plan_run checked)
        trainer_dir.mkdir(parents=True, exist_ok=True)
        write_json(trainer_dir / RUN_FILE, {"finished": False, "settings": settings})
    state.wait_for_everyone()


def _warn_about_precision(cfg: TrainConfig, args: Any) -> None:
    # AdamW at lr 1e-6 on bf16 weights: most updates are below half a bf16 ulp and round to nothing.
    if cfg.dtype != "float32" and not (args.deepspeed or args.fsdp):
        log.warning("training %s weights without fp32 master weights (no DeepSpeed/FSDP config): small updates "
                    "round away; load float32 weights and set grpo.bf16: true (autocast), see docs/training.md",
                    cfg.dtype)


def run_settings(cfg: TrainConfig, args: Any) -> dict[str, Any]:
    """The run's effective settings (recorded in trainer/run.json; compared on resume)."""
    top = {k: getattr(cfg, k) for k in ("preset", "model", "seed", "dtype", "thinking", "system_prompt",
                                         "use_dataset_prompts", "max_problems", "input")}
    from training.config import MicroCoderGRPOConfig

    names = [f.name for f in dataclasses.fields(MicroCoderGRPOConfig)]
    grpo = {k: getattr(args, k) for k in names if k in set(RESUME_FIXED) | set(cfg.grpo or {}) | {"max_steps"}}
    return json.loads(json.dumps({**top, **grpo}, default=str))


_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def latest_checkpoint(trainer_dir: Path, processes: int = 1) -> Path | None:
    """The highest-step checkpoint whose save completed on every process (MicroCoderGRPOTrainer
    writes its per-process state file last); a folder cut short by a kill is skipped."""
    from training.trainer import STATE_FILE

    found = []
    for path in trainer_dir.glob("checkpoint-*") if trainer_dir.is_dir() else []:
        match = _CHECKPOINT.match(path.name)
        complete = (path / "trainer_state.json").exists() and all(
            (path / STATE_FILE.format(rank=r)).exists() for r in range(processes))
        if match and complete:
            found.append((int(match.group(1)), path))
    return max(found)[1] if found else None


def plan_run(trainer_dir: Path, resume: bool, settings: dict[str, Any], processes: int = 1) -> Path | None:
    """The checkpoint to resume from (None: a new run). Raises InputError when `resume` has nothing to
    continue or conflicts with the interrupted run's settings, and when a new run would silently
    discard an interrupted one's checkpoints."""
    run_file = trainer_dir / RUN_FILE
    previous = json.loads(run_file.read_text(encoding="utf-8")) if run_file.exists() else None
    last = latest_checkpoint(trainer_dir, processes)
    if not resume:
        if last is not None and not (previous or {}).get("finished", False):
            raise InputError(f"{trainer_dir} holds checkpoints of an interrupted run (latest {last.name}): rerun with "
                             f"--resume (or `--set resume=true`) to continue it, or delete {trainer_dir} to start over")
        return None
    if last is None:
        raise InputError(f"resume: no complete checkpoint in {trainer_dir} to continue from")
    if previous is not None:
        before = previous.get("settings", {})
        fixed = [k for k in RESUME_FIXED if k in before and before.get(k) != settings.get(k)]
        if fixed:
            raise InputError("resume: these settings differ from the interrupted run's, so it would not continue the "
                             "same run: " + ", ".join(f"{k} {before.get(k)!r} -> {settings.get(k)!r}" for k in fixed))
        changed = sorted(k for k in set(before) | set(settings) if before.get(k) != settings.get(k))
        if changed:
            log.warning("resume: settings changed since the interrupted run: %s",
                        ", ".join(f"{k} {before.get(k)!r} -> {settings.get(k)!r}" for k in changed))
    return last


def _remove_leftovers(out_dir: Path) -> None:
    """Scratch and half-saved checkpoint folders of a run that was killed (a finished or failed run
    removes its own). A run killed in the middle of the checkpoint swap left the previous
    checkpoint as `.checkpoint.old`: it is put back, not deleted. Main process only."""
    checkpoint, retired = out_dir / "checkpoint", out_dir / ".checkpoint.old"
    if retired.is_dir() and not checkpoint.exists():
        log.warning("restoring %s from %s (a run was killed while replacing it)", checkpoint, retired)
        retired.rename(checkpoint)
    # `.trainer-*`: the scratch output_dir of earlier versions of this stage.
    for leftover in [*out_dir.glob(".trainer-*"), *out_dir.glob(".checkpoint-*"), out_dir / ".checkpoint.old"]:
        if leftover.is_dir():
            log.warning("removing %s, left by an interrupted run", leftover)
            shutil.rmtree(leftover, ignore_errors=True)


def _save_checkpoint(trainer: Any, tokenizer: Any, path: Path) -> None:
    """`save_model` into a temp dir next to `path` on *every* process (FSDP and ZeRO-3 gather the
    full weights collectively; transformers writes the files from the main process), then the main
    process alone writes the tokenizer and swaps the folder in."""
    acc = trainer.accelerator
    tmp = path.with_name(f".{path.name}-new")
    if acc.is_main_process:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    acc.wait_for_everyone()
    try:
        trainer.save_model(str(tmp))
        acc.wait_for_everyone()
        if acc.is_main_process:
            tokenizer.save_pretrained(str(tmp))
            (tmp / "training_args.bin").unlink(missing_ok=True)  # pickled TrainingArguments: not needed to load
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            if path.exists():
                path.rename(old)
            tmp.rename(path)
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        if acc.is_main_process:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    acc.wait_for_everyone()


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
        "reward_statuses": _reward_statuses(trainer, reward),
        "temperature_changes": trainer.temperature_changes,
        "temperature_probe": {str(t): d for t, d in sorted(trainer.probe_results.items())},
        "settings": {
            "num_generations": args.num_generations, "max_completion_length": args.max_completion_length,
            "truncation_mask_rho": args.truncation_mask_rho, "repetition_window": args.repetition_window,
            "beta": args.beta, "epsilon": args.epsilon, "epsilon_high": args.epsilon_high,
            "loss_type": args.loss_type, "mask_truncated_completions": args.mask_truncated_completions,
            "temperature": args.temperature, "temperature_schedule": args.temperature_schedule,
            "scale_rewards": args.scale_rewards, "learning_rate": args.learning_rate,
        },
    }


def _reward_statuses(trainer: Any, reward: Any) -> dict[str, int]:
    """Sample statuses over every process (the trainer gathers them per generation), plus the
    judge's watchdog timeouts summed over processes. Every process must call this (a gather)."""
    from accelerate.utils import gather_object

    counts = dict.fromkeys(("pass", "fail", "no_code", "error", "deadline"), 0)
    counts.update(trainer.status_counts)
    timeouts = gather_object([int(reward.stats.get("watchdog_timeouts", 0))])
    counts["watchdog_timeouts"] = sum(timeouts)
    return dict(sorted(counts.items()))


def curves_csv(rows: list[dict[str, float]]) -> str:
    from training.trainer import GENERATION_FIELDS

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(GENERATION_FIELDS), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
    return buf.getvalue()
