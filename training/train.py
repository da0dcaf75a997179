"""The train entry: problems -> prompt dataset -> model -> MicroCoderGRPOTrainer -> metrics, curves, checkpoint.

Inputs come from the command line (`--model`, `--problems`, `--fallback-problems`, `--out-dir`,
`--resume`), settings from the params' `train:` section (`TrainConfig`), and the reward's judge from
the `evaluator:` section (`microcoder.pipeline.evaluator.factory.make_evaluator`, through the one scoring path).

Outputs (under `out_dir`, default `data/train/`):
- `stats.json`: the stage contract's vocabulary in problems (read = kept + rejected: the problems
  trained on and those rejected, by reason) plus the steps and generations run, the generation steps
  without a learning signal (training/learning_signal.py) and why training stopped early, if it did;
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
  complete checkpoint; a new run refuses to start over an interrupted one (training/run_folder.py:
  the folder's invariants).

Under `accelerate launch` every process runs this; only the main process touches the output folder
(cleanup, swaps, writes), the others wait for it at barriers, and every process takes part in
saving the model (FSDP / ZeRO-3 gather the weights collectively).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import functools
import io
import json
import logging
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.executor import ExecutionFields
from microcoder.pipeline.inputs import InputError, check_model_path
from microcoder.pipeline.io import write_json, write_jsonl, write_text_atomic
from microcoder.pipeline.stage import Command
from microcoder.training.run_folder import TRAINER_DIR, finish, plan_run, prepare_output, save_checkpoint

log = logging.getLogger(__name__)

# Settings a resumed run must share with the interrupted one are marked `resume_fixed` in their field's
# metadata (TrainConfig, TrainRun.model, MicroCoderGRPOConfig); `resume_fixed_keys()` lists them.
# Anything else may change, with a warning: max_steps to train longer, reward_deadline_s or the
# evaluator's workers to fix a slow judge...
_FIXED = {"resume_fixed": True}


class GrpoFields(Mapping[str, Any]):
    """A `train.grpo` / `train.preset_grpo.<preset>` section: MicroCoderGRPOConfig fields set over the
    preset, typed the way HfArgumentParser types its dataclasses. Invariants, checked on construction
    (else one ConfigError naming `WHERE.NAME`, listing every bad key of the section):
    - every name is a MicroCoderGRPOConfig field (TRL's GRPOConfig ones included); a misspelt one
      names its close matches;
    - every value fits that field's type annotation (microcoder.pipeline.stage's checker, as for every params
      section) and is kept as written, so the built config and settings.json are what the params
      say (an int stays an int); only YAML's bare `no` under a `*_strategy` key (read as False) is
      read as the strategy "no";
    - `explicit` records the fields set: only these override the preset (an absent one takes the
      preset's value or the paper default) and may contradict it."""

    def __init__(self, values: Mapping[str, Any] | None = None, where: str = "train.grpo"):
        from microcoder.pipeline.stage import ConfigError

        if values is None:
            values = {}
        if not isinstance(values, Mapping):
            raise ConfigError(f"params `{where}` must be a mapping, got {type(values).__name__} {values!r}")
        # YAML reads an unquoted `no` as False: `save_strategy: no` means the strategy "no".
        self._values = {k: ("no" if str(k).endswith("_strategy") and v is False else v) for k, v in values.items()}
        if self._values:  # an empty section needs no types (nor TRL)
            _check_grpo_fields(self._values, where)

    @property
    def explicit(self) -> frozenset[str]:
        return frozenset(self._values)

    def over(self, other: GrpoFields) -> GrpoFields:
        """This section with `other`'s fields set over it (both already checked)."""
        merged = GrpoFields()
        merged._values = {**self._values, **other._values}
        return merged

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return repr(self._values)


@functools.cache
def _grpo_types() -> dict[str, Any]:
    """Each MicroCoderGRPOConfig init field's resolved type annotation (TRL's included); imports TRL."""
    import typing

    from microcoder.training.config import MicroCoderGRPOConfig

    hints = typing.get_type_hints(MicroCoderGRPOConfig)
    return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(MicroCoderGRPOConfig) if f.init}


