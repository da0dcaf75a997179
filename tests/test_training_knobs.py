"""Training knobs: each knob's role ("method", "fixed on resume") is written once, in its field's
metadata; `--help` shows every MicroCoder knob with its type, default and marks; the `grpo` sections
are typed as MicroCoderGRPOConfig's fields when the params load (a misspelt `--set grpo.NAME` names the
close matches, a wrongly typed value names the field and its type) and record which fields were set,
which is what the preset contradicts and the run's settings record."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from microcoder.pipeline.cli import app
from microcoder.pipeline.stage import ConfigError, load_config
from microcoder.training.config import METHOD_KEYS, PRESETS, MicroCoderGRPOConfig

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
    from microcoder.training.train import resume_fixed_keys

    fixed = resume_fixed_keys()
    assert len(set(METHOD_KEYS)) == len(METHOD_KEYS) and set(METHOD_KEYS) == set(HAND_METHOD_KEYS)
    assert len(set(fixed)) == len(fixed) and set(fixed) == set(HAND_RESUME_FIXED)
    assert set(METHOD_KEYS) <= set(fixed)  # a resumed run cannot change its method


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
    from microcoder.training.train import TrainConfig, build_grpo_config, resume_fixed_keys, run_settings

    cfg = TrainConfig()
    settings = run_settings(cfg, build_grpo_config(cfg, tmp_path), "m", "in")
    assert set(resume_fixed_keys()) <= set(settings)
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
    assert "unknown train.grpo field 'truncation_mask_roh' (did you mean truncation_mask_rho?)" in lines[0]
    assert not (tmp_path / "out").exists()


def test_unknown_keys_are_named_in_every_preset_section():
    """Checked when the section is built (the params load), every bad key of a section at once."""
    from microcoder.training.train import PresetGrpo, TrainConfig

    with pytest.raises(ConfigError) as err:
        TrainConfig(grpo={"dynamic_sampling_rounds": 2, "zzz": 1})
    assert "unknown train.grpo field 'dynamic_sampling_rounds' (did you mean dynamic_sampling_max_rounds" in str(err.value)
    assert "unknown train.grpo field 'zzz' (see `microcoder train --help`)" in str(err.value)
    with pytest.raises(ConfigError) as err:
        PresetGrpo(dapo={"zzz": 1}, microcoder={"temperature_schedul": [[0, 1.0]]})
    assert "unknown train.preset_grpo.dapo field 'zzz' (see `microcoder train --help`)" in str(err.value)
    assert ("unknown train.preset_grpo.microcoder field 'temperature_schedul' (did you mean temperature_schedule"
            in str(err.value))


def _params(tmp_path, text: str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "sets", "message"), [
    ("", ["grpo.truncation_mask_rho=abc"], "params `train.grpo.truncation_mask_rho`: expected float, got 'abc'"),
    ("train:\n  grpo:\n    num_generations: [1]\n", [], "params `train.grpo.num_generations`: expected int, got [1]"),
    ("", ["grpo.temperature_schedule=[[0, hot]]"],
     "params `train.grpo.temperature_schedule.0.1`: expected float, got 'hot'"),  # TRL's types too (inherited):
    ("", ["grpo.gradient_checkpointing=3"], "params `train.grpo.gradient_checkpointing`: expected bool, got 3"),
    ("", ["preset_grpo.dapo.beta=true"], "params `train.preset_grpo.dapo.beta`: expected float, got True"),
])
def test_a_wrongly_typed_grpo_value_is_a_config_error_naming_the_field_and_type(tmp_path, text, sets, message):
    from microcoder.training.train import TrainConfig

    with pytest.raises(ConfigError) as err:
        load_config(TrainConfig, "train", _params(tmp_path, text), sets)
    assert str(err.value) == message


def test_a_wrongly_typed_set_is_one_line_and_exit_2_before_any_input(tmp_path):
    missing = str(tmp_path / "missing")
    result = _run(["train", "--params", str(ROOT / "params.yaml"), "--problems", missing, "--model", missing,
                   "--out-dir", str(tmp_path / "out"), "--set", "grpo.truncation_mask_rho=abc"])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert lines == ["train: error: params `train.grpo.truncation_mask_rho`: expected float, got 'abc'"], lines
    assert not (tmp_path / "out").exists()


def test_values_are_kept_as_written_and_yaml_no_is_the_strategy_no(tmp_path):
    from microcoder.training.train import TrainConfig, build_grpo_config

    params = _params(tmp_path, "train:\n  grpo:\n    save_strategy: no\n    beta: 0\n"
                               "    temperature_schedule: [[0, 1], [6, 1.2]]\n")
    cfg = load_config(TrainConfig, "train", params, ["preset=custom"])
    assert dict(cfg.grpo) == {"save_strategy": "no", "beta": 0, "temperature_schedule": [[0, 1], [6, 1.2]]}
    assert isinstance(cfg.grpo["beta"], int)  # checked as a float, not converted: settings.json says 0
    args = build_grpo_config(cfg, tmp_path / "trainer")
    assert (args.save_strategy, args.beta, args.temperature_schedule) == ("no", 0, [[0, 1], [6, 1.2]])
    # TRL's own spellings stay valid: scale_rewards true is "group", false "none"
    cfg = load_config(TrainConfig, "train", params, ["preset=custom", "grpo.scale_rewards=false"])
    assert build_grpo_config(cfg, tmp_path / "trainer").scale_rewards == "none"


def test_the_set_fields_drive_the_preset_contradiction_and_the_recorded_settings(tmp_path):
    """A method field left out takes the preset's value even where the paper default differs; set,
    in `grpo` or the chosen preset's `preset_grpo` section, it must agree with the preset."""
    from microcoder.training.train import TrainConfig, build_grpo_config, chosen_grpo, run_settings

    def load(text: str, *sets: str) -> TrainConfig:
        return load_config(TrainConfig, "train", _params(tmp_path, text), list(sets))

    cfg = load("train:\n  preset: grpo\n  grpo:\n    max_steps: 2\n")
    assert cfg.grpo.explicit == {"max_steps"} and chosen_grpo(cfg).explicit == {"max_steps"}
    assert build_grpo_config(cfg, tmp_path / "a").truncation_mask_rho == 0.0  # the preset's, not the default 0.1
    for sets in (["grpo.truncation_mask_rho=0.1"], ["preset_grpo.grpo.truncation_mask_rho=0.1"]):
        cfg = load("train:\n  preset: grpo\n", *sets)
        assert "truncation_mask_rho" in chosen_grpo(cfg).explicit
        with pytest.raises(ValueError, match="preset 'grpo' sets truncation_mask_rho=0.0 but the override sets "
                                             "truncation_mask_rho=0.1"):
            build_grpo_config(cfg, tmp_path / "b")
    # Another preset's section is not set for this one: no contradiction, nothing recorded.
    cfg = load("train:\n  preset: grpo\n  preset_grpo:\n    microcoder:\n      truncation_mask_rho: 0.3\n"
               "      reward_deadline_s: 30.0\n    grpo:\n      reward_deadline_warn_frac: 0.5\n")
    assert chosen_grpo(cfg).explicit == {"reward_deadline_warn_frac"}
    settings = run_settings(cfg, build_grpo_config(cfg, tmp_path / "c"), "m", "in")
    # a field that is neither fixed on resume nor max_steps is recorded because it was set
    assert settings["reward_deadline_warn_frac"] == 0.5 and "reward_deadline_s" not in settings


def test_train_help_renders_the_knobs_and_keeps_their_marks():
    """typer renders help as rich markup, escaped once by the CLI: `[method, ...]` must show, unescaped."""
    result = CliRunner().invoke(app, ["train", "--help"], terminal_width=120)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "grpo.truncation_mask_rho (float) = 0.1 [method, fixed on resume]" in text
    assert "temperature_schedule" in text and "[method" in text and "[fixed on resume]" in text
    assert "\\[" not in result.output
