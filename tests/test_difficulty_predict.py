from __future__ import annotations

import json

import pytest

from microcoder.pipeline.difficulty.predict import (
    DEFAULT_WEIGHTS,
    DIMENSIONS,
    FormatError,
    PredictConfig,
    parse_scores,
    predict_difficulty,
    weighted_score,
)
from microcoder.pipeline.generation.backends import Sample
from microcoder.pipeline.schema import Problem
from microcoder.pipeline.stage import build_config

GOOD = {"algorithmic_thinking": 7, "implementation_complexity": 5, "mathematical_reasoning": 3,
        "edge_cases": 6, "problem_comprehension": 2}


class ScriptedBackend:
    """Answers each problem (found by its statement) with the next scripted text."""

    def __init__(self, script: dict[str, list[str]]):
        self.script = {k: list(v) for k, v in script.items()}
        self.calls: list[list[list[dict[str, str]]]] = []
        self.seeds: list[int] = []

    def generate(self, prompts, n, sampling):
        assert n == 1
        self.calls.append(prompts)
        self.seeds.append(sampling.seed)
        out = []
        for messages in prompts:
            key = next(k for k in self.script if k in messages[1]["content"])
            out.append([Sample(self.script[key].pop(0), 10, "stop", False)])
        return out


def problem(i: int) -> Problem:
    return Problem(id=f"p{i}", source="s", statement=f"statement-{i}", style="stdio")


def test_parse_scores_is_strict():
    text = json.dumps(GOOD)
    assert parse_scores(text) == GOOD
    assert parse_scores(f"<think>it is hard</think>\n```json\n{text}\n```\n") == GOOD
    assert parse_scores(json.dumps({**GOOD, "edge_cases": 6.0})) == GOOD  # integral float is an integer
    bad = {
        f"Here you go: {text}": "not valid JSON",
        f"```json\n{text}\n```\nHope this helps": "alone in one",
        f"```python\n{text}\n```": "alone in one",
        json.dumps({k: v for k, v in GOOD.items() if k != "edge_cases"}): "missing ['edge_cases']",
        json.dumps({**GOOD, "overall": 5}): "unexpected ['overall']",
        json.dumps({**GOOD, "edge_cases": 11}): "outside 1..10",
        json.dumps({**GOOD, "edge_cases": 4.5}): "expected an integer",
        json.dumps({**GOOD, "edge_cases": "4"}): "expected an integer",
        json.dumps({**GOOD, "edge_cases": True}): "expected an integer",
        json.dumps([GOOD]): "expected a JSON object",
        "<think>" + text: "inside <think>",
    }
    for answer, why in bad.items():
        with pytest.raises(FormatError, match=why.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
            parse_scores(answer)


def test_weighted_score():
    assert weighted_score({k: 4 for k in DIMENSIONS}, DEFAULT_WEIGHTS) == pytest.approx(4.0)
    w = {k: 0.0 for k in DIMENSIONS} | {"algorithmic_thinking": 2.0}
    assert weighted_score(GOOD, w) == 7.0


def test_retry_with_feedback_then_missing_never_invented():
    script = {
        "statement-0": [json.dumps(GOOD)],
        "statement-1": ["I think about 7/10.", json.dumps({**GOOD, "edge_cases": 9})],
        "statement-2": ["nope", '{"algorithmic_thinking": 5}', "still no"],
    }
    backend = ScriptedBackend(script)
    cfg = PredictConfig(enabled=True, retries=2, seed=10)
    preds = predict_difficulty([problem(0), problem(1), problem(2)], cfg, backend)
    assert preds["p0"].scores == GOOD and preds["p0"].attempts == 1
    assert preds["p0"].score == pytest.approx(weighted_score(GOOD, DEFAULT_WEIGHTS))
    assert preds["p1"].scores["edge_cases"] == 9 and preds["p1"].attempts == 2
    p2 = preds["p2"]
    assert p2.scores is None and p2.score is None and p2.attempts == 3 and "not valid JSON" in p2.error
    # Attempt 1 asked all three, attempt 2 the two failures, attempt 3 only the last; seeds change.
    assert [len(c) for c in backend.calls] == [3, 2, 1] and backend.seeds == [10, 11, 12]
    retry = backend.calls[1][0]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == "I think about 7/10." and "invalid: not valid JSON" in retry[3]["content"]
    assert all(not v for v in backend.script.values())  # every scripted answer consumed, none invented


def test_predict_config_checks_weights():
    with pytest.raises(ValueError, match="exactly the keys"):
        PredictConfig(weights={"algorithmic_thinking": 1.0})
    with pytest.raises(ValueError, match="unknown PredictConfig"):
        build_config(PredictConfig, {"weight": {}})
    with pytest.raises(ValueError, match="isotonic or logistic"):
        PredictConfig(calibration="spline")


def test_predict_config_refuses_what_vllm_refuses():
    with pytest.raises(ValueError, match="temperature"):
        PredictConfig(temperature=2.5)
    with pytest.raises(ValueError, match="exceed max_model_len"):
        PredictConfig(max_tokens=512, max_prompt_tokens=600, backend_options={"max_model_len": 1024})


def test_over_budget_prompts_are_missing_with_the_reason_never_sent(tiny_model_dir):
    from microcoder.pipeline.difficulty.predict import rating_messages
    from microcoder.pipeline.generation.budget import count_prompt_tokens, load_tokenizer

    long = Problem(id="p9", source="s", statement="statement-9 " + "more words here " * 100, style="stdio")
    budget = count_prompt_tokens([rating_messages(problem(0))], load_tokenizer(str(tiny_model_dir)))[0] + 120
    backend = ScriptedBackend({"statement-0": ["not json", json.dumps(GOOD)], "statement-9": []})
    cfg = PredictConfig(enabled=True, model=str(tiny_model_dir), retries=2, max_prompt_tokens=budget)
    preds = predict_difficulty([problem(0), long], cfg, backend)
    assert preds["p9"].scores is None and preds["p9"].attempts == 0
    assert preds["p9"].error.startswith("prompt over the token budget: ")
    # p0's retry carries its first answer and the feedback: within the budget here, so it is sent.
    assert preds["p0"].scores == GOOD and [len(c) for c in backend.calls] == [1, 1]
    # A retry that no longer fits is recorded as missing with both reasons, not sent.
    backend = ScriptedBackend({"statement-0": ["word " * 300]})
    preds = predict_difficulty([problem(0)], cfg, backend)
    assert preds["p0"].scores is None and len(backend.calls) == 1
    assert "not valid JSON" in preds["p0"].error and "then the retry's prompt over the token budget" in preds["p0"].error


def test_a_backend_built_for_prediction_is_closed(monkeypatch):
    import microcoder.pipeline.difficulty.predict as predict

    class ClosingBackend(ScriptedBackend):
        closed = 0

        def close(self):
            ClosingBackend.closed += 1

    built = ClosingBackend({"statement-0": [json.dumps(GOOD)]})
    monkeypatch.setattr(predict, "get_backend", lambda name, **kw: built)
    predict_difficulty([problem(0)], PredictConfig(enabled=True), None)
    assert ClosingBackend.closed == 1
    failing = ClosingBackend({"statement-0": []})  # generate raises (no answer left): still closed
    monkeypatch.setattr(predict, "get_backend", lambda name, **kw: failing)
    with pytest.raises(IndexError):
        predict_difficulty([problem(0)], PredictConfig(enabled=True), None)
    assert ClosingBackend.closed == 2
