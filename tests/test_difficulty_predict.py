from __future__ import annotations

import json

import pytest

from pipeline.config import config_from_params
from pipeline.difficulty.predict import (
    DEFAULT_WEIGHTS,
    DIMENSIONS,
    FormatError,
    PredictConfig,
    parse_scores,
    predict_difficulty,
    weighted_score,
)
from pipeline.rollout.backends import Sample
from pipeline.schema import Problem

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
        config_from_params(PredictConfig, {"weight": {}})
    with pytest.raises(ValueError, match="isotonic or logistic"):
        PredictConfig(calibration="spline")
