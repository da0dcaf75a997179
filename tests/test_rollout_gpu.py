"""GPU checks of the rollout backends: what the CPU stand-in (tests/stand_in/vllm) cannot show.

Skipped without CUDA (and the vLLM ones without vllm). They cover, against the real vLLM 0.31.0:
the stand-in's rules (values refused, finish reasons, the double BOS of text prompts), per-request
seeds (exact batch independence only in batch-invariant mode), explicit teardown (a second engine,
then transformers, in the same process), data-parallel engine workers (each starts EngineCore as
its child), and the prompt budget in a real rollout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from microcoder.pipeline.generation.backends import SamplingParams, get_backend
from microcoder.pipeline.generation.prompts import build_messages
from microcoder.pipeline.schema import Problem, TestCase

torch = pytest.importorskip("torch")
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
pytestmark = [pytest.mark.gpu]
ROOT = Path(__file__).resolve().parents[1]
STAND_IN = ROOT / "tests" / "stand_in"

PROMPTS = [build_messages(Problem(id=f"g{i}", source="s", statement=f"Print {i}. " * (1 + 7 * i), style="stdio"))
           for i in range(4)]
ENGINE = {"max_model_len": 2048, "engine_kwargs": {"enforce_eager": True}, "progress": False}


def real_vllm():
    vllm = pytest.importorskip("vllm")
    if Path(vllm.__file__).resolve().is_relative_to(STAND_IN):
        pytest.skip("the stand-in is on the path, not vLLM")
    return vllm


def free_gib() -> float:
    free, _ = torch.cuda.mem_get_info()
    return free / 2**30


def test_the_stand_in_refuses_what_vllm_refuses():
    """Import-only (no GPU needed): the stand-in's rules are the real classes' rules."""
    vllm = real_vllm()
    from vllm.exceptions import VLLMValidationError
    from vllm.v1.engine import FINISH_REASON_STRINGS

    from microcoder.pipeline.generation.backends import ENGINE_FAILURES

    sys.path.insert(0, str(STAND_IN.parent))
    try:
        from stand_in.vllm import FINISH_REASONS
    finally:
        sys.path.remove(str(STAND_IN.parent))
    assert tuple(FINISH_REASON_STRINGS) == FINISH_REASONS and ENGINE_FAILURES <= set(FINISH_REASONS)
    assert not issubclass(VLLMValidationError, ValueError)
    for bad, why in [({"temperature": 2.5}, r"temperature must be in \[0, 2\]"),
                     ({"temperature": 0, "n": 2}, "n must be 1 when using greedy sampling"),
                     ({"top_p": 0}, "top_p"), ({"n": 0}, "n must be at least 1"), ({"max_tokens": 0}, "max_tokens")]:
        with pytest.raises(VLLMValidationError, match=why):
            vllm.SamplingParams(**bad)
    vllm.SamplingParams(temperature=2.0, n=4, seed=1)
    vllm.SamplingParams(temperature=0, n=1)


@CUDA
def test_vllm_engine_generates_k_samples_and_frees_the_gpu(tiny_model_dir):
    real_vllm()
    before = free_gib()
    backend = get_backend("vllm", model=str(tiny_model_dir), gpu_memory_utilization=0.6, **ENGINE)
    out = backend.generate(PROMPTS, 4, SamplingParams(max_tokens=32, seed=1))
    assert [len(g) for g in out] == [4] * 4
    assert all(1 <= s.token_count <= 32 and s.truncated == (s.finish_reason == "length") for g in out for s in g)
    assert all(s.finish_reason in ("stop", "length") for g in out for s in g)
    again = backend.generate(PROMPTS, 4, SamplingParams(max_tokens=32, seed=1))
    assert [s.text for g in again for s in g] == [s.text for g in out for s in g]  # same batches: same samples
    greedy = backend.generate(PROMPTS[:2], 3, SamplingParams(temperature=0, max_tokens=16))  # n=1 asked, repeated
    assert all(len({s.text for s in g}) == 1 and len(g) == 3 for g in greedy)
    backend.close()
    assert free_gib() > before - 2  # the engine's 0.6 of the GPU is back
    # eval-model's second model: would not fit next to the first one's 0.6 if that one were still held.
    second = get_backend("vllm", model=str(tiny_model_dir), gpu_memory_utilization=0.6, **ENGINE)
    assert len(second.generate(PROMPTS[:1], 2, SamplingParams(max_tokens=8))[0]) == 2
    second.close()
    hf = get_backend("hf", model=str(tiny_model_dir), device="cuda", progress=False)
    assert [len(g) for g in hf.generate(PROMPTS, 2, SamplingParams(max_tokens=16))] == [2] * 4
    hf.close()


@CUDA
def test_vllm_text_prompts_get_a_second_bos_token_ids_do_not(tiny_model_dir, tmp_path):
    """What the stand-in assumes of vLLM's renderer (text prompts: add_special_tokens=True)."""
    vllm = real_vllm()
    from tokenizers.processors import TemplateProcessing
    from transformers import AutoTokenizer

    from microcoder.pipeline.models import CHAT_TEMPLATE

    model = tmp_path / "bos-model"
    shutil.copytree(tiny_model_dir, model)
    tok = AutoTokenizer.from_pretrained(str(model))
    bos = "<|endoftext|>"
    tok._tokenizer.post_processor = TemplateProcessing(single=f"{bos} $A",
                                                       special_tokens=[(bos, tok.convert_tokens_to_ids(bos))])
    tok.bos_token = bos
    tok.chat_template = "{{- bos_token }}" + CHAT_TEMPLATE
    tok.save_pretrained(model)
    text = tok.apply_chat_template(PROMPTS[0], tokenize=False, add_generation_prompt=True)
    ids = tok.encode(text, add_special_tokens=False)
    llm = vllm.LLM(model=str(model), max_model_len=2048, enforce_eager=True, gpu_memory_utilization=0.3)
    try:
        by_text, by_ids = llm.generate([text, {"prompt_token_ids": ids}], vllm.SamplingParams(max_tokens=2),
                                       use_tqdm=False)
    finally:
        llm.llm_engine.engine_core.shutdown()
    bos_id = tok.bos_token_id
    assert by_text.prompt_token_ids[:2] == [bos_id, bos_id]
    assert list(by_ids.prompt_token_ids) == ids and ids.count(bos_id) == 1


