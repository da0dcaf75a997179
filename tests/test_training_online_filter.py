"""Online difficulty filtering on the tiny model: DAPO dynamic sampling (drop all-equal groups, refill,
the cap on extra rounds, the logged fractions) and the easy / hard difficulty pools (moves by
threshold, seeded readmission, saved with the checkpoint state and restored)."""

from __future__ import annotations

import json
import math
import random

import pytest
import torch
from datasets import Dataset

from microcoder.pipeline.models import load_model_and_tokenizer
from microcoder.training.config import MicroCoderGRPOConfig
from microcoder.training.pools import DifficultyPools, merge_batches, varied_groups
from microcoder.training.train import curves_csv
from microcoder.training.trainer import GENERATION_FIELDS, STATE_FILE, MicroCoderGRPOTrainer

G = 4
# A stand-in judge with fixed per-problem outcomes: always solved, never solved, or half the group.
KINDS = {"p0": "pass", "p1": "pass", "p2": "fail", "p3": "fail", "p4": "mixed", "p5": "mixed", "p6": "mixed",
         "p7": "mixed"}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


class ProblemReward:
    """Rewards fixed per problem (KINDS); records which problems each call judged."""

    __name__ = "problem_reward"

    def __init__(self, kinds: dict[str, str]):
        self.kinds = kinds
        self.calls: list[list[str]] = []
        self.last_statuses: list[str] = []

    def __call__(self, prompts, completions, completion_ids, problem_id, **kwargs):
        self.calls.append(list(problem_id))
        kinds = [self.kinds[p] for p in problem_id]
        self.last_statuses = ["pass" if k == "pass" or (k == "mixed" and i % 2 == 0) else "fail"
                              for i, k in enumerate(kinds)]
        return [1.0 if s == "pass" else 0.0 for s in self.last_statuses]


def dataset(ids) -> Dataset:
    return Dataset.from_list([{"prompt": [{"role": "user", "content": f"Solve problem {p}."}], "problem_id": p}
                              for p in ids])


def config(tmp_path, **kw) -> MicroCoderGRPOConfig:
    base = dict(output_dir=str(tmp_path), per_device_train_batch_size=2 * G, num_generations=G,
                max_completion_length=6, max_steps=1, learning_rate=1e-3, logging_steps=1, bf16=False,
                gradient_checkpointing=False, report_to="none", save_strategy="no", seed=5, repetition_window=2,
                disable_tqdm=True, dataloader_pin_memory=False, truncation_mask_rho=0.0)
    return MicroCoderGRPOConfig(**{**base, **kw})


def make(model_dir, args, kinds=KINDS, ids=None):
    model, tok = load_model_and_tokenizer(model_dir)
    reward = ProblemReward(kinds)
    trainer = MicroCoderGRPOTrainer(model=model, processing_class=tok, reward_funcs=[reward], args=args,
                                    train_dataset=dataset(ids or sorted(kinds)))
    trainer.model.train()
    return trainer, reward


def batch(trainer, *problems) -> list[dict]:
    rows = {row["problem_id"]: row for row in trainer.train_dataset}
    return [dict(rows[p]) for p in problems for _ in range(G)]


def test_dynamic_sampling_drops_all_equal_groups_and_refills(tiny_model_dir, tmp_path):
    trainer, reward = make(tiny_model_dir, config(tmp_path, dynamic_sampling=True, dynamic_sampling_max_rounds=20))
    out = trainer._generate_and_score_completions(batch(trainer, "p0", "p2"))  # both groups all-equal
    groups = [g for call in reward.calls for g in call[::G]]
    dropped = sum(KINDS[p] != "mixed" for p in groups)
    row = trainer.generation_log[-1]
    assert set(row) == set(GENERATION_FIELDS)
    assert row["extra_rounds"] == len(reward.calls) - 1 >= 1
    assert row["filtered_frac"] == dropped / len(groups) and dropped >= 2
    assert row["unfilled_frac"] == 0.0
    assert math.isnan(row["easy_pool"]) and math.isnan(row["hard_pool"])  # pools off
    # the batch is full and every group in it carries a signal (the mixed problems: pass rate 1/2)
    assert len(out["advantages"]) == 2 * G and (out["advantages"] != 0).all()
    assert out["completion_mask"].sum() == out["num_items_in_batch"] > 0
    assert row["pass_rate"] == 0.5


