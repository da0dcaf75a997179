"""MicroCoderGRPOTrainer on the tiny model: equivalence with GRPOTrainer, the mask on the advantages,
per-generation metrics, the temperature probe."""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset
from trl import GRPOTrainer

from microcoder.pipeline.models import load_model_and_tokenizer
from microcoder.training.config import MicroCoderGRPOConfig
from microcoder.training.trainer import GENERATION_FIELDS, MicroCoderGRPOTrainer

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class StatusReward:
    """Deterministic rewards from the token ids; statuses from a rule (what EvaluatorReward reports)."""

    __name__ = "status_reward"

    def __init__(self, status_of=lambda i, ids: "no_code"):
        self.status_of = status_of
        self.last_statuses: list[str] = []

    def __call__(self, prompts, completions, completion_ids, **kwargs):
        self.last_statuses = [self.status_of(i, ids) for i, ids in enumerate(completion_ids)]
        return [float(sum(ids) % 7) / 7 for ids in completion_ids]


def dataset(n: int = 8) -> Dataset:
    return Dataset.from_list([{"prompt": [{"role": "user", "content": f"Solve problem {i}: print {i}."}],
                               "problem_id": f"p{i}"} for i in range(n)])


def config(tmp_path, **kw) -> MicroCoderGRPOConfig:
    base = dict(output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4, max_completion_length=12,
                max_steps=3, learning_rate=1e-3, logging_steps=1, bf16=False, gradient_checkpointing=False,
                report_to="none", save_strategy="no", seed=7, repetition_window=4, disable_tqdm=True,
                dataloader_pin_memory=False)
    return MicroCoderGRPOConfig(**{**base, **kw})


def make(cls, model_dir, args, reward):
    model, tok = load_model_and_tokenizer(model_dir)
    return cls(model=model, processing_class=tok, reward_funcs=[reward], args=args, train_dataset=dataset())


def losses(trainer) -> list[float]:
    return [row["loss"] for row in trainer.state.log_history if "loss" in row]


def test_equivalent_to_grpo_trainer_with_rho_zero(tiny_model_dir, tmp_path):
    plain = make(GRPOTrainer, tiny_model_dir, config(tmp_path / "a", truncation_mask_rho=0.0), StatusReward())
    plain.train()
    ours = make(MicroCoderGRPOTrainer, tiny_model_dir, config(tmp_path / "b", truncation_mask_rho=0.0), StatusReward())
    ours.train()
    assert losses(ours) == losses(plain)
    assert any(loss != 0 for loss in losses(plain))  # a run that learns something, so equality means something
    for (name, p), (_, q) in zip(plain.model.named_parameters(), ours.model.named_parameters(), strict=True):
        assert torch.equal(p, q), name
    assert len(ours.generation_log) == 3 and ours.generation_log[0]["masked_frac"] == 0.0


def test_full_mask_zeroes_every_advantage(tiny_model_dir, tmp_path):
    # The tiny model almost never stops within 12 tokens: every sample is truncated and `no_code`.
    args = config(tmp_path, truncation_mask_rho=1.0, repetition_window=100, max_steps=2)
    trainer = make(MicroCoderGRPOTrainer, tiny_model_dir, args, StatusReward())
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    log = trainer.generation_log
    assert [row["truncated_frac"] for row in log] == [1.0, 1.0]
    assert [row["masked_frac"] for row in log] == [1.0, 1.0]
    # zero advantages -> zero gradients -> AdamW (no weight decay) leaves every weight where it was
    for n, p in trainer.model.named_parameters():
        assert torch.equal(p, before[n]), n


class Recording(MicroCoderGRPOTrainer):
    """Keeps the advantages TRL computed before the mask, and the batch after it."""

    def _after_scoring(self, output):
        self.raw_advantages = output["advantages"].clone()
        super()._after_scoring(output)
        self.scored = output


def test_mask_hits_only_truncated_non_incorrect_samples(tiny_model_dir, tmp_path):
    statuses = ["pass", "fail", "no_code", "error"]
    reward = StatusReward(lambda i, ids: statuses[i % 4])
    trainer = make(Recording, tiny_model_dir, config(tmp_path, truncation_mask_rho=1.0, repetition_window=100), reward)
    trainer.model.train()
    batch = [dataset()[i // 4] for i in range(8)]  # two prompts x G = 4
    trainer._generate_and_score_completions(batch)
    raw, masked = trainer.raw_advantages, trainer.scored["advantages"]
    ids = trainer._last_completion_ids
    for i, status in enumerate(reward.last_statuses):
        truncated = len(ids[i]) == 12 and ids[i][-1] not in trainer.eos_token_ids
        if truncated and status in ("pass", "no_code"):
            assert masked[i] == 0.0
        else:
            assert masked[i] == raw[i]
    assert (raw != 0).any()  # masked samples kept their place in the group statistics (raw is TRL's own)
    row = trainer.generation_log[-1]
    assert set(row) == set(GENERATION_FIELDS)
    assert row["pass_rate"] == row["fail_rate"] == row["no_code_rate"] == row["error_rate"] == 0.25
    assert 0.0 <= row["diversity"] <= 1.0


def test_temperature_probe_picks_lowest_reaching_target(tiny_model_dir, tmp_path):
    args = config(tmp_path, truncation_mask_rho=0.0, max_steps=1, temperature_probe=[2.0, 0.5, 1.0],
                  diversity_target=0.0)
    trainer = make(MicroCoderGRPOTrainer, tiny_model_dir, args, StatusReward())
    trainer.train()
    assert sorted(trainer.probe_results) == [0.5, 1.0, 2.0]
    assert trainer.generation_log[0]["temperature"] == 0.5
    assert trainer.temperature_changes[0]["to"] == 0.5 and trainer.temperature_changes[0]["reason"].startswith("probe")
    # the probe's generations leave TRL's logged metrics alone: the logged length is the trained batch's
    assert trainer.state.log_history[0]["completions/mean_length"] == trainer.generation_log[0]["mean_length"]


def test_rho_needs_statuses(tiny_model_dir, tmp_path):
    def plain_reward(prompts, completions, **kwargs):
        return [0.0] * len(prompts)

    with pytest.raises(ValueError, match="statuses"):
        make(MicroCoderGRPOTrainer, tiny_model_dir, config(tmp_path, truncation_mask_rho=0.1), plain_reward)


def test_too_many_unjudged_samples_warn_then_stop(tiny_model_dir, tmp_path, caplog):
    from microcoder.training.trainer import UnjudgedSamplesError

    class Unjudged(StatusReward):
        def __call__(self, prompts, completions, completion_ids, **kwargs):
            rewards = super().__call__(prompts, completions, completion_ids, **kwargs)
            return [None if s == "deadline" else r for s, r in zip(self.last_statuses, rewards, strict=True)]

    quarter = Unjudged(lambda i, ids: "deadline" if i % 4 == 0 else "no_code")
    trainer = make(MicroCoderGRPOTrainer, tiny_model_dir, config(tmp_path / "a", max_steps=1), quarter)
    with caplog.at_level("WARNING", logger="microcoder.training.trainer"):
        trainer.train()
    assert trainer.generation_log[0]["deadline_frac"] == 0.25
    assert "not judged before" in caplog.text
    assert trainer.status_counts["deadline"] == 1 and sum(trainer.status_counts.values()) == 4
    everything = Unjudged(lambda i, ids: "deadline")
    trainer = make(MicroCoderGRPOTrainer, tiny_model_dir, config(tmp_path / "b", max_steps=1), everything)
    with pytest.raises(UnjudgedSamplesError, match="reward_deadline_stop_frac"):
        trainer.train()
