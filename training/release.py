"""The public API for training on a MicroCoder release with plain TRL (or anything that takes a
`datasets.Dataset` and a reward callable), outside this project's own trainer:

    from microcoder.training.release import CHAT_TEMPLATE_KWARGS, load_release, reward_function
    from trl import GRPOConfig, GRPOTrainer

    dataset = load_release("data/curated")            # or a Hub download of the release
    reward = reward_function("data/curated")          # judges in our sandboxed evaluator
    args = GRPOConfig(output_dir="out", chat_template_kwargs=CHAT_TEMPLATE_KWARGS)
    GRPOTrainer(model="Qwen/Qwen3-0.6B", reward_funcs=reward, args=args, train_dataset=dataset).train()
    reward.close()

`load_release` gives a `problem_id` column (TRL hands dataset columns to reward functions; the
reward looks the problem up by it) and a conversational `prompt` built by
`microcoder.pipeline.generation.prompts.build_messages` (the title once). Qwen3's chat template thinks unless
told not to: without `chat_template_kwargs={"enable_thinking": False}` the model spends its
completion budget thinking and most answers hold no code (21 of 24 samples in one trial).

The reward is `microcoder.training.rewards.EvaluatorReward`: 1.0 when the code passes every test, 0.0 when it
fails or has no code block, None when our judge failed (TRL leaves such a sample out of its group).
The per-trainer entry points (verl, OpenRLHF, rllm) are in `microcoder.pipeline.rewards_api`; `microcoder export`
writes the files those trainers read (docs/export.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from microcoder.pipeline.rewards_api import compute_score, reward_func, rllm_reward_fn

CHAT_TEMPLATE_KWARGS = {"enable_thinking": False}  # GRPOConfig(chat_template_kwargs=...) for Qwen3
# Columns kept beside `problem_id` and `prompt` (light ones; the tests stay with the reward).
KEPT_COLUMNS = ("source", "platform", "style", "difficulty", "pass_rate")


def load_problems(path: str | Path):
    """The release's problems: a built folder (`data/curated`), its `data/` shards or one parquet file."""
    from microcoder.pipeline.export import read_release

    return read_release(path)


def load_release(path: str | Path, *, thinking: bool = False, language: str = "python",
                 system_prompt: str | None = None):
    """The release as a `datasets.Dataset`: `problem_id`, `prompt` (chat messages) and a few light
    columns (source, platform, style, difficulty, pass_rate). `thinking`, `language` and
    `system_prompt` change the prompts' wording as `build_messages` does."""
    from datasets import Dataset

    from microcoder.pipeline.generation.prompts import build_messages

    rows = []
    for p in load_problems(path):
        row = {"problem_id": p.id, "prompt": build_messages(p, thinking=thinking, language=language,
                                                            system_prompt=system_prompt)}
        for name in KEPT_COLUMNS:
            row[name] = getattr(p, name) if hasattr(p, name) else p.extra.get(name)
        rows.append(row)
    return Dataset.from_list(rows)


def reward_function(path: str | Path, *, evaluator: dict[str, Any] | None = None, deadline_s: float = 120.0,
                    language: str = "python", **rewards: float):
    """A TRL reward function over the release's problems (`microcoder.training.rewards.EvaluatorReward`).
    `evaluator`: the params' `evaluator:` keys (workers, sandbox, ...); the judge starts on the first
    call and stops with `.close()`. `rewards`: reward_pass / reward_fail / reward_no_code."""
    from microcoder.pipeline.evaluator.factory import make_evaluator
    from microcoder.training.rewards import EvaluatorReward

    settings = dict(evaluator or {})
    return EvaluatorReward(load_problems(path), make_judge=lambda: make_evaluator(settings), language=language,
                           deadline_s=deadline_s, **rewards)


__all__ = ["CHAT_TEMPLATE_KWARGS", "compute_score", "load_release", "reward_func", "reward_function",
           "rllm_reward_fn"]
