"""Prompt token budgets (microcoder.pipeline.generation.budget) and the stages that reject over-budget prompts."""

from __future__ import annotations

import json
import shutil

import pytest

from microcoder.pipeline.generation.backends import Sample
from microcoder.pipeline.generation.budget import (
    budget_rejects,
    context_length,
    count_prompt_tokens,
    load_tokenizer,
    resolve_budget,
)
from microcoder.pipeline.generation.prompts import build_messages, render_prompt
from microcoder.pipeline.schema import Problem, TestCase, Verdict


def problem(pid: str, words: int = 0) -> Problem:
    return Problem(id=pid, source="t", statement=f"Problem {pid}. " + "More detail. " * words, style="stdio",
                   tests=[TestCase("1\n", "1\n")])


def test_resolve_budget_sources_and_errors(tiny_model_dir):
    assert resolve_budget(4096, max_model_len=6144).max_prompt_tokens == 2048  # TRL server-mode recipe
    assert resolve_budget(4096, max_model_len=6144).source == "max_model_len 6144 - max_tokens 4096"
    assert resolve_budget(64, max_prompt_tokens=100, max_model_len=200).max_prompt_tokens == 100
    assert context_length(tiny_model_dir) == 4096
    assert resolve_budget(96, model=tiny_model_dir).max_prompt_tokens == 4000
    assert resolve_budget(96, model="Qwen/not-local") is None
    with pytest.raises(ValueError, match="exceed max_model_len"):
        resolve_budget(64, max_prompt_tokens=150, max_model_len=200)
    with pytest.raises(ValueError, match="leaves no room"):
        resolve_budget(200, max_model_len=200)
    budget = resolve_budget(100, max_model_len=300)
    assert budget.reason(200) is None
    assert budget.reason(201) == "prompt over the token budget: 201 tokens, at most 200 (max_model_len 300 - max_tokens 100)"


def test_counts_are_the_rendered_prompt_without_added_special_tokens(tiny_model_dir):
    tok = load_tokenizer(str(tiny_model_dir))
    msgs = [build_messages(problem("a")), build_messages(problem("b", 50))]
    for thinking in (False, True):
        counts = count_prompt_tokens(msgs, tok, thinking=thinking)
        assert counts == [len(tok.encode(render_prompt(m, tok, thinking=thinking), add_special_tokens=False))
                          for m in msgs]
    assert count_prompt_tokens(msgs, tok, thinking=True)[0] < count_prompt_tokens(msgs, tok)[0]  # no empty <think>


def test_budget_rejects_checks_every_model(tmp_path, tiny_model_dir):
    short_ctx = tmp_path / "short-context"
    shutil.copytree(tiny_model_dir, short_ctx)
    cfg = json.loads((short_ctx / "config.json").read_text())
    (short_ctx / "config.json").write_text(json.dumps({**cfg, "max_position_embeddings": 600}))
    prompts = [(p.id, build_messages(p)) for p in (problem("a"), problem("b", 60), problem("c", 400))]
    assert set(budget_rejects(prompts, models=[str(tiny_model_dir)], max_tokens=64)) == {"c"}
    over = budget_rejects(prompts, models=[str(tiny_model_dir), str(short_ctx)], max_tokens=64)
    assert set(over) == {"b", "c"} and over["b"].endswith(f"[model {short_ctx}]")
    # Nothing known about the model: not checked (a warning), unless a budget was set explicitly.
    assert budget_rejects(prompts, models=["served-name"], max_tokens=64) == {}
    with pytest.raises(ValueError, match="cannot be loaded"):
        budget_rejects(prompts, models=["served-name"], max_tokens=64, max_prompt_tokens=500)
    # The served model's tokenizer named explicitly (the openai backend).
    assert set(budget_rejects(prompts, models=["served-name"], max_tokens=64, max_prompt_tokens=500,
                              tokenizer=str(tiny_model_dir))) == {"b", "c"}


class RecordingBackend:
    asked: list[str] = []

    def __init__(self, name, model, thinking=False, **options):
        self.options = options

    def generate(self, prompts, n, sampling):
        RecordingBackend.asked += [m[-1]["content"].split(".")[0] for m in prompts]
        return [[Sample("```python\nprint(1)\n```", 5, "stop", False) for _ in range(n)] for _ in prompts]


class AcceptAll:
    def evaluate_batch(self, problems, submissions, mode="first-failure", deadline_s=None):
        return [Verdict(s.problem_id, s.submission_id, "AC") for s in submissions]

    def close(self):
        pass


def test_eval_model_rejects_over_budget_problems_for_every_model(tmp_path, tiny_model_dir):
    from microcoder.training.eval_model import EvalModel, EvalModelConfig

    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in (problem("a"), problem("long", 400))))
    cfg = EvalModelConfig(n_samples=2, max_tokens=64, backend_options={"max_model_len": 1024})
    RecordingBackend.asked = []
    stats = EvalModel().run(cfg, bench, tmp_path / "eval", models={"base": str(tiny_model_dir)},
                            judge=AcceptAll(), backend_factory=RecordingBackend, progress=False).stats
    assert RecordingBackend.asked == ["Problem a"]  # the long one was never sent
    assert stats["kept"] == 1 and stats["rejected"] == 1
    assert stats["rejected_by_reason"] == {"prompt over the token budget": 1}
    reject = json.loads((tmp_path / "eval" / "rejects.jsonl").read_text().splitlines()[0])
    assert reject["id"] == "long" and "(max_model_len 1024 - max_tokens 64)" in reject["reason"]
    with pytest.raises(ValueError, match="temperature"):
        EvalModelConfig(temperature=2.5)


def test_train_rejects_over_budget_prompts_before_loading_the_model(tmp_path, tiny_model_dir):
    from microcoder.pipeline.inputs import InputError
    from microcoder.pipeline.io import read_jsonl, write_problems
    from microcoder.training.train import TrainConfig, TrainRun, run_training

    path = tmp_path / "problems.parquet"
    write_problems(path, [problem("a"), problem("b", 30)])
    # The model's context is 4096 tokens: a 4000-token completion leaves 96 for the prompt.
    cfg = TrainConfig(grpo={"max_completion_length": 4000, "max_steps": 1})
    with pytest.raises(InputError, match="every prompt is over the token budget"):
        run_training(cfg, TrainRun(model=str(tiny_model_dir), problems=path, out_dir=tmp_path / "train"))
    reasons = {r["id"]: r["reason"] for _, r, _ in read_jsonl(tmp_path / "train" / "rejects.jsonl")}
    assert set(reasons) == {"a", "b"}
    assert all("at most 96 (the model's context length 4096 - max_tokens 4000)" in r for r in reasons.values())


def test_training_temperatures_vllm_refuses_are_refused_at_config_time(tmp_path):
    from microcoder.training.config import MicroCoderGRPOConfig

    def make(**kw):
        return MicroCoderGRPOConfig(output_dir=str(tmp_path), report_to="none", **kw)

    for bad in ({"temperature": 2.5}, {"temperature_probe": [0.6, 1.8, 2.2]},
                {"temperature_schedule": [[0, 1.0], [10, 2.4]]}):
        with pytest.raises(ValueError, match="above 2, which vLLM refuses"):
            make(**bad)
    make(temperature=2.0, temperature_probe=[0.6, 2.0], temperature_schedule=[[0, 1.2], [5, 2.0]])
