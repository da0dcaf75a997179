from __future__ import annotations

import pytest
from typer.testing import CliRunner

from microcoder.pipeline.cli import app
from microcoder.pipeline.params import apply_overrides, load_params

runner = CliRunner()


def test_help_lists_commands():
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0
    assert "tiny-model" in res.output


def test_deps_is_a_command_and_checks_this_checkout():
    """The fix a message names is a command (`microcoder deps --write`), not a test file to run
    with the right interpreter."""
    assert "deps" in runner.invoke(app, ["--help"]).output
    res = runner.invoke(app, ["deps", "--check"])
    assert res.exit_code == 0, res.output
    assert "in step" in res.output


def test_tiny_model_command(tmp_path):
    res = runner.invoke(app, ["tiny-model", "--out-dir", str(tmp_path / "m"), "--set", "seed=3",
                              "--params", str(tmp_path / "none.yaml")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "m" / "model.safetensors").exists()


def test_overrides_are_typed_and_dotted(tmp_path):
    p = tmp_path / "params.yaml"
    p.write_text("dedup:\n  threshold: 0.7\n  minhash: {num_perm: 128}\n")
    got = load_params("dedup", p, ["threshold=0.8", "minhash.num_perm=64", "sources=[a, b]", "flag=true"])
    assert got == {"threshold": 0.8, "minhash": {"num_perm": 64}, "sources": ["a", "b"], "flag": True}
    assert load_params("missing", p) == {}
    with pytest.raises(ValueError, match="key=value"):
        apply_overrides({}, ["novalue"])


def test_build_config_rejects_unknown_keys():
    from dataclasses import dataclass, field

    from microcoder.pipeline.stage import build_config

    @dataclass
    class Cfg:
        k: int = field(default=4, metadata={"help": "samples per problem"})

    assert build_config(Cfg, {"k": 8}).k == 8
    with pytest.raises(ValueError, match=r"unknown Cfg params \['kk'\]; valid: \['k'\]"):
        build_config(Cfg, {"kk": 8})


def test_overrides_index_into_lists():
    params = {"sources": [{"name": "a", "enabled": True}, {"name": "b", "enabled": False}]}
    apply_overrides(params, ["sources.1.enabled=true", "sources.0.path=x.jsonl"])
    assert params["sources"] == [{"name": "a", "enabled": True, "path": "x.jsonl"}, {"name": "b", "enabled": True}]
    with pytest.raises(ValueError, match="not an index"):
        apply_overrides(params, ["sources.5.enabled=true"])


def test_atomic_outputs_get_the_usual_mode(tmp_path):
    from microcoder.pipeline.io import write_json

    write_json(tmp_path / "s.json", {})
    assert (tmp_path / "s.json").stat().st_mode & 0o044 == 0o044


def test_settings_records_redact_secrets_and_keep_the_rest():
    from microcoder.pipeline.stage import settings_record

    record = settings_record({
        "api_key": "sk-1", "aws_secret_access_key": "y", "passwd": "p", "cookie": "c", "n": {"api_key": 12345},
        "headers": {"Authorization": "Bearer t"}, "hf_token": None, "api_key_env": "OPENAI_API_KEY",
        "base_urls": ["https://u:pw@host/v1?key=abc", "http://localhost:8000/v1"], "max_tokens": 64,
        "tokenizer": "models/tiny", "user_agent": "MicroCoder"})
    assert record == {
        "api_key": "<redacted>", "aws_secret_access_key": "<redacted>", "passwd": "<redacted>",
        "cookie": "<redacted>", "n": {"api_key": "<redacted>"}, "headers": {"Authorization": "<redacted>"},
        "hf_token": None, "api_key_env": "OPENAI_API_KEY",
        "base_urls": ["https://<redacted>@host/v1?<redacted>", "http://localhost:8000/v1"], "max_tokens": 64,
        "tokenizer": "models/tiny", "user_agent": "MicroCoder"}


def test_settings_records_read_typed_sections_as_plain_data():
    """Train's grpo sections are typed mappings (GrpoFields), not dicts: a record of them is plain
    data, secrets redacted, never the object's string."""
    from microcoder.pipeline.stage import build_config, settings_record
    from microcoder.training.train import TrainConfig

    cfg = build_config(TrainConfig, {"grpo": {"hub_token": "hf_x", "max_steps": 2}}, "train")
    record = settings_record(cfg)
    assert record["grpo"] == {"hub_token": "<redacted>", "max_steps": 2}
    assert type(record["preset_grpo"]["microcoder"]) is dict
