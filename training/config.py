"""`MicroCoderGRPOConfig`: TRL's `GRPOConfig` plus the MicroCoder-GRPO knobs (METHOD.md section 3).

Defaults are the paper's MicroCoder-GRPO: no KL term (beta = 0), asymmetric clipping
(eps = 0.2, eps_high = 0.28), token-level loss aggregation ("dapo"), rewards scaled by the group
std, conditional truncation masking with rho = 0.1 and a 128-token repetition window, *no* blanket
masking of truncated samples, and the main runs' scale (4K completions, T = 1.2, 300 steps,
learning rate 1e-6, a checkpoint every 50 steps). The CPU smoke values live in params.yaml only.

A knob's role is written once, in its field's metadata: "method" (defines a training method: the
presets pin it; `METHOD_KEYS`) and "resume_fixed" (a resumed run must keep it: microcoder.training.train's
`resume_fixed_keys()`). `preset()` builds one of the paper's three columns (`grpo`, `dapo`,
`microcoder`): each preset pins the method keys; an override (a field explicitly set) that
contradicts a pinned value is an error naming both. `custom` pins nothing (ablations: any key may be
set).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trl import GRPOConfig

# Field marks, read by METHOD_KEYS here and microcoder.training.train.resume_fixed_keys: the one place a knob's role is written.
_FIXED = {"resume_fixed": True}  # a resumed run must keep the interrupted run's value
_METHOD = {"method": True, **_FIXED}  # defines a training method (the presets pin it); fixed on resume too


def _trl_field(name: str, **marks: Any) -> Any:
    """TRL's own GRPOConfig field `name` (its default and help, unchanged) with MicroCoder marks added."""
    parent = GRPOConfig.__dataclass_fields__[name]
    if parent.default is dataclasses.MISSING:
        return field(default_factory=parent.default_factory, metadata={**parent.metadata, **marks})
    return field(default=parent.default, metadata={**parent.metadata, **marks})


