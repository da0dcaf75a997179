"""Temperature control: the staged controller, the probe choice, and a change reaching both sampling
and the training log-probabilities, at the next generation and not before."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from datasets import Dataset

from microcoder.pipeline.models import load_model_and_tokenizer
from microcoder.training.config import MicroCoderGRPOConfig
from microcoder.training.temperature import (
    TemperatureController,
    pick_probe_temperature,
    set_temperature,
    temperature_cells,
)
from microcoder.training.trainer import MicroCoderGRPOTrainer


def current_temperatures(trainer) -> dict[str, float | None]:
    """Where each copy of the temperature stands."""
    gen_config = getattr(trainer, "generation_config", None)
    vllm = getattr(trainer, "vllm_generation", None)
    gen_kwargs = getattr(trainer, "generation_kwargs", None)
    cells = temperature_cells(trainer)
    return {
        "trainer": trainer.temperature,
        "generation_config": getattr(gen_config, "temperature", None),
        "generation_kwargs": gen_kwargs.get("temperature") if isinstance(gen_kwargs, dict) else None,
        "vllm": getattr(vllm, "temperature", None),
        "policy_log_probs": cells[0].cell_contents,
        "ref_log_probs": cells[1].cell_contents if len(cells) > 1 else None,
    }


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# --- controller -------------------------------------------------------------------------------
def test_staged_schedule():
    c = TemperatureController(initial=1.0, schedule=[(140, 1.2), (0, 0.6)])
    assert [c.temperature_at(s) for s in (0, 139, 140, 500)] == [0.6, 0.6, 1.2, 1.2]


def test_schedule_starting_later_keeps_initial_until_then():
    c = TemperatureController(initial=0.9, schedule=[(10, 1.5)])
    assert (c.temperature_at(9), c.temperature_at(10)) == (0.9, 1.5)
    c.set_initial(0.7)
    assert (c.temperature_at(0), c.temperature_at(10)) == (0.7, 1.5)


def test_floor_guard_moves_to_next_stage_after_patience():
    c = TemperatureController(initial=0.6, schedule=[(0, 0.6), (100, 1.2), (200, 1.8)], floor=0.5, patience=2)
    c.observe(1, 0.4)
    c.observe(2, 0.6)  # back above the floor: the streak restarts
    c.observe(3, 0.4)
    assert c.temperature_at(4) == 0.6
    c.observe(4, 0.3)
    assert c.temperature_at(5) == 1.2 and c.reason_at(5).startswith("guard")
    assert c.temperature_at(200) == 1.8 and c.reason_at(200).startswith("schedule")


def test_floor_guard_at_last_stage_keeps_temperature():
    c = TemperatureController(initial=1.2, floor=0.5, patience=1)
    c.observe(1, 0.1)
    assert c.temperature_at(2) == 1.2


def test_probe_choice():
    assert pick_probe_temperature({0.6: 0.5, 1.0: 0.72, 1.4: 0.9}, 0.7)[0] == 1.0
    t, reason = pick_probe_temperature({0.6: 0.2, 1.0: math.nan, 1.4: 0.4}, 0.7)
    assert t == 1.4 and "no candidate" in reason


# --- on a real trainer ------------------------------------------------------------------------
def trainer_for(model_dir, tmp_path, **kw):
    model, tok = load_model_and_tokenizer(model_dir)
    args = MicroCoderGRPOConfig(**{**dict(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4, max_completion_length=8,
        max_steps=4, learning_rate=1e-3, logging_steps=1, bf16=False, gradient_checkpointing=False,
        report_to="none", save_strategy="no", truncation_mask_rho=0.0, disable_tqdm=True,
        dataloader_pin_memory=False, temperature=1.0), **kw})
    data = Dataset.from_list([{"prompt": [{"role": "user", "content": f"task {i}"}]} for i in range(8)])

    def reward(prompts, completions, completion_ids, **kwargs):
        return [float(len(set(ids))) for ids in completion_ids]

    return MicroCoderGRPOTrainer(model=model, processing_class=tok, reward_funcs=[reward], args=args,
                                 train_dataset=data)


def test_set_temperature_reaches_every_copy(tiny_model_dir, tmp_path):
    trainer = trainer_for(tiny_model_dir, tmp_path)
    trainer.vllm_generation = SimpleNamespace(temperature=1.0)  # stands in for TRL's VLLMGeneration
    set_temperature(trainer, 1.7)
    temps = current_temperatures(trainer)
    assert temps.pop("ref_log_probs") is None  # beta = 0: no reference model
    assert set(temps.values()) == {1.7}
    with pytest.raises(ValueError):
        set_temperature(trainer, 0.0)


def test_reference_model_follows_too(tiny_model_dir, tmp_path):
    trainer = trainer_for(tiny_model_dir, tmp_path, beta=0.04)  # KL term: TRL builds a reference model
    set_temperature(trainer, 1.3)
    temps = current_temperatures(trainer)
    assert temps["ref_log_probs"] == 1.3 and temps["policy_log_probs"] == 1.3


def test_log_probs_use_the_new_temperature(tiny_model_dir, tmp_path):
    trainer = trainer_for(tiny_model_dir, tmp_path)
    ids = torch.tensor([[5, 17, 42, 9, 100, 7]])
    attention = torch.ones_like(ids)

    def logps():
        with torch.no_grad():
            return trainer._get_per_token_logps_and_entropies(trainer.model, ids, attention, logits_to_keep=3)[0]

    def expected(t):
        with torch.no_grad():
            logits = trainer.model(input_ids=ids, attention_mask=attention).logits[:, -4:-1] / t
        return torch.log_softmax(logits, -1).gather(-1, ids[:, -3:, None]).squeeze(-1)

    torch.testing.assert_close(logps(), expected(1.0))
    set_temperature(trainer, 2.5)
    torch.testing.assert_close(logps(), expected(2.5))
    assert not torch.allclose(expected(1.0), expected(2.5))


def test_change_takes_effect_at_the_next_generation_only(tiny_model_dir, tmp_path):
    # Two optimizer steps per generation: generations at steps 0 and 2. The schedule switches at
    # step 1, which is inside the first generation's steps: the switch must wait for step 2.
    trainer = trainer_for(tiny_model_dir, tmp_path, steps_per_generation=2, temperature_schedule=[[0, 1.0], [1, 2.0]])
    sampled, scored = [], []
    generate = trainer.model.generate

    def spy_generate(*args, **kwargs):
        sampled.append(kwargs["generation_config"].temperature)
        return generate(*args, **kwargs)

    trainer.model.generate = spy_generate
    compute = trainer._get_per_token_logps_and_entropies

    def spy_logps(*args, **kwargs):
        scored.append((trainer.state.global_step, trainer._temperature_cells[0].cell_contents))
        return compute(*args, **kwargs)

    trainer._get_per_token_logps_and_entropies = spy_logps
    trainer.train()
    assert sampled == [1.0, 2.0]
    # Each generation also scores the batch's old log-probs (steps and generations are misaligned,
    # so TRL needs them for the ratio): at the new temperature, like the losses that follow.
    assert scored == [(0, 1.0), (0, 1.0), (1, 1.0), (2, 2.0), (2, 2.0), (3, 2.0)]
    assert [row["temperature"] for row in trainer.generation_log] == [1.0, 2.0]
    assert trainer.temperature_changes == [{"step": 2, "from": 1.0, "to": 2.0,
                                            "reason": "schedule stage 1 (from step 1)"}]
