from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from microcoder.pipeline.generation.extract import extract_code
from microcoder.pipeline.generation.prompts import build_messages, render_prompt
from microcoder.pipeline.inputs import load_problems
from microcoder.training.warmstart import (
    BenchmarkGuard,
    WarmStart,
    WarmStartConfig,
    answer_text,
    build_sft_data,
    pick_reference,
    strip_docstrings,
)

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "data" / "seed" / "problems.jsonl"
BENCHMARK = ROOT / "data" / "seed" / "benchmark.jsonl"


@pytest.fixture(scope="module")
def seed_problems():
    return load_problems(SEED).problems


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)


def test_answer_is_the_reference_without_docstrings_and_extracts_back():
    code = 'def add(x, y):\n    """Add two numbers.\n\n    >>> add(1, 2)\n    3\n    """\n    return x + y\n'
    stripped = strip_docstrings(code)
    assert stripped == "def add(x, y):\n    return x + y"
    assert extract_code(answer_text(stripped)) == stripped
    only_doc = 'def f():\n    """Nothing else."""\n'
    assert strip_docstrings(only_doc) == "def f():\n    pass"
    assert strip_docstrings("def broken(:\n") == "def broken(:\n"  # unparsable code is left as is


def test_examples_use_the_rollout_prompt_exactly_and_learn_only_the_answer(seed_problems, tokenizer):
    cfg = WarmStartConfig(max_answer_tokens=None, max_length=None)
    guard = BenchmarkGuard.from_files([str(BENCHMARK)])
    data = build_sft_data(seed_problems, tokenizer, cfg, guard)
    by_id = {p.id: p for p in seed_problems}
    assert len(data.rows) + len(data.rejects) == len(seed_problems) == data.read
    assert len(data.rows) > 30
    for row in data.rows[:10]:
        p = by_id[row["problem_id"]]
        prompt = render_prompt(build_messages(p), tokenizer, thinking=False)
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        n = len(prompt_ids)
        assert row["input_ids"][:n] == prompt_ids
        assert row["labels"][:n] == [-100] * n
        assert row["labels"][n:] == row["input_ids"][n:]
        assert row["input_ids"][-1] == tokenizer.eos_token_id
        answer = tokenizer.decode(row["input_ids"][n:-1])
        assert extract_code(answer) == pick_reference(p, cfg)


def test_benchmark_problems_are_never_trained_on(seed_problems, tokenizer):
    bench = load_problems(BENCHMARK).problems
    guard = BenchmarkGuard(bench)
    renamed = dataclasses.replace(bench[0], id="seed/renamed-bench")  # same statement, other id
    reworded = dataclasses.replace(bench[1], id="seed/reworded", statement=bench[1].statement + "\nNote: be quick.")
    problems = [*seed_problems, *bench, renamed, reworded]
    data = build_sft_data(problems, tokenizer, WarmStartConfig(max_answer_tokens=None, max_length=None), guard)
    used = {r["problem_id"] for r in data.rows}
    rejected = {r["id"]: r["reason"] for r in data.rejects}
    assert not used & {p.id for p in bench}
    assert {p.id for p in bench} | {"seed/renamed-bench", "seed/reworded"} <= set(rejected)
    assert all("never trained on" in rejected[p.id] for p in bench)
    # The shipped seed corpus holds one near copy of a benchmark problem (dedup's contamination case).
    assert "benchmark statement overlap" in rejected["seed/lamps-alternate-copy"]
    used_statements = {" ".join(p.statement.lower().split()) for p in problems if p.id in used}
    assert not used_statements & {" ".join(p.statement.lower().split()) for p in bench}


