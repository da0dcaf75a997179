"""A training run that learns nothing says so (issue 39): a generation step whose groups all have
equal rewards (no advantage, no gradient from the reward) is warned about once, counted in
stats.json, and with `grpo.stop_without_signal` ends the run cleanly; a run with mixed groups is quiet."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import pytest
from datasets import Dataset

from microcoder.pipeline.io import read_problems, write_problems
from microcoder.pipeline.models import load_model_and_tokenizer
from microcoder.training.config import MicroCoderGRPOConfig
from microcoder.training.learning_signal import group_outcomes, no_signal_message
from microcoder.training.trainer import MicroCoderGRPOTrainer

pytestmark = pytest.mark.usefixtures("one_torch_thread")
SEED = Path(__file__).resolve().parents[1] / "data" / "seed"
G = 2
NO_SIGNAL = "no learning signal"


class FixedReward:
    """Rewards by position in the group: `pattern[i % G]` (all 0: every group all-fail)."""

    __name__ = "fixed_reward"

    def __init__(self, pattern):
        self.pattern = pattern

    def __call__(self, prompts, completions, completion_ids, **kwargs):
        return [self.pattern[i % G] for i in range(len(completions))]


def trainer_for(model_dir, tmp_path, pattern, **kw) -> MicroCoderGRPOTrainer:
    args = MicroCoderGRPOConfig(**{
        **dict(output_dir=str(tmp_path), per_device_train_batch_size=2 * G, num_generations=G, max_completion_length=4,
               max_steps=3, learning_rate=1e-3, logging_steps=1, bf16=False, gradient_checkpointing=False,
               report_to="none", save_strategy="no", seed=3, truncation_mask_rho=0.0, disable_tqdm=True,
               dataloader_pin_memory=False), **kw})
    model, tok = load_model_and_tokenizer(model_dir)
    data = Dataset.from_list([{"prompt": [{"role": "user", "content": f"Solve {i}."}]} for i in range(4)])
    return MicroCoderGRPOTrainer(model=model, processing_class=tok, reward_funcs=[FixedReward(pattern)], args=args,
                                 train_dataset=data)


def warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_groups_are_classified_by_what_they_saw():
    rewards = [0, 0, 1, 1, 0, 1, 0.5, 0.5, math.nan, 1]
    assert group_outcomes(rewards, 2, 1.0, 0.0) == ["all-fail", "all-pass", "mixed", "all-equal", "unjudged"]
    fail = no_signal_message(4, ["all-fail", "all-fail"])
    assert fail.startswith("step 4: no learning signal: all 2 groups were all-fail")
    assert "filter.min_pass_rate > 0" in fail and "max_pass_rate" not in fail and "\n" not in fail
    both = no_signal_message(0, ["all-pass", "all-fail", "all-pass"])
    assert "(1 all-fail, 2 all-pass)" in both and "filter.max_pass_rate" in both and "num_generations" in both


def test_a_run_without_signal_warns_once(tiny_model_dir, tmp_path, caplog):
    trainer = trainer_for(tiny_model_dir, tmp_path, [0.0, 0.0])
    with caplog.at_level(logging.WARNING, logger="microcoder"):
        trainer.train()
    assert trainer.state.global_step == 3 and trainer.stop_reason is None  # warns only, by default
    assert [row["no_signal_frac"] for row in trainer.generation_log] == [1.0, 1.0, 1.0]
    said = [m for m in warnings(caplog) if NO_SIGNAL in m]
    assert len(said) == 1 and said[0].startswith("step 0: no learning signal: all 2 groups were all-fail")
    assert trainer.group_outcomes == {"all-fail": 6}


def test_stop_without_signal_ends_the_run_after_n_steps(tiny_model_dir, tmp_path, caplog):
    trainer = trainer_for(tiny_model_dir, tmp_path, [0.0, 0.0], max_steps=6, stop_without_signal=2)
    with caplog.at_level(logging.WARNING, logger="microcoder"):
        trainer.train()
    assert trainer.state.global_step == 2 and len(trainer.generation_log) == 2
    assert trainer.stop_reason == "no learning signal in 2 generation steps in a row (steps 0-1; " \
                                  "grpo.stop_without_signal=2)"
    assert any("step 1: stopping training" in m for m in warnings(caplog))


def test_a_run_with_mixed_groups_is_quiet(tiny_model_dir, tmp_path, caplog):
    trainer = trainer_for(tiny_model_dir, tmp_path, [1.0, 0.0], stop_without_signal=1)
    with caplog.at_level(logging.WARNING, logger="microcoder"):
        trainer.train()
    assert trainer.state.global_step == 3 and trainer.stop_reason is None
    assert [row["no_signal_frac"] for row in trainer.generation_log] == [0.0, 0.0, 0.0]
    assert not [m for m in warnings(caplog) if NO_SIGNAL in m]


def test_bad_stop_without_signal_is_refused(tmp_path):
    with pytest.raises(ValueError, match="stop_without_signal must be an integer >= 1 or None, got 0"):
        MicroCoderGRPOConfig(output_dir=str(tmp_path), stop_without_signal=0, bf16=False, report_to="none")


class NoCodeJudge:
    def evaluate_batch(self, problems, submissions, mode="first-failure", deadline_s=None):
        raise AssertionError("the tiny model writes no code: nothing to judge")

    def close(self):
        pass


def test_train_stops_cleanly_and_stats_say_why(tiny_model_dir, tmp_path, caplog):
    """The issue's run: the tiny policy writes no code, every reward is 0. With the flag the run stops,
    writes its checkpoint and stats (with the reason) and returns normally (the command exits 0)."""
    from microcoder.training.run_folder import RUN_FILE
    from microcoder.training.train import TrainConfig, TrainRun, run_training

    inputs = tmp_path / "problems.parquet"
    write_problems(inputs, read_problems(SEED / "problems.jsonl")[:4])
    grpo = dict(max_steps=6, per_device_train_batch_size=4, num_generations=2, max_completion_length=4,
                logging_steps=1, bf16=False, gradient_checkpointing=False, save_strategy="no", report_to="none",
                dataloader_pin_memory=False, stop_without_signal=2)
    out = tmp_path / "train"
    with caplog.at_level(logging.WARNING, logger="microcoder"):
        result = run_training(TrainConfig(torch_threads=1, grpo=grpo),
                              TrainRun(model=str(tiny_model_dir), problems=inputs, out_dir=out), judge=NoCodeJudge(),
                              progress=False)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["steps"] == 2 and stats["steps_without_signal"] == 2 and stats["steps_without_signal_frac"] == 1.0
    assert stats["stop_reason"].startswith("no learning signal in 2 generation steps in a row")
    assert stats["group_outcomes"] == {"all-fail": 4} and result.stats == stats
    assert (out / "checkpoint" / "model.safetensors").exists()
    assert json.loads((out / "trainer" / RUN_FILE).read_text())["finished"] is True
    said = warnings(caplog)
    assert sum(m.startswith("step 0: no learning signal") for m in said) == 1  # once, not once per step
    assert any(m.startswith("train: 2 of 2 generation steps had no learning signal") for m in said)
    assert any(m.startswith("train: stopped early at step 2 of 6") for m in said)
