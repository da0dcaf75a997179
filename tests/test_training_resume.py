"""Checkpoints and resume: a run killed after a checkpoint and resumed equals an uninterrupted run
(losses, temperatures, masked counts, the mask's draws, weights), at the trainer and at the stage."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import torch
from datasets import Dataset
from transformers import TrainerCallback

from microcoder.pipeline.inputs import InputError
from microcoder.pipeline.io import read_problems, write_problems
from microcoder.pipeline.models import load_model_and_tokenizer
from microcoder.training.config import MicroCoderGRPOConfig
from microcoder.training.trainer import STATE_FILE, MicroCoderGRPOTrainer

SEED = Path(__file__).resolve().parents[1] / "data" / "seed"


pytestmark = pytest.mark.usefixtures("one_torch_thread")


class Killed(Exception):
    pass


class KillAfter(TrainerCallback):
    """Stands in for a crash: the run dies at the end of optimizer step `step`, before that step's checkpoint
    (transformers calls on_step_end before it saves)."""

    def __init__(self, step: int):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise Killed(f"killed at step {state.global_step}")


class StatusReward:
    """Rewards and statuses from the token ids: a mix of every status, so the mask, the group statistics
    (None rewards for `deadline`) and the loss all move."""

    __name__ = "status_reward"

    def __init__(self):
        self.last_statuses: list[str] = []
        from collections import Counter

        self.stats = Counter()

    def __call__(self, prompts, completions, completion_ids, **kwargs):
        statuses = [("pass", "no_code", "fail", "no_code", "deadline")[sum(ids) % 5] for ids in completion_ids]
        self.last_statuses = statuses
        self.stats.update(statuses)
        values = {"pass": 1.0, "no_code": 0.0, "fail": 0.0, "deadline": None}
        return [values[s] if s != "no_code" else float(sum(ids) % 3) / 3 for s, ids in zip(statuses, completion_ids,
                                                                                             strict=True)]


def dataset(n: int = 16) -> Dataset:
    return Dataset.from_list([{"prompt": [{"role": "user", "content": f"Solve problem {i}: print {i}."}],
                               "problem_id": f"p{i}"} for i in range(n)])


def config(out, **kw) -> MicroCoderGRPOConfig:
    base = dict(output_dir=str(out), per_device_train_batch_size=4, num_generations=4, max_completion_length=10,
                max_steps=4, learning_rate=1e-3, logging_steps=1, bf16=False, gradient_checkpointing=False,
                report_to="none", save_strategy="steps", save_steps=2, seed=3, repetition_window=3,
                disable_tqdm=True, dataloader_pin_memory=False, truncation_mask_rho=0.5,
                temperature_probe=[0.8, 1.1], diversity_target=0.0, temperature_schedule=[[0, 1.0], [3, 1.4]],
                diversity_floor=1.0, diversity_patience=2, reward_deadline_stop_frac=1.0)
    return MicroCoderGRPOConfig(**{**base, **kw})


def trainer_for(model_dir, args, callbacks=None) -> MicroCoderGRPOTrainer:
    model, tok = load_model_and_tokenizer(model_dir)
    return MicroCoderGRPOTrainer(model=model, processing_class=tok, reward_funcs=[StatusReward()], args=args,
                                 train_dataset=dataset(), callbacks=callbacks)


def losses(trainer) -> list[tuple[int, float]]:
    return [(row["step"], row["loss"]) for row in trainer.state.log_history if "loss" in row]


def same_rows(a: list[dict], b: list[dict]) -> bool:
    def norm(rows):
        return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows]
    return norm(a) == norm(b)


def test_killed_and_resumed_run_equals_an_uninterrupted_one(tiny_model_dir, tmp_path):
    whole = trainer_for(tiny_model_dir, config(tmp_path / "whole"))
    whole.train()

    killed = trainer_for(tiny_model_dir, config(tmp_path / "run"), callbacks=[KillAfter(3)])
    with pytest.raises(Killed):
        killed.train()
    checkpoint = tmp_path / "run" / "checkpoint-2"
    assert (checkpoint / STATE_FILE.format(rank=0)).exists()
    resumed = trainer_for(tiny_model_dir, config(tmp_path / "run"))
    resumed.train(resume_from_checkpoint=str(checkpoint))

    assert any(loss != 0 for _, loss in losses(whole))  # a run that learns, so equality means something
    assert losses(resumed) == losses(whole)
    assert same_rows(resumed.generation_log, whole.generation_log)
    log = whole.generation_log
    assert [row["temperature"] for row in log] != [log[0]["temperature"]] * len(log)  # the controller acted
    assert any(0 < row["masked_frac"] for row in log)  # the mask drew
    assert any(row["deadline_frac"] > 0 for row in log)
    assert resumed.temperature_changes == whole.temperature_changes
    assert resumed.probe_results == whole.probe_results
    assert resumed.status_counts == whole.status_counts
    assert resumed._mask_rng.getstate() == whole._mask_rng.getstate()
    assert resumed.temperature_controller == whole.temperature_controller
    for (name, p), (_, q) in zip(whole.model.named_parameters(), resumed.model.named_parameters(), strict=True):
        assert torch.equal(p, q), name


def write_inputs(tmp_path):
    problems = read_problems(SEED / "problems.jsonl")[:4]
    path = tmp_path / "problems.parquet"
    write_problems(path, problems)
    return path


class NoCodeJudge:
    def evaluate_batch(self, problems, submissions, mode="first-failure", deadline_s=None):
        raise AssertionError("the tiny model writes no code: nothing to judge")

    def close(self):
        pass


def train(model_dir, inputs, out, resume=False, **kw):
    from microcoder.training.train import TrainConfig, TrainRun, run_training

    callbacks = kw.pop("callbacks", None)
    grpo = dict(max_steps=3, per_device_train_batch_size=4, num_generations=2, max_completion_length=8,
                repetition_window=2, learning_rate=1e-3, logging_steps=1, bf16=False, gradient_checkpointing=False,
                save_strategy="steps", save_steps=1, report_to="none", dataloader_pin_memory=False,
                temperature_schedule=[[0, 1.0], [2, 1.3]])
    cfg = TrainConfig(torch_threads=1, grpo=grpo, **kw)
    run = TrainRun(model=str(model_dir), problems=inputs, out_dir=out, resume=resume)
    return run_training(cfg, run, judge=NoCodeJudge(), callbacks=callbacks, progress=False)


def test_stage_resume_from_the_latest_checkpoint(tiny_model_dir, tmp_path):
    from microcoder.training.run_folder import RUN_FILE

    inputs = write_inputs(tmp_path)
    whole = train(tiny_model_dir, inputs, tmp_path / "whole")

    out = tmp_path / "run"
    with pytest.raises(Killed):
        train(tiny_model_dir, inputs, out, callbacks=[KillAfter(3)])
    trainer_dir = out / "trainer"
    assert json.loads((trainer_dir / RUN_FILE).read_text())["finished"] is False
    assert sorted(p.name for p in trainer_dir.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    # A save cut short by the kill (no state file yet) is never resumed from.
    (trainer_dir / "checkpoint-3").mkdir()
    (trainer_dir / "checkpoint-3" / "trainer_state.json").write_text("{}")

    # A new run would silently throw the interrupted one away: refused.
    with pytest.raises(InputError, match="--resume"):
        train(tiny_model_dir, inputs, out)
    # Resuming with another seed (or method, batch...) is not continuing the same run: refused, naming it.
    with pytest.raises(InputError, match="seed 0 -> 1"):
        train(tiny_model_dir, inputs, out, seed=1, resume=True)

    resumed = train(tiny_model_dir, inputs, out, resume=True)
    assert resumed.metrics["steps"] == whole.metrics["steps"] == 3
    assert same_rows(resumed.curves, whole.curves)
    assert resumed.metrics == whole.metrics and resumed.stats == whole.stats
    assert (out / "curves.csv").read_text() == (tmp_path / "whole" / "curves.csv").read_text()
    assert json.loads((trainer_dir / RUN_FILE).read_text())["finished"] is True
    from safetensors.torch import load_file

    a = load_file(tmp_path / "whole" / "checkpoint" / "model.safetensors")
    b = load_file(out / "checkpoint" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

    # A finished run's checkpoints make way for a new run; --resume with nothing to resume is an error.
    train(tiny_model_dir, inputs, out)
    shutil.rmtree(trainer_dir)
    with pytest.raises(InputError, match="no complete checkpoint"):
        train(tiny_model_dir, inputs, out, resume=True)