def test_limits_and_missing_references_are_rejects_with_reasons(seed_problems, tokenizer):
    guard = BenchmarkGuard([])
    no_ref = dataclasses.replace(seed_problems[0], id="seed/no-ref", reference_solutions=[])
    data = build_sft_data([*seed_problems, no_ref], tokenizer, WarmStartConfig(max_answer_tokens=40), guard)
    reasons = {r["id"]: r["reason"] for r in data.rejects}
    assert reasons["seed/no-ref"] == "no python reference solution"
    assert any("max_answer_tokens=40" in r for r in reasons.values())
    assert all(sum(t != -100 for t in r["labels"]) <= 40 for r in data.rows)
    assert len(data.rows) + len(data.rejects) == len(seed_problems) + 1


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


def _tiny_run(tmp_path: Path, name: str, model: Path, seed: int, threads: int = 2) -> dict:
    cfg = WarmStartConfig(max_steps=3, batch_size=2, learning_rate=1e-2, warmup_steps=0, max_problems=4,
                          max_answer_tokens=None, max_length=None, seed=seed, sft={"logging_steps": 1},
                          torch_threads=threads)
    return WarmStart().run(cfg, SEED, tmp_path / f"{name}-report", model_dir=tmp_path / name,
                           model=str(model), benchmarks=[str(BENCHMARK)], progress=False).stats


def test_same_seed_same_weights_and_the_weights_move(tmp_path, tiny_model_dir):
    a = _tiny_run(tmp_path, "a", tiny_model_dir, seed=0)
    b = _tiny_run(tmp_path, "b", tiny_model_dir, seed=0)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    assert _digest(tmp_path / "a") != _digest(tiny_model_dir)
    assert a["steps"] == 3 and a["unit"] == "problems" and a["kept"] == 4
    seed = load_problems(SEED)
    assert a["kept"] + a["rejected"] == a["read"] == seed.read  # the seed's malformed records included
    assert sum(a["rejected_by_reason"].get(k, 0) for k in ("invalid record", "not a Problem record")) == len(seed.rejects)
    assert a["rejected_by_reason"]["benchmark"] == 1  # seed/lamps-alternate-copy
    assert a["rejected_by_reason"]["over_max_problems"] > 0
    rejects = [json.loads(line) for line in (tmp_path / "a-report" / "rejects.jsonl").read_text().splitlines()]
    assert len(rejects) == a["rejected"] and {r["stage"] for r in rejects} == {"warmstart"}
    on_disk = json.loads((tmp_path / "a-report" / "stats.json").read_text())  # figures only, no settings
    assert on_disk | json.loads((tmp_path / "a-report" / "timing.json").read_text()) == a  # wall_s: measured
    settings = json.loads((tmp_path / "a-report" / "settings.json").read_text())
    assert settings["max_steps"] == 3 and settings["benchmarks"] == [str(BENCHMARK)]
    assert not set(a["problem_ids"]) & {p.id for p in load_problems(BENCHMARK).problems}
    assert a["loss_curve"] == b["loss_curve"]
    for f in ("tokenizer.json", "config.json", "tokenizer_config.json"):
        assert (tmp_path / "a" / f).exists()
    assert not any(p.name.startswith(".a.") for p in tmp_path.iterdir())  # no leftovers next to the output


def test_thread_count_does_not_move_the_weights(tmp_path, tiny_model_dir):
    # torch_threads is a speed setting (2 by default: the stage runs alone): one thread must give
    # the same weights bit for bit, or the count would be part of what a dataset version is
    _tiny_run(tmp_path, "one", tiny_model_dir, seed=0, threads=1)
    _tiny_run(tmp_path, "two", tiny_model_dir, seed=0, threads=2)
    assert _digest(tmp_path / "one") == _digest(tmp_path / "two")


def test_disabled_copies_the_base_model(tmp_path, tiny_model_dir):
    cfg = WarmStartConfig(enabled=False)
    stats = WarmStart().run(cfg, SEED, tmp_path / "report", model_dir=tmp_path / "warm",
                            model=str(tiny_model_dir)).stats
    assert stats["enabled"] is False and stats["copied"] is True and stats["read"] == stats["kept"] == 0
    for f in Path(tiny_model_dir).iterdir():
        assert (tmp_path / "warm" / f.name).read_bytes() == f.read_bytes()
    hub = WarmStart().run(cfg, SEED, tmp_path / "r2", model_dir=tmp_path / "hub", model="Qwen/Qwen3-4B")
    assert hub.stats["status"] == "skipped" and (tmp_path / "hub").is_dir()


