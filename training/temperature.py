"""Sampling temperature T(D) (METHOD.md section 3): probe, staged schedule, diversity floor guard.

Both policies in the clipped objective are evaluated at the sampling temperature, so a change
must reach sampling *and* the training log-probabilities together, and only at a generation
boundary. TRL 1.16 copies `args.temperature` at init into four places; `set_temperature` updates
all of them:
- `trainer.temperature` (read by TRL when it builds things later),
- the transformers path: `trainer.generation_config` and `trainer.generation_kwargs`,
- the vLLM path: `trainer.vllm_generation.temperature` (read at every `generate`),
- the fused LM head (`trl.trainer.utils.add_fused_lm_head`) of the policy and reference models,
  which divides the logits by a temperature captured in a closure. The closure cell is updated in
  place: re-patching would stack forwards and bypass wrappers (accelerate's autocast) that hold
  the original patched forward. trl is pinned exactly (pyproject), and a test checks the result.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

_FUSED_FORWARD = "_fused_forward"


def _functions(fn: Any):
    """`fn` and everything it wraps (bound methods, functools.wraps chains)."""
    seen = set()
    while fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        yield fn
        fn = getattr(fn, "__func__", None) or getattr(fn, "__wrapped__", None)


def fused_head_temperature_cell(model: Any):
    """The closure cell holding the fused LM head's temperature on `model`, or None if unpatched."""
    model = getattr(model, "module", None) or model  # DDP / DeepSpeed engine -> the model
    if callable(getattr(model, "get_base_model", None)):  # PEFT: TRL patches the base model
        model = model.get_base_model()
    candidates = [vars(model).get("forward"), vars(model).get("_original_forward")]
    for candidate in candidates:
        for fn in _functions(candidate):
            code = getattr(fn, "__code__", None)
            # functools.wraps renames the patched forward to "forward"; its code object keeps the name.
            if code is not None and code.co_name == _FUSED_FORWARD and "temperature" in code.co_freevars:
                return fn.__closure__[code.co_freevars.index("temperature")]
    return None


def temperature_cells(trainer: Any) -> list:
    """Fused-head temperature cells of the policy (required) and the reference model (if any)."""
    cell = fused_head_temperature_cell(trainer.model)
    if cell is None:
        raise RuntimeError(
            "the policy model has no TRL fused LM head (trl.trainer.utils.add_fused_lm_head); this trainer "
            "needs trl==1.16.0, where GRPOTrainer patches it at init"
        )
    cells = [cell]
    ref = getattr(trainer, "ref_model", None)
    if ref is not None:
        ref_cell = fused_head_temperature_cell(ref)
        if ref_cell is None:
            raise RuntimeError("the reference model has no TRL fused LM head to set the temperature on")
        cells.append(ref_cell)
    return cells


def set_temperature(trainer: Any, t: float) -> None:
    """Change the sampling and log-probability temperature of a (MicroCoder)GRPOTrainer.

    Call only at a generation boundary (the trainer's controller does): batches already generated
    keep the temperature they were sampled with only if no loss is computed after the change.
    """
    if not (isinstance(t, (int, float)) and t > 0 and math.isfinite(t)):
        raise ValueError(f"temperature must be a positive number, got {t!r}")
    t = float(t)
    cells = getattr(trainer, "_temperature_cells", None) or temperature_cells(trainer)
    trainer.temperature = t
    gen_config = getattr(trainer, "generation_config", None)
    if gen_config is not None:
        gen_config.temperature = t
    gen_kwargs = getattr(trainer, "generation_kwargs", None)
    if isinstance(gen_kwargs, dict):
        gen_kwargs["temperature"] = t
    vllm = getattr(trainer, "vllm_generation", None)
    if vllm is not None:
        vllm.temperature = t
    for cell in cells:
        cell.cell_contents = t


def pick_probe_temperature(diversity_by_temperature: Mapping[float, float], target: float) -> tuple[float, str]:
    """The lowest temperature whose diversity reaches `target`; else the most diverse one.

    Returns (temperature, reason) so the choice can be logged.
    """
    if not diversity_by_temperature:
        raise ValueError("no probe results")
    for t in sorted(diversity_by_temperature):
        d = diversity_by_temperature[t]
        if not math.isnan(d) and d >= target:
            return t, f"lowest temperature reaching diversity {target:g} (D={d:.3f})"
    best = max(sorted(diversity_by_temperature), key=lambda t: _nan_low(diversity_by_temperature[t]))
    return best, (f"no candidate reached diversity {target:g}; using the most diverse "
                  f"(D={diversity_by_temperature[best]:.3f})")


def _nan_low(x: float) -> float:
    return -math.inf if math.isnan(x) else x


@dataclass
class TemperatureController:
    """Staged temperature: `temperature_at(step)` at each generation, `observe(D)` after scoring.

    Stages are (first global step, temperature); the first stage starts at step 0 (the initial
    temperature, from the probe or the config, when the schedule starts later). The floor guard
    moves to the next stage early when diversity stays below `floor` for `patience` generations.
    """

    initial: float
    schedule: list[tuple[int, float]] = field(default_factory=list)
    floor: float | None = None
    patience: int = 3
    forced_stage: int = 0
    low_streak: int = 0

    def __post_init__(self) -> None:
        self.schedule = sorted((int(s), float(t)) for s, t in self.schedule)
        if not self.schedule or self.schedule[0][0] > 0:
            self.schedule.insert(0, (0, float(self.initial)))

    def set_initial(self, t: float) -> None:
        """Replace the step-0 stage's temperature (the probe's result)."""
        self.schedule[0] = (0, float(t))

    def stage_at(self, step: int) -> int:
        scheduled = max(i for i, (start, _) in enumerate(self.schedule) if start <= step)
        return max(scheduled, self.forced_stage)

    def temperature_at(self, step: int) -> float:
        return self.schedule[self.stage_at(step)][1]

    def reason_at(self, step: int) -> str:
        """Why the stage at `step` is the current one: the schedule, or the floor guard."""
        scheduled = max(i for i, (start, _) in enumerate(self.schedule) if start <= step)
        if self.forced_stage > scheduled:
            return f"guard: diversity below {self.floor:g} for {self.patience} generations"
        return f"schedule stage {scheduled} (from step {self.schedule[scheduled][0]})"

    def observe(self, step: int, diversity: float) -> None:
        """Record one generation's diversity; the guard may advance the stage for the next one."""
        if self.floor is None or math.isnan(diversity):
            return
        self.low_streak = self.low_streak + 1 if diversity < self.floor else 0
        if self.low_streak < self.patience:
            return
        self.low_streak = 0
        stage = self.stage_at(step)
        if stage + 1 >= len(self.schedule):
            log.warning("diversity %.3f below floor %.3f for %d generations, but there is no next temperature stage",
                        diversity, self.floor, self.patience)
            return
        self.forced_stage = stage + 1
