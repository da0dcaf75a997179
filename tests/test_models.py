from __future__ import annotations

import hashlib

import torch

from microcoder.pipeline.models import TinyModelConfig, build_tiny_model, load_model_and_tokenizer


def digest(path):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.iterdir())}


def test_same_seed_gives_byte_identical_files(tmp_path, tiny_model_dir):
    again = build_tiny_model(tmp_path / "again")
    assert digest(again) == digest(tiny_model_dir)
    other = build_tiny_model(tmp_path / "other", TinyModelConfig(seed=1))
    assert digest(other)["model.safetensors"] != digest(tiny_model_dir)["model.safetensors"]
    assert digest(other)["tokenizer.json"] == digest(tiny_model_dir)["tokenizer.json"]


def test_loads_and_generates_from_a_chat_prompt(tiny_model_dir):
    model, tok = load_model_and_tokenizer(tiny_model_dir)
    n_params = sum(p.numel() for p in model.parameters())
    assert 1e5 <= n_params <= 1e6
    messages = [{"role": "user", "content": "Write a function that adds two numbers."}]
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert text.endswith("<|im_start|>assistant\n")
    no_think = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, enable_thinking=False)
    assert no_think.endswith("<think>\n\n</think>\n\n")
    enc = tok(text, return_tensors="pt")
    torch.manual_seed(0)
    out = model.generate(**enc, max_new_tokens=12, do_sample=True)
    assert out.shape[1] > enc["input_ids"].shape[1]
    assert isinstance(tok.decode(out[0, enc["input_ids"].shape[1]:]), str)


def test_tokenizer_round_trips_code(tiny_model_dir):
    _, tok = load_model_and_tokenizer(tiny_model_dir)
    code = "def f(x):\n    return {'é': x ** 2}  # ünïcode\n"
    assert tok.decode(tok(code)["input_ids"]) == code
    assert tok.eos_token == "<|im_end|>"


def test_tiny_model_command_reads_its_params_section(tmp_path):
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    params = tmp_path / "params.yaml"
    params.write_text("tiny_model:\n  seed: 1\n  hidden_size: 32\n")
    runner = CliRunner()
    res = runner.invoke(app, ["tiny-model", "--out-dir", str(tmp_path / "m"), "--params", str(params),
                              "--set", "num_hidden_layers=1"])
    assert res.exit_code == 0, res.output
    assert "hidden 32, 1 layers, vocab 512, seed 1" in res.output
    model, _ = load_model_and_tokenizer(tmp_path / "m")
    assert model.config.hidden_size == 32 and model.config.num_hidden_layers == 1
    bad = runner.invoke(app, ["tiny-model", "--out-dir", str(tmp_path / "m2"), "--params", str(params),
                              "--set", "layers=1"])
    assert bad.exit_code == 2 and "unknown tiny_model params ['layers']; valid: [" in bad.output
    assert not (tmp_path / "m2").exists()
