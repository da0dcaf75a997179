"""Training knobs: each knob's role ("method", "fixed on resume") is written once, in its field's
metadata; `--help` shows every MicroCoder knob with its type, default and marks; a misspelt
`--set grpo.NAME` is a one-line error naming the close matches."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from training.config import METHOD_KEYS, PRESETS, MicroCoderGRPOConfig

ROOT = Path(__file__).resolve().parents[1]

# The lists as they were written by hand before the marks (issue 28): the marks must reproduce them.
HAND_METHOD_KEYS = ("beta", "epsilon", "epsilon_high", "loss_type", "scale_rewards", "truncation_mask_rho",
                    "mask_truncated_completions", "temperature_probe", "temperature_schedule", "diversity_floor",
                    "reward", "dynamic_sampling", "easy_threshold", "hard_threshold")
HAND_RESUME_FIXED = (
    "preset", "model", "seed", "dtype", "thinking", "system_prompt", "use_dataset_prompts", "max_problems",
    "num_generations", "per_device_train_batch_size", "gradient_accumulation_steps", "steps_per_generation",
    "num_iterations", "max_completion_length", "repetition_window", "learning_rate", "temperature",
    "temperature_probe", "diversity_target", "diversity_floor", "diversity_patience", "beta", "epsilon",
    "epsilon_high", "loss_type", "scale_rewards", "truncation_mask_rho", "mask_truncated_completions",
    "temperature_schedule", "reward_pass", "reward_fail", "reward_no_code", "reward", "dynamic_sampling",
    "dynamic_sampling_max_rounds", "easy_threshold", "hard_threshold", "easy_fraction", "hard_fraction")
TEMPERATURE_CONTROL = {"temperature_probe", "temperature_schedule", "diversity_floor"}


def _run(args: list[str]):
    return CliRunner().invoke(app, args, env={"COLUMNS": "250"})


def test_the_marks_give_the_lists_that_were_written_by_hand():
    from training.train import RESUME_FIXED

    assert len(set(METHOD_KEYS)) == len(METHOD_KEYS) and set(METHOD_KEYS) == set(HAND_METHOD_KEYS)
    assert len(set(RESUME_FIXED)) == len(RESUME_FIXED) and set(RESUME_FIXED) == set(HAND_RESUME_FIXED)
    assert set(METHOD_KEYS) <= set(RESUME_FIXED)  # a resumed run cannot change its method


def test_presets_pin_method_keys_only():
    """grpo and dapo pin every method key; microcoder all but its tunable temperature controller."""
    for name, pinned in PRESETS.items():
        assert set(pinned) <= set(METHOD_KEYS), (name, set(pinned) - set(METHOD_KEYS))
    assert set(PRESETS["grpo"]) == set(PRESETS["dapo"]) == set(METHOD_KEYS)
    assert set(PRESETS["microcoder"]) == set(METHOD_KEYS) - TEMPERATURE_CONTROL
    assert PRESETS["custom"] == {}


def test_marked_trl_fields_keep_trls_defaults_and_help():
    from trl import GRPOConfig

    ours = {f.name: f for f in dataclasses.fields(MicroCoderGRPOConfig)}
    for name in ("num_generations", "per_device_train_batch_size", "gradient_accumulation_steps",
                 "steps_per_generation", "num_iterations"):
        trl = GRPOConfig.__dataclass_fields__[name]
        assert ours[name].default == trl.default and ours[name].metadata["help"] == trl.metadata["help"]
        assert ours[name].metadata["resume_fixed"] and not ours[name].metadata.get("method")


def test_run_settings_record_every_resume_fixed_key(tmp_path):
    from training.train import RESUME_FIXED, TrainConfig, build_grpo_config, run_settings

    cfg = TrainConfig()
    settings = run_settings(cfg, build_grpo_config(cfg, tmp_path), "m", "in")
    assert set(RESUME_FIXED) <= set(settings)
    assert {"input", "max_steps"} <= set(settings)


def test_help_shows_every_microcoder_knob_with_type_default_and_marks():
    result = _run(["train", "--help"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    for line in ("grpo.truncation_mask_rho (float) = 0.1 [method, fixed on resume]:",
                 "grpo.temperature_schedule (list[list[float]] | None) = None [method, fixed on resume]:",
                 "grpo.reward (str) = 'binary' [method, fixed on resume]:",
                 "grpo.dynamic_sampling (bool) = False [method, fixed on resume]:",
                 "grpo.num_generations (int | None) = 8 [fixed on resume]:",
                 "grpo.reward_deadline_s (float) = 120.0: Hard wall-clock",
                 "Staged schedule [[step, temperature], ...]"):
        assert line in text, line
    own = MicroCoderGRPOConfig.__annotations__
    missing = [name for name in own if f"grpo.{name} (" not in text]
    assert not missing, missing


def test_an_unknown_grpo_knob_is_one_line_naming_the_close_matches(tmp_path):
    missing = str(tmp_path / "missing")
    result = _run(["train", "--params", str(ROOT / "params.yaml"), "--problems", missing, "--model", missing,
                   "--out-dir", str(tmp_path / "out"), "--set", "grpo.truncation_mask_roh=0.2"])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("train: error:"), lines
    assert "unknown grpo field 'truncation_mask_roh' (did you mean truncation_mask_rho?)" in lines[0]
    assert not (tmp_path / "out").exists()


def test_unknown_keys_are_named_in_every_preset_section(tmp_path):
    from training.train import PresetGrpo, TrainConfig, build_grpo_config

    cfg = TrainConfig(grpo={"dynamic_sampling_rounds": 2},
                      preset_grpo=PresetGrpo(dapo={"zzz": 1}, microcoder={"temperature_schedul": [[0, 1.0]]}))
    with pytest.raises(ValueError) as err:
        build_grpo_config(cfg, tmp_path)
    message = str(err.value)
    assert "unknown grpo field 'dynamic_sampling_rounds' (did you mean dynamic_sampling_max_rounds" in message
    assert "unknown preset_grpo.dapo field 'zzz' (see `microcoder train --help`)" in message
    assert "unknown preset_grpo.microcoder field 'temperature_schedul' (did you mean temperature_schedule" in message
