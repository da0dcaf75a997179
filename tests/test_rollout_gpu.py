"""GPU checks of the rollout backends (skipped without CUDA; the vLLM one also without vllm)."""

from __future__ import annotations

import pytest

from pipeline.rollout.backends import SamplingParams, get_backend
from pipeline.rollout.prompts import build_messages
from pipeline.schema import Problem

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

PROMPTS = [build_messages(Problem(id=f"g{i}", source="s", statement=f"Print {i}.", style="stdio")) for i in range(4)]


def test_vllm_engine_generates_k_samples(tiny_model_dir):
    pytest.importorskip("vllm")
    backend = get_backend("vllm", model=str(tiny_model_dir), gpu_memory_utilization=0.3, max_model_len=1024,
                          progress=False)
    out = backend.generate(PROMPTS, 4, SamplingParams(max_tokens=32, seed=1))
    assert [len(g) for g in out] == [4] * 4
    assert all(1 <= s.token_count <= 32 and s.truncated == (s.finish_reason == "length") for g in out for s in g)
    again = backend.generate(PROMPTS, 4, SamplingParams(max_tokens=32, seed=1))
    assert [s.text for g in again for s in g] == [s.text for g in out for s in g]  # per-prompt seeds
    backend.close()


def test_hf_on_cuda(tiny_model_dir):
    backend = get_backend("hf", model=str(tiny_model_dir), device="cuda", progress=False)
    out = backend.generate(PROMPTS, 2, SamplingParams(max_tokens=16))
    assert [len(g) for g in out] == [2] * 4
