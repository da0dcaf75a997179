"""Generation backends behind one interface: `generate(prompts, n, sampling) -> samples`.

- `hf`: transformers `generate` in batches (the CPU default, with the tiny local model);
- `vllm`: vLLM's offline engine (GPU machines, extra `gpu`; imported lazily);
- `openai`: any OpenAI-compatible chat-completions endpoint, one or several base URLs (a fleet of
  `vllm serve` instances is the scale-out path).

`prompts` are chat messages (`pipeline.rollout.prompts.build_messages`); each backend renders or
sends them with the same thinking switch. The result has one list of `n` samples per prompt.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

BACKENDS = ("hf", "vllm", "openai")


@dataclass
class Sample:
    text: str
    token_count: int
    finish_reason: str  # "stop" (end of sequence or a stop string) | "length" (hit max_tokens)
    truncated: bool  # hit max_tokens without ending


@dataclass
class SamplingParams:
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 4096
    seed: int = 0

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")


class Backend(Protocol):
    def generate(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        ...


def prompt_seed(seed: int, messages: list[dict[str, str]]) -> int:
    """A per-prompt seed from the run seed and the prompt text. With per-request seeds (vLLM, the
    OpenAI path) a problem's samples do not depend on its batch or shard. The `hf` backend seeds
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


def get_backend(name: str, **options: Any) -> Backend:
    """A backend by name; `options` are the backend's constructor arguments (see each class)."""
    if name == "hf":
        from pipeline.rollout.backends.hf import HFBackend

        return HFBackend(**options)
    if name == "vllm":
        from pipeline.rollout.backends.vllm_engine import VLLMBackend

        return VLLMBackend(**options)
    if name == "openai":
        from pipeline.rollout.backends.openai_api import OpenAIBackend

        return OpenAIBackend(**options)
    raise ValueError(f"unknown backend {name!r}; choose one of {list(BACKENDS)}")
