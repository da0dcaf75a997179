"""Reward entry points for other trainers, judging through our sandboxed evaluator.

Each trainer loads this file by path and calls the function it expects (docs/export.md):
- verl: `compute_score(data_source, solution_str, ground_truth, extra_info=None)` (set
  `custom_reward_function.path` to this file, `custom_reward_function.name=compute_score`);
- OpenRLHF: `reward_func(queries, prompts, labels, **kwargs)` (`--reward.remote_url` this file;
  `--remote_rm_url` before 0.10.2);
- rllm: `RllmEvaluator` (its current `Evaluator`: `evaluate(task, episode) -> EvalOutput`, named by
  `import_path` in the export's dataset.toml or `--evaluator`), or `rllm_reward_fn(task_info,
  action)` (rllm <= 0.2.1's `RewardFunction`, the env's `reward_fn`).

Each trainer hands the answer over differently: verl decodes the response alone without special
tokens, OpenRLHF the prompt and response together with them (the answer ends ```` ```<|im_end|> ````),
rllm passes the episode's final text. The extractor (pipeline/generation/extract.py) ignores
special-token markers of the common shapes at the end of a fence line; with MICROCODER_TOKENIZER
(a tokenizer's path or name) that tokenizer's own special tokens are also cut from the answer's end.

The rows come from `microcoder export` (pipeline/export.py): their ground truth is the problem as
our judge needs it, so a worker needs nothing but the row. One evaluator per process, created on
first use and shared by every call (calls from several threads are fine); its settings come from
the environment, which a trainer passes on to its workers: MICROCODER_EVALUATOR (JSON of the
params' `evaluator:` keys, e.g. '{"workers": 16}') and MICROCODER_REWARD_DEADLINE_S (per call,
default 300).

Scores: 1.0 when the code passes every test, 0.0 when it fails one or gives no code block. A
sample the judge could not judge (SE: our harness failed, or the judge overran its deadline) is not
the model's fault and must not score 0. TRL takes None for it (microcoder.training.release.reward_function),
but none of these three trainers has a "no score": verl writes the value into a float tensor
(`reward_tensor[i, valid_response_length - 1] = reward`), OpenRLHF into `torch.tensor([reward])`,
rllm into a float reward. So after one re-judge of the failed samples, the call raises
`JudgeFailure`: the run stops at a step instead of learning from a wrong 0 (verl's `compute_reward`
retries the whole batch once before it gives up).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

from microcoder.pipeline.export import DATA_SOURCE, problem_from_payload
from microcoder.pipeline.generation.extract import strip_trailing_special_tokens
from microcoder.pipeline.schema import Problem

log = logging.getLogger(__name__)

SCORE_PASS = 1.0
SCORE_FAIL = 0.0  # a failed test, or no code block (an unfinished answer)
DEFAULT_DEADLINE_S = 300.0

_judge = None
_judge_lock = threading.Lock()


class JudgeFailure(RuntimeError):
    """The judge could not judge a sample (SE, or its deadline): the trainer has no 'no score'."""


def shared_judge():
    """This process's evaluator, created on first use (settings: MICROCODER_EVALUATOR)."""
    global _judge
    with _judge_lock:
        if _judge is None:
            from microcoder.pipeline.evaluator.factory import make_evaluator

            settings = json.loads(os.environ.get("MICROCODER_EVALUATOR") or "{}")
            if not isinstance(settings, dict):
                raise ValueError("MICROCODER_EVALUATOR must be a JSON object of evaluator settings")
            _judge = make_evaluator(settings)
        return _judge


def close_judge() -> None:
    """Stop this process's evaluator (a later call starts a new one)."""
    global _judge
    with _judge_lock:
        judge, _judge = _judge, None
    if judge is not None:
        judge.close()


@functools.lru_cache(maxsize=4)
def _tokenizer_special_tokens(name: str) -> tuple[str, ...]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name)
    added = [t.content for t in getattr(tokenizer, "added_tokens_decoder", {}).values() if t.special]
    return tuple(sorted(set(tokenizer.all_special_tokens) | set(added), key=len, reverse=True))


def special_tokens() -> tuple[str, ...]:
    """The special tokens of MICROCODER_TOKENIZER (none when unset)."""
    name = os.environ.get("MICROCODER_TOKENIZER")
    return _tokenizer_special_tokens(name) if name else ()


def _deadline_s() -> float:
    return float(os.environ.get("MICROCODER_REWARD_DEADLINE_S") or DEFAULT_DEADLINE_S)


@functools.lru_cache(maxsize=4096)
def _problem(payload: str, tests: str | None = None) -> Problem:
    """Parsed once per process: a trainer sends the same ground truth with every sample of a group."""
    return problem_from_payload(payload, json.loads(tests) if tests is not None else None)


