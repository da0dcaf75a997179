"""The train entry: problems -> prompt dataset -> model -> MicroCoderGRPOTrainer -> metrics, curves, checkpoint.

Inputs come from the command line (`--model`, `--problems`, `--fallback-problems`, `--out-dir`,
`--resume`), settings from the params' `train:` section (`TrainConfig`), and the reward's judge from
the `evaluator:` section (`pipeline.evaluator.factory.make_evaluator`, through the one scoring path).

Outputs (under `out_dir`, default `data/train/`):
- `stats.json`: the stage contract's vocabulary in problems (read = kept + rejected: the problems
  trained on and those rejected, by reason) plus the steps and generations run;
- `settings.json`: the run's effective settings (the preset's method keys included);
- `metrics.json`: DVC metrics (last generation's reward, pass rate, masked fraction, diversity,
  temperature, unjudged share...; means over the run; reward statuses; temperature changes);
- `curves.csv`: one row per generation step (DVC plots: reward, length, diversity, temperature,
  masked fraction, online filtering's filtered fraction and pool sizes...);
- `checkpoint/`: the trained model and tokenizer (`save_pretrained`), replaced atomically;
- `rejects.jsonl`: problems that could not be trained on, with the reason;
- `trainer/`: TRL's checkpoints (`checkpoint-<step>/`: weights, optimizer, scheduler, RNG states,
  trainer state, and MicroCoderGRPOTrainer's own state) and `run.json` (the run's settings and
  whether it finished). `microcoder train --resume` continues an interrupted run from its latest
  complete checkpoint; a new run refuses to start over an interrupted one.

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

from pipeline.executor import ExecutionFields
from pipeline.inputs import InputError, check_model_path
from pipeline.io import write_json, write_jsonl, write_text_atomic

log = logging.getLogger(__name__)


TRAINER_DIR = "trainer"  # TRL's output_dir under the stage's output: checkpoints survive the run
RUN_FILE = "run.json"
# Settings a resumed run must share with the interrupted one are marked `resume_fixed` in their field's
# metadata (TrainConfig, TrainRun.model, MicroCoderGRPOConfig); `RESUME_FIXED` lists them. Anything else
# may change, with a warning: max_steps to train longer, reward_deadline_s or the evaluator's workers
# to fix a slow judge...
_FIXED = {"resume_fixed": True}


@dataclass
class PresetGrpo:
    """`train.preset_grpo`: GRPO fields applied only when that preset is chosen (one per preset of
    training.config.PRESETS)."""

    microcoder: dict[str, Any] = field(default_factory=dict, metadata={"help": "Over `grpo` for preset microcoder."})
    dapo: dict[str, Any] = field(default_factory=dict, metadata={"help": "Over `grpo` for preset dapo."})
    grpo: dict[str, Any] = field(default_factory=dict, metadata={"help": "Over `grpo` for preset grpo."})
    custom: dict[str, Any] = field(default_factory=dict, metadata={"help": "Over `grpo` for preset custom."})


class _GrpoHelp:
    """The `grpo` field's help: the text below plus every MicroCoder knob, rendered only when shown
    (`--help`), since listing the knobs imports TRL."""

    def __str__(self) -> str:
        return ("MicroCoderGRPOConfig fields (TRL GRPOConfig + MicroCoder knobs) over the preset. An absent "
                "key takes the paper default; a key that contradicts the preset is an error. The knobs "
                "MicroCoder adds or sets (any other TRL GRPOConfig field is accepted too):\n"
                + "\n".join(grpo_knob_lines()))


def grpo_knob_lines() -> list[str]:
    """One line per field MicroCoderGRPOConfig declares: `grpo.NAME (type) = default [marks]: help`."""
    import inspect

    from training.config import MicroCoderGRPOConfig

    own = inspect.get_annotations(MicroCoderGRPOConfig)  # strings: this class's fields only, not TRL's others
    lines = []
    for f in dataclasses.fields(MicroCoderGRPOConfig):
        if f.name in own:
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            marks = [label for key, label in (("method", "method"), ("resume_fixed", "fixed on resume"))
                     if f.metadata.get(key)]
            tag = f" [{', '.join(marks)}]" if marks else ""
            lines.append(f"    grpo.{f.name} ({own[f.name]}) = {default!r}{tag}: {f.metadata.get('help', '')}")
    return lines


@dataclass
class TrainConfig(ExecutionFields):
    preset: str = field(default="microcoder", metadata={**_FIXED, "help": "Recipe: microcoder | dapo | grpo | custom."})
    max_problems: int | None = field(default=None, metadata={**_FIXED, "help": "Train on at most this many problems."})
    thinking: bool = field(default=False, metadata={**_FIXED, "help": "Chat-template thinking switch (Qwen3)."})
    system_prompt: str | None = field(default=None, metadata={
        **_FIXED, "help": "System prompt (None: the rollout default; '' for none)."})
    use_dataset_prompts: bool = field(default=True, metadata={**_FIXED, "help": (
        "Use the curated rows' own `prompt` column when present (else build prompts with the settings here).")})
    dtype: str = field(default="float32", metadata={
        **_FIXED, "help": "Model weights dtype: float32 | bfloat16 | float16."})
    seed: int = field(default=0, metadata={**_FIXED, "help": "Seed for data order, sampling and the mask's draws."})
    torch_threads: int | None = field(default=None, metadata={
        "help": "CPU threads for torch (None: torch's default). 1 avoids thread thrashing on a busy small CPU box."})
    # A mapping on purpose: only the keys written here override the preset (an absent key takes the
    # paper default, a key that contradicts the preset is an error), which a typed copy of TRL's
    # ~200-field GRPOConfig would lose; build_grpo_config checks names (close matches suggested) and
    # MicroCoderGRPOConfig values, before any input or model loads.
    grpo: dict[str, Any] = field(default_factory=dict, metadata={"help": _GrpoHelp()})
    preset_grpo: PresetGrpo = field(default_factory=PresetGrpo, metadata={
        "help": "Fields applied only when that preset is chosen, over `grpo`. For keys a baseline pins (e.g. a "
                "temperature_schedule for microcoder only), so one params file builds every preset."})


@dataclass
class TrainResult:
    metrics: dict[str, Any]
    curves: list[dict[str, float]]
    checkpoint: Path
    stats: dict[str, Any] = field(default_factory=dict)  # stats.json: problems read / kept / rejected


def build_grpo_config(cfg: TrainConfig, output_dir: Path, progress: bool = True):
    """The MicroCoderGRPOConfig of the preset with `cfg.grpo` over it (absent keys: the paper defaults);
    `progress` False turns TRL's progress bars off (`--no-progress`)."""
    from training.config import preset

    _check_grpo_names(cfg)
    chosen = {**(cfg.grpo or {}), **(getattr(cfg.preset_grpo, cfg.preset, None) or {})}
    # YAML reads an unquoted `no` as False: `save_strategy: no` means the strategy "no".
    grpo = {k: ("no" if k.endswith("_strategy") and v is False else v) for k, v in chosen.items()}
    for key in ("output_dir", "seed"):
        if key in grpo:
            raise ValueError(f"set `{key}` at the top of the train params, not under `grpo`")
    if not progress:
        grpo["disable_tqdm"] = True
    return preset(cfg.preset, output_dir=str(output_dir), seed=cfg.seed, data_seed=cfg.seed,
                  chat_template_kwargs={"enable_thinking": cfg.thinking}, **grpo)