# --- the default run: the properties issue 16 asks of it (counts, not timings) -------------------------
def check_default_run(root: Path) -> dict:
    """Assert the method is visible in a default run's outputs under `root` (data/...)."""
    import csv

    import pyarrow.parquet as pq

    data = root / "data"
    warm = json.loads((data / "warmstart" / "stats.json").read_text())
    assert warm["enabled"] and warm["kept"] > 0
    bench_ids = {p.id for p in load_problems(ROOT / "data" / "seed" / "benchmark.jsonl").problems}
    assert not set(warm["problem_ids"]) & bench_ids
    rows = pq.read_table(sorted((data / "rollouts" / "shards").glob("part-*.parquet"))).to_pylist()
    with_code = sum(r["status"] != "no_code" for r in rows)
    assert with_code >= len(rows) / 2, f"only {with_code}/{len(rows)} samples hold extractable code"
    per_problem: dict[str, list[bool]] = {}
    for r in rows:
        per_problem.setdefault(r["problem_id"], []).append(r["status"] == "AC")
    rates = {pid: sum(v) / len(v) for pid, v in per_problem.items()}
    in_band = [pid for pid, rate in rates.items() if 0 < rate < 1]
    assert len(in_band) >= 10, f"{len(in_band)} problems with a pass rate strictly between 0 and 1"
    report = json.loads((data / "filtered" / "report.json").read_text())
    reasons = report["by_reason"]
    assert reasons.get("too_easy", 0) >= 1, reasons
    assert reasons.get("unsolved", 0) >= 1 and reasons.get("in_band", 0) >= 1, reasons
    metrics = json.loads((data / "train" / "metrics.json").read_text())
    with open(data / "train" / "curves.csv") as f:
        curves = list(csv.DictReader(f))
    assert len(curves) >= 2

    def column(name):
        return [float(c[name]) for c in curves if c[name] not in ("", "nan")]

    # Rewards with variance (pass 1, else 0): a generation whose pass count is not a multiple of the
    # group size has a group with both rewards, hence non-zero std, advantages and loss.
    import yaml

    grpo = yaml.safe_load((ROOT / "params.yaml").read_text())["train"]["grpo"]
    train_settings = data / "train" / "settings.json"  # the train stage's settings, apart from its figures
    settings = json.loads(train_settings.read_text()) if train_settings.exists() else metrics["settings"]
    group = settings["num_generations"]
    batch = grpo["per_device_train_batch_size"]
    passes = [round(r * batch) for r in column("reward_mean")]
    assert any(n % group for n in passes), f"no generation with a mixed group: passes {passes} of {batch}"
    assert max(column("mask_candidates_frac")) > 0
    for name in ("reward_mean", "diversity", "mean_length"):
        assert len(set(column(name))) > 1, f"{name} does not move: {column(name)}"
    return {"warm": warm, "rates": rates, "in_band": len(in_band), "filter": reasons, "train": metrics}


def test_the_default_run_shows_the_method():
    """On the outputs of `make repro` (the committed params.yaml)."""
    if not (ROOT / "data" / "train" / "curves.csv").exists() or not (ROOT / "data" / "warmstart").exists():
        pytest.skip("no default-run outputs under data/ (run `make repro` first)")
    import yaml

    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    recorded = ROOT / "data" / "warmstart" / "settings.json"
    if not recorded.exists():
        pytest.skip("data/warmstart predates settings.json (run `make repro`)")
    settings = {k: v for k, v in json.loads(recorded.read_text()).items() if k in params["warmstart"]}
    if settings != params["warmstart"]:
        pytest.skip("data/ was built with other warmstart params than params.yaml (run `make repro`)")
    check_default_run(ROOT)


