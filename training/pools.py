"""Online difficulty filtering: DAPO dynamic sampling's group filter and the easy / hard pools.

- `varied_groups`: which groups of a scored batch carry a learning signal (their rewards are not all
  equal); DAPO's dynamic sampling trains only on those and generates more to fill the batch.
- `DifficultyPools`: a problem whose group pass rate reaches `easy_threshold` moves to the easy pool,
  one at or below `hard_threshold` to the hard pool; a pooled problem is readmitted to sampling
  with probability `easy_fraction` / `hard_fraction`, and leaves its pool once its pass rate falls
  between the thresholds again. The pools are plain data, saved with the trainer's checkpoint state.
- `select_rows` / `merge_batches`: pick and concatenate rows of TRL's scored batch dicts (padding
  prompts on the left and completions on the right, as TRL does).

The trainer (`microcoder.training.trainer.MicroCoderGRPOTrainer`) wires these into generation.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import torch


def varied_groups(rewards: list[float | None], group_size: int, tol: float = 1e-6) -> list[bool]:
    """Per group of `group_size` consecutive samples: True when its judged rewards are not all equal
    (None / NaN rewards, left unjudged, are ignored; a group with fewer than two judged is not varied)."""
    if group_size < 1 or len(rewards) % group_size:
        raise ValueError(f"{len(rewards)} rewards do not form groups of {group_size}")
    flags = []
    for start in range(0, len(rewards), group_size):
        judged = [r for r in rewards[start:start + group_size] if r is not None and not math.isnan(r)]
        flags.append(len(judged) > 1 and max(judged) - min(judged) > tol)
    return flags


@dataclass
class DifficultyPools:
    """The easy and hard pools of problem ids (None thresholds: that pool is off)."""

    easy_threshold: float | None
    hard_threshold: float | None
    easy_fraction: float
    hard_fraction: float
    easy: set[str] = field(default_factory=set)
    hard: set[str] = field(default_factory=set)

    @property
    def enabled(self) -> bool:
        return self.easy_threshold is not None or self.hard_threshold is not None

    def observe(self, problem_id: str, pass_rate: float) -> None:
        """Move `problem_id` by the pass rate of its latest group (NaN: nothing judged, no move)."""
        if math.isnan(pass_rate):
            return
        self.easy.discard(problem_id)
        self.hard.discard(problem_id)
        if self.easy_threshold is not None and pass_rate >= self.easy_threshold:
            self.easy.add(problem_id)
        elif self.hard_threshold is not None and pass_rate <= self.hard_threshold:
            self.hard.add(problem_id)

    def pooled(self, problem_id: str) -> bool:
        return problem_id in self.easy or problem_id in self.hard

    def admits(self, problem_id: str, rng: random.Random) -> bool:
        """Whether a sampled problem is trained on now: always outside the pools, else with its pool's
        readmission probability (one draw from `rng` per pooled problem)."""
        if problem_id in self.easy:
            return rng.random() < self.easy_fraction
        if problem_id in self.hard:
            return rng.random() < self.hard_fraction
        return True

    def state(self) -> dict[str, list[str]]:
        return {"easy": sorted(self.easy), "hard": sorted(self.hard)}

    def load_state(self, state: dict[str, list[str]]) -> None:
        self.easy = set(state.get("easy", []))
        self.hard = set(state.get("hard", []))


# Keys of TRL's scored batch with one row per sample, how each is padded when batches of different
# widths are merged: (side, pad value; None = the tokenizer's pad id). 1-D keys need no padding.
ROW_KEYS: dict[str, tuple[str, float | None]] = {
    "prompt_ids": ("left", None),
    "prompt_mask": ("left", 0),
    "completion_ids": ("right", None),
    "completion_mask": ("right", 0),
    "old_per_token_logps": ("right", 0.0),
    "sampling_per_token_logps": ("right", 0.0),
    "ref_per_token_logps": ("right", 0.0),
    "importance_sampling_ratio": ("right", 1.0),
    "tool_mask": ("right", 1),
    "advantages": ("right", 0.0),
}
BATCH_KEYS = ("num_items_in_batch",)  # recomputed by the trainer after a merge


def _check_keys(batch: dict[str, Any]) -> None:
    unknown = sorted(set(batch) - set(ROW_KEYS) - set(BATCH_KEYS))
    if unknown:
        raise ValueError(f"dynamic sampling / difficulty pools cannot regroup a batch with {unknown} "
                         "(multimodal or other inputs are not supported with online filtering)")


def select_rows(batch: dict[str, Any], rows: list[int]) -> dict[str, Any]:
    """The batch restricted to `rows` (in that order); batch-level keys are copied."""
    _check_keys(batch)
    index = torch.tensor(rows, dtype=torch.long, device=batch["advantages"].device)
    return {k: (v.index_select(0, index) if k in ROW_KEYS and v is not None else v) for k, v in batch.items()}


def merge_batches(batches: list[dict[str, Any]], pad_token_id: int) -> dict[str, Any]:
    """Concatenate scored batches row-wise, padding token dimensions to the widest."""
    if len(batches) == 1:
        return dict(batches[0])
    for b in batches:
        _check_keys(b)
    merged: dict[str, Any] = {}
    for key, (side, value) in ROW_KEYS.items():
        parts = [b.get(key) for b in batches]
        if all(p is None for p in parts):
            continue
        if any(p is None for p in parts):
            raise ValueError(f"batches disagree on whether they hold {key!r}")
        merged[key] = _cat_padded(parts, side, pad_token_id if value is None else value)
    for key in BATCH_KEYS:
        if key in batches[0]:
            merged[key] = batches[0][key]
    return merged


def _cat_padded(parts: list[torch.Tensor], side: str, value: float) -> torch.Tensor:
    if parts[0].dim() < 2:
        return torch.cat(parts, dim=0)
    width = max(p.size(1) for p in parts)
    padded = []
    for p in parts:
        extra = width - p.size(1)
        if extra:
            fill = p.new_full((p.size(0), extra, *p.shape[2:]), value)
            p = torch.cat([fill, p] if side == "left" else [p, fill], dim=1)
        padded.append(p)
    return torch.cat(padded, dim=0)