def _check_grpo_fields(values: Mapping[str, Any], where: str) -> None:
    import difflib

    from microcoder.pipeline.stage import ConfigError, check_value

    types = _grpo_types()
    errs = []
    for key, value in values.items():
        if key not in types:
            close = difflib.get_close_matches(str(key), list(types), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else " (see `microcoder train --help`)"
            errs.append(f"unknown {where} field {key!r}{hint}")
            continue
        try:
            check_value(types[key], value, f"{where}.{key}")  # a check: the value is kept as written
        except ConfigError as e:
            errs.append(str(e))
    if errs:
        raise ConfigError("; ".join(errs))


@dataclass
class PresetGrpo:
    """`train.preset_grpo`: GRPO fields applied only when that preset is chosen (one per preset of
    microcoder.training.config.PRESETS)."""

    microcoder: GrpoFields = field(default_factory=GrpoFields, metadata={"help": "Over `grpo` for preset microcoder."})
    dapo: GrpoFields = field(default_factory=GrpoFields, metadata={"help": "Over `grpo` for preset dapo."})
    grpo: GrpoFields = field(default_factory=GrpoFields, metadata={"help": "Over `grpo` for preset grpo."})
    custom: GrpoFields = field(default_factory=GrpoFields, metadata={"help": "Over `grpo` for preset custom."})

    def __post_init__(self) -> None:
        from microcoder.pipeline.stage import ConfigError

        errs = []
        for f in dataclasses.fields(self):  # every section's errors at once
            try:
                setattr(self, f.name, GrpoFields(getattr(self, f.name), f"train.preset_grpo.{f.name}"))
            except ConfigError as e:
                errs.append(str(e))
        if errs:
            raise ConfigError("; ".join(errs))


class _GrpoHelp:
    """The `grpo` field's help: the text below plus every MicroCoder knob, rendered only when shown
    (`--help`), since listing the knobs imports TRL."""

    def __str__(self) -> str:
        return ("MicroCoderGRPOConfig fields (TRL GRPOConfig + MicroCoder knobs) over the preset, each "
                "value checked against its field's type. An absent key takes the paper default; a key "
                "that contradicts the preset is an error. The knobs MicroCoder adds or sets (any other TRL "
                "GRPOConfig field is accepted too):\n" + "\n".join(grpo_knob_lines()))


def grpo_knob_lines() -> list[str]:
    """One line per field MicroCoderGRPOConfig declares: `grpo.NAME (type) = default [marks]: help`."""
    import inspect

    from microcoder.training.config import MicroCoderGRPOConfig

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
    # Only the fields set here override the preset (GrpoFields records which), so this is not a typed
    # copy of TRL's ~200-field GRPOConfig with every default filled in; names and types are checked
    # when the params load, the MicroCoderGRPOConfig values and the preset when the run starts.
    grpo: GrpoFields = field(default_factory=GrpoFields, metadata={"help": _GrpoHelp()})
    preset_grpo: PresetGrpo = field(default_factory=PresetGrpo, metadata={
        "help": "Fields applied only when that preset is chosen, over `grpo`. For keys a baseline pins (e.g. a "
                "temperature_schedule for microcoder only), so one params file builds every preset."})

    def __post_init__(self) -> None:
        super().__post_init__()
        self.grpo = GrpoFields(self.grpo, "train.grpo")


class Train(Command):
    name = "train"
    config = TrainConfig
    evaluator_config = EvaluatorConfig  # the reward's judge


@dataclass
class TrainResult:
    metrics: dict[str, Any]
    curves: list[dict[str, float]]
    checkpoint: Path
    stats: dict[str, Any] = field(default_factory=dict)  # stats.json: problems read / kept / rejected


def chosen_grpo(cfg: TrainConfig) -> GrpoFields:
    """`cfg.grpo` with the chosen preset's `preset_grpo` section over it; `explicit` is every field set
    in either. Checked again here: a field assigned after construction (tests do) may hold a plain dict."""
    chosen = GrpoFields(cfg.grpo, "train.grpo")
    section = getattr(cfg.preset_grpo, cfg.preset, None)
    return chosen.over(GrpoFields(section, f"train.preset_grpo.{cfg.preset}")) if section else chosen


def build_grpo_config(cfg: TrainConfig, output_dir: Path, progress: bool = True):
    """The MicroCoderGRPOConfig of the preset with the set fields of `chosen_grpo(cfg)` over it (absent
    keys: the preset's or the paper defaults); `progress` False turns TRL's progress bars off
    (`--no-progress`)."""
    from microcoder.training.config import preset

    grpo = dict(chosen_grpo(cfg))
    for key in ("output_dir", "seed"):
        if key in grpo:
            raise ValueError(f"set `{key}` at the top of the train params, not under `grpo`")
    if not progress:
        grpo["disable_tqdm"] = True
    return preset(cfg.preset, output_dir=str(output_dir), seed=cfg.seed, data_seed=cfg.seed,
                  chat_template_kwargs={"enable_thinking": cfg.thinking}, **grpo)


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
    (TrainConfig's, TrainRun's `model`, MicroCoderGRPOConfig's), in that order. Imports TRL."""
    from microcoder.training.config import marked

    own = [f.name for cls in (TrainConfig, TrainRun) for f in dataclasses.fields(cls) if f.metadata.get("resume_fixed")]
    return (*own, *marked("resume_fixed"))


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

    from microcoder.pipeline.evaluator.factory import make_evaluator
    from microcoder.training.data import load_training_problems, prompt_dataset, resolve_input
    from microcoder.training.rewards import EvaluatorReward
    from microcoder.training.trainer import MicroCoderGRPOTrainer

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
    resume_from = plan_run(trainer_dir, run.resume, settings, resume_fixed_keys(), state.num_processes)
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
    save_checkpoint(trainer, tokenizer, checkpoint)
    curves = trainer.generation_log
    metrics = summarise(trainer, reward)
    stats = stage_stats(loaded, metrics, trainer)
    _warn_about_signal(trainer, stats.figures)
    if trainer.accelerator.is_main_process:
        from microcoder.pipeline.stage import write_stats

        # Written with the other outputs, so a killed run leaves the previous run's set whole.
        write_jsonl(out_dir / "rejects.jsonl", loaded.rejects)
        write_json(out_dir / "metrics.json", metrics)
        write_stats(out_dir, stats, settings={**settings, "problems": str(source), "out_dir": str(out_dir),
                                               "executor": cfg.executor, "ray_address": cfg.ray_address},
                    stage="train")
        write_text_atomic(out_dir / "curves.csv", curves_csv(curves))
        finish(trainer_dir, settings)
    trainer.accelerator.wait_for_everyone()
    return TrainResult(metrics=metrics, curves=curves, checkpoint=checkpoint, stats=stats.as_dict())


def _within_prompt_budget(model: str, cfg: TrainConfig, args: Any, dataset: Any, loaded: Any, main: bool,
                          out_dir: Path) -> Any:
    """Problems whose prompt leaves less than max_completion_length tokens go to rejects (vLLM server
    mode answers them with HTTP 400, which stops training; colocate mode cuts them silently). The
    budget: grpo.vllm_max_model_length (in server mode, set it to the server's --max-model-len)
    - max_completion_length, else the model's context length - max_completion_length."""
    from microcoder.pipeline.generation.budget import budget_rejects
    from microcoder.pipeline.io import reject_row

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


def _warn_about_precision(cfg: TrainConfig, args: Any) -> None:
    # AdamW at lr 1e-6 on bf16 weights: most updates are below half a bf16 ulp and round to nothing.
    if cfg.dtype != "float32" and not (args.deepspeed or args.fsdp):
        log.warning("training %s weights without fp32 master weights (no DeepSpeed/FSDP config): small updates "
                    "round away; load float32 weights and set grpo.bf16: true (autocast), see docs/training.md",
                    cfg.dtype)


def run_settings(cfg: TrainConfig, args: Any, model: str, source: str | Path) -> dict[str, Any]:
    """The run's effective settings (recorded in trainer/run.json and settings.json; compared on resume):
    the top-level resume-fixed fields, model, input, and the GRPO fields that are resume-fixed, set
    (`chosen_grpo(cfg).explicit`) or max_steps, as the built config `args` holds them."""
    top = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(TrainConfig) if f.metadata.get("resume_fixed")}
    top.update(model=model, input=str(source))
    from microcoder.training.config import MicroCoderGRPOConfig

    names = [f.name for f in dataclasses.fields(MicroCoderGRPOConfig)]
    recorded = set(resume_fixed_keys()) | chosen_grpo(cfg).explicit | {"max_steps"}
    grpo = {k: getattr(args, k) for k in names if k in recorded}
    return json.loads(json.dumps({**top, **grpo}, default=str))


def _mean(rows: list[dict[str, float]], key: str) -> float | None:
    values = [r[key] for r in rows if not math.isnan(r[key])]
    return sum(values) / len(values) if values else None


def _clean(x: Any) -> Any:
    return None if isinstance(x, float) and math.isnan(x) else x


def summarise(trainer: Any, reward: Any) -> dict[str, Any]:
    """metrics.json: the run's figures (the settings go to settings.json, the problem counts to stats.json)."""
    from microcoder.training.trainer import GENERATION_FIELDS

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


def stage_stats(loaded: Any, metrics: dict[str, Any], trainer: Any):
    """The stage contract's counts: problems read, trained on (kept) and rejected by reason; the
    steps run, the generation steps without a learning signal, their share, the groups' outcomes
    over the run and why training stopped before max_steps (None: it did not)."""
    from microcoder.pipeline.stage import StageStats
    from microcoder.training.learning_signal import without_signal

    silent = sum(map(without_signal, trainer.generation_log))
    generations = metrics["generations"]
    stats = StageStats(unit="problems", read=loaded.read, kept=len(loaded.problems), figures={
        "steps": metrics["steps"], "generations": generations, "steps_without_signal": silent,
        "steps_without_signal_frac": silent / generations if generations else None,
        "group_outcomes": dict(sorted(trainer.group_outcomes.items())), "stop_reason": trainer.stop_reason})
    for row in loaded.rejects:
        stats.reject(row["reason"])
    return stats


def _warn_about_signal(trainer: Any, figures: dict[str, Any]) -> None:
    """The run's count of generation steps without a learning signal, with what gives signal (the
    trainer warned at the first one only), and why it stopped early, if it did."""
    from microcoder.training.learning_signal import NO_SIGNAL, what_gives_signal

    silent = figures["steps_without_signal"]
    if not trainer.accelerator.is_main_process:
        return
    if silent:
        counts = {k: n for k, n in trainer.group_outcomes.items() if k in NO_SIGNAL}
        mixed = trainer.group_outcomes.get("mixed", 0)
        log.warning("train: %d of %d generation steps had no learning signal (groups over the run: %s, %d mixed); "
                    "for signal: %s", silent, figures["generations"],
                    ", ".join(f"{n} {k}" for k, n in sorted(counts.items())), mixed, what_gives_signal(counts))
    if trainer.stop_reason:
        log.warning("train: stopped early at step %d of %d: %s; the checkpoint and stats.json (stop_reason) are "
                    "written", trainer.state.global_step, trainer.args.max_steps, trainer.stop_reason)


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
    from microcoder.training.trainer import GENERATION_FIELDS

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(GENERATION_FIELDS), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
    return buf.getvalue()