def test_max_problems_keeps_the_shortest_answers(seed_problems, tokenizer):
    guard = BenchmarkGuard.from_files([str(BENCHMARK)])
    everything = build_sft_data(seed_problems, tokenizer, WarmStartConfig(max_answer_tokens=None), guard)
    answer_len = {r["problem_id"]: sum(t != -100 for t in r["labels"]) for r in everything.rows}
    shortest = sorted(answer_len, key=lambda pid: (answer_len[pid], pid))[:3]
    data = build_sft_data(seed_problems, tokenizer, WarmStartConfig(max_answer_tokens=None, max_problems=3), guard)
    assert sorted(r["problem_id"] for r in data.rows) == sorted(shortest)
    over = [r for r in data.rejects if "over max_problems=3" in r["reason"]]
    assert len(over) == len(everything.rows) - 3
    assert len(data.rows) + len(data.rejects) == len(seed_problems)


def test_nothing_to_learn_passes_the_base_model_through_with_the_rejects(tmp_path, tiny_model_dir):
    """Real sources without references stopped the whole run at warmstart after 48 minutes, with
    no rejects file. Now the base model goes on untrained and every problem's reason is written."""
    from microcoder.pipeline import io

    problems = [dataclasses.replace(p, reference_solutions=[]) for p in load_problems(SEED).problems[:5]]
    io.write_problems(tmp_path / "in.parquet", problems)
    res = WarmStart().run(WarmStartConfig(max_steps=2), tmp_path / "in.parquet", tmp_path / "report",
                          model_dir=tmp_path / "warm", model=str(tiny_model_dir), benchmarks=[str(BENCHMARK)],
                          progress=False)
    assert res.stats["status"].startswith("nothing to learn") and res.stats["kept"] == 0
    assert res.stats["read"] == res.stats["rejected"] == 5
    for f in Path(tiny_model_dir).iterdir():
        assert (tmp_path / "warm" / f.name).read_bytes() == f.read_bytes()
    rejects = (tmp_path / "report" / "rejects.jsonl").read_text().splitlines()
    reasons = [json.loads(r)["reason"] for r in rejects]
    assert len(reasons) == 5 and sum("reference" in r for r in reasons) >= 4  # one is a benchmark copy


def _cli(tmp_path, *args: str):
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    return CliRunner().invoke(app, ["warmstart", *args, "--out-dir", str(tmp_path / "warm"), "--report-dir",
                                    str(tmp_path / "report"), "--params", str(tmp_path / "none.yaml"), "--no-progress"])


def test_cli_user_errors_are_one_line_exit_2(tmp_path, tiny_model_dir):
    for args, needle in (
        (["--problems", str(tmp_path / "missing.parquet"), "--model", str(tiny_model_dir)], "does not exist"),
        (["--problems", str(SEED), "--model", str(tmp_path / "no-model")], "no-model"),
        (["--problems", str(SEED), "--set", "model=models/tiny"], "unknown warmstart params ['model']"),
        (["--problems", str(SEED), "--set", "sft={nope: 1}"], "not trl.SFTConfig fields"),
        (["--problems", str(SEED), "--model", str(tiny_model_dir), "--benchmark", str(tmp_path / "b.jsonl")],
         "b.jsonl"),
    ):
        res = _cli(tmp_path, *args)
        assert res.exit_code == 2, (args, res.output)
        assert needle in res.output and "Traceback" not in res.output, res.output
        assert len(res.output.strip().splitlines()) == 1, res.output
    assert not (tmp_path / "warm").exists()


def test_cli_disabled_copies_and_reports(tmp_path, tiny_model_dir):
    res = _cli(tmp_path, "--problems", str(SEED), "--model", str(tiny_model_dir), "--set", "enabled=false")
    assert res.exit_code == 0, res.output
    assert "warmstart: disabled, copied base model" in res.output
    stats = json.loads((tmp_path / "report" / "stats.json").read_text())
    assert (stats["read"], stats["kept"], stats["rejected"], stats["enabled"]) == (0, 0, 0, False)
    assert json.loads((tmp_path / "report" / "settings.json").read_text())["model"] == str(tiny_model_dir)
    assert (tmp_path / "warm" / "config.json").exists()