def _check_grpo_names(cfg: TrainConfig) -> None:
    """Raise ValueError naming each unknown `grpo` / `preset_grpo.<preset>` key and its close matches."""
    import difflib

    from training.config import MicroCoderGRPOConfig

    valid = [f.name for f in dataclasses.fields(MicroCoderGRPOConfig) if f.init]
    sections = {"grpo": cfg.grpo, **{f"preset_grpo.{f.name}": getattr(cfg.preset_grpo, f.name)
                                     for f in dataclasses.fields(PresetGrpo)}}
    errs = []
    for where, keys in sections.items():
        for key in sorted(set(keys or {}) - set(valid), key=str):
            close = difflib.get_close_matches(str(key), valid, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else " (see `microcoder train --help`)"
            errs.append(f"unknown {where} field {key!r}{hint}")
    if errs:
        raise ValueError("; ".join(errs))


@dataclass
class TrainRun:
    """What one `microcoder train` works on (command-line options, not params)."""

    model: str = field(metadata=_FIXED)  # policy model: local directory or Hub id
    problems: Path  # curated shards (Hub layout), a Problem parquet file / shard directory, or our jsonl
    out_dir: Path
    fallback: Path | None = None  # used only when `problems` does not exist (before the first build)
    resume: bool = False  # continue the interrupted run in out_dir/trainer from its latest checkpoint


def resume_fixed_keys() -> tuple[str, ...]:
    """The settings a resumed run must share with the interrupted one: every field marked `resume_fixed`
    (TrainConfig's, TrainRun's `model`, MicroCoderGRPOConfig's), in that order."""
    from training.config import marked

    own = [f.name for cls in (TrainConfig, TrainRun) for f in dataclasses.fields(cls) if f.metadata.get("resume_fixed")]
    return (*own, *marked("resume_fixed"))


def __getattr__(name: str) -> Any:
    # RESUME_FIXED reads MicroCoderGRPOConfig (TRL): built on first use, so importing this module stays light.
    if name == "RESUME_FIXED":
        return resume_fixed_keys()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run_training(cfg: TrainConfig, run: TrainRun, *, evaluator: Any = None, judge: Any = None,
                 callbacks: list[Any] | None = None, progress: bool = True) -> TrainResult:
    """Train and write the outputs. `evaluator`: the params' `evaluator:` section (None: defaults);
    `judge` replaces the evaluator, `callbacks` go to the trainer (tests)."""
    with torch_threads(cfg.torch_threads):
        return _run_training(cfg, run, evaluator, judge, callbacks, progress)


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


def _run_training(cfg: TrainConfig, run: TrainRun, evaluator: Any, judge: Any,
                  callbacks: list[Any] | None, progress: bool) -> TrainResult:
    import torch
    from accelerate import PartialState
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from pipeline.evaluator.factory import make_evaluator
    from training.data import load_training_problems, prompt_dataset, resolve_input
    from training.rewards import EvaluatorReward
    from training.trainer import MicroCoderGRPOTrainer

    out_dir = Path(run.out_dir)
    trainer_dir = out_dir / TRAINER_DIR
    try:  # the params first: a typo in a knob is reported before the inputs are looked at
        args = build_grpo_config(cfg, trainer_dir, progress)
    except (ValueError, TypeError) as e:  # an unknown preset or GRPO field, a bad value, a preset conflict
        raise InputError(f"params `train`: {e}") from e
    source = resolve_input(run.problems, run.fallback)
    check_model_path(run.model, "train model")
    _warn_about_precision(cfg, args)
    state = PartialState()
    settings = run_settings(cfg, args, run.model, source)
    # Every process decides from the same files (read-only), then the main process alone changes them.
    resume_from = plan_run(trainer_dir, run.resume, settings, state.num_processes)
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
    dataset = _within_prompt_budget(run.model, cfg, args, dataset, loaded, state.is_main_process, out_dir)
    tokenizer = AutoTokenizer.from_pretrained(run.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(run.model, dtype=getattr(torch, cfg.dtype))

    def make_judge():
        return make_evaluator(evaluator, executor=cfg.executor, ray_address=cfg.ray_address)

    reward = EvaluatorReward(
        loaded.problems, judge=judge, make_judge=make_judge, language=args.reward_language,
        deadline_s=args.reward_deadline_s, reward_pass=args.reward_pass, reward_fail=args.reward_fail,
        reward_no_code=args.reward_no_code, reward=args.reward,
    )
    with reward:
        trainer = MicroCoderGRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=[reward],
                                        args=args, train_dataset=dataset, callbacks=callbacks)
        trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
    checkpoint = out_dir / "checkpoint"
    _save_checkpoint(trainer, tokenizer, checkpoint)
    curves = trainer.generation_log
    metrics = summarise(trainer, reward)
    stats = stage_stats(loaded, metrics)
    if trainer.accelerator.is_main_process:
        from pipeline.stage import write_stats

        # Written with the other outputs, so a killed run leaves the previous run's set whole.
        write_jsonl(out_dir / "rejects.jsonl", loaded.rejects)
        write_json(out_dir / "metrics.json", metrics)
        write_stats(out_dir, stats, settings={**settings, "problems": str(source), "out_dir": str(out_dir),
                                               "executor": cfg.executor, "ray_address": cfg.ray_address},
                    stage="train")
        write_text_atomic(out_dir / "curves.csv", curves_csv(curves))
        write_json(trainer_dir / RUN_FILE, {"finished": True, "settings": settings})
    trainer.accelerator.wait_for_everyone()
    return TrainResult(metrics=metrics, curves=curves, checkpoint=checkpoint, stats=stats.as_dict())


def _within_prompt_budget(model: str, cfg: TrainConfig, args: Any, dataset: Any, loaded: Any, main: bool,
                          out_dir: Path) -> Any:
    """Problems whose prompt leaves less than max_completion_length tokens go to rejects (vLLM server
    mode answers them with HTTP 400, which stops training; colocate mode cuts them silently). The
    budget: grpo.vllm_max_model_length (in server mode, set it to the server's --max-model-len)
    - max_completion_length, else the model's context length - max_completion_length."""
    from pipeline.generation.budget import budget_rejects
    from pipeline.io import reject_row

    over = budget_rejects(zip(dataset["problem_id"], dataset["prompt"], strict=True), models=[model],
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


def run_settings(cfg: TrainConfig, args: Any, model: str, source: str | Path) -> dict[str, Any]:
    """The run's effective settings (recorded in trainer/run.json and settings.json; compared on resume)."""
    top = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(TrainConfig) if f.metadata.get("resume_fixed")}
    top.update(model=model, input=str(source))
    from training.config import MicroCoderGRPOConfig

    names = [f.name for f in dataclasses.fields(MicroCoderGRPOConfig)]
    grpo = {k: getattr(args, k) for k in names if k in set(resume_fixed_keys()) | set(cfg.grpo or {}) | {"max_steps"}}
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
                             f"--resume to continue it, or delete {trainer_dir} to start over")
        return None
    if last is None:
        raise InputError(f"resume: no complete checkpoint in {trainer_dir} to continue from")
    if previous is not None:
        before = previous.get("settings", {})
        fixed = [k for k in resume_fixed_keys() if k in before and before.get(k) != settings.get(k)]
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


def summarise(trainer: Any, reward: Any) -> dict[str, Any]:
    """metrics.json: the run's figures (the settings go to settings.json, the problem counts to stats.json)."""
    from training.trainer import GENERATION_FIELDS

    rows = trainer.generation_log
    last = rows[-1] if rows else {}
    keys = [k for k in GENERATION_FIELDS if k not in ("step", "generation")]
    return {
        "steps": trainer.state.global_step,
        "generations": len(rows),
        "final": {k: _clean(last.get(k, math.nan)) for k in keys},
        "mean": {k: _mean(rows, k) for k in keys},
        "reward_statuses": _reward_statuses(trainer, reward),
        "temperature_changes": trainer.temperature_changes,
        "temperature_probe": {str(t): d for t, d in sorted(trainer.probe_results.items())},
    }


def stage_stats(loaded: Any, metrics: dict[str, Any]):
    """The stage contract's counts: problems read, trained on (kept) and rejected by reason."""
    from pipeline.stage import StageStats

    stats = StageStats(unit="problems", read=loaded.read, kept=len(loaded.problems),
                       figures={"steps": metrics["steps"], "generations": metrics["generations"]})
    for row in loaded.rejects:
        stats.reject(row["reason"])
    return stats


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
