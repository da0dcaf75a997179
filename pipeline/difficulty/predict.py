"""LLM difficulty prediction on five weighted dimensions, with a strict JSON answer format.

The model rates each problem 1-10 on every dimension and must answer with exactly one JSON object
holding exactly the five keys (bare, or alone in one ```json block). An answer that breaks the
format is retried with the error shown to the model; after the retries the problem is recorded
as missing (scores null, the last error kept), never filled in.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from microcoder.pipeline.generation.backends import SamplingParams, close_backend, get_backend
from microcoder.pipeline.generation.budget import budget_rejects, resolve_budget
from microcoder.pipeline.generation.extract import answer_part
from microcoder.pipeline.schema import Problem

log = logging.getLogger(__name__)

DIMENSIONS = {
    "algorithmic_thinking": "depth of the algorithmic insight needed (a textbook technique -> a novel idea)",
    "implementation_complexity": "length and intricacy of a correct, efficient implementation",
    "mathematical_reasoning": "mathematics needed (number theory, combinatorics, geometry, proofs)",
    "edge_cases": "tricky edge cases and tight constraints to handle",
    "problem_comprehension": "how hard the statement is to understand and model",
}
SCORE_MIN, SCORE_MAX = 1, 10
DEFAULT_WEIGHTS = {
    "algorithmic_thinking": 0.30,
    "implementation_complexity": 0.25,
    "mathematical_reasoning": 0.20,
    "edge_cases": 0.15,
    "problem_comprehension": 0.10,
}

_FENCED_JSON = re.compile(r"^(?P<fence>```|~~~)(?:json)?[ \t]*\n(?P<body>.*?)\n?[ \t]*(?P=fence)$", re.DOTALL)

SYSTEM = "You are an expert competitive-programming coach. You rate how hard problems are, precisely and consistently."


@dataclass
class PredictConfig:
    enabled: bool = field(default=False, metadata={"help": "Run the LLM difficulty predictor."})
    backend: str = field(default="hf", metadata={"help": "Backend for the rater: hf | vllm | openai."})
    model: str = field(default="models/tiny", metadata={"help": "Rater model (path, Hub id or served name)."})
    backend_options: dict[str, Any] = field(default_factory=dict, metadata={"help": "Extra backend arguments."})
    thinking: bool = field(default=False, metadata={"help": "Let the rater think first (chat template switch)."})
    temperature: float = field(default=0.6, metadata={"help": "Sampling temperature of the rater."})
    max_tokens: int = field(default=512, metadata={"help": "Maximum tokens of a rating answer."})
    max_prompt_tokens: int | None = field(default=None, metadata={
        "help": "Most prompt tokens (retries included); longer ones are recorded as missing with the reason. "
                "None: backend_options.max_model_len - max_tokens, else the model's context length - max_tokens."})
    seed: int = field(default=0, metadata={"help": "Sampling seed (each retry uses seed + attempt)."})
    retries: int = field(default=2, metadata={"help": "Retries for an answer that breaks the JSON format."})
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS), metadata={
        "help": "Weight of each dimension in the combined score (normalised to sum 1)."})
    calibration: str = field(default="isotonic", metadata={"help": "Calibration model: isotonic | logistic."})
    min_calibration_problems: int = field(default=8, metadata={
        "help": "Rolled-out problems with a prediction needed before calibrating."})
    cv_folds: int = field(default=5, metadata={"help": "Cross-validation folds for the reported calibration error."})

    def __post_init__(self) -> None:
        if set(self.weights) != set(DIMENSIONS):
            raise ValueError(f"predict.weights must have exactly the keys {sorted(DIMENSIONS)}, got {sorted(self.weights)}")
        if any(w < 0 for w in self.weights.values()) or sum(self.weights.values()) <= 0:
            raise ValueError("predict.weights must be non-negative with a positive sum")
        if self.calibration not in ("isotonic", "logistic"):
            raise ValueError(f"predict.calibration must be isotonic or logistic, got {self.calibration!r}")
        if self.retries < 0:
            raise ValueError("predict.retries must be >= 0")
        # The values vLLM refuses, refused here before any model is loaded.
        SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed)
        resolve_budget(self.max_tokens, max_prompt_tokens=self.max_prompt_tokens,
                       max_model_len=self.backend_options.get("max_model_len"))


class FormatError(ValueError):
    """The answer does not follow the required JSON format."""


def rating_messages(problem: Problem) -> list[dict[str, str]]:
    rubric = "\n".join(f"- {k}: {v}" for k, v in DIMENSIONS.items())
    example = json.dumps({k: 5 for k in DIMENSIONS})
    title = f"# {problem.title}\n\n" if problem.title else ""
    user = (
        f"Rate the difficulty of the programming problem below on five dimensions, each an integer "
        f"from {SCORE_MIN} (trivial) to {SCORE_MAX} (extremely hard):\n{rubric}\n\n"
        f"Answer with only a JSON object with exactly these five keys and integer values, for "
        f"example {example}. No other text.\n\n---\n{title}{problem.statement.strip()}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_scores(text: str) -> dict[str, int]:
    """The five scores from an answer, or FormatError saying what is wrong."""
    answer = answer_part(text or "")
    if answer is None:
        raise FormatError("the answer ends inside <think> (unfinished)")
    answer = answer.strip()
    if answer.startswith(("```", "~~~")):
        m = _FENCED_JSON.match(answer)
        if not m:
            raise FormatError("expected the JSON object alone, or alone in one ```json block")
        answer = m.group("body").strip()
    try:
        obj = json.loads(answer)
    except json.JSONDecodeError as e:
        raise FormatError(f"not valid JSON ({e.msg} at position {e.pos})") from None
    if not isinstance(obj, dict):
        raise FormatError(f"expected a JSON object, got {type(obj).__name__}")
    missing = sorted(set(DIMENSIONS) - set(obj))
    extra = sorted(set(obj) - set(DIMENSIONS))
    if missing or extra:
        raise FormatError(f"keys must be exactly {sorted(DIMENSIONS)}; missing {missing}, unexpected {extra}")
    scores = {}
    for key in DIMENSIONS:
        v = obj[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
            raise FormatError(f"{key}: expected an integer, got {v!r}")
        if not SCORE_MIN <= v <= SCORE_MAX:
            raise FormatError(f"{key}: {v} is outside {SCORE_MIN}..{SCORE_MAX}")
        scores[key] = int(v)
    return scores


def weighted_score(scores: dict[str, int], weights: dict[str, float]) -> float:
    total = sum(weights.values())
    return sum(weights[k] * scores[k] for k in DIMENSIONS) / total


@dataclass
class Prediction:
    scores: dict[str, int] | None  # None: missing after every retry
    score: float | None  # weighted combination of `scores`
    attempts: int
    error: str | None = None  # the last format error when missing


def predict_difficulty(problems: list[Problem], cfg: PredictConfig, backend=None) -> dict[str, Prediction]:
    """Rate every problem; format errors are retried with feedback, then recorded as missing. A
    prompt over the token budget is recorded as missing with that reason, never sent. A backend
    built here is closed here."""
    own = backend is None
    if own:
        backend = get_backend(cfg.backend, model=cfg.model, thinking=cfg.thinking,
                              **{"progress": False, **cfg.backend_options})
    try:
        return _predict(problems, cfg, backend)
    finally:
        if own:
            close_backend(backend)


def _over_budget(cfg: PredictConfig, conversations: dict[str, list[dict[str, str]]]) -> dict[str, str]:
    options = cfg.backend_options
    return budget_rejects(conversations.items(), models=[cfg.model], max_tokens=cfg.max_tokens,
                          thinking=cfg.thinking, max_prompt_tokens=cfg.max_prompt_tokens,
                          max_model_len=options.get("max_model_len"), tokenizer=options.get("tokenizer"),
                          what="difficulty prediction")


def _predict(problems: list[Problem], cfg: PredictConfig, backend) -> dict[str, Prediction]:
    conversations = {p.id: rating_messages(p) for p in problems}
    results: dict[str, Prediction] = {}
    errors: dict[str, str] = {}
    pending = [p.id for p in problems]
    for attempt in range(cfg.retries + 1):
        over = _over_budget(cfg, {pid: conversations[pid] for pid in pending})
        for pid in pending:
            if pid in over:
                why = over[pid] if attempt == 0 else f"{errors[pid]}; then the retry's {over[pid]}"
                results[pid] = Prediction(None, None, attempt, why)
        pending = [pid for pid in pending if pid not in over]
        if not pending:
            break
        sampling = SamplingParams(temperature=cfg.temperature, max_tokens=cfg.max_tokens, seed=cfg.seed + attempt)
        outputs = backend.generate([conversations[pid] for pid in pending], 1, sampling)
        still = []
        for pid, (sample,) in zip(pending, outputs, strict=True):
            try:
                scores = parse_scores(sample.text)
            except FormatError as e:
                errors[pid] = f"{e}" + (" (truncated at max_tokens)" if sample.truncated else "")
                # Show the model its answer and what was wrong with it, then ask again.
                conversations[pid] = conversations[pid][:2] + [
                    {"role": "assistant", "content": sample.text[-2000:]},
                    {"role": "user", "content": f"That answer is invalid: {errors[pid]}. Reply with only the JSON object."},
                ]
                still.append(pid)
                continue
            results[pid] = Prediction(scores, weighted_score(scores, cfg.weights), attempt + 1)
        pending = still
    for pid in pending:
        results[pid] = Prediction(None, None, cfg.retries + 1, errors[pid])
    missing = sum(r.scores is None for r in results.values())
    if missing:
        log.warning("difficulty prediction missing for %d of %d problems", missing, len(problems))
    return results