def test_help_lists_the_config_fields():
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    out = CliRunner().invoke(app, ["warmstart", "--help"]).output
    for name in ("max_steps", "learning_rate", "max_problems", "--model", "--benchmark"):
        assert name in out


def test_cli_nothing_to_learn_says_so_and_exits_0(tmp_path, tiny_model_dir):
    from microcoder.pipeline import io

    io.write_problems(tmp_path / "in.parquet", [dataclasses.replace(p, reference_solutions=[])
                                                for p in load_problems(SEED).problems[:3]])
    res = _cli(tmp_path, "--problems", str(tmp_path / "in.parquet"), "--model", str(tiny_model_dir))
    assert res.exit_code == 0, res.output
    assert "nothing to learn" in res.output and "rejects.jsonl" in res.output


def test_a_few_examples_train_for_max_epochs_not_max_steps():
    """Issue 39: on real sources one answer was short enough, and warm start ran 400 steps on it."""
    from microcoder.training.warmstart import planned_steps

    cfg = WarmStartConfig(max_steps=400, batch_size=4, max_epochs=60)
    assert planned_steps(cfg, 1) == 60 and planned_steps(cfg, 5) == 120
    assert planned_steps(cfg, 28) == 400  # the default run: 7 steps a pass, max_steps binds
    assert planned_steps(WarmStartConfig(max_steps=400, batch_size=4, max_epochs=None), 1) == 400
    with pytest.raises(ValueError, match="max_epochs"):
        WarmStartConfig(max_epochs=0)


def test_on_cpu_only_the_answer_positions_are_scored_and_the_loss_is_the_same(tiny_model_dir):
    """TRL's fused LM head scores every position on CPU (prompt tokens included: ~93% of the warm
    start's); inside `score_answer_positions_only` it scores the labelled ones only, with the same
    loss and gradients up to float rounding, and the switch is undone after."""
    import torch
    import trl.trainer.utils as fused
    from transformers import AutoModelForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    from microcoder.training.warmstart import score_answer_positions_only

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    add_fused_lm_head(model)
    ids = torch.randint(3, model.config.vocab_size, (2, 40))
    labels = ids.clone()
    labels[:, :34] = -100  # a long prompt, a short answer
    rows = []
    real = fused._ChunkedLogProbFunction.apply

    def counted(hidden, *args):
        rows.append(hidden.shape[0])
        return real(hidden, *args)

    def loss_and_grad(scoped: bool):
        model.zero_grad()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(fused._ChunkedLogProbFunction, "apply", counted)
            if scoped:
                with score_answer_positions_only() as switched:
                    assert switched
                    out = model(input_ids=ids, labels=labels, fused_lm_head=True)
            else:
                out = model(input_ids=ids, labels=labels, fused_lm_head=True)
        out.loss.backward()
        return out.loss.detach(), model.get_output_embeddings().weight.grad.clone()

    full_loss, full_grad = loss_and_grad(False)
    answer_loss, answer_grad = loss_and_grad(True)
    assert rows == [2 * 39, 2 * 6]  # every shifted position, then the labelled ones only
    assert torch.allclose(full_loss, answer_loss, rtol=1e-5, atol=1e-6)
    assert torch.allclose(full_grad, answer_grad, rtol=1e-4, atol=1e-6)
    expected = torch.nn.functional.cross_entropy(
        model(input_ids=ids).logits[:, :-1].reshape(-1, model.config.vocab_size), labels[:, 1:].reshape(-1))
    assert torch.allclose(answer_loss, expected, rtol=1e-5)
    assert not fused._use_triton(torch.device("cpu"))  # undone