def test_the_cap_on_extra_rounds_holds_and_the_rest_is_masked_out(tiny_model_dir, tmp_path):
    never_varied = {p: ("pass" if int(p[1]) % 2 else "fail") for p in KINDS}
    args = config(tmp_path, dynamic_sampling=True, dynamic_sampling_max_rounds=2)
    trainer, reward = make(tiny_model_dir, args, kinds=never_varied)
    out = trainer._generate_and_score_completions(batch(trainer, "p0", "p1"))
    assert len(reward.calls) == 3  # the first round and two extra, then train on what there is
    row = trainer.generation_log[-1]
    assert (row["extra_rounds"], row["filtered_frac"], row["unfilled_frac"]) == (2.0, 1.0, 1.0)
    assert len(out["advantages"]) == 2 * G and not out["advantages"].any()
    assert not out["completion_mask"].any() and out["num_items_in_batch"] == 0


def test_training_with_dynamic_sampling_writes_the_columns(tiny_model_dir, tmp_path):
    args = config(tmp_path, dynamic_sampling=True, dynamic_sampling_max_rounds=1, max_steps=2)
    trainer, _ = make(tiny_model_dir, args)
    trainer.train()
    log = trainer.generation_log
    assert len(log) == 2 and all(0.0 <= r["filtered_frac"] <= 1.0 and r["extra_rounds"] <= 1 for r in log)
    assert all(not math.isnan(r["loss"]) for r in trainer.state.log_history if "loss" in r)
    header, first = curves_csv(log).splitlines()[:2]
    assert header.split(",") == list(GENERATION_FIELDS) and "filtered_frac" in header
    assert first.split(",")[GENERATION_FIELDS.index("filtered_frac")] != ""


def test_off_by_default_changes_nothing(tiny_model_dir, tmp_path):
    trainer, reward = make(tiny_model_dir, config(tmp_path))
    trainer._generate_and_score_completions(batch(trainer, "p0", "p2"))
    assert len(reward.calls) == 1
    assert all(math.isnan(trainer.generation_log[-1][k]) for k in ("filtered_frac", "easy_pool", "hard_pool"))


def test_pools_move_problems_by_threshold():
    pools = DifficultyPools(easy_threshold=0.75, hard_threshold=0.0, easy_fraction=0.5, hard_fraction=0.5)
    for pid, rate in (("a", 1.0), ("b", 0.75), ("c", 0.0), ("d", 0.5), ("e", math.nan)):
        pools.observe(pid, rate)
    assert (pools.easy, pools.hard) == ({"a", "b"}, {"c"})
    pools.observe("a", 0.5)  # a readmitted problem whose rate fell between the thresholds leaves its pool
    pools.observe("c", 0.8)  # ... or moves to the other one
    assert (pools.easy, pools.hard) == ({"b", "c"}, set())


def test_pools_readmit_at_their_fractions_seeded():
    pools = DifficultyPools(0.9, 0.1, easy_fraction=0.2, hard_fraction=0.7, easy={"e"}, hard={"h"})
    rng = random.Random(0)
    easy = sum(pools.admits("e", rng) for _ in range(4000)) / 4000
    hard = sum(pools.admits("h", rng) for _ in range(4000)) / 4000
    assert abs(easy - 0.2) < 0.03 and abs(hard - 0.7) < 0.03
    assert all(pools.admits("free", rng) for _ in range(10))
    again = random.Random(0)
    assert [pools.admits("e", again) for _ in range(50)] == [pools.admits("e", r) for r in [random.Random(0)]
                                                              for _ in range(50)]


def test_trainer_pools_move_and_readmit(tiny_model_dir, tmp_path):
    args = config(tmp_path, easy_threshold=1.0, hard_threshold=0.0, easy_fraction=0.0, hard_fraction=1.0)
    trainer, reward = make(tiny_model_dir, args)
    trainer._generate_and_score_completions(batch(trainer, "p0", "p2"))
    assert (trainer.pools.easy, trainer.pools.hard) == ({"p0"}, {"p2"})
    row = trainer.generation_log[-1]
    assert (row["easy_pool"], row["hard_pool"]) == (1.0, 1.0) and math.isnan(row["filtered_frac"])
    trainer._generate_and_score_completions(batch(trainer, "p0", "p2"))
    judged = reward.calls[-1][::G]
    assert judged[1] == "p2"  # hard_fraction 1: always readmitted
    assert judged[0] not in ("p0", "p2")  # easy_fraction 0: replaced by a problem outside the pools


