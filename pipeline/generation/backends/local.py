"""A backend of this process by name (no Ray): what `get_backend` builds locally and what each Ray
replica builds in its actor."""

from __future__ import annotations

from typing import Any

from microcoder.pipeline.generation.backends.base import BACKENDS, Backend


def local_backend(name: str, **options: Any) -> Backend:
    """Backend `name` built here with its constructor `options` (imported only when chosen: vLLM is
    GPU-only)."""
    if name == "hf":
        from microcoder.pipeline.generation.backends.hf import HFBackend

        return HFBackend(**options)
    if name == "vllm":
        from microcoder.pipeline.generation.backends.vllm_engine import VLLMBackend

        return VLLMBackend(**options)
    if name == "openai":
        from microcoder.pipeline.generation.backends.openai_api import OpenAIBackend

        return OpenAIBackend(**options)
    raise ValueError(f"unknown backend {name!r}; choose one of {list(BACKENDS)}")
