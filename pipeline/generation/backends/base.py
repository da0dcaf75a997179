"""The backends' shared vocabulary: samples, sampling parameters, the backend protocol and the
helpers every backend uses (seeds per prompt, greedy repeats, open-think prompts)."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass
from typing import Any, Protocol

BACKENDS = ("hf", "vllm", "openai")
# vLLM 0.31 refuses temperatures above 2 (SamplingParams._verify_args); every backend keeps the same
# range so that a setting never works on CPU and fails on the GPU machine.
MAX_TEMPERATURE = 2.0
# finish_reason values that are the engine's failures, not the model's answers (vLLM: "abort" =
# the request was aborted, "error" = a retryable request-level internal error).
ENGINE_FAILURES = frozenset({"abort", "error"})


class EngineFailure(RuntimeError):
    """The engine failed on some requests (finish_reason abort/error) even after retries."""


def check_temperature(value: Any, what: str = "temperature") -> float:
    """`value` as a temperature vLLM accepts ([0, MAX_TEMPERATURE], 0 = greedy), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    if not 0 <= value <= MAX_TEMPERATURE:
        raise ValueError(f"{what} must be in [0, {MAX_TEMPERATURE:g}] (vLLM refuses higher), got {value}")
    return float(value)


@dataclass
class Sample:
    text: str
    token_count: int
    # "stop" (end of sequence or a stop string) | "length" (hit max_tokens) | "repetition" (vLLM's
    # repetition detector, when enabled). Never one of ENGINE_FAILURES: backends retry those or raise.
    finish_reason: str
    truncated: bool  # hit max_tokens without ending


@dataclass
class SamplingParams:
    temperature: float = 1.0  # 0 = greedy: one sequence is generated and repeated n times
    top_p: float = 1.0
    max_tokens: int = 4096
    seed: int = 0

    def __post_init__(self) -> None:
        check_temperature(self.temperature)
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")

    @property
    def greedy(self) -> bool:
        """vLLM needs n == 1 for greedy sampling: backends request one sample and repeat it."""
        return self.temperature == 0

    def per_request(self, n: int) -> int:
        """How many samples to ask the engine for when `n` are wanted."""
        return 1 if self.greedy else n


class Backend(Protocol):
    def generate(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        ...

    def close(self) -> None:
        """Free the engine, its processes and accelerator memory; callers always call it (finally)."""
        ...


def close_backend(backend: Any) -> None:
    """`backend.close()` when it has one (test doubles may not)."""
    close = getattr(backend, "close", None)
    if callable(close):
        close()


def repeat_greedy(group: list[Sample], n: int) -> list[Sample]:
    """A greedy request's single sample as the `n` samples asked for (independent copies)."""
    if len(group) != 1:
        raise RuntimeError(f"expected one greedy sample, got {len(group)}")
    return [dataclasses.replace(group[0]) for _ in range(n)]


def prompt_seed(seed: int, messages: list[dict[str, str]]) -> int:
    """A per-prompt seed from the run seed and the prompt text. With per-request seeds (vLLM, the
    OpenAI path) a problem's samples do not change with its batch or shard through the random
    draws (bf16 kernels can still differ slightly with the batch composition unless vLLM runs in
    its batch-invariant mode, VLLM_BATCH_INVARIANT=1; see docs/rollout.md). The `hf` backend seeds
    each batch instead (and padding changes the numerics): its samples depend on the batch, and a
    resumed rollout still reproduces a fresh one because shards are cut at the same places."""
    h = hashlib.sha256(str(seed).encode())
    for m in messages:
        h.update(b"\x00" + m["role"].encode() + b"\x00" + m["content"].encode())
    return int.from_bytes(h.digest()[:4], "big") & 0x7FFFFFFF


def with_open_think(prompt: str, text: str) -> str:
    """A completion as the model's whole answer: templates that open `<think>` in the prompt
    (Qwen3 thinking models) leave only `...</think>answer` to the completion; put the opening tag
    back so that extraction sees unfinished thinking as such."""
    if prompt.rfind("<think>") > prompt.rfind("</think>"):
        return "<think>\n" + text
    return text