@CUDA
def test_vllm_refuses_a_prompt_at_max_model_len_for_the_whole_batch(tiny_model_dir):
    """What the budget guards against; our backend refuses it first, naming the prompt."""
    vllm = real_vllm()
    from vllm.exceptions import VLLMValidationError

    from microcoder.pipeline.generation.backends.vllm_engine import PromptTooLong

    llm = vllm.LLM(model=str(tiny_model_dir), max_model_len=64, enforce_eager=True, gpu_memory_utilization=0.3)
    try:
        with pytest.raises(VLLMValidationError, match="maximum model length"):
            llm.generate([{"prompt_token_ids": [5] * 8}, {"prompt_token_ids": [5] * 64}],
                         vllm.SamplingParams(max_tokens=4), use_tqdm=False)
    finally:
        llm.llm_engine.engine_core.shutdown()
    backend = get_backend("vllm", model=str(tiny_model_dir), max_model_len=64, gpu_memory_utilization=0.3,
                          engine_kwargs={"enforce_eager": True}, progress=False)
    try:
        with pytest.raises(PromptTooLong):
            backend.generate(PROMPTS[:1], 1, SamplingParams(max_tokens=4))
    finally:
        backend.close()


_BATCHING = """
import json, sys
from microcoder.pipeline.generation.backends import SamplingParams, get_backend
from microcoder.pipeline.generation.prompts import build_messages
from microcoder.pipeline.schema import Problem
prompts = [build_messages(Problem(id=f"g{i}", source="s", statement=f"Print {i}. " * (1 + 7 * i), style="stdio"))
           for i in range(4)]
b = get_backend("vllm", model=sys.argv[1], max_model_len=2048, gpu_memory_utilization=0.5,
                engine_kwargs={"enforce_eager": True}, progress=False)
sp = SamplingParams(max_tokens=48, seed=3)
together = [[s.text for s in g] for g in b.generate(prompts, 4, sp)]
alone = [[s.text for s in b.generate([m], 4, sp)[0]] for m in prompts]
b.close()
print("RESULT " + json.dumps({"same": together == alone,
                              "differing": sum(x != y for g, h in zip(together, alone) for x, y in zip(g, h))}))
"""