class Judged:
    """One sample's score. (No dataclasses in this file: verl and OpenRLHF load it by path without
    registering it in sys.modules, where `@dataclass` fails.)"""

    def __init__(self, score: float, outcome: str, passed: int = 0, total: int = 0):
        self.score, self.outcome, self.passed, self.total = score, outcome, passed, total  # outcome: pass|fail|no_code

    def __repr__(self) -> str:
        return f"Judged(score={self.score}, outcome={self.outcome!r}, passed={self.passed}, total={self.total})"


def judge_texts(problems: Sequence[Problem], texts: Sequence[str], *, language: str = "python") -> list[Judged]:
    """Score each completion text against its problem; failed judging is re-tried once, then raises."""
    from microcoder.pipeline.scoring import Scorer

    by_id = {p.id: p for p in problems}
    ids = [p.id for p in problems]
    extra = special_tokens()
    texts = [strip_trailing_special_tokens(t, extra) for t in texts] if extra else list(texts)
    scorer = Scorer(by_id, language=language, judge=shared_judge(), deadline_s=_deadline_s())
    scored = scorer.score(list(texts), ids)
    again = [i for i, s in enumerate(scored) if s.outcome in ("error", "deadline")]
    if again:
        log.warning("re-judging %d of %d samples the judge failed on", len(again), len(scored))
        for i, s in zip(again, scorer.score([texts[i] for i in again], [ids[i] for i in again]), strict=True):
            scored[i] = s
    failed = [(ids[i], s) for i, s in enumerate(scored) if s.outcome in ("error", "deadline")]
    if failed:
        pid, s = failed[0]
        reason = s.verdict.reason if s.verdict is not None else "the judge overran its deadline"
        raise JudgeFailure(f"the judge could not judge {len(failed)} of {len(scored)} samples (first: problem "
                           f"{pid}: {s.status}: {reason}); not scoring them 0, which would blame the model")
    out = []
    for s in scored:
        v = s.verdict
        out.append(Judged(SCORE_PASS if s.outcome == "pass" else SCORE_FAIL, s.outcome,
                          v.passed if v else 0, v.total if v else 0))
    return out


# --- verl ---------------------------------------------------------------------------------------
def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None,
                  **kwargs: Any) -> dict[str, float]:
    """verl's `custom_reward_function`: {"score": 1.0|0.0, "acc": same, "no_code": 0|1}. Rows of
    another data source go to verl's own `default_compute_score` (a mixed dataset keeps working)."""
    if data_source != DATA_SOURCE:
        from verl.utils.reward_score import default_compute_score

        return default_compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
    judged, = judge_texts([_problem(ground_truth)], [solution_str])
    return {"score": judged.score, "acc": judged.score, "no_code": float(judged.outcome == "no_code")}


# --- OpenRLHF -----------------------------------------------------------------------------------
def response_text(query: str, prompt: str) -> str:
    """The model's answer in an OpenRLHF query (the rendered prompt followed by the response, decoded
    with special tokens kept): what follows the prompt, so that a code block of the prompt (a
    starter code) is never judged. OpenRLHF cuts an overlong prompt from the left, so the query may
    start with only the prompt's tail."""
    at = query.find(prompt) if prompt else -1
    if at >= 0:
        return query[at + len(prompt):]
    tail = prompt[-64:]  # the end of the prompt (the generation prompt) survives the cut
    at = query.find(tail) if tail else -1
    while 0 <= at < len(prompt):  # a tail of the prompt ends within its length
        if prompt.endswith(query[:at + len(tail)]):  # the query starts with a tail of the prompt
            return query[at + len(tail):]
        at = query.find(tail, at + 1)
    log.warning("the OpenRLHF query does not contain its prompt; judging the whole query")
    return query


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[str], **kwargs: Any) -> dict:
    """OpenRLHF's custom reward function: {"rewards", "scores", "extra_logs"} as tensors, one value
    per query; `labels` are the rows' `label` (the payload)."""
    import torch

    if not len(queries) == len(prompts) == len(labels):
        raise ValueError(f"{len(queries)} queries, {len(prompts)} prompts and {len(labels)} labels")
    texts = [response_text(q, p) for q, p in zip(queries, prompts, strict=True)]
    judged = judge_texts([_problem(label) for label in labels], texts)
    scores = torch.tensor([j.score for j in judged], dtype=torch.float32)
    no_code = torch.tensor([float(j.outcome == "no_code") for j in judged], dtype=torch.float32)
    return {"rewards": scores, "scores": scores.clone(), "extra_logs": {"no_code": no_code}}