@dataclass
class MicroCoderGRPOConfig(GRPOConfig):
    # --- TRL's fields with TRL's defaults, marked: the batch geometry a resumed run must keep ---
    per_device_train_batch_size: int = _trl_field("per_device_train_batch_size", **_FIXED)
    gradient_accumulation_steps: int = _trl_field("gradient_accumulation_steps", **_FIXED)
    num_generations: int | None = _trl_field("num_generations", **_FIXED)
    steps_per_generation: int | None = _trl_field("steps_per_generation", **_FIXED)
    num_iterations: int = _trl_field("num_iterations", **_FIXED)

    # --- defaults changed from GRPOConfig (repeated even where TRL agrees, so a TRL default change
    # cannot silently change the method) ---
    beta: float = field(default=0.0, metadata={**_METHOD, "help": "KL coefficient; MicroCoder-GRPO uses none (0.0)."})
    epsilon: float = field(default=0.2, metadata={**_METHOD, "help": "Lower clipping bound: ratio >= 1 - epsilon."})
    epsilon_high: float | None = field(
        default=0.28, metadata={**_METHOD, "help": "Upper clipping bound: ratio <= 1 + epsilon_high (clip-higher)."}
    )
    loss_type: str = field(
        default="dapo", metadata={**_METHOD, "help": "Loss aggregation; 'dapo' = token-level over the global batch."}
    )
    scale_rewards: str | bool = field(  # TRL reads True as "group" and False as "none"
        default="group",
        metadata={**_METHOD, "help": "Advantage scaling: 'group' divides by the group's reward std (METHOD.md's formula)."},
    )
    # --- the paper's main-run scale (TRL's defaults are a small demo) ---
    max_completion_length: int | None = field(
        default=4096, metadata={**_FIXED, "help": "L_max: maximum completion tokens (the paper trains at 4K)."})
    temperature: float = field(
        default=1.2, metadata={**_FIXED, "help": "Sampling (and log-prob) temperature when no schedule/probe is set (paper: 1.2)."})
    learning_rate: float = field(default=1e-6, metadata={**_FIXED, "help": "AdamW learning rate."})
    max_steps: int = field(default=300, metadata={"help": "Optimizer steps (the paper: about 300)."})
    save_steps: float = field(
        default=50, metadata={"help": "Checkpoint every this many steps (save_strategy 'steps'); resume from the last."})
    mask_truncated_completions: bool = field(
        default=False,
        metadata={**_METHOD, "help": "Mask *every* truncated sample (DAPO's overlong filtering). MicroCoder-GRPO masks "
                          "conditionally instead (truncation_mask_rho); the paper reports that masking all collapses training."},
    )

    # --- conditional truncation masking (METHOD.md section 3, conditions 1-4) ---
    truncation_mask_rho: float = field(
        default=0.1,
        metadata={**_METHOD, "help": "Probability rho of zeroing the advantage of a truncated, non-incorrect, non-repetitive "
                          "sample (condition 4: U(0,1) < rho). 0 disables the mask."},
    )
    repetition_window: int = field(
        default=128,
        metadata={**_FIXED, "help": "m: a sample is repetitive when its last m tokens equal the m tokens before them; "
                          "samples shorter than 2m are non-repetitive."},
    )

    # --- temperature control T(D) ---
    temperature_probe: list[float] | None = field(
        default=None,
        metadata={**_METHOD, "help": "Candidate temperatures probed on the first generation batch before training; the lowest "
                          "whose group diversity reaches diversity_target becomes the initial temperature. "
                          "None: start at `temperature`. Paper-style list: [0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8]."},
    )
    diversity_target: float = field(
        default=0.7, metadata={**_FIXED, "help": "Diversity the temperature probe must reach (1 - mean pairwise 4-gram Jaccard)."}
    )
    diversity_ngram: int = field(default=4, metadata={"help": "Token n-gram size of the diversity metric."})
    temperature_schedule: list[list[float]] | None = field(
        default=None,
        metadata={**_METHOD, "help": "Staged schedule [[step, temperature], ...]: from global step `step` on, sample (and "
                          "compute log-probs) at `temperature`. Stages only, never ramps. Example: [[0, 0.6], [140, 1.2]]."},
    )
    diversity_floor: float | None = field(
        default=None,
        metadata={**_METHOD, "help": "Guard: when diversity stays below this for diversity_patience generation steps, move to "
                          "the next schedule stage early. None disables the guard."},
    )
    diversity_patience: int = field(
        default=3, metadata={**_FIXED, "help": "Generation steps below diversity_floor before the guard moves to the next stage."}
    )

    # --- reward (the evaluator; its judges, time limits and sandbox: the params' `evaluator:` section) ---
    reward_pass: float = field(default=1.0, metadata={**_FIXED, "help": "Reward of a sample that passes every test (AC)."})
    reward_fail: float = field(
        default=0.0, metadata={**_FIXED, "help": "Reward of a sample whose code ran and failed (WA/TLE/MLE/RE/CE/OLE)."}
    )
    reward_no_code: float = field(
        default=0.0, metadata={**_FIXED, "help": "Reward of a sample without an extractable code block (often truncated)."}
    )
    reward: str = field(
        default="binary",
        metadata={**_METHOD, "help": "What a failing sample earns: 'binary' (reward_fail; the paper's), 'fraction' (reward_fail + "
                          "(reward_pass - reward_fail) x the share of tests passed, as Klear-Reasoner; judges every "
                          "test, not only up to the first failure) or 'groups' (the same with the share of the points "
                          "of the test groups whose every test passed; problems without scored groups: 'fraction'). "
                          "AC is always reward_pass, a compile error reward_fail."},
    )
    reward_deadline_s: float = field(
        default=120.0,
        metadata={"help": "Hard wall-clock deadline per reward batch: samples the judge has not finished by then are "
                          "killed and left unjudged (status `deadline`, reward None: no advantage), so a hung "
                          "sample never hangs the trainer and a slow judge never scores correct code as wrong."},
    )
    reward_deadline_warn_frac: float = field(
        default=0.02,
        metadata={"help": "Warn when more than this share of a generation's samples were left unjudged at the batch "
                          "deadline (reward None: no learning signal). Raise the evaluator's workers or reward_deadline_s."},
    )
    reward_deadline_stop_frac: float = field(
        default=0.5,
        metadata={"help": "Stop training when more than this share of a generation's samples were left unjudged at "
                          "the batch deadline: the judge is far too slow for the batch (1.0: never stop)."},
    )
    reward_language: str = field(default="python", metadata={"help": "Language the policy is asked to answer in."})

    # --- learning signal (training/learning_signal.py) ---
    stop_without_signal: int | None = field(
        default=None,
        metadata={"help": "Stop after this many consecutive generation steps without a learning signal (every group's "
                          "rewards equal, all-fail or all-pass: every advantage 0, nothing learned). The run ends "
                          "cleanly, exit status 0: checkpoint, metrics and stats.json are written and stats.json's "
                          "stop_reason says why. None: only warn (at the first such step, and with the count at the "
                          "end; stats.json's steps_without_signal)."},
    )

    # --- online difficulty filtering (off in the paper's MicroCoder-GRPO; `dynamic_sampling` is DAPO's) ---
    dynamic_sampling: bool = field(
        default=False,
        metadata={**_METHOD, "help": "DAPO dynamic sampling: drop groups whose rewards are all equal (zero std, no learning signal) "
                          "and generate more prompts until the generation batch is full, for at most "
                          "dynamic_sampling_max_rounds extra rounds; then train on what there is (the missing groups' "
                          "samples are masked out of the loss). Logged per step: filtered_frac, extra_rounds."},
    )
    dynamic_sampling_max_rounds: int = field(
        default=3, metadata={**_FIXED, "help": "Cap on extra generation rounds per generation step under dynamic_sampling (>= 0)."}
    )
    easy_threshold: float | None = field(
        default=None,
        metadata={**_METHOD, "help": "Difficulty pools: a problem whose group pass rate is >= this moves to the easy pool (None: "
                          "no easy pool). It is sampled again with probability easy_fraction."},
    )
    hard_threshold: float | None = field(
        default=None,
        metadata={**_METHOD, "help": "Difficulty pools: a problem whose group pass rate is <= this moves to the hard pool (None: "
                          "no hard pool; 0.0: never solved). It is sampled again with probability hard_fraction."},
    )
    easy_fraction: float = field(
        default=0.1, metadata={**_FIXED, "help": "Probability that a sampled easy-pool problem is trained on (else replaced)."}
    )
    hard_fraction: float = field(
        default=0.1, metadata={**_FIXED, "help": "Probability that a sampled hard-pool problem is trained on (else replaced)."}
    )

    def __post_init__(self) -> None:
        if self.bf16 is None and not self.fp16:
            # TRL defaults bf16 to True, which TrainingArguments rejects on CPU: use bf16 where supported.
            import torch

            self.bf16 = bool(self.use_cpu is False and torch.cuda.is_available() and torch.cuda.is_bf16_supported())
        super().__post_init__()
        self.validate_microcoder()

    def validate_microcoder(self) -> None:
        """Raise ValueError listing every invalid MicroCoder-GRPO setting."""
        errs: list[str] = []
        if not 0.0 <= self.truncation_mask_rho <= 1.0:
            errs.append(f"truncation_mask_rho must be in [0, 1], got {self.truncation_mask_rho}")
        if self.truncation_mask_rho > 0 and self.mask_truncated_completions:
            errs.append("truncation_mask_rho > 0 with mask_truncated_completions=True: every truncated sample is "
                        "already masked; use one (preset 'dapo' masks all, 'microcoder' masks conditionally)")
        if self.repetition_window < 1:
            errs.append(f"repetition_window must be >= 1, got {self.repetition_window}")
        if not 0.0 <= self.diversity_target <= 1.0:
            errs.append(f"diversity_target must be in [0, 1], got {self.diversity_target}")
        if self.diversity_ngram < 1:
            errs.append(f"diversity_ngram must be >= 1, got {self.diversity_ngram}")
        if self.temperature_probe is not None:
            if not self.temperature_probe or any(not _positive(t) for t in self.temperature_probe):
                errs.append(f"temperature_probe must be a non-empty list of positive numbers, got {self.temperature_probe}")
        if self.temperature_schedule is not None:
            errs.extend(_schedule_errors(self.temperature_schedule))
        if self.diversity_floor is not None and not 0.0 <= self.diversity_floor <= 1.0:
            errs.append(f"diversity_floor must be in [0, 1], got {self.diversity_floor}")
        if self.diversity_patience < 1:
            errs.append(f"diversity_patience must be >= 1, got {self.diversity_patience}")
        if isinstance(self.generation_kwargs, dict) and "temperature" in self.generation_kwargs:
            errs.append("generation_kwargs sets 'temperature': it would reach sampling but not the log-probabilities "
                        "(set `temperature` or a temperature_schedule instead)")
        errs.extend(_too_hot(self))
        errs.extend(_reward_errors(self.reward))
        if not (self.reward_deadline_s > 0 and math.isfinite(self.reward_deadline_s)):
            errs.append(f"reward_deadline_s must be a positive number, got {self.reward_deadline_s}")
        for name in ("reward_deadline_warn_frac", "reward_deadline_stop_frac"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                errs.append(f"{name} must be in [0, 1], got {getattr(self, name)}")
        stop = self.stop_without_signal
        if stop is not None and (not isinstance(stop, int) or isinstance(stop, bool) or stop < 1):
            errs.append(f"stop_without_signal must be an integer >= 1 or None, got {stop!r}")
        errs.extend(self._online_filter_errors())
        errs.extend(self._checkpoint_errors())
        if errs:
            raise ValueError("invalid MicroCoderGRPOConfig: " + "; ".join(errs))

    def _online_filter_errors(self) -> list[str]:
        errs = []
        rounds = self.dynamic_sampling_max_rounds
        if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 0:
            errs.append(f"dynamic_sampling_max_rounds must be an integer >= 0, got {rounds!r}")
        for name in ("easy_threshold", "hard_threshold", "easy_fraction", "hard_fraction"):
            value = getattr(self, name)
            if value is not None and not (_number(value) and 0.0 <= value <= 1.0):
                errs.append(f"{name} must be in [0, 1], got {value!r}")
        easy, hard = self.easy_threshold, self.hard_threshold
        if _number(easy) and _number(hard) and hard >= easy:
            errs.append(f"hard_threshold ({hard}) must be below easy_threshold ({easy}): a problem cannot be both")
        if self.dynamic_sampling or easy is not None or hard is not None:
            local = self.per_device_train_batch_size * (self.steps_per_generation or self.gradient_accumulation_steps)
            if self.num_generations and local % self.num_generations:
                errs.append(f"dynamic_sampling / difficulty pools need whole groups on each process: "
                            f"per_device_train_batch_size x steps_per_generation = {local} is not a multiple of "
                            f"num_generations = {self.num_generations}")
        return errs

    def _checkpoint_errors(self) -> list[str]:
        # A checkpoint between two generations would lose TRL's buffered batch (not saved): the resumed
        # run would regenerate from other prompts and differ from an uninterrupted one.
        if self.save_strategy != "steps" or not float(self.save_steps).is_integer() or self.save_steps < 1:
            return []
        ga = self.gradient_accumulation_steps
        every = (self.steps_per_generation or ga) * self.num_iterations
        if (int(self.save_steps) * ga) % every:
            return [f"save_steps={self.save_steps:g} x gradient_accumulation_steps={ga} is not a multiple of "
                    f"steps_per_generation x num_iterations={every}: a checkpoint would fall between two "
                    "generations and a resumed run would not continue exactly"]
        return []

    def schedule(self) -> list[tuple[int, float]]:
        """The staged schedule as sorted (step, temperature) pairs ([] when none)."""
        return sorted((int(s), float(t)) for s, t in (self.temperature_schedule or []))


def _too_hot(cfg: MicroCoderGRPOConfig) -> list[str]:
    """vLLM 0.31 refuses temperatures above 2 (SamplingParams: "temperature must be in [0, 2]"): a
    probe or schedule stage that hot would stop a vLLM run at that stage, so it is refused here."""
    from microcoder.pipeline.generation.backends import MAX_TEMPERATURE

    temps = [cfg.temperature, *(cfg.temperature_probe or [])]
    if isinstance(cfg.temperature_schedule, list):
        temps += [s[1] for s in cfg.temperature_schedule if isinstance(s, (list, tuple)) and len(s) == 2]
    hot = [t for t in temps if _positive(t) and t > MAX_TEMPERATURE]
    return [f"temperatures {hot} are above {MAX_TEMPERATURE:g}, which vLLM refuses"] if hot else []


def _reward_errors(reward: Any) -> list[str]:
    from microcoder.training.rewards import REWARDS

    return [] if reward in REWARDS else [f"reward must be one of {', '.join(REWARDS)}, got {reward!r}"]


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _positive(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 and math.isfinite(x)


def _schedule_errors(schedule: Any) -> list[str]:
    if not isinstance(schedule, list) or not schedule:
        return [f"temperature_schedule must be a non-empty list of [step, temperature], got {schedule!r}"]
    errs = []
    steps = []
    for i, stage in enumerate(schedule):
        if not isinstance(stage, (list, tuple)) or len(stage) != 2:
            errs.append(f"temperature_schedule[{i}] must be [step, temperature], got {stage!r}")
            continue
        step, temp = stage
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            if not (isinstance(step, float) and step.is_integer() and step >= 0):
                errs.append(f"temperature_schedule[{i}]: step must be a non-negative integer, got {step!r}")
        if not _positive(temp):
            errs.append(f"temperature_schedule[{i}]: temperature must be positive, got {temp!r}")
        steps.append(step)
    if len(set(steps)) != len(steps):
        errs.append(f"temperature_schedule has repeated steps: {steps}")
    return errs


def marked(mark: str) -> tuple[str, ...]:
    """The MicroCoderGRPOConfig fields whose metadata sets `mark` ("method", "resume_fixed"), in field order."""
    return tuple(f.name for f in dataclasses.fields(MicroCoderGRPOConfig) if f.metadata.get(mark))


# The keys that define a training method (the paper's columns; marked "method" above). A named preset
# pins each of them (the temperature controller keys only for the baselines: MicroCoder-GRPO's schedule
# is tunable). The paper's three columns share the binary reward; a graded one is an ablation (`custom`).
METHOD_KEYS = marked("method")
_NO_TEMPERATURE_CONTROL = {"temperature_probe": None, "temperature_schedule": None, "diversity_floor": None}
# Difficulty pools change which problems are trained on: not part of any of the paper's columns.
_NO_POOLS = {"easy_threshold": None, "hard_threshold": None}

# The paper's three training recipes (METHOD.md "Reported results" columns).
PRESETS: dict[str, dict[str, Any]] = {
    # GRPO: KL to the reference, symmetric clipping, per-sequence loss, no masking of truncated samples.
    "grpo": {"beta": 0.04, "epsilon": 0.2, "epsilon_high": 0.2, "loss_type": "grpo", "scale_rewards": "group",
             "truncation_mask_rho": 0.0, "mask_truncated_completions": False, "reward": "binary",
             "dynamic_sampling": False, **_NO_POOLS, **_NO_TEMPERATURE_CONTROL},
    # DAPO: clip-higher, token-level loss, every truncated sample masked (overlong filtering) and
    # dynamic sampling (this trainer's). Not included (docs/training.md): overlong reward shaping.
    "dapo": {"beta": 0.0, "epsilon": 0.2, "epsilon_high": 0.28, "loss_type": "dapo", "scale_rewards": "group",
             "truncation_mask_rho": 0.0, "mask_truncated_completions": True, "reward": "binary",
             "dynamic_sampling": True, **_NO_POOLS, **_NO_TEMPERATURE_CONTROL},
    # MicroCoder-GRPO: clip-higher, token-level loss, conditional truncation masking (rho = 0.1).
    "microcoder": {"beta": 0.0, "epsilon": 0.2, "epsilon_high": 0.28, "loss_type": "dapo", "scale_rewards": "group",
                   "truncation_mask_rho": 0.1, "mask_truncated_completions": False, "reward": "binary",
                   "dynamic_sampling": False, **_NO_POOLS},
    # No method pinned: the class defaults (MicroCoder-GRPO) and any override (ablations, e.g. rho = 0.3).
    "custom": {},
}


def _same(key: str, a: Any, b: Any) -> bool:
    if key == "scale_rewards":  # TRL reads True as "group" and False as "none"
        a, b = ({True: "group", False: "none"}.get(x, x) for x in (a, b))
    if key == "temperature_schedule" and a is not None and b is not None:
        return sorted(map(tuple, a)) == sorted(map(tuple, b))
    return a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                      and not isinstance(a, bool) and not isinstance(b, bool) and float(a) == float(b))


def preset_conflicts(name: str, overrides: Mapping[str, Any]) -> list[str]:
    """The overrides that contradict what preset `name` pins, one message each (empty: none).
    `overrides` holds only the fields explicitly set (microcoder.training.train.GrpoFields records them): a
    method field left out takes the preset's value, one set to another value is a conflict."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; valid: {sorted(PRESETS)}")
    pinned = PRESETS[name]
    return [f"preset {name!r} sets {key}={pinned[key]!r} but the override sets {key}={overrides[key]!r}"
            for key in METHOD_KEYS if key in overrides and key in pinned and not _same(key, pinned[key], overrides[key])]


def preset(name: str, **overrides: Any) -> MicroCoderGRPOConfig:
    """A config for one of the paper's recipes (`grpo`, `dapo`, `microcoder`) or `custom`, then `overrides`.

    An override may repeat a pinned value but not contradict it (use `custom` for ablations)."""
    conflicts = preset_conflicts(name, overrides)
    if conflicts:
        raise ValueError("; ".join(conflicts) + " (the preset defines the method: drop the override, or use "
                         "preset 'custom' to set method keys freely)")
    return MicroCoderGRPOConfig(**{**PRESETS[name], **overrides})