def _batching(model: Path, invariant: bool) -> dict:
    env = {**os.environ, "VLLM_BATCH_INVARIANT": "1" if invariant else "0"}
    done = subprocess.run([sys.executable, "-c", _BATCHING, str(model)], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


@CUDA
def test_samples_do_not_depend_on_batching_in_batch_invariant_mode(tiny_model_dir):
    """Per-request seeds fix the random draws; only vLLM's batch-invariant kernels make the bf16
    logits independent of the batch. The default mode is reported, not asserted (docs/rollout.md)."""
    real_vllm()
    assert _batching(tiny_model_dir, invariant=True)["same"]
    default = _batching(tiny_model_dir, invariant=False)
    print(f"default mode: {default['differing']} of 16 samples differ between batched and alone")


@CUDA
def test_vllm_data_parallel_workers_start_their_engine_cores(tiny_model_dir):
    """Two engine workers (here both on GPU 0), each a parent of its own EngineCore process."""
    real_vllm()
    sp = SamplingParams(max_tokens=16, seed=5)
    backend = get_backend("vllm", model=str(tiny_model_dir), data_parallel_size=2, gpus="0,0",
                          gpu_memory_utilization=0.3, **ENGINE)
    try:
        out = backend.generate(PROMPTS, 2, sp)
        assert [len(g) for g in out] == [2] * 4
        procs = [p for p, _ in backend._workers]
        assert all(p.is_alive() and not p.daemon for p in procs)
    finally:
        backend.close()
    assert all(p.exitcode == 0 for p in procs)


@CUDA
def test_rollout_rejects_over_budget_prompts_and_rolls_out_the_rest(tiny_model_dir, tmp_path):
    real_vllm()
    from microcoder.pipeline.io import read_jsonl, write_problems
    from microcoder.pipeline.rollout.runner import Rollout, RolloutConfig

    probs = [Problem(id=f"p{i}", source="s", statement=f"Print {i}.", style="stdio", tests=[TestCase("\n", f"{i}\n")])
             for i in range(3)]
    probs.append(Problem(id="long", source="s", statement="Print 9. " + "Context. " * 600, style="stdio",
                         tests=[TestCase("\n", "9\n")]))
    write_problems(tmp_path / "in.parquet", probs)
    cfg = RolloutConfig(backend="vllm", model=str(tiny_model_dir), k=4, max_tokens=64,
                        backend_options={"max_model_len": 1024, "gpu_memory_utilization": 0.3,
                                         "engine_kwargs": {"enforce_eager": True}})
    stats = Rollout().run(cfg, tmp_path / "in.parquet", tmp_path / "out", progress=False)
    assert stats["problems_rolled_out"] == 3 and stats["problems_rejected"] == 1 and stats["samples"] == 12
    (reject,) = [r for _, r, _ in read_jsonl(tmp_path / "out" / "rejects.jsonl")]
    assert reject["id"] == "long" and "max_model_len 1024 - max_tokens 64" in reject["reason"]


@CUDA
def test_hf_on_cuda(tiny_model_dir):
    backend = get_backend("hf", model=str(tiny_model_dir), device="cuda", progress=False)
    out = backend.generate(PROMPTS, 2, SamplingParams(max_tokens=16))
    backend.close()
    assert [len(g) for g in out] == [2] * 4