# --- rllm ---------------------------------------------------------------------------------------
def _row_problem(row: dict) -> Problem:
    payload, tests = row.get("microcoder_problem"), row.get("ground_truth")
    if not isinstance(payload, str) or not isinstance(tests, str):
        raise ValueError("not a row of `microcoder export --format rllm` (microcoder_problem / ground_truth missing)")
    return _problem(payload, tests)


def _row(task: Any) -> dict:
    """An exported rllm row, from the row itself or an `rllm.types.Task` (its metadata is the row)."""
    row = task if isinstance(task, dict) else getattr(task, "metadata", None)
    if not isinstance(row, dict):
        raise ValueError(f"not a row of `microcoder export --format rllm` (got {type(task).__name__})")
    return row


def episode_answer(episode: Any) -> str:
    """The episode's final answer, found as rllm's own evaluators find it
    (`rllm.eval.reward_fns._helpers.extract_answer_text`): `artifacts["answer"]`, else the last
    trajectory's output, its last step's output, or the last step with a `model_response`."""
    artifacts = getattr(episode, "artifacts", None) or {}
    if "answer" in artifacts:
        return str(artifacts["answer"])
    trajectories = getattr(episode, "trajectories", None) or []
    if not trajectories:
        return ""
    last = trajectories[-1]
    if getattr(last, "output", None):
        return str(last.output)
    steps = getattr(last, "steps", None) or []
    if steps and getattr(steps[-1], "output", None):
        return str(steps[-1].output)
    return next((str(s.model_response) for s in reversed(steps) if getattr(s, "model_response", None)), "")


class Signal:
    """rllm's `Signal` fields, used when rllm itself is not importable."""

    def __init__(self, name: str, value: float, metadata: dict | None = None):
        self.name, self.value, self.metadata = name, value, metadata or {}


class EvalOutput:
    """rllm's `EvalOutput` fields, used when rllm itself is not importable."""

    def __init__(self, reward: float, is_correct: bool, signals: list | None = None, metadata: dict | None = None):
        self.reward, self.is_correct, self.signals, self.metadata = reward, is_correct, signals or [], metadata or {}

    def __repr__(self) -> str:
        return f"EvalOutput(reward={self.reward}, is_correct={self.is_correct}, metadata={self.metadata})"


def _eval_output(judged: Judged):
    try:
        from rllm.eval.types import EvalOutput as Output
        from rllm.eval.types import Signal as Sig
    except ImportError:
        Output, Sig = EvalOutput, Signal
    signals = [Sig(name="accuracy", value=judged.score), Sig(name="no_code", value=float(judged.outcome == "no_code"))]
    return Output(reward=judged.score, is_correct=judged.outcome == "pass", signals=signals,
                  metadata={"outcome": judged.outcome, "passed": judged.passed, "total": judged.total})


class RllmEvaluator:
    """rllm's current `Evaluator` (rllm/types.py, rllm/runner.py): `evaluate(task, episode) ->
    EvalOutput`. Its runner hands an evaluator like this one (first parameter not annotated `Task`)
    the task's metadata, the exported row; a Task is read too. A judge failure raises: rllm's runner
    calls an `import_path` evaluator without catching (a `module` verifier would score it 0)."""

    def evaluate(self, task, episode):
        judged, = judge_texts([_row_problem(_row(task))], [episode_answer(episode)])
        return _eval_output(judged)


class RewardOutput:
    """rllm's `RewardOutput` fields, used when rllm itself is not importable."""

    def __init__(self, reward: float, is_correct: bool, metadata: dict | None = None):
        self.reward, self.is_correct, self.metadata = reward, is_correct, metadata or {}

    def __repr__(self) -> str:
        return f"RewardOutput(reward={self.reward}, is_correct={self.is_correct}, metadata={self.metadata})"


def _reward_output(reward: float, is_correct: bool, metadata: dict):
    try:
        from rllm.rewards.reward_types import RewardOutput as RllmOutput
    except ImportError:
        return RewardOutput(reward, is_correct, metadata)
    try:
        return RllmOutput(reward=reward, is_correct=is_correct, metadata=metadata)
    except TypeError:  # releases before `metadata` was added
        return RllmOutput(reward=reward, is_correct=is_correct)


def rllm_reward_fn(task_info: dict, action: Any):
    """rllm <= 0.2.1's `RewardFunction` protocol: `reward_fn(task_info=row, action=answer) -> RewardOutput`."""
    action = getattr(action, "action", action)  # rllm may pass its Action object
    judged, = judge_texts([_row_problem(task_info)], [str(action)])
    return _reward_output(judged.score, judged.outcome == "pass",
                          {"outcome": judged.outcome, "passed": judged.passed, "total": judged.total})
