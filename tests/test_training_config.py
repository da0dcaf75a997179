"""MicroCoderGRPOConfig defaults, presets and validation."""

from __future__ import annotations

import pytest

from training.config import MicroCoderGRPOConfig, preset


def cfg(tmp_path, **kw):
    return MicroCoderGRPOConfig(output_dir=str(tmp_path), report_to="none", **kw)


def test_defaults_are_the_papers(tmp_path):
    c = cfg(tmp_path)
    assert (c.beta, c.epsilon, c.epsilon_high, c.loss_type) == (0.0, 0.2, 0.28, "dapo")
    assert c.mask_truncated_completions is False
    assert (c.truncation_mask_rho, c.repetition_window, c.diversity_target) == (0.1, 128, 0.7)


def test_presets(tmp_path):
    grpo = preset("grpo", output_dir=str(tmp_path), report_to="none")
    assert grpo.beta > 0 and grpo.epsilon == grpo.epsilon_high and grpo.truncation_mask_rho == 0
    assert not grpo.mask_truncated_completions
    dapo = preset("dapo", output_dir=str(tmp_path), report_to="none")
    assert dapo.mask_truncated_completions and dapo.epsilon_high == 0.28 and dapo.truncation_mask_rho == 0
    micro = preset("microcoder", output_dir=str(tmp_path), report_to="none", truncation_mask_rho=0.2)
    assert micro.truncation_mask_rho == 0.2
    with pytest.raises(ValueError, match="unknown preset"):
        preset("ppo")


def test_schedule_sorted(tmp_path):
    c = cfg(tmp_path, temperature_schedule=[[140, 1.2], [0, 0.6]])
    assert c.schedule() == [(0, 0.6), (140, 1.2)]


@pytest.mark.parametrize(("kw", "message"), [
    ({"truncation_mask_rho": 1.5}, "truncation_mask_rho"),
    ({"mask_truncated_completions": True}, "already masked"),
    ({"repetition_window": 0}, "repetition_window"),
    ({"temperature_probe": []}, "temperature_probe"),
    ({"temperature_probe": [0.6, -1]}, "temperature_probe"),
    ({"temperature_schedule": [[0, 0.0]]}, "temperature must be positive"),
    ({"temperature_schedule": [[-1, 1.0]]}, "step must be"),
    ({"temperature_schedule": [[0, 1.0], [0, 1.2]]}, "repeated steps"),
    ({"temperature_schedule": [[0, 1.0], [5, 1.2]], "generation_kwargs": {"temperature": 0.7}}, "generation_kwargs"),
    ({"diversity_patience": 0}, "diversity_patience"),
    ({"reward_deadline_s": 0}, "reward_deadline_s"),
])
def test_validation(tmp_path, kw, message):
    with pytest.raises(ValueError, match=message):
        cfg(tmp_path, **kw)