def same_rows(a: list[dict], b: list[dict]) -> bool:
    def norm(rows):
        return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows]
    return norm(a) == norm(b)


def test_pools_survive_a_checkpoint_and_resume(tiny_model_dir, tmp_path):
    """A run stopped after its step-1 checkpoint and resumed equals an uninterrupted one: the pools,
    their draws and the dynamic-sampling rounds continue where they were."""
    online = dict(easy_threshold=1.0, hard_threshold=0.0, easy_fraction=0.3, hard_fraction=0.3,
                  dynamic_sampling=True, dynamic_sampling_max_rounds=2, save_strategy="steps", save_steps=1,
                  lr_scheduler_type="constant")
    whole, _ = make(tiny_model_dir, config(tmp_path / "whole", max_steps=3, **online))
    whole.train()
    first, _ = make(tiny_model_dir, config(tmp_path / "run", max_steps=1, **online))
    first.train()
    saved = json.loads((tmp_path / "run" / "checkpoint-1" / STATE_FILE.format(rank=0)).read_text())
    assert saved["pools"] == first.pools.state() and sum(map(len, saved["pools"].values())) >= 1
    resumed, _ = make(tiny_model_dir, config(tmp_path / "run", max_steps=3, **online))
    resumed.train(resume_from_checkpoint=str(tmp_path / "run" / "checkpoint-1"))
    assert same_rows(resumed.generation_log, whole.generation_log) and len(whole.generation_log) == 3
    assert (resumed.pools.easy, resumed.pools.hard) == (whole.pools.easy, whole.pools.hard)
    assert resumed._online_rng.getstate() == whole._online_rng.getstate()
    # a fresh trainer given the saved state holds the same pools
    fresh, _ = make(tiny_model_dir, config(tmp_path / "fresh", **{**online, "save_strategy": "no"}))
    fresh.load_microcoder_state(saved)
    assert fresh.pools.state() == saved["pools"] and fresh._online_rng.getstate() == first._online_rng.getstate()


def test_pools_need_problem_ids(tiny_model_dir, tmp_path):
    model, tok = load_model_and_tokenizer(tiny_model_dir)
    plain = Dataset.from_list([{"prompt": [{"role": "user", "content": "x"}]}] * 4)
    with pytest.raises(ValueError, match="problem_id"):
        MicroCoderGRPOTrainer(model=model, processing_class=tok, reward_funcs=[ProblemReward({})],
                              args=config(tmp_path, easy_threshold=0.9), train_dataset=plain)


def test_varied_groups_and_merge():
    assert varied_groups([1, 1, 0, 1, None, 1, math.nan, 0], 2) == [False, True, False, False]
    with pytest.raises(ValueError, match="groups of 3"):
        varied_groups([1, 0], 3)
    a = {"prompt_ids": torch.tensor([[5, 6]]), "prompt_mask": torch.tensor([[1, 1]]),
         "completion_ids": torch.tensor([[7]]), "completion_mask": torch.tensor([[1]]),
         "advantages": torch.tensor([0.5]), "num_items_in_batch": torch.tensor(1)}
    b = {"prompt_ids": torch.tensor([[8]]), "prompt_mask": torch.tensor([[1]]),
         "completion_ids": torch.tensor([[9, 9, 9]]), "completion_mask": torch.tensor([[1, 1, 1]]),
         "advantages": torch.tensor([-0.5]), "num_items_in_batch": torch.tensor(3)}
    m = merge_batches([a, b], pad_token_id=0)
    assert m["prompt_ids"].tolist() == [[5, 6], [0, 8]] and m["prompt_mask"].tolist() == [[1, 1], [0, 1]]
    assert m["completion_ids"].tolist() == [[7, 0, 0], [9, 9, 9]]
    assert m["completion_mask"].tolist() == [[1, 0, 0], [1, 1, 1]]
    with pytest.raises(ValueError, match="pixel_values"):
        merge_batches([a, {**b, "pixel_values": torch.zeros(1)}], pad_token_id=0)
